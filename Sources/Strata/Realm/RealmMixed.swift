import Foundation
import StrataStorage

/// The accessor half of mixed values (`AnyRealmValue`): turning linked objects into keys (adding unmanaged ones),
/// encoding nested collections' elements, materialising stored bytes as objects and live collections, and
/// releasing dropped element rows. Writing the bytes, links and nested trees is `Tables/MixedValues.swift`'s; the
/// stored form and the nested trees are in `Tables/MixedCodec.swift` and `Tables/MixedTrees.swift`.
extension Realm {
    private func mixedFailure(_ binding: TableBinding, _ property: Int, _ reason: String) -> Realm.Error {
        tables.mixedFailure(binding, property, reason)
    }

    /// Encodes `value` for a mixed property (a column, or a collection element at nesting `level`: 0 for a
    /// property or its collection's elements). Adds unmanaged linked objects and encodes nested collections'
    /// elements; the bytes, the nested trees and the link counts are written by `Tables/MixedValues.swift`.
    /// nil for `.none`.
    func encodeMixed(_ value: _StoredValue, binding: TableBinding, property: Int, owner: Int64, level: Int)
        throws(Realm.Error) -> [UInt8]?
    {
        switch value {
        case .null: return nil
        case .mixed(let bytes): return bytes
        case .object(let target):
            guard binding.table.kind != .asymmetric else {
                throw mixedFailure(
                    binding, property,
                    "an asymmetric object's mixed values cannot link to objects (its outbox copies "
                        + "are self-contained)")
            }
            let targetBinding: TableBinding
            let key: Int64
            if let managed = target.managed {
                guard managed.realm === self else {
                    throw mixedFailure(binding, property, "the linked object belongs to another Realm")
                }
                targetBinding = managed.binding
                key = managed.key
            } else {
                targetBinding = try self.binding(for: type(of: target))
                guard targetBinding.table.kind == .object else {
                    throw mixedFailure(binding, property, "a mixed value cannot hold an embedded or asymmetric object")
                }
                key = try insert(target, update: .error)
            }
            return try tables.mixedLink(to: key, of: targetBinding, binding: binding, property: property, owner: owner)
        case .collection(let container):
            try tables.checkNestable(binding, property: property, level: level)
            if let list = container as? List<AnyRealmValue> {
                let elements = list.storedElements
                let (id, tree) = try tables.newNestedCollection(binding, property: property, kind: .list)
                for element in elements {
                    let bytes = try encodeMixed(
                        element, binding: binding, property: property, owner: owner, level: level + 1)
                    try tables.appendMixedElement(bytes, to: tree)
                }
                return MixedCodec.collection(.list, id: id)
            }
            if let map = container as? Map<String, AnyRealmValue> {
                let entries = map.storedEntries
                let (id, tree) = try tables.newNestedCollection(binding, property: property, kind: .keyed)
                for (key, element) in entries {
                    if let problem = MapKeys.problem(key) {
                        throw mixedFailure(binding, property, "\"\(key)\": \(problem)")
                    }
                    let bytes = try encodeMixed(
                        element, binding: binding, property: property, owner: owner, level: level + 1)
                    try tables.putMixedEntry(key, bytes, in: tree)
                }
                return MixedCodec.collection(.dictionary, id: id)
            }
            throw mixedFailure(
                binding, property, "a mixed value holds lists and dictionaries of AnyRealmValue, not sets")
        default:
            return try tables.mixedPrimitive(value, binding: binding, property: property)
        }
    }

    /// Materialises stored mixed bytes: links as objects, nested collections as live `List`/`Map` accessors.
    func decodeMixed(_ bytes: [UInt8], owner: ManagedObject?, property: Int, level: Int) throws(Realm.Error)
        -> _StoredValue
    {
        guard let decoded = MixedCodec.decode(bytes) else {
            throw .incompatibleFile(path: path, reason: "unreadable mixed value")
        }
        switch decoded {
        case .value(let value): return value
        case .link(let className, let key):
            let binding = try tables.bindingForStoredClass(className)
            return .object(object(binding, key: key))
        case .list(let id):
            guard let owner else { return .null }
            return .collection(List<AnyRealmValue>(owner: owner, property: property, nested: id, level: level + 1))
        case .dictionary(let id):
            guard let owner else { return .null }
            return .collection(
                Map<String, AnyRealmValue>(owner: owner, property: property, nested: id, level: level + 1))
        }
    }
}

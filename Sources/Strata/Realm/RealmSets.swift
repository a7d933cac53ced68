import Foundation
import StrataStorage

/// The accessor half of `MutableSet` properties: the operations behind `MutableSet` (confinement, the write
/// transaction's failure, adding unmanaged elements, releasing dropped ones). The set trees themselves are
/// written by `Tables/SetTrees.swift`.
extension Realm {
    /// The stored entry of `value` in set property `property`: its key and its row (links resolved, unmanaged
    /// objects added).
    private func setEntry(_ value: _StoredValue, binding: TableBinding, property: Int, owner: Int64)
        throws(Realm.Error) -> (key: [UInt8], row: [UInt8])
    {
        let row = try encodeElement(value, binding: binding, property: property, owner: owner)
        let key = try tables.setKey(
            ofElementRow: row, binding: binding, property: property, maxKeySize: store.maxKeySize)
        return (key, row)
    }

    // MARK: Operations behind MutableSet

    /// The stored key of `value` as an element of `owner`'s set property: nil when it cannot be in the set (an
    /// object of no or another Realm); throws when the value is not a valid element (too long).
    private func existingSetKey(_ value: _StoredValue, owner: ManagedObject, property: Int) throws(Realm.Error)
        -> [UInt8]?
    {
        if tables.elementInfo(owner.binding, property).type == .any {
            // A mixed set keys its elements by their mixed encoding (what `setEntry` stores), not by the value.
            guard let row = mixedElementRow(value) else { return nil }
            return try tables.setKey(
                ofElementRow: row, binding: owner.binding, property: property, maxKeySize: store.maxKeySize)
        }
        guard case .object(let target) = value else {
            return try tables.setKey(
                value, binding: owner.binding, property: property, maxKeySize: store.maxKeySize)
        }
        guard let managed = target.managed, managed.realm === self else { return nil }
        return try tables.setKey(
            .int(managed.key), binding: owner.binding, property: property, maxKeySize: store.maxKeySize)
    }

    /// The element row a mixed set stores for `value`, built without inserting's side effects (a link's backlink
    /// count, adding an unmanaged object): nil for a value no mixed set of this Realm can hold.
    private func mixedElementRow(_ value: _StoredValue) -> [UInt8]? {
        switch value {
        case .null: return MixedCodec.elementRow(nil)
        case .mixed(let bytes): return MixedCodec.elementRow(bytes)
        case .object(let target):
            guard let managed = target.managed, managed.realm === self else { return nil }
            return MixedCodec.elementRow(MixedCodec.link(className: managed.binding.className, key: managed.key))
        case .collection: return nil
        default: return MixedCodec.primitive(value).map { MixedCodec.elementRow($0) }
        }
    }

    func setContains(_ owner: ManagedObject, property: Int, _ value: _StoredValue) -> Bool {
        checkThread()
        // A value that cannot be an element (an unmanaged object, a string over the key size) is not in the set.
        guard let key = try? existingSetKey(value, owner: owner, property: property) else { return false }
        do {
            return try collectionValue(owner, property: property, key: key) != nil
        } catch {
            return survive(error, "\(collectionName(owner, property)): \(error)", returning: false)
        }
    }

    func setInsert(_ owner: ManagedObject, property: Int, _ value: _StoredValue) {
        mutateCollection(owner, property: property, "inserting into") { (_, set) throws(Realm.Error) in
            let entry = try setEntry(value, binding: owner.binding, property: property, owner: owner.key)
            try putEntry(entry.key, entry.row, in: set, binding: owner.binding, property: property, owner: owner.key)
        }
    }

    func setRemove(_ owner: ManagedObject, property: Int, _ value: _StoredValue) {
        mutateCollection(owner, property: property, "removing from") { (_, set) throws(Realm.Error) in
            guard let key = try existingSetKey(value, owner: owner, property: property) else { return }
            try deleteEntry(key, in: set, binding: owner.binding, property: property, owner: owner.key)
        }
    }

    func setRemoveAll(_ owner: ManagedObject, property: Int) {
        mutateCollection(owner, property: property, "removing all of") { (_, set) throws(Realm.Error) in
            try removeAllElements(of: set, owner: owner, property: property)
        }
    }

    /// Puts an entry into a set or map tree (see `TableStore.putEntry`) and releases what the entry it replaced
    /// held.
    func putEntry(
        _ key: [UInt8], _ row: [UInt8], in tree: TreeHandle, binding: TableBinding, property: Int, owner: Int64
    ) throws(Realm.Error) {
        if let old = try tables.putEntry(key, row, in: tree, binding: binding, property: property, owner: owner) {
            try tables.releaseElementRow(old, binding: binding, property: property, owner: owner)
        }
    }

    /// Deletes an entry from a set or map tree and releases what it held.
    func deleteEntry(_ key: [UInt8], in tree: TreeHandle, binding: TableBinding, property: Int, owner: Int64)
        throws(Realm.Error)
    {
        if let old = try tables.deleteEntry(key, in: tree, binding: binding, property: property) {
            try tables.releaseElementRow(old, binding: binding, property: property, owner: owner)
        }
    }

    // MARK: Sets of a whole object

    /// Replaces the stored elements of one set property with those of `value` (a `MutableSet` or array source).
    func replaceSet(binding: TableBinding, property: Int, key: Int64, with value: _StoredValue) throws(Realm.Error) {
        try refillCollection(
            binding: binding, property: property, key: key, from: value, expected: "MutableSet",
            entries: { ($0 as? any AnyRealmList)?.storedElements },
            add: { (_, set, element) throws(Realm.Error) in
                let entry = try setEntry(element, binding: binding, property: property, owner: key)
                try putEntry(entry.key, entry.row, in: set, binding: binding, property: property, owner: key)
            })
    }
}

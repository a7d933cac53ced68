import Foundation
import StrataStorage

/// Capture of the properties that sync as one whole value although they are stored as more than a row column:
/// mixed (`AnyRealmValue`) values, whose links name their class and whose nested lists and dictionaries live in
/// trees of their own, and embedded objects, which are rows of their own class owned by the parent (see
/// Documentation/Sync.md, "Mixed values and embedded objects").
///
/// A write of an embedded object's property writes the embedded row, not its parent's: at the commit such rows
/// are traced up to the synced object that owns them (through the backlink counts, nested embedded objects
/// included), and that object's property counts as written.
extension Realm {
    /// Whether property `index` of `binding` is a mixed value or an embedded object (one value, not a collection).
    func syncsAsWholeValue(_ binding: TableBinding, _ index: Int) -> Bool {
        let info = binding.table.infos[index]
        guard !info.isCollection else { return false }
        if info.type == .any { return true }
        guard info.type == .object, let target = binding.table.schema.properties[index].objectClassName else {
            return false
        }
        return schemaClasses()[target]?.embedded == true
    }

    /// Notes, for every embedded row the transaction wrote that existed before it and still exists, the synced
    /// object and property owning it as written: an embedded-object property (``SyncCaptureWrite/touchEmbedded``),
    /// a map whose value it is (that key is sent again), or a list whose element it is (a replacement of that
    /// element, recorded after the transaction's own edits). A row the transaction created is part of a write of
    /// its owner's property or collection, captured there.
    func traceTouchedEmbedded(_ capture: SyncCaptureWrite) throws(Realm.Error) {
        for (binding, key) in capture.touchedEmbedded {
            guard try baseRowValues(binding, key) != nil, let owner = try syncedOwner(ofEmbedded: binding, key: key),
                capture.capture.classes.contains(owner.binding.className)
            else { continue }
            switch owner.binding.table.infos[owner.property].collection {
            case nil:
                capture.touchEmbedded(owner: owner.binding, owner.key, property: owner.property)
            case .map?, .set?:
                capture.touch(owner.binding, owner.key, collection: owner.property)
                capture.noteRewritten(element: owner.child, owner.binding, owner.key, owner.property)
            case .list?:
                capture.touch(owner.binding, owner.key, collection: owner.property)
                guard
                    let list = try tables.collectionHandle(
                        owner.binding, property: owner.property, key: owner.key, create: false)
                else { continue }
                let transaction = try activeTransaction()
                var cursor = try storage { try transaction.makeCursor(for: list) }
                var more = try storage { try cursor.first() }
                var index = 0
                while more {
                    let row = try storage { try cursor.value() }
                    if Self.linkedElementKey(row) == owner.child {
                        capture.record(
                            .replace(at: index, element: row), owner.binding, owner.key, list: owner.property)
                        break
                    }
                    index += 1
                    more = try storage { try cursor.next() }
                }
            }
        }
    }

    /// The object key a list element row holds (nil for a null element or a damaged row).
    private static func linkedElementKey(_ row: [UInt8]) -> Int64? {
        row.withUnsafeBytes { raw in
            guard let view = try? RowView(raw), !view.isNull(0) else { return nil }
            return view.int(0)
        }
    }

    /// The top-level object (its binding, key, the property holding the chain and the embedded row directly in
    /// that property) that embedded row `key` of `binding` belongs to; nil when the row is gone (its parent
    /// replaced or deleted it, and wrote its own row).
    private func syncedOwner(ofEmbedded binding: TableBinding, key: Int64) throws(Realm.Error)
        -> (binding: TableBinding, key: Int64, property: Int, child: Int64)?
    {
        var current = (binding: binding, key: key)
        // Embedded objects nest to any depth a schema declares; a cycle is impossible (each has one parent).
        for _ in 0..<256 {
            guard try rowValues(binding: current.binding, key: current.key) != nil,
                let parent = try embeddedParent(of: current.binding, key: current.key)
            else { return nil }
            if parent.binding.table.kind != .embedded {
                return (parent.binding, parent.key, parent.property, current.key)
            }
            current = (parent.binding, parent.key)
        }
        return nil
    }

    /// The object holding embedded row `key` of `binding`, found through the backlink counts of every property
    /// that can hold that embedded class.
    private func embeddedParent(of binding: TableBinding, key: Int64) throws(Realm.Error)
        -> (binding: TableBinding, key: Int64, property: Int)?
    {
        for (className, stored) in schemaClasses().sorted(by: { $0.key < $1.key }) {
            for property in stored.properties
            where property.type == .object && property.objectClassName == binding.className {
                guard
                    let origin = try tables.backlinks(
                        originClass: className, originProperty: property.name, target: key
                    ).first
                else { continue }
                let parent = try dynamicBinding(className)
                guard let index = parent.table.schema.properties.firstIndex(where: { $0.columnName == property.name })
                else { continue }
                return (parent, origin.origin, index)
            }
        }
        return nil
    }

    /// An element of a collection of mixed values in portable form: its plain value, or a link as its target's
    /// class and primary key.
    ///
    /// - Throws: `Realm.Error.invalidValue` for an element holding a nested list or dictionary (elements sync one
    ///   by one; a nested collection has no element form yet), or a link to an object of a class that does not
    ///   sync: the write transaction fails whole rather than losing it.
    func portableMixedElement(_ bytes: [UInt8], binding: TableBinding, property: Int) throws(Realm.Error)
        -> CapturedValue
    {
        func failure(_ reason: String) -> Realm.Error {
            .invalidValue(
                type: binding.className, property: binding.table.schema.properties[property].columnName,
                reason: reason)
        }
        switch MixedCodec.decode(bytes) {
        case .value(let value)?: return try portable(value)
        case .link(let className, let key)?:
            let target = try tables.bindingForStoredClass(className)
            let synced = SyncCaptureRegistry.write(path: configuration.path)?.capture.classes ?? [className]
            guard synced.contains(className), let index = target.table.primaryKeyIndex else {
                throw failure("a synced mixed value links only to objects of synced types (with a primary key)")
            }
            guard let values = try rowValues(binding: target, key: key) else { return .null }
            return .typedLink(className: className, key: try portable(values[index]))
        case .list?, .dictionary?:
            throw failure("an element of a synced collection of mixed values cannot hold a list or dictionary yet")
        case nil:
            throw .incompatibleFile(path: configuration.path, reason: "unreadable mixed value")
        }
    }

    /// The whole value of mixed or embedded property `index` of object `key`, as the transaction holds it.
    func capturedWholeValue(_ binding: TableBinding, key: Int64, property index: Int, synced: Set<String>)
        throws(Realm.Error)
        -> CapturedValue
    {
        guard let managed = object(binding, key: key).managed else { return .null }
        return try capturedProperty(managed, index, synced)
    }

    /// Embedded row `key` of `binding` whole, as the transaction holds it. A row that is gone is an empty embedded
    /// object: a list element inserted and removed again in one transaction is replayed from its row's key, and its
    /// insert (which its removal follows) must still be an embedded value for the server to take it.
    func capturedWholeObject(_ binding: TableBinding, key: Int64, synced: Set<String>) throws(Realm.Error)
        -> CapturedValue
    {
        guard try rowValues(binding: binding, key: key) != nil, let managed = object(binding, key: key).managed else {
            return .embedded([:])
        }
        return try capturedEmbedded(managed, synced)
    }

    /// Property `index` of `managed` in portable form: mixed values with their kind, embedded objects whole,
    /// collections as lists and dictionaries, links as their target's primary key.
    private func capturedProperty(_ managed: ManagedObject, _ index: Int, _ synced: Set<String>) throws(Realm.Error)
        -> CapturedValue
    {
        let info = managed.table.infos[index]
        if info.isCollection { return try capturedAny(managed.readAny(property: index), managed, index, synced) }
        let stored = managed.readStored(property: index)
        if info.type == .any {
            return try capturedMixed(AnyRealmValue._fromStored(stored) ?? .none, managed, index, synced)
        }
        return try capturedAny(StoredValueConversion.any(from: stored), managed, index, synced)
    }

    /// An embedded object's persisted properties (computed ones, and links to objects without a primary key,
    /// which do not sync, left out).
    private func capturedEmbedded(_ managed: ManagedObject, _ synced: Set<String>) throws(Realm.Error) -> CapturedValue
    {
        var values: [String: CapturedValue] = [:]
        for index in managed.table.infos.indices
        where managed.binding.columns[index] >= 0 || managed.table.infos[index].isCollection {
            let info = managed.table.infos[index]
            guard info.type != .linkingObjects else { continue }
            if info.type == .object, !info.isCollection,
                let target = managed.table.schema.properties[index].objectClassName,
                let stored = schemaClasses()[target], !stored.embedded, !stored.properties.contains(where: \.primary)
            {
                continue
            }
            values[managed.table.schema.properties[index].columnName] = try capturedProperty(managed, index, synced)
        }
        return .embedded(values)
    }

    /// A value read through an accessor (`readAny`'s forms) in portable form, for property `index` of `owner`.
    private func capturedAny(_ any: Any?, _ owner: ManagedObject, _ index: Int, _ synced: Set<String>)
        throws(Realm.Error) -> CapturedValue
    {
        guard let any = StoredValueConversion.unwrap(any), !(any is NSNull) else { return .null }
        switch any {
        case let value as Bool: return .bool(value)
        case let value as Int: return .int(Int64(value))
        case let value as Int64: return .int(value)
        case let value as Int32: return .int(Int64(value))
        case let value as Int16: return .int(Int64(value))
        case let value as Int8: return .int(Int64(value))
        case let value as Float: return .float(value)
        case let value as Double: return .double(value)
        case let value as String: return .string(value)
        case let value as Data: return .data(value)
        case let value as Date: return .date(value.timeIntervalSince1970)
        case let value as ObjectId: return .objectId(value.stringValue)
        case let value as UUID: return .uuid(value)
        case let value as Decimal128: return .decimal128(value.stringValue)
        case let value as AnyRealmValue: return try capturedMixed(value, owner, index, synced)
        case let object as ObjectBase:
            guard let managed = object.managed else { return .null }
            if managed.table.kind == .embedded { return try capturedEmbedded(managed, synced) }
            guard let key = managed.table.primaryKeyIndex else { return .null }
            return .link(try portable(managed.readStored(property: key)))
        case let elements as [Any]:
            var result: [CapturedValue] = []
            for element in elements { result.append(try capturedAny(element, owner, index, synced)) }
            return .list(result)
        case let entries as [String: Any]:
            var result: [String: CapturedValue] = [:]
            for (key, element) in entries { result[key] = try capturedAny(element, owner, index, synced) }
            return .dictionary(result)
        default:
            throw .invalidValue(
                type: owner.table.className, property: owner.table.schema.properties[index].columnName,
                reason: "\(type(of: any)) has no portable form for Strata Sync")
        }
    }

    /// A mixed value in portable form: a link names its target's class and primary key; a nested list or
    /// dictionary is carried whole, element by element.
    ///
    /// - Throws: `Realm.Error.invalidValue` for a link to an object of a class that does not sync (`synced`), which
    ///   no other replica could find (the write transaction then fails whole, so nothing is lost unnoticed).
    private func capturedMixed(
        _ value: AnyRealmValue, _ owner: ManagedObject, _ index: Int, _ synced: Set<String>
    ) throws(Realm.Error)
        -> CapturedValue
    {
        switch value {
        case .object(let object):
            guard let managed = object.managed, let key = managed.table.primaryKeyIndex,
                synced.contains(managed.binding.className)
            else {
                throw .invalidValue(
                    type: owner.table.className, property: owner.table.schema.properties[index].columnName,
                    reason: "a synced mixed value links only to objects of synced types (with a primary key)")
            }
            return .typedLink(
                className: managed.binding.className, key: try portable(managed.readStored(property: key)))
        case .list(let list):
            var result: [CapturedValue] = []
            for element in list { result.append(try capturedMixed(element, owner, index, synced)) }
            return .list(result)
        case .dictionary(let map):
            var result: [String: CapturedValue] = [:]
            for (key, element) in map { result[key] = try capturedMixed(element, owner, index, synced) }
            return .dictionary(result)
        default:
            // A plain value: stored form, then portable form, as every other captured column.
            return try portable(value._stored)
        }
    }
}

import Foundation
import StrataStorage

/// Storage of `MutableSet` properties: for each set property a keyed tree `s:<class>.<property>` maps the owning
/// object's key to a nested keyed tree whose keys are the elements' order-preserving encodings (so membership
/// is one lookup and duplicates cannot exist) and whose values are the elements as one-column rows.
extension Realm {
    /// The key of a set element, checked against the engine's key size.
    private func setKey(_ resolved: _StoredValue, binding: TableBinding, property: Int) throws(Realm.Error) -> [UInt8] {
        let name = binding.table.schema.properties[property].columnName
        guard let key = TableStore.setElementKey(resolved) else {
            throw .invalidValue(
                type: binding.className, property: name, reason: "a set element must be stored before it is keyed")
        }
        guard key.count <= store.maxKeySize else {
            throw .invalidValue(
                type: binding.className, property: name,
                reason: "set elements are limited to \(store.maxKeySize - 1) bytes")
        }
        return key
    }

    /// The stored entry of `value` in set property `property`: its key and its row (links resolved).
    private func setEntry(_ value: _StoredValue, binding: TableBinding, property: Int, owner: Int64)
        throws(Realm.Error) -> (key: [UInt8], row: [UInt8])
    {
        let row = try encodeElement(value, binding: binding, property: property, owner: owner)
        let info = elementInfo(binding, property)
        let resolved: _StoredValue
        do {
            resolved = try row.withUnsafeBytes { RowCodec.get(try RowView($0), column: 0, info: info) }
        } catch {
            throw .storage(error as? StorageError ?? .invalidArgument("\(error)"), path: path)
        }
        return (try setKey(resolved, binding: binding, property: property), row)
    }

    // MARK: Operations behind MutableSet

    /// The stored key of `value` as an element of `owner`'s set property: nil when it cannot be in the set (an
    /// object of no or another Realm); throws when the value is not a valid element (too long).
    private func existingSetKey(_ value: _StoredValue, owner: ManagedObject, property: Int) throws(Realm.Error)
        -> [UInt8]?
    {
        guard case .object(let target) = value else {
            return try setKey(value, binding: owner.binding, property: property)
        }
        guard let managed = target.managed, managed.realm === self else { return nil }
        return try setKey(.int(managed.key), binding: owner.binding, property: property)
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
        mutateCollection(owner, property: property, "inserting into") { (transaction, set) throws(Realm.Error) in
            let entry = try setEntry(value, binding: owner.binding, property: property, owner: owner.key)
            try putEntry(entry.key, entry.row, in: set, binding: owner.binding, property: property, owner: owner.key)
        }
    }

    func setRemove(_ owner: ManagedObject, property: Int, _ value: _StoredValue) {
        mutateCollection(owner, property: property, "removing from") { (transaction, set) throws(Realm.Error) in
            guard let key = try existingSetKey(value, owner: owner, property: property) else { return }
            try deleteEntry(key, in: set, binding: owner.binding, property: property, owner: owner.key)
        }
    }

    func setRemoveAll(_ owner: ManagedObject, property: Int) {
        mutateCollection(owner, property: property, "removing all of") { (transaction, set) throws(Realm.Error) in
            try uncountLinks(in: set, binding: owner.binding, property: property, owner: owner.key)
            try mutate { try transaction.removeAll(in: set) }
        }
    }

    /// Puts an entry into a set or map tree, moving the backlink count from the value it replaces (if any) to
    /// the new one when the collection holds links.
    func putEntry(
        _ key: [UInt8], _ row: [UInt8], in tree: TreeHandle, binding: TableBinding, property: Int, owner: Int64
    ) throws(Realm.Error) {
        guard let transaction = writeTransactionIfAny else { throw .notInWriteTransaction }
        let old =
            holdsLinks(binding, property) || tables.isMixed(binding, property)
            ? try storage({ try transaction.get(key, in: tree) }) : nil
        try mutate { try transaction.put(key, row, in: tree) }
        if let old { try releaseElementRow(old, binding: binding, property: property, owner: owner) }
        try countElementLink(row, binding: binding, property: property, owner: owner, by: 1)
    }

    /// Deletes an entry from a set or map tree, uncounting the link its value held.
    func deleteEntry(_ key: [UInt8], in tree: TreeHandle, binding: TableBinding, property: Int, owner: Int64)
        throws(Realm.Error)
    {
        guard let transaction = writeTransactionIfAny else { throw .notInWriteTransaction }
        let old =
            holdsLinks(binding, property) || tables.isMixed(binding, property)
            ? try storage({ try transaction.get(key, in: tree) }) : nil
        _ = try mutate { try transaction.delete(key, in: tree) }
        if let old { try releaseElementRow(old, binding: binding, property: property, owner: owner) }
    }

    // MARK: Sets of a whole object

    /// Replaces the stored elements of one set property with those of `value` (a `MutableSet` or array source).
    func replaceSet(binding: TableBinding, property: Int, key: Int64, with value: _StoredValue) throws(Realm.Error) {
        try refillCollection(
            binding: binding, property: property, key: key, from: value, expected: "MutableSet",
            entries: { ($0 as? any AnyRealmList)?.storedElements },
            add: { (transaction, set, element) throws(Realm.Error) in
                let entry = try setEntry(element, binding: binding, property: property, owner: key)
                try putEntry(entry.key, entry.row, in: set, binding: binding, property: property, owner: key)
            })
    }
}

import StrataStorage

/// Capture of `Map`, `MutableSet` and `List` properties: at the commit, a touched object's synced collections
/// are compared with the version the transaction started from (see `Realm.appendCapturedTransaction`).
extension Realm {
    /// The collection kind property `index` of `binding` syncs as; nil when it is no collection or its elements
    /// do not sync yet (mixed values, embedded objects, links to objects without a primary key).
    func syncedCollection(_ binding: TableBinding, _ index: Int) -> _CollectionKind? {
        let info = binding.table.infos[index]
        guard let kind = info.collection, kind == .map, info.type != .any else { return nil }
        if info.type == .object {
            guard let target = binding.table.schema.properties[index].objectClassName,
                let stored = schemaClasses()[target]
            else { return nil }
            return !stored.embedded && stored.properties.contains(where: \.primary) ? kind : nil
        }
        return kind
    }

    /// The entries (stored key, decoded element) of object `key`'s collection `property`: in the version the
    /// write transaction started from when `inBase`, else in the transaction. Links are object keys.
    func collectionContents(_ binding: TableBinding, property: Int, key: Int64, inBase: Bool) throws(Realm.Error)
        -> [(key: [UInt8], value: _StoredValue)]
    {
        let info = tables.elementInfo(binding, property)
        var entries: [(key: [UInt8], value: _StoredValue)] = []
        if inBase {
            // `collectionView` reads nothing during a write transaction: the base snapshot is read directly.
            guard let owners = tables.view(tables.collectionTreeName(binding, property)),
                let tree = try storage({ try owners.subtree(forKey: KeyEncoding.objectKey(key)) })
            else { return [] }
            try storage {
                try tree.forEachEntry { key, value in
                    entries.append((Array(key), RowCodec.get(try RowView(value), column: 0, info: info)))
                    return true
                }
            }
        } else {
            let transaction = try activeTransaction()
            guard let tree = try tables.collectionHandle(binding, property: property, key: key, create: false) else {
                return []
            }
            try storage {
                var cursor = try transaction.makeCursor(for: tree)
                var more = try cursor.first()
                while more {
                    let row = try cursor.value()
                    let value = try row.withUnsafeBytes { RowCodec.get(try RowView($0), column: 0, info: info) }
                    entries.append((try cursor.key(), value))
                    more = try cursor.next()
                }
            }
        }
        return entries
    }

    /// What the transaction did to object `key`'s synced collection `property` (`isCreated`: the object is new, so
    /// everything in it is added); nil when nothing changed.
    func capturedCollectionChange(
        _ binding: TableBinding, property: Int, key: Int64, isCreated: Bool, targets: inout [String: TableBinding]
    ) throws(Realm.Error) -> CapturedCollectionChange? {
        let before = isCreated ? [] : try collectionContents(binding, property: property, key: key, inBase: true)
        let after = try collectionContents(binding, property: property, key: key, inBase: false)
        switch syncedCollection(binding, property) {
        case .map?:
            var old: [[UInt8]: _StoredValue] = [:]
            for entry in before { old[entry.key] = entry.value }
            var set: [String: CapturedValue] = [:]
            for entry in after {
                let previous = old.removeValue(forKey: entry.key)
                if let previous, ListElements.equal(previous, entry.value) { continue }
                set[String(decoding: entry.key, as: UTF8.self)] = try portable(
                    entry.value, binding: binding, property: property, targets: &targets)
            }
            let removed = old.keys.map { String(decoding: $0, as: UTF8.self) }.sorted()
            // A created object's map is reported even when empty: its upload clears what a previous life left.
            return set.isEmpty && removed.isEmpty && !isCreated ? nil : .map(set: set, removed: removed)
        default:
            return nil
        }
    }
}

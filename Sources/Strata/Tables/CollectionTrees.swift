import StrataStorage

/// The trees of `List`, `MutableSet` and `Map` properties: each collection property has a keyed tree (see
/// `TableNames.collection`) mapping the owner's object key to a nested tree of its elements (a list tree for
/// lists, a keyed tree for sets and maps). Finding those trees, walking and emptying them; writing elements is in
/// `ListTrees.swift`, `SetTrees.swift` and `MapTrees.swift`, and what values encode to (and the operations behind
/// the collection types) in `Realm/RealmLists.swift`, `RealmSets.swift` and `RealmMaps.swift`.
extension TableStore {
    /// The keyed tree holding every owner's nested tree for collection property `property`.
    func collectionTreeName(_ binding: TableBinding, _ property: Int) -> String { binding.collectionTrees[property] }

    /// The nested tree of `key`'s collection property `property` in the write transaction; created (a list tree
    /// for lists, a keyed tree otherwise) when `create` is set.
    func collectionHandle(_ binding: TableBinding, property: Int, key: Int64, create: Bool) throws(Realm.Error)
        -> TreeHandle?
    {
        guard let owners = try handle(collectionTreeName(binding, property), create: create),
            let transaction
        else { return nil }
        let objectKey = KeyEncoding.objectKey(key)
        if create {
            let kind: TreeKind = binding.table.infos[property].collection == .list ? .list : .keyed
            return try mutate { try transaction.subtree(forKey: objectKey, in: owners, create: kind) }
        }
        return try storage { try transaction.subtree(forKey: objectKey, in: owners) }
    }

    /// Empties a collection's tree; returns the rows of its elements that hold something to release (links, mixed
    /// values) for the caller to release (an embedded element is a row to delete).
    func removeAllEntries(in tree: TreeHandle, binding: TableBinding, property: Int) throws(Realm.Error)
        -> [[UInt8]]
    {
        let transaction = try activeTransaction()
        let released = holdsLinks(binding, property) || isMixed(binding, property) ? try elementRows(of: tree) : []
        try mutate { try transaction.removeAll(in: tree) }
        return released
    }

    /// The nested tree of `key`'s collection property `property` in the current snapshot.
    func collectionView(_ binding: TableBinding, property: Int, key: Int64) throws(Realm.Error) -> TreeView? {
        guard let owners = treeView(collectionTreeName(binding, property)) else { return nil }
        return try storage { try owners.subtree(forKey: KeyEncoding.objectKey(key)) }
    }

    /// Calls `body` with every entry of a collection's tree, in order, reading the tree in place: `handle` gives
    /// it in the write transaction, `view` in the snapshot. Keys are passed only when `keys` is set (empty
    /// otherwise). A tree holding another number of entries than its descriptor counts is damaged: that throws.
    func forEachCollectionEntry(
        keys: Bool, handle: () throws(Realm.Error) -> TreeHandle?, view: () throws(Realm.Error) -> TreeView?,
        _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws(Realm.Error) -> Void
    ) throws(Realm.Error) {
        var visited = 0
        let expected: Int
        if let transaction {
            guard let tree = try handle() else { return }
            expected = try storage {
                var cursor = try transaction.makeCursor(for: tree)
                var more = try cursor.first()
                while more {
                    let key = keys ? try cursor.key() : []
                    try key.withUnsafeBytes { key in try cursor.value().withUnsafeBytes { try body(key, $0) } }
                    visited += 1
                    more = try cursor.next()
                }
                return try transaction.count(in: tree)
            }
        } else if let tree = try view() {
            try storage {
                try tree.forEachEntry { key, value in
                    try body(keys ? key : UnsafeRawBufferPointer(start: nil, count: 0), value)
                    visited += 1
                    return true
                }
            }
            expected = tree.count
        } else {
            return
        }
        guard visited == expected else {
            throw corruptData("a collection's tree holds \(visited) entries but counts \(expected)")
        }
    }

    /// Calls `body` with the nested tree of every owner of every collection of `kind` that holds links to class
    /// `target`.
    func forEachCollection(
        _ kind: _CollectionKind, linkingTo target: String,
        _ body: (WriteTransaction, TreeHandle) throws(Realm.Error) -> Void
    ) throws(Realm.Error) {
        guard let transaction else { throw .notInWriteTransaction }
        for (name, stored) in storedClasses {
            for property in stored.properties where property.collection == kind && property.objectClassName == target {
                guard let owners = try handle(TableNames.collection(kind, name, property.name), create: false)
                else { continue }
                let keys: [[UInt8]] = try storage {
                    var keys: [[UInt8]] = []
                    var cursor = try transaction.makeCursor(for: owners)
                    var more = try cursor.first()
                    while more {
                        keys.append(try cursor.key())
                        more = try cursor.next()
                    }
                    return keys
                }
                for key in keys {
                    guard let tree = try storage({ try transaction.subtree(forKey: key, in: owners) }) else { continue }
                    try body(transaction, tree)
                }
            }
        }
    }
}

/// Releasing what collection elements hold when their trees are emptied or deleted.
extension TableStore {
    /// Deletes the nested trees of object `key`'s collections.
    func deleteCollections(binding: TableBinding, key: Int64) throws(Realm.Error) {
        guard let transaction else { throw .notInWriteTransaction }
        for property in binding.table.infos.indices where binding.table.infos[property].isCollection {
            guard let owners = try handle(collectionTreeName(binding, property), create: false) else { continue }
            let objectKey = KeyEncoding.objectKey(key)
            if holdsLinks(binding, property),
                let tree = try storage({ try transaction.subtree(forKey: objectKey, in: owners) })
            {
                try uncountLinks(in: tree, binding: binding, property: property, owner: key)
            }
            _ = try mutate { try transaction.delete(objectKey, in: owners) }
        }
    }

    /// Releases what the elements of a collection tree about to be emptied or deleted hold: link counts, and
    /// the nested collections of mixed values.
    func uncountLinks(in tree: TreeHandle, binding: TableBinding, property: Int, owner ownerKey: Int64)
        throws(Realm.Error)
    {
        guard holdsLinks(binding, property) || isMixed(binding, property) else { return }
        for row in try elementRows(of: tree) {
            try releaseElementRow(row, binding: binding, property: property, owner: ownerKey)
        }
    }

    /// Releases what a stored collection element row held: its link's backlink count (and the embedded object
    /// it is, which goes with its collection), or its mixed value.
    func releaseElementRow(_ row: [UInt8], binding: TableBinding, property: Int, owner: Int64) throws(Realm.Error) {
        if holdsLinks(binding, property) {
            try countElementLink(row, binding: binding, property: property, owner: owner, by: -1)
            if let embedded = try embeddedBinding(binding, property: property),
                let child = Self.linkedKey(inElementRow: row)
            {
                try remove(binding: embedded, key: child)
            }
        } else if isMixed(binding, property), let bytes = MixedCodec.bytes(inElementRow: row) {
            try releaseMixed(bytes, binding: binding, property: property, owner: owner)
        }
    }
}

import StrataStorage

/// The secondary-index trees `i:<class>.<property>`: an indexed property's encoded value + object key → nothing
/// (see `KeyEncoding.indexEntry`), or for a full-text index posting blocks per word (see `FullTextPostings.swift`;
/// a write's new postings are held and written in batches, see `PendingPostings`). Row writes and deletions move
/// an object's entries; during a migration they are rebuilt at its end instead.
extension TableStore {
    /// Moves the object's entries in the secondary indexes from its `old` values to its `new` ones (nil: no row).
    func updateIndexes(binding: TableBinding, key: Int64, old: [_StoredValue]?, new: [_StoredValue]?)
        throws(Realm.Error)
    {
        if let migration {
            // Rebuilt when the migration ends (see `MigrationState`).
            migration.touched.insert(binding.className)
            return
        }
        guard !binding.secondaryIndexes.isEmpty else { return }
        let transaction = try transactionForWrite()
        for index in binding.secondaryIndexes {
            if binding.table.schema.properties[index].isFullTextIndexed {
                if old == nil {
                    // A new object: its words go straight to the held postings.
                    if case .string(let text)? = new?[index] {
                        try addPostings(of: text, key: key, tree: binding.indexTrees[index])
                    }
                    continue
                }
                let before = old.map { FullText.entries($0[index], key: key) } ?? []
                let after = new.map { FullText.entries($0[index], key: key) } ?? []
                guard before != after else { continue }
                let name = binding.indexTrees[index]
                var flushed = false
                try storage {
                    try FullText.forEachChange(
                        from: before, to: after,
                        removed: { entry in
                            // What is held must stay what the tree lacks: the held postings go in first.
                            if !flushed {
                                try flushPostings(tree: name)
                                flushed = true
                            }
                            let tree = try handle(name, create: true)!
                            try mutate { try FullText.removePosting(entry, in: tree, transaction) }
                        },
                        added: { try addPosting($0, tree: name) })
                }
                continue
            }
            let before = old.flatMap { KeyEncoding.indexEntry($0[index], key: key) }
            let after = new.flatMap { KeyEncoding.indexEntry($0[index], key: key) }
            guard before != after else { continue }
            let tree = try handle(binding.indexTrees[index], create: true)!
            try mutate {
                if let before { _ = try transaction.delete(before, in: tree) }
                if let after { try transaction.put(after, [UInt8](), in: tree) }
            }
        }
    }
}

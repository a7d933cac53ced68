import StrataStorage

/// Deleting rows: one object (its embedded objects, primary key, index entries, link counts, collections and the
/// links to it), or every object of a class at once by emptying its trees.
extension TableStore {
    /// Deletes a row: its embedded objects, its primary key entry, and links to it in every table. An embedded
    /// object is only unlinked from its parent when deleted on its own (`direct`); otherwise the parent is
    /// replacing or deleting it and drops the link itself.
    /// Returns false, changing nothing, when there is no such row. `current` is the row as of the current
    /// generation when the caller holds it (an accessor that read it): a plain row is then not read again.
    @discardableResult
    func remove(binding: TableBinding, key: Int64, direct: Bool = false, current: RowView? = nil)
        throws(Realm.Error) -> Bool
    {
        if binding.plainRows {
            // A plain row is read only for its primary key (and to learn that it exists, which the rows tree's
            // delete answers too): without one, or when it is known, the row is not read (~2,400 instructions, a
            // sixth of a scattered delete with its lookup).
            if let index = binding.table.primaryKeyIndex {
                if let current {
                    let primary = RowCodec.get(
                        current, column: binding.columns[index], info: binding.table.infos[index])
                    return try removePlain(
                        binding: binding, key: key, direct: direct, primaryKey: KeyEncoding.primaryKey(primary))
                }
                if let encoded = lookedUpPrimaryKey(binding, key: key) {
                    return try removePlain(binding: binding, key: key, direct: direct, primaryKey: encoded)
                }
            } else {
                return try removePlain(binding: binding, key: key, direct: direct, primaryKey: nil)
            }
        }
        let transaction = try transactionForWrite()
        // A plain row (``TableBinding/plainRows``) keeps nothing else in step but its primary key: only that column
        // is decoded (decoding every column was a sixth of a scattered delete), and `values` stays nil.
        let values: [_StoredValue]?
        let primary: _StoredValue?
        if binding.plainRows {
            let primaryKey = binding.table.primaryKeyIndex
            guard
                let found = try withRow(
                    binding, key: key,
                    { row in
                        primaryKey.map { RowCodec.get(row, column: binding.columns[$0], info: binding.table.infos[$0]) }
                    })
            else { return false }
            (values, primary) = (nil, found)
        } else {
            guard let all = try rowValues(binding: binding, key: key) else { return false }
            (values, primary) = (all, binding.table.primaryKeyIndex.map { all[$0] })
        }
        syncCapture?.touch(binding, key)
        if let values { try deleteEmbedded(binding: binding, values: values) }
        if let primary, let encoded = KeyEncoding.primaryKey(primary), let primaryKeys = try primaryKeys(binding) {
            _ = try mutate { try transaction.delete(encoded, in: primaryKeys) }
        }
        if let rows = try rowsHandle(binding) {
            _ = try mutate { try KeyEncoding.withObjectKey(key) { try transaction.delete($0, in: rows) } }
        }
        if let values {
            try updateIndexes(binding: binding, key: key, old: values, new: nil)
            try updateToOneBacklinks(binding: binding, key: key, old: values, new: nil)
            try releaseReplacedMixed(binding: binding, key: key, old: values, new: nil)
            try deleteCollections(binding: binding, key: key)
        }
        if binding.table.kind == .object || direct { try unlinkIncoming(target: binding.className, key: key) }
        return true
    }

    /// `remove` of a plain row (``TableBinding/plainRows``) whose encoded primary key is known (nil: none): the
    /// row goes first, so that a missing one returns false having changed nothing, then its primary-key entry.
    private func removePlain(binding: TableBinding, key: Int64, direct: Bool, primaryKey: [UInt8]?)
        throws(Realm.Error) -> Bool
    {
        let transaction = try transactionForWrite()
        guard let rows = try rowsHandle(binding),
            try mutate({ try KeyEncoding.withObjectKey(key) { try transaction.delete($0, in: rows) } })
        else { return false }
        syncCapture?.touch(binding, key)
        if let primaryKey, let primaryKeys = try primaryKeys(binding) {
            _ = try mutate { try transaction.delete(primaryKey, in: primaryKeys) }
        }
        if binding.table.kind == .object || direct { try unlinkIncoming(target: binding.className, key: key) }
        return true
    }

    /// Deletes the embedded objects row `key` holds in its to-one properties.
    func deleteEmbedded(binding: TableBinding, key: Int64) throws(Realm.Error) {
        guard let values = try rowValues(binding: binding, key: key) else { return }
        try deleteEmbedded(binding: binding, values: values)
    }

    /// Deletes the embedded objects that `values`, a row's stored values, hold in their to-one properties.
    private func deleteEmbedded(binding: TableBinding, values: [_StoredValue]) throws(Realm.Error) {
        for index in binding.table.infos.indices {
            guard let embedded = try embeddedBinding(binding, property: index), case .int(let child) = values[index]
            else { continue }
            try remove(binding: embedded, key: child)
        }
    }

    /// The binding of the embedded type that property `property` holds, or nil if it holds no embedded object.
    func embeddedBinding(_ binding: TableBinding, property: Int) throws(Realm.Error) -> TableBinding? {
        let info = binding.table.infos[property]
        guard info.type == .object else { return nil }
        if let target = info.objectType {
            return target is EmbeddedObject.Type ? try self.binding(for: target) : nil
        }
        guard let name = binding.table.schema.properties[property].objectClassName,
            storedClasses[name]?.embedded == true
        else { return nil }
        return try dynamicBinding(name)
    }

    /// Deletes every object of `binding`'s type: embedded objects they own, links to them, their rows, primary
    /// keys and index entries.
    func removeAll(binding: TableBinding) throws(Realm.Error) {
        let transaction = try transactionForWrite()
        var ownsEmbedded = false
        for index in binding.table.infos.indices where try embeddedBinding(binding, property: index) != nil {
            ownsEmbedded = true
        }
        if ownsEmbedded {
            for key in try objectKeys(tree: binding.rowsTree) {
                try deleteEmbedded(binding: binding, key: key)
                // Embedded objects held in lists and maps go with their collections.
                try deleteCollections(binding: binding, key: key)
            }
        }
        if binding.table.kind == .object {
            if storedClasses.values.contains(where: { $0.properties.contains { $0.type == .any } }) {
                for key in try objectKeys(tree: binding.rowsTree) {
                    try unlinkIncomingMixed(target: binding.className, key: key)
                }
            }
            try nullifyLinks(to: binding.className)
            try removeFromLists(target: binding.className)
            try removeFromSets(target: binding.className)
            try nullifyInMaps(target: binding.className)
        }
        let properties = binding.table.schema.properties
        let backlinks =
            (storedClasses[binding.className].map {
                backlinkTrees(ofOrigin: binding.className, $0) + mixedTrees(of: binding.className, $0)
            } ?? []) + backlinkTrees(linkingTo: binding.className)
        let trees =
            backlinks + [binding.rowsTree, binding.primaryKeyTree]
            + properties.filter { $0.isIndexed && !$0.isPrimary }.map {
                TableNames.index(binding.className, $0.columnName)
            }
            + binding.table.infos.indices.compactMap { property in
                binding.table.infos[property].collection.map {
                    TableNames.collection($0, binding.className, properties[property].columnName)
                }
            }
        for tree in trees {
            discardPostings(tree: tree)
            guard let handle = try handle(tree, create: false) else { continue }
            try mutate { try transaction.removeAll(in: handle) }
        }
    }

    /// Sets every to-one link to an object of class `target` to nil (deleting every object of it).
    private func nullifyLinks(to target: String) throws(Realm.Error) {
        for (name, stored) in storedClasses {
            let columns = stored.properties.indices.filter {
                stored.properties[$0].type == .object && stored.properties[$0].objectClassName == target
            }
            guard !columns.isEmpty, let rows = try handle(TableNames.rows(name), create: false) else { continue }
            try rewriteRows(in: rows) { _, row in
                let matching = columns.filter { !row.isNull($0) }
                guard !matching.isEmpty else { return nil }
                return RowRewriter.nullify(row, columns: matching, properties: stored.properties)
            }
        }
    }

    /// Deletes every object of every stored class: empties every tree of the object layer.
    func removeEverything() throws(Realm.Error) {
        let transaction = try transactionForWrite()
        try mutate {
            for (name, stored) in storedClasses {
                let indexes = stored.properties.filter { $0.indexed && !$0.primary }
                let collections = stored.properties.compactMap { property in
                    property.collection.map { TableNames.collection($0, name, property.name) }
                }
                let trees =
                    [TableNames.rows(name), TableNames.primaryKeys(name)]
                    + indexes.map { TableNames.index(name, $0.name) } + collections
                    + backlinkTrees(ofOrigin: name, stored) + mixedTrees(of: name, stored)
                for tree in trees {
                    discardPostings(tree: tree)
                    if let handle = try handle(tree, create: false) { try transaction.removeAll(in: handle) }
                }
            }
        }
    }
}

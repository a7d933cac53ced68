import StrataStorage

/// What a migration in progress has done so far (see `TableStore.migration`).
final class MigrationState {
    /// The classes of the new schema.
    let targets: Set<String>
    /// Classes whose rows were written: their primary keys and indexes are rebuilt at the end.
    var touched: Set<String> = []
    /// Whether classes or properties changed shape (converted, renamed, deleted): trees are swept and links
    /// counted again at the end.
    var restructured = false

    init(targets: Set<String>) { self.targets = targets }
}

/// A migration's data rewrites: rows converted to a class's new layout, a property's values and trees renamed,
/// trees no definition accounts for dropped, and what the migration leaves to its end rebuilt (collections of
/// deleted owners, orphaned embedded objects, primary keys and indexes). Deciding when to migrate and running the
/// migration block is `Realm/RealmMigration.swift`'s.
extension TableStore {
    /// Whether the values of `old` can be kept by `new` (same name, stored type, target class and collection).
    static func carriesOver(_ old: StoredClass.StoredProperty, _ new: StoredClass.StoredProperty) -> Bool {
        old.name == new.name && old.type == new.type && old.objectClassName == new.objectClassName
            && old.collection == new.collection
    }

    /// The value a required property gets where it has none: the type's zero value (a fresh one for `UUID` and
    /// `ObjectId`, whose zero would collide).
    static func zeroValue(_ property: StoredClass.StoredProperty) -> _StoredValue {
        guard !property.optional, property.collection == nil else { return .null }
        return property.type.codec.zeroValue()
    }

    /// Rewrites every row of class `name` from the layout of `old` to that of `new`. Trees of a property that
    /// changed type are dropped (the new one starts empty); trees of removed properties stay until the
    /// migration ends, for a rename. `started` is called with the number of rows before the first is
    /// converted, `converted` after each (neither when the class has no rows tree).
    func convertRows(
        of name: String, from old: StoredClass, to new: StoredClass, started: (_ total: Int) -> Void,
        converted: () -> Void
    ) throws(Realm.Error) {
        for property in old.properties {
            guard let now = new.properties.first(where: { $0.name == property.name }),
                !Self.carriesOver(property, now)
            else { continue }
            if let kind = property.collection { try dropTree(TableNames.collection(kind, name, property.name)) }
            try dropTree(TableNames.mixed(name, property.name))
            try dropTree(TableNames.backlinks(name, property.name))
        }
        guard let rows = try handle(TableNames.rows(name), create: false) else { return }
        let sources: [Int?] = new.properties.map { property in
            old.properties.firstIndex { Self.carriesOver($0, property) }
        }
        let oldInfos = old.properties.map {
            _PropertyInfo(type: $0.type, isOptional: $0.optional, collection: $0.collection)
        }
        started(try storage { try activeTransaction().count(in: rows) })
        try rewriteRows(in: rows) { _, view in
            converted()
            var builder = RowBuilder(columns: new.properties.count)
            for (column, property) in new.properties.enumerated() {
                var value: _StoredValue = .null
                if let source = sources[column], source < view.columnCount {
                    value = RowCodec.get(view, column: source, info: oldInfos[source])
                }
                if case .null = value { value = Self.zeroValue(property) }
                try RowCodec.set(value, column: column, in: &builder, type: name, property: property.name)
            }
            return builder.finish()
        }
    }

    /// Moves the values of property `source` of the old definition of class `name` (whose rows `oldRows` reads)
    /// into property `target` of its new definition `newClass`: collection, mixed and backlink trees are
    /// renamed, plain values copied into each row. The caller checked that the two properties hold the same type.
    func renameProperty(
        of name: String, from oldProperty: StoredClass.StoredProperty, column source: Int, to target: Int,
        in newClass: StoredClass, oldRows: TableStore
    ) throws(Realm.Error) {
        let from = oldProperty.name
        let to = newClass.properties[target].name
        let transaction = try activeTransaction()
        // Collections and mixed values keep their trees: only the names change.
        var trees: [(String, String)] = []
        if let kind = oldProperty.collection {
            trees.append((TableNames.collection(kind, name, from), TableNames.collection(kind, name, to)))
        } else if oldProperty.type == .any {
            trees.append((TableNames.mixed(name, from), TableNames.mixed(name, to)))
        }
        if oldProperty.type == .object || oldProperty.type == .any {
            // The links' counts move with them: deletions in the rest of the block find them under the new name.
            trees.append((TableNames.backlinks(name, from), TableNames.backlinks(name, to)))
        }
        for (fromTree, toTree) in trees {
            try dropTree(toTree)
            _ = try mutate { try transaction.renameTree(named: fromTree, to: toTree) }
        }
        invalidateWriteCaches()
        guard oldProperty.collection == nil, let rows = try handle(TableNames.rows(name), create: false) else {
            return
        }
        let info = _PropertyInfo(type: oldProperty.type, isOptional: oldProperty.optional)
        let property = newClass.properties[target]
        try rewriteRows(in: rows) { key, row in
            let objectKey = KeyEncoding.decodeObjectKey(key)
            guard
                var value = try oldRows.withRow(
                    tree: TableNames.rows(name), key: objectKey, { RowCodec.get($0, column: source, info: info) })
            else { return nil }
            if case .null = value { value = Self.zeroValue(property) }
            return try RowRewriter.replacing(column: target, with: value, in: row, properties: newClass.properties)
        }
    }

    /// Drops the named tree `name` if it exists.
    func dropTree(_ name: String) throws(Realm.Error) {
        discardPostings(tree: name)
        let transaction = try activeTransaction()
        _ = try mutate { try transaction.dropTree(named: name) }
        invalidateWriteCaches()
    }

    /// Drops every tree of the file (a reset).
    func dropAllTrees() throws(Realm.Error) {
        let transaction = try activeTransaction()
        for name in try storage({ try transaction.treeNames() }) { try dropTree(name) }
    }

    /// Drops every tree of the object layer that no stored class definition accounts for: trees of deleted
    /// classes, of removed properties, and indexes or collections a property no longer has.
    func sweepTrees() throws(Realm.Error) {
        let transaction = try activeTransaction()
        let classes = storedClasses
        for tree in try storage({ try transaction.treeNames() }) where !Self.isAccountedFor(tree, classes) {
            try dropTree(tree)
        }
    }

    private static func isAccountedFor(_ tree: String, _ classes: [String: StoredClass]) -> Bool {
        guard tree.count > 2, tree.dropFirst().first == ":" else { return true }
        let prefix = tree.first!
        let rest = String(tree.dropFirst(2))
        switch prefix {
        case "o": return classes[rest] != nil
        case "p": return classes[rest]?.properties.contains(where: \.primary) == true
        case "i", "l", "s", "m", "x", "b":
            for (name, stored) in classes where rest.hasPrefix(name + ".") {
                let propertyName = String(rest.dropFirst(name.count + 1))
                guard let property = stored.properties.first(where: { $0.name == propertyName }) else { continue }
                switch prefix {
                case "i": if property.indexed && !property.primary { return true }
                case "l": if property.collection == .list { return true }
                case "s": if property.collection == .set { return true }
                case "m": if property.collection == .map { return true }
                case "x": if property.type == .any { return true }
                default: if property.type == .object || property.type == .any { return true }
                }
            }
            return false
        default: return true
        }
    }

    /// Removes the collections of class `name` whose owner no longer exists.
    func pruneCollections(of name: String) throws(Realm.Error) {
        guard let stored = storedClasses[name] else { return }
        let transaction = try activeTransaction()
        let owners = Set(try objectKeys(tree: TableNames.rows(name)))
        for property in stored.properties {
            guard let kind = property.collection,
                let tree = try handle(TableNames.collection(kind, name, property.name), create: false)
            else { continue }
            try mutate {
                var stale: [[UInt8]] = []
                var cursor = try transaction.makeCursor(for: tree)
                var more = try cursor.first()
                while more {
                    let key = try cursor.key()
                    if !owners.contains(KeyEncoding.decodeObjectKey(key)) { stale.append(key) }
                    more = try cursor.next()
                }
                for key in stale { _ = try transaction.delete(key, in: tree) }
            }
        }
    }

    /// Deletes embedded objects that no parent links to; fails if one has several parents.
    func deleteOrphanedEmbedded() throws(Realm.Error) {
        for (name, stored) in storedClasses where stored.embedded {
            var parents: [Int64: Int] = [:]
            for tree in backlinkTrees(linkingTo: name) {
                for (key, count) in try backlinkCounts(tree: tree) { parents[key, default: 0] += count }
            }
            let binding = try dynamicBinding(name)
            for key in try objectKeys(tree: TableNames.rows(name)) {
                let count = parents[key] ?? 0
                if count == 0 {
                    try remove(binding: binding, key: key)
                } else if count > 1 {
                    throw Realm.Error.invalidValue(
                        type: name, property: "",
                        reason:
                            "embedded object \(key) has \(count) parents after the migration; it must have exactly one"
                    )
                }
            }
        }
    }

    /// Link counts per target key in backlink tree `name`.
    private func backlinkCounts(tree name: String) throws(Realm.Error) -> [(Int64, Int)] {
        let transaction = try activeTransaction()
        guard let tree = try handle(name, create: false) else { return [] }
        return try storage {
            var counts: [(Int64, Int)] = []
            var cursor = try transaction.makeCursor(for: tree)
            var more = try cursor.first()
            while more {
                let key = try cursor.key()
                let value = try cursor.value()
                if key.count == 16, value.count == 4 {
                    let count = value.withUnsafeBytes { Int($0.loadUnaligned(as: UInt32.self).littleEndian) }
                    counts.append((KeyEncoding.decodeObjectKey(Array(key[0..<8])), count))
                }
                more = try cursor.next()
            }
            return counts
        }
    }

    /// Rebuilds the primary-key tree and the indexes of class `name` from its rows; a duplicate primary key
    /// fails. `maxKeySize` is the store's.
    func rebuildKeys(of name: String, maxKeySize: Int) throws(Realm.Error) {
        guard let stored = storedClasses[name] else { return }
        let transaction = try activeTransaction()
        let binding = try dynamicBinding(name)
        let primary = stored.properties.firstIndex(where: \.primary)
        let indexed = stored.properties.indices.filter {
            stored.properties[$0].indexed && !stored.properties[$0].primary
        }
        guard primary != nil || !indexed.isEmpty else { return }
        try dropTree(TableNames.primaryKeys(name))
        for column in indexed { try dropTree(TableNames.index(name, stored.properties[column].name)) }
        let primaryKeys = primary == nil ? nil : try handle(TableNames.primaryKeys(name), create: true)
        let indexes = try indexed.map { column throws(Realm.Error) in
            try handle(TableNames.index(name, stored.properties[column].name), create: true)!
        }
        guard let rows = try handle(TableNames.rows(name), create: false) else { return }
        var entries: [(key: Int64, values: [_StoredValue])] = []
        try storage {
            var cursor = try transaction.makeCursor(for: rows)
            var more = try cursor.first()
            while more {
                let key = KeyEncoding.decodeObjectKey(try cursor.key())
                let values: [_StoredValue] = try cursor.value().withUnsafeBytes { raw in
                    let view = try RowView(raw)
                    return ([primary].compactMap { $0 } + indexed).map {
                        RowCodec.get(view, column: binding.columns[$0], info: binding.table.infos[$0])
                    }
                }
                entries.append((key, values))
                more = try cursor.next()
            }
        }
        for (key, values) in entries {
            var values = values[...]
            if let primary, let primaryKeys {
                let value = values.removeFirst()
                let encoded = try encodedPrimaryKey(value, binding: binding, property: primary, maxKeySize: maxKeySize)
                if try mutate({ try transaction.get(encoded, in: primaryKeys) }) != nil {
                    throw Realm.Error.primaryKeyExists(type: name, value: KeyEncoding.describe(value))
                }
                try mutate { try transaction.put(encoded, KeyEncoding.objectKey(key), in: primaryKeys) }
            }
            for (position, value) in values.enumerated() {
                if stored.properties[indexed[position]].isFullText {
                    let tree = TableNames.index(name, stored.properties[indexed[position]].name)
                    for entry in FullText.entries(value, key: key) { try addPosting(entry, tree: tree) }
                    continue
                }
                if let entry = KeyEncoding.indexEntry(value, key: key) {
                    try mutate { try transaction.put(entry, [UInt8](), in: indexes[position]) }
                }
            }
        }
    }
}

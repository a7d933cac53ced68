import Foundation
import StrataStorage

/// Schema versions at open: migrations, resets, and the checks that decide between them.
///
/// A migration is one write transaction on the migrated Realm. Old objects are read from the version the
/// transaction started from (a second, read-only Realm on that snapshot), so the conversion can rewrite rows in
/// place while the block still sees every old value. Primary-key and index trees are not maintained while the
/// block runs (keys may collide until it finishes); they are rebuilt for every class the migration wrote, and a
/// duplicate primary key then fails the whole migration.
/// What a migration in progress has done so far.
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

extension Realm {
    /// Compares the file's schema version and classes with the configuration's and migrates, resets or fails.
    func prepareSchema() throws {
        guard let fileVersion = fileSchemaVersion else { return }
        let configured = configuration.schemaVersion
        let migrating = fileVersion < configured || configuration.deleteRealmIfMigrationNeeded
        guard migrating || fileVersion > configured else { return }
        let tables = try migrationTables()
        let differences = tables.flatMap { table in
            schemaClasses()[table.className].map { $0.differences(from: table.schema) } ?? []
        }
        if configuration.deleteRealmIfMigrationNeeded && !configuration.readOnly
            && (fileVersion > configured || !differences.isEmpty)
        {
            try write { try resetFile(tables) }
            return
        }
        if fileVersion > configured {
            throw Realm.Error.invalidSchemaVersion(fileVersion: fileVersion, configuredVersion: configured)
        }
        guard fileVersion < configured else { return }
        if configuration.readOnly {
            guard differences.isEmpty else {
                throw Realm.Error.migrationRequired(fileVersion: fileVersion, configuredVersion: configured)
            }
            return
        }
        try migrate(to: tables)
    }

    /// The classes a migration converts: the configuration's types (and those they link to), or without a list,
    /// the model types this process has used whose classes the file stores (a class name two types share is
    /// left alone).
    private func migrationTables() throws(Realm.Error) -> [TableSchema] {
        if let types = configuration.objectTypes { return try SchemaRegistry.shared.closure(of: types) }
        let stored = schemaClasses()
        var byName: [String: [ObjectBase.Type]] = [:]
        for type in SchemaRegistry.shared.knownTypes() where stored[type.className()] != nil {
            byName[type.className(), default: []].append(type)
        }
        return try SchemaRegistry.shared.closure(of: byName.values.compactMap { $0.count == 1 ? $0[0] : nil })
    }

    /// Empties the file and stores the schema of `tables` (`deleteRealmIfMigrationNeeded`).
    private func resetFile(_ tables: [TableSchema]) throws(Realm.Error) {
        let transaction = try activeTransaction()
        for name in try storage({ try transaction.treeNames() }) { try dropTree(name) }
        forgetStoredSchema()
        try recordSchemaVersion()
        for table in tables { try registerTable(table) }
    }

    /// Runs the migration to `tables` in one write transaction; on any failure nothing of it is applied.
    private func migrate(to tables: [TableSchema]) throws {
        try openWrite()
        do {
            // Another Realm may have migrated the file while this one waited for the write lock.
            guard let fileVersion = fileSchemaVersion, fileVersion < configuration.schemaVersion else {
                cancelWrite()
                return try prepareSchema()
            }
            let old = try Realm(migrationSourceOf: self, snapshot: try storage { try store.read() })
            let state = MigrationState(targets: Set(tables.map(\.className)))
            migrationState = state
            defer { migrationState = nil }
            try convertClasses(to: tables)
            if let block = configuration.migrationBlock {
                let migration = Migration(realm: self, old: old)
                block(migration, fileVersion)
                if let failure = migration.failure { throw failure }
            }
            try finishMigration(state)
            try recordSchemaVersion()
            try commitWrite()
        } catch {
            cancelWrite()
            throw error
        }
    }

    // MARK: Conversion

    /// Whether the values of `old` can be kept by `new` (same name, stored type, target class and collection).
    private static func carriesOver(_ old: StoredClass.StoredProperty, _ new: StoredClass.StoredProperty) -> Bool {
        old.name == new.name && old.type == new.type && old.objectClassName == new.objectClassName
            && old.collection == new.collection
    }

    /// The value a required property gets where it has none: the type's zero value (a fresh one for `UUID` and
    /// `ObjectId`, whose zero would collide).
    static func zeroValue(_ property: StoredClass.StoredProperty) -> _StoredValue {
        guard !property.optional, property.collection == nil else { return .null }
        return property.type.codec.zeroValue()
    }

    /// Stores each class of `tables` as its model declares it, converting the rows of classes the file has.
    private func convertClasses(to tables: [TableSchema]) throws(Realm.Error) {
        for table in tables {
            let new = StoredClass(table.schema)
            if let old = schemaClasses()[table.className] {
                guard old != new else { continue }
                try convertRows(of: table.className, from: old, to: new)
                try storeClassDefinition(new, named: table.className)
                migrationState?.touched.insert(table.className)
            } else {
                try registerTable(table)
            }
            migrationState?.restructured = true
        }
        guard migrationState?.restructured == true else { return }
        invalidateWriteCaches()
        // Links may have appeared, gone, or changed target: count them again for the block's deletions.
        try self.tables.rebuildBacklinks()
    }

    /// Rewrites every row of class `name` from the layout of `old` to that of `new`. Trees of a property that
    /// changed type are dropped (the new one starts empty); trees of removed properties stay until the
    /// migration ends, for ``Migration/renameProperty(onType:from:to:)``.
    private func convertRows(of name: String, from old: StoredClass, to new: StoredClass) throws(Realm.Error) {
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
        var progress = MigrationProgressCounter(
            events: Realm.eventHandler(configuration), path: path, className: name,
            total: try storage { try activeTransaction().count(in: rows) })
        defer { progress?.finish() }
        try tables.rewriteRows(in: rows) { _, view in
            progress?.objectDone()
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

    /// Drops the named tree `name` if it exists.
    func dropTree(_ name: String) throws(Realm.Error) {
        let transaction = try activeTransaction()
        _ = try mutate { try transaction.dropTree(named: name) }
        invalidateWriteCaches()
    }

    /// Drops every tree of the object layer that no stored class definition accounts for: trees of deleted
    /// classes, of removed properties, and indexes or collections a property no longer has.
    private func sweepTrees() throws(Realm.Error) {
        let transaction = try activeTransaction()
        let classes = schemaClasses()
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

    // MARK: Finishing

    /// Makes the migrated file consistent: unaccounted trees dropped, collections of deleted objects removed,
    /// links counted again, orphaned embedded objects deleted, primary keys and indexes rebuilt.
    private func finishMigration(_ state: MigrationState) throws(Realm.Error) {
        if let failure = failureOfWrite { throw failure }
        if state.restructured {
            try sweepTrees()
            for name in state.touched where schemaClasses()[name] != nil { try pruneCollections(of: name) }
            try tables.rebuildBacklinks()
            try deleteOrphanedEmbedded()
        }
        for name in state.touched.sorted() where schemaClasses()[name] != nil { try rebuildKeys(of: name) }
        if let failure = failureOfWrite { throw failure }
    }

    /// Removes the collections of class `name` whose owner no longer exists.
    private func pruneCollections(of name: String) throws(Realm.Error) {
        guard let stored = schemaClasses()[name] else { return }
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
    private func deleteOrphanedEmbedded() throws(Realm.Error) {
        for (name, stored) in schemaClasses() where stored.embedded {
            var parents: [Int64: Int] = [:]
            for tree in tables.backlinkTrees(linkingTo: name) {
                for (key, count) in try backlinkCounts(tree: tree) { parents[key, default: 0] += count }
            }
            let binding = try dynamicBinding(name)
            for key in try objectKeys(tree: TableNames.rows(name)) {
                let count = parents[key] ?? 0
                if count == 0 {
                    try tables.remove(binding: binding, key: key)
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

    /// Rebuilds the primary-key tree and the indexes of class `name` from its rows.
    private func rebuildKeys(of name: String) throws(Realm.Error) {
        guard let stored = schemaClasses()[name] else { return }
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
                let encoded = try encodedPrimaryKey(value, binding: binding, property: primary)
                if try mutate({ try transaction.get(encoded, in: primaryKeys) }) != nil {
                    throw Realm.Error.primaryKeyExists(type: name, value: KeyEncoding.describe(value))
                }
                try mutate { try transaction.put(encoded, KeyEncoding.objectKey(key), in: primaryKeys) }
            }
            for (position, value) in values.enumerated() {
                let entries: Set<[UInt8]> =
                    stored.properties[indexed[position]].isFullText
                    ? FullText.entries(value, key: key) : KeyEncoding.indexEntry(value, key: key).map { [$0] } ?? []
                for entry in entries {
                    try mutate { try transaction.put(entry, [UInt8](), in: indexes[position]) }
                }
            }
        }
    }

    // MARK: Operations of the block

    /// Calls `block` with the old and new version of every object of class `name` (see
    /// ``Migration/enumerateObjects(ofType:_:)``).
    func enumerateMigrated(
        _ name: String, old: Realm, _ block: (_ oldObject: MigrationObject?, _ newObject: MigrationObject?) -> Void
    ) throws(Realm.Error) {
        let newBinding = schemaClasses()[name] == nil ? nil : try dynamicBinding(name)
        guard old.schemaClasses()[name] != nil else {
            guard let newBinding else {
                throw Realm.Error.invalidValue(
                    type: name, property: "", reason: "neither the old nor the new schema has this class")
            }
            for key in try objectKeys(tree: TableNames.rows(name)) {
                block(nil, object(newBinding, key: key) as? DynamicObject)
            }
            return
        }
        let oldBinding = try old.dynamicBinding(name)
        for key in try old.objectKeys(tree: TableNames.rows(name)) {
            var newObject: DynamicObject?
            if let newBinding, try withRow(tree: TableNames.rows(name), key: key, { _ in true }) == true {
                newObject = object(newBinding, key: key) as? DynamicObject
            }
            block(old.object(oldBinding, key: key) as? DynamicObject, newObject)
        }
    }

    /// Creates an object of class `name` of the new schema from `value`.
    func createMigrated(_ name: String, value: Any) throws(Realm.Error) -> DynamicObject {
        guard let stored = schemaClasses()[name] else {
            throw Realm.Error.invalidValue(type: name, property: "", reason: "the new schema has no class of this name")
        }
        let binding = try dynamicBinding(name)
        guard binding.table.kind == .object else {
            throw Realm.Error.invalidValue(
                type: name, property: "",
                reason: binding.table.kind == .embedded
                    ? "embedded objects are created by setting them on their parent"
                    : "asymmetric objects cannot be created in a migration")
        }
        let key = try tables.insertRow(binding: binding, values: stored.properties.map(Self.zeroValue))
        guard let object = object(binding, key: key) as? DynamicObject else {
            throw Realm.Error.invalidValue(type: name, property: "", reason: "not a stored class")
        }
        try ObjectValues.apply(value, to: object, schema: binding.table)
        if let failure = failureOfWrite { throw failure }
        return object
    }

    /// Deletes every object of class `name`, and the class when the new schema does not have it.
    func deleteMigratedData(_ name: String) throws(Realm.Error) -> Bool {
        guard schemaClasses()[name] != nil, let state = migrationState else { return false }
        try tables.removeAll(binding: try dynamicBinding(name))
        state.touched.insert(name)
        if !state.targets.contains(name) {
            try storeClassDefinition(nil, named: name)
            state.restructured = true
            try sweepTrees()
        }
        return true
    }

    /// Moves the values of `from` (old schema only) into `to` (new schema only) on class `name`.
    func renameMigratedProperty(_ name: String, from: String, to: String, old: Realm) throws(Realm.Error) {
        func failure(_ reason: String) -> Realm.Error { .invalidValue(type: name, property: from, reason: reason) }
        guard let oldClass = old.schemaClasses()[name], let newClass = schemaClasses()[name] else {
            throw failure("both the old and the new schema must have the class to rename a property")
        }
        guard let source = oldClass.properties.firstIndex(where: { $0.name == from }) else {
            throw failure("the old schema has no such property")
        }
        guard let target = newClass.properties.firstIndex(where: { $0.name == to }) else {
            throw failure("the new schema has no property \(to)")
        }
        guard !newClass.properties.contains(where: { $0.name == from }) else {
            throw failure("the new schema still has the property; rename it in the model first")
        }
        guard !oldClass.properties.contains(where: { $0.name == to }) else {
            throw failure("the old schema already has a property \(to)")
        }
        let oldProperty = oldClass.properties[source]
        var renamed = newClass.properties[target]
        renamed.name = oldProperty.name
        guard Self.carriesOver(oldProperty, renamed) else {
            throw failure("it cannot become \(to): the two properties hold different types")
        }
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
        if oldProperty.collection == nil, let rows = try handle(TableNames.rows(name), create: false) {
            let info = _PropertyInfo(type: oldProperty.type, isOptional: oldProperty.optional)
            let property = newClass.properties[target]
            try tables.rewriteRows(in: rows) { key, row in
                let objectKey = KeyEncoding.decodeObjectKey(key)
                guard
                    var value = try old.withRow(
                        tree: TableNames.rows(name), key: objectKey,
                        {
                            RowCodec.get($0, column: source, info: info)
                        })
                else { return nil }
                if case .null = value { value = Self.zeroValue(property) }
                return try RowRewriter.replacing(column: target, with: value, in: row, properties: newClass.properties)
            }
        }
        migrationState?.touched.insert(name)
        migrationState?.restructured = true
    }
}

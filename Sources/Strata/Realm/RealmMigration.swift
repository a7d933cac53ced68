import Foundation
import StrataStorage

/// Schema versions at open: migrations, resets, and the checks that decide between them.
///
/// A migration is one write transaction on the migrated Realm. Old objects are read from the version the
/// transaction started from (a second, read-only Realm on that snapshot), so the conversion can rewrite rows in
/// place while the block still sees every old value. Primary-key and index trees are not maintained while the
/// block runs (keys may collide until it finishes); they are rebuilt for every class the migration wrote, and a
/// duplicate primary key then fails the whole migration.
///
/// This is the orchestration; the rewrites of the file's data (rows converted, trees renamed, dropped and
/// rebuilt) are the table layer's, in `Tables/SchemaRewrites.swift`.
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
        try self.tables.dropAllTrees()
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

    /// The value a required property gets where it has none (see `TableStore.zeroValue`).
    static func zeroValue(_ property: StoredClass.StoredProperty) -> _StoredValue { TableStore.zeroValue(property) }

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

    /// Rewrites every row of class `name` from the layout of `old` to that of `new` (see
    /// `TableStore.convertRows`), reporting its progress to the configuration's event handler.
    private func convertRows(of name: String, from old: StoredClass, to new: StoredClass) throws(Realm.Error) {
        var progress: MigrationProgressCounter?
        defer { progress?.finish() }
        try tables.convertRows(of: name, from: old, to: new) { total in
            progress = MigrationProgressCounter(
                events: Realm.eventHandler(configuration), path: path, className: name, total: total)
        } converted: {
            progress?.objectDone()
        }
    }

    // MARK: Finishing

    /// Makes the migrated file consistent: unaccounted trees dropped, collections of deleted objects removed,
    /// links counted again, orphaned embedded objects deleted, primary keys and indexes rebuilt.
    private func finishMigration(_ state: MigrationState) throws(Realm.Error) {
        if let failure = failureOfWrite { throw failure }
        if state.restructured {
            try tables.sweepTrees()
            for name in state.touched where schemaClasses()[name] != nil { try tables.pruneCollections(of: name) }
            try tables.rebuildBacklinks()
            try tables.deleteOrphanedEmbedded()
        }
        for name in state.touched.sorted() where schemaClasses()[name] != nil {
            try tables.rebuildKeys(of: name, maxKeySize: store.maxKeySize)
        }
        if let failure = failureOfWrite { throw failure }
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
            try tables.sweepTrees()
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
        guard TableStore.carriesOver(oldProperty, renamed) else {
            throw failure("it cannot become \(to): the two properties hold different types")
        }
        try tables.renameProperty(
            of: name, from: oldProperty, column: source, to: target, in: newClass, oldRows: old.tables)
        migrationState?.touched.insert(name)
        migrationState?.restructured = true
    }
}

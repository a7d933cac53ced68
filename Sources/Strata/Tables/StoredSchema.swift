import StrataStorage

/// The class definitions stored in one version of a file.
struct StoredSchema: Sendable {
    var classes: [String: StoredClass] = [:]
    var version: UInt64?
    /// Whether the file's backlink trees are complete (see `TableNames.backlinksKey`).
    var backlinks = false
}

/// The stored schema: the tree `$schema` holds `version` → the schema version (u64 little-endian) and
/// `class:<name>` → each stored class (JSON); `TableStore` keeps them as of its version or write transaction.
extension TableStore {
    /// The class definitions stored in the write transaction, or else in the snapshot.
    static func readSchema(transaction: WriteTransaction?, snapshot: ReadTransaction, path: String)
        throws(Realm.Error) -> StoredSchema
    {
        var schema = StoredSchema()
        let entries: [(key: [UInt8], value: [UInt8])]
        do {
            if let transaction, let tree = try transaction.tree(named: TableNames.schema) {
                var cursor = try transaction.makeCursor(for: tree)
                var found: [(key: [UInt8], value: [UInt8])] = []
                var more = try cursor.first()
                while more {
                    found.append((try cursor.key(), try cursor.value()))
                    more = try cursor.next()
                }
                entries = found
            } else if transaction == nil, let view = try snapshot.tree(named: TableNames.schema) {
                entries = try view.entries()
            } else {
                entries = []
            }
        } catch let error as StorageError {
            throw .storage(error, path: path)
        } catch {
            throw .fileAccess(path: path, reason: "\(error)")
        }
        for (key, value) in entries {
            if key == TableNames.backlinksKey {
                schema.backlinks = true
            } else if key == TableNames.schemaVersionKey {
                schema.version =
                    value.count == 8 ? value.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self).littleEndian } : 0
            } else if key.starts(with: Array("class:".utf8)) {
                let stored = try StoredClass.decode(value, path: path)
                schema.classes[stored.name] = stored
            }
        }
        return schema
    }

    /// Reads the stored schema again (of the write transaction, or else of the snapshot).
    func loadStoredSchema() throws(Realm.Error) {
        dynamicBindings = [:]
        let schema = try Self.readSchema(transaction: transaction, snapshot: snapshot, path: path)
        storedClasses = schema.classes
        storedSchemaVersion = schema.version
        storedBacklinks = schema.backlinks
    }

    /// Takes `schema` (read once for a pinned version) as the stored schema.
    func adoptStoredSchema(_ schema: StoredSchema) {
        storedClasses = schema.classes
        storedSchemaVersion = schema.version
        storedBacklinks = schema.backlinks
    }

    /// The stored schema as read (of the current version, or of the write in progress).
    var loadedSchema: StoredSchema {
        StoredSchema(classes: storedClasses, version: storedSchemaVersion, backlinks: storedBacklinks)
    }

    /// Records `stored` as the definition of its class in the write transaction; nil removes class `name`.
    func storeClassDefinition(_ stored: StoredClass?, named name: String) throws(Realm.Error) {
        let transaction = try activeTransaction()
        try mutate {
            let tree = try transaction.tree(named: TableNames.schema, create: .keyed)!
            if let stored {
                try transaction.put(TableNames.classKey(name), stored.encoded(), in: tree)
            } else {
                _ = try transaction.delete(TableNames.classKey(name), in: tree)
            }
        }
        storedClasses[name] = stored
        dynamicBindings = [:]
    }

    /// Stores `version` as the schema version of the file.
    func recordSchemaVersion(_ version: UInt64) throws(Realm.Error) {
        let transaction = try activeTransaction()
        try mutate {
            let tree = try transaction.tree(named: TableNames.schema, create: .keyed)!
            try transaction.put(
                TableNames.schemaVersionKey, withUnsafeBytes(of: version.littleEndian) { Array($0) }, in: tree)
        }
        storedSchemaVersion = version
    }

    /// Forgets every class definition of the write transaction (a reset deleted them all).
    func forgetStoredSchema() {
        storedClasses = [:]
        storedSchemaVersion = nil
        storedBacklinks = false
        dynamicBindings = [:]
        bindings = [:]
    }

    /// Forgets cached tree handles of the write transaction (after trees were dropped or renamed).
    func invalidateWriteCaches() {
        handles = [:]
        writeEpoch &+= 1
        generation &+= 1
    }

    /// Whether the file (as of the current version or write) defines class `name`.
    func isStored(_ name: String) -> Bool { storedClasses[name] != nil }

    /// The binding made for the model type whose class name is `name`, if any.
    func boundBinding(named name: String) -> TableBinding? { bindings.values.first { $0.className == name } }

    /// The binding of model type `type` (and of every type it links to), checking the stored definitions.
    func binding(for type: ObjectBase.Type) throws(Realm.Error) -> TableBinding {
        if let binding = bindings[ObjectIdentifier(type)] { return binding }
        let tables = try SchemaRegistry.shared.closure(of: [type])
        let differences = tables.flatMap { table in
            storedClasses[table.className].map { $0.differences(from: table.schema) } ?? []
        }
        guard differences.isEmpty else { throw .schemaMismatch(differences: differences) }
        for table in tables where bindings[ObjectIdentifier(table.type)] == nil {
            bindings[ObjectIdentifier(table.type)] = TableBinding(table: table, stored: storedClasses[table.className])
        }
        return bindings[ObjectIdentifier(type)]!
    }

    /// Writes the class definition of `table` (and of the types it links to) into the file if it is missing,
    /// with its rows and primary-key trees; a file without a schema version gets `schemaVersion`, and one
    /// without backlink trees gets them first.
    func registerTable(_ table: TableSchema, schemaVersion: UInt64) throws(Realm.Error) {
        guard storedClasses[table.className] == nil else { return }
        let transaction = try activeTransaction()
        try mutate {
            let tree = try transaction.tree(named: TableNames.schema, create: .keyed)!
            if storedSchemaVersion == nil { try recordSchemaVersion(schemaVersion) }
            if !storedBacklinks {
                try rebuildBacklinks()
                storedBacklinks = true
            }
            let stored = StoredClass(table.schema)
            try transaction.put(TableNames.classKey(table.className), stored.encoded(), in: tree)
            storedClasses[table.className] = stored
            _ = try transaction.tree(named: TableNames.rows(table.className), create: .keyed)
            if table.primaryKeyIndex != nil {
                _ = try transaction.tree(named: TableNames.primaryKeys(table.className), create: .keyed)
            }
        }
        for info in table.infos {
            if let target = info.objectType {
                try registerTable(try SchemaRegistry.shared.table(for: target), schemaVersion: schemaVersion)
            }
        }
    }

    /// The binding of a stored class for `DynamicObject` access.
    func dynamicBinding(_ className: String) throws(Realm.Error) -> TableBinding {
        if let binding = dynamicBindings[className] { return binding }
        guard let stored = storedClasses[className] else {
            throw .invalidValue(type: className, property: "", reason: "the file has no class of this name")
        }
        let binding = TableBinding(table: TableSchema(dynamic: stored), stored: stored)
        dynamicBindings[className] = binding
        return binding
    }
}

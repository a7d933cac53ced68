import StrataStorage

/// The schema as the Realm handle sees it: the public ``Realm/schema``, the bindings of model types, and the
/// stored class definitions, all kept by the table layer (`Tables/StoredSchema.swift`); migrations are
/// `RealmMigration.swift`'s.
extension Realm {
    /// The object types stored in the file and those this Realm has bound; as in the SDK, each type's
    /// `LinkingObjects` are in ``ObjectSchema/computedProperties``, not in ``ObjectSchema/properties``.
    public var schema: Schema {
        var classes: [String: ObjectSchema] = [:]
        for binding in tables.bindings.values { classes[binding.className] = binding.table.schema }
        for (name, stored) in tables.storedClasses where classes[name] == nil {
            classes[name] = ObjectSchema(
                className: name,
                properties: stored.properties.map {
                    Property(
                        columnName: $0.name, type: $0.type, isOptional: $0.optional, isIndexed: $0.indexed,
                        isPrimary: $0.primary,
                        objectClassName: $0.objectClassName, name: $0.name, isArray: $0.isList,
                        isSet: $0.isSet, isMap: $0.isMap, isFullTextIndexed: $0.isFullText)
                }, isEmbedded: stored.embedded, isAsymmetric: stored.asymmetric)
        }
        // As the SDK lists them: linking objects among the computed properties, not the stored ones.
        return Schema(
            objectSchema: classes.values.map(\.withComputedPropertiesApart).sorted { $0.className < $1.className })
    }

    /// Reads the class definitions of the current version (or of the write in progress).
    func loadStoredSchema() throws(Realm.Error) { try tables.loadStoredSchema() }

    /// The class definitions stored in the write transaction, or else in the snapshot.
    static func readSchema(transaction: WriteTransaction?, snapshot: ReadTransaction, path: String)
        throws(Realm.Error) -> StoredSchema
    {
        try TableStore.readSchema(transaction: transaction, snapshot: snapshot, path: path)
    }

    /// The binding of `type` (and of every type it links to) in this file, checking stored definitions.
    func binding(for type: ObjectBase.Type) throws(Realm.Error) -> TableBinding { try tables.binding(for: type) }

    /// Writes the class definition of `table` (and of the types it links to) into the file if it is missing,
    /// with the configured schema version when the file has none yet.
    func registerTable(_ table: TableSchema) throws(Realm.Error) {
        try tables.registerTable(table, schemaVersion: configuration.schemaVersion)
    }

    /// The binding this Realm made for the model type whose class name is `name`, if any.
    func boundBinding(named name: String) -> TableBinding? { tables.boundBinding(named: name) }

    /// The class definitions stored in the file, as of the current version or write.
    func schemaClasses() -> [String: StoredClass] { tables.storedClasses }

    /// The stored schema as this Realm read it (of the current version, or of the write in progress).
    var loadedSchema: StoredSchema { tables.loadedSchema }

    /// The write transaction in progress, if any.
    var writeTransactionIfAny: WriteTransaction? { tables.transaction }

    /// Identifies the current write transaction (tree handles from an earlier one are stale).
    var writeTransactionEpoch: UInt64 { tables.writeEpoch }

    /// The tree `name` in the current snapshot (nil inside a write transaction or if it does not exist).
    func treeView(_ name: String) -> TreeView? { tables.treeView(name) }

    /// Whether the file (as of the current version or write) defines class `name`.
    func isStored(_ name: String) -> Bool { tables.isStored(name) }

    /// The first error of the write transaction, if an operation failed it.
    var failureOfWrite: Realm.Error? { tables.failure }

    /// The schema version stored in the file (nil for a new file), as of the current version or write.
    var fileSchemaVersion: UInt64? { tables.storedSchemaVersion }

    /// Records `stored` as the definition of its class in the write transaction; nil removes class `name`.
    func storeClassDefinition(_ stored: StoredClass?, named name: String) throws(Realm.Error) {
        try tables.storeClassDefinition(stored, named: name)
    }

    /// Forgets every class definition of the write transaction (a reset deleted them all).
    func forgetStoredSchema() { tables.forgetStoredSchema() }

    /// Forgets cached tree handles of the write transaction (after trees were dropped or renamed).
    func invalidateWriteCaches() { tables.invalidateWriteCaches() }

    /// Stores the configured schema version (the models match the file, so nothing else changes).
    func recordSchemaVersion() throws(Realm.Error) { try tables.recordSchemaVersion(configuration.schemaVersion) }
}

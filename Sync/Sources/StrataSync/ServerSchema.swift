import Logging
import PostgresNIO
import Strata

/// The PostgreSQL side of Strata Sync: which object types are synced, and the tables that hold them, created
/// and migrated by ``migrate(_:logger:)``.
///
/// In the PostgreSQL schema ``namespace`` (`public` by default):
/// - per synced type, a table named after the persisted class name, with `_strata_scope text` and the primary
///   key column as its primary key, one typed column per persisted property (``ServerColumn``), and
///   `_strata_state jsonb` (the per-property clocks and the collections' merge state),
///   `_strata_deleted boolean` (true when the object is not live), `_strata_created_at` and
///   `_strata_deleted_at` (the latest create's and delete's ``HybridTimestamp``);
/// - `strata_scope (scope, last_seq, trimmed_through)`: the last change-log sequence of each scope, and the last
///   one trimmed away (``ServerMerge/trimLog(scope:through:)``);
/// - `strata_change_log (scope, seq, client_id, client_seq, committed_at, changes)`: what each merge accepted;
/// - `strata_upload (client_id, client_seq, scope, seq)`: the uploads already applied;
/// - `strata_schema_version (component, version)`: the layout version;
/// - the functions `strata_capture()`, `strata_sync_value(kind, value)` and `strata_sync_plain(spec, value)`, and
///   per synced table the trigger
///   `strata_capture` that logs writes made through plain SQL as changes of the replica `server`;
/// - per asymmetric type, an insert-only table of its uploaded objects (see ``AsymmetricType``).
///
/// Migrations are additive and idempotent: `CREATE … IF NOT EXISTS`, `ALTER TABLE … ADD COLUMN IF NOT EXISTS`,
/// in one transaction under an advisory lock, so services starting together migrate once. A column whose type
/// no longer fits its property is reported (``SyncError/incompatibleSchema(type:column:reason:)``), never
/// rewritten.
public struct ServerSchema: Sendable {
    /// The version of the table layout that this library creates.
    public static let layoutVersion = 1

    /// The PostgreSQL schema (namespace) that holds Strata Sync's tables.
    public let namespace: String
    /// The synced object types by persisted class name (embedded types travel inside their parents and have no
    /// table).
    public let types: [String: SyncedType]
    /// The asymmetric (upload-only) types by persisted class name.
    public let asymmetricTypes: [String: AsymmetricType]

    /// The synced types of `objectSchemas` (for example a Realm's `schema.objectSchema`), in the PostgreSQL
    /// schema `namespace`.
    ///
    /// - Throws: ``SyncError`` if a type has no primary key, a name cannot be a PostgreSQL identifier, or a
    ///   link points to a type that is not in `objectSchemas`.
    public init(namespace: String = "public", objectSchemas: [ObjectSchema]) throws(SyncError) {
        try SQLName.check(identifier: namespace)
        self.namespace = namespace
        var types: [String: SyncedType] = [:]
        var asymmetricTypes: [String: AsymmetricType] = [:]
        for schema in objectSchemas where !schema.isEmbedded {
            if schema.isAsymmetric {
                asymmetricTypes[schema.className] = try AsymmetricType(schema: schema, all: objectSchemas)
            } else {
                types[schema.className] = try SyncedType(schema: schema, all: objectSchemas)
            }
        }
        self.types = types
        self.asymmetricTypes = asymmetricTypes
    }

    /// The synced types of the model classes `classes` (embedded types that they hold must be listed too), in
    /// the PostgreSQL schema `namespace`.
    ///
    /// - Throws: ``SyncError/unknownType(_:)`` for a class that is not a valid model, and the errors of
    ///   ``init(namespace:objectSchemas:)``.
    public init(namespace: String = "public", classes: [ObjectBase.Type]) throws(SyncError) {
        var schemas: [ObjectSchema] = []
        for type in classes {
            guard let schema = type.sharedSchema() else { throw .unknownType(String(describing: type)) }
            schemas.append(schema)
        }
        try self.init(namespace: namespace, objectSchemas: schemas)
    }

    /// The synced type `className`.
    ///
    /// - Throws: ``SyncError/unknownType(_:)`` if it is not synced.
    func type(_ className: String) throws(SyncError) -> SyncedType {
        guard let type = types[className] else { throw .unknownType(className) }
        return type
    }

    /// The asymmetric type `className`.
    ///
    /// - Throws: ``SyncError/unknownType(_:)`` if it is not an asymmetric type of this schema.
    func asymmetricType(_ className: String) throws(SyncError) -> AsymmetricType {
        guard let type = asymmetricTypes[className] else { throw .unknownType(className) }
        return type
    }

    /// `"namespace"."name"`.
    func qualified(_ name: String) throws(SyncError) -> String {
        try SQLName.quoted(namespace) + "." + SQLName.quoted(name)
    }

    /// Creates the tables that are missing and adds the columns that are missing, in one transaction.
    ///
    /// Safe to run at every start, from many processes at once.
    ///
    /// - Throws: ``SyncError/incompatibleSchema(type:column:reason:)`` if an existing column has another type
    ///   than its property needs (nothing is changed then), or the PostgreSQL client's error.
    public func migrate(_ client: PostgresClient, logger: Logger) async throws {
        let statements = try layoutStatements()
        try await client.transaction(logger: logger) { connection in
            // One migration at a time per database: CREATE … IF NOT EXISTS alone races with itself.
            try await connection.query(
                "SELECT pg_advisory_xact_lock(hashtext('strata_sync_migration'))", logger: logger)
            for statement in statements {
                try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
            }
            for type in types.values.sorted(by: { $0.className < $1.className }) {
                try await checkColumnTypes(
                    of: type.className, [type.primaryKey] + type.columns, isAsymmetric: false, on: connection,
                    logger: logger)
            }
            for type in asymmetricTypes.values.sorted(by: { $0.className < $1.className }) {
                try await checkColumnTypes(
                    of: type.className, type.columns, isAsymmetric: true, on: connection, logger: logger)
            }
        }
    }

    /// The DDL of the whole layout, every statement idempotent.
    func layoutStatements() throws(SyncError) -> [String] {
        let schema = try SQLName.quoted(namespace)
        var statements = [
            "CREATE SCHEMA IF NOT EXISTS \(schema)",
            """
            CREATE TABLE IF NOT EXISTS \(schema).strata_schema_version (
                component text PRIMARY KEY, version integer NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())
            """,
            "CREATE TABLE IF NOT EXISTS \(schema).strata_scope (scope text PRIMARY KEY, last_seq bigint NOT NULL)",
            // The trim horizon: the log holds no entry at or before it (see ServerMerge.trimLog).
            "ALTER TABLE \(schema).strata_scope ADD COLUMN IF NOT EXISTS trimmed_through bigint NOT NULL DEFAULT 0",
            """
            CREATE TABLE IF NOT EXISTS \(schema).strata_change_log (
                scope text NOT NULL, seq bigint NOT NULL, client_id text, client_seq bigint,
                committed_at timestamptz NOT NULL DEFAULT now(), changes jsonb NOT NULL, PRIMARY KEY (scope, seq))
            """,
            """
            CREATE TABLE IF NOT EXISTS \(schema).strata_upload (
                client_id text NOT NULL, client_seq bigint NOT NULL, scope text NOT NULL, seq bigint NOT NULL,
                PRIMARY KEY (client_id, client_seq))
            """,
            """
            INSERT INTO \(schema).strata_schema_version (component, version) VALUES ('layout', \(Self.layoutVersion))
            ON CONFLICT (component) DO UPDATE SET version = excluded.version, applied_at = now()
            WHERE strata_schema_version.version < excluded.version
            """,
        ]
        statements += CaptureTrigger.functionStatements(schema: schema)
        for type in types.values.sorted(by: { $0.className < $1.className }) {
            let table = try qualified(type.className)
            let key = try SQLName.quoted(type.primaryKey.name)
            statements.append(
                """
                CREATE TABLE IF NOT EXISTS \(table) (
                    _strata_scope text NOT NULL, \(key) \(type.primaryKey.sqlType) NOT NULL,
                    _strata_state jsonb NOT NULL DEFAULT '{}', _strata_deleted boolean NOT NULL DEFAULT true,
                    _strata_created_at text COLLATE "C", _strata_deleted_at text COLLATE "C",
                    PRIMARY KEY (_strata_scope, \(key)))
                """)
            for column in type.columns {
                statements.append(
                    "ALTER TABLE \(table) ADD COLUMN IF NOT EXISTS \(try SQLName.quoted(column.name)) \(column.sqlType)"
                )
            }
            statements.append(CaptureTrigger.triggerStatement(for: type, schema: schema, table: table))
        }
        for type in asymmetricTypes.values.sorted(by: { $0.className < $1.className }) {
            let table = try qualified(type.className)
            // Insert-only: no clocks, no delete marker, no trigger (nothing of it goes down to clients).
            statements.append(
                """
                CREATE TABLE IF NOT EXISTS \(table) (
                    _strata_scope text NOT NULL, _strata_client_id text NOT NULL, _strata_client_seq bigint NOT NULL,
                    _strata_received_at timestamptz NOT NULL DEFAULT now(),
                    PRIMARY KEY (_strata_client_id, _strata_client_seq))
                """)
            for column in type.columns {
                statements.append(
                    "ALTER TABLE \(table) ADD COLUMN IF NOT EXISTS \(try SQLName.quoted(column.name)) \(column.sqlType)"
                )
            }
        }
        return statements
    }

    /// Checks that the existing columns of `className`'s table have the types `columns` need, and that the table is
    /// of the right kind: an object type's table has no `_strata_client_seq`, an asymmetric type's has one (a
    /// type that changed kind needs a new scope).
    private func checkColumnTypes(
        of className: String, _ columns: [ServerColumn], isAsymmetric: Bool, on connection: PostgresConnection,
        logger: Logger
    ) async throws {
        let table = try qualified(className)
        let rows = try await connection.query(
            """
            SELECT attname::text, format_type(atttypid, atttypmod) FROM pg_attribute
            WHERE attrelid = to_regclass(\(table)) AND attnum > 0 AND NOT attisdropped
            """, logger: logger)
        var existing: [String: String] = [:]
        for try await (name, sqlType) in rows.decode((String, String).self) { existing[name] = sqlType }
        if (existing["_strata_client_seq"] != nil) != isAsymmetric {
            throw SyncError.incompatibleSchema(
                type: className, column: "_strata_client_seq",
                reason: isAsymmetric
                    ? "the table holds an object type, the class is asymmetric now; that change needs a new scope"
                    : "the table holds an asymmetric type, the class is an object type now; that change needs a new scope"
            )
        }
        for column in columns {
            if let sqlType = existing[column.name], sqlType != column.sqlType {
                throw SyncError.incompatibleSchema(
                    type: className, column: column.name,
                    reason:
                        "it is \(sqlType), the property needs \(column.sqlType); a breaking change needs a new scope")
            }
        }
    }
}

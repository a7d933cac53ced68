import Logging
import PostgresNIO

extension ServerMerge {
    /// Inserts the objects of `upload` into their asymmetric type's table, each once: an object whose
    /// `(clientID, clientSequence)` is there already (a retry after a lost answer) is left alone
    /// (`ON CONFLICT DO NOTHING`). Returns how many rows were new.
    ///
    /// One PostgreSQL transaction, with multi-row inserts of as many objects as the bind-parameter limit allows:
    /// the objects are committed all or none. Nothing is logged and nothing is notified: asymmetric objects never
    /// go down to clients. Returning means PostgreSQL committed every object (new or not).
    ///
    /// - Throws: ``SyncError`` for objects that do not fit the schema (an unknown type, a missing or unknown
    ///   property, a value of the wrong kind), or ``SyncError/incompatibleSchema(type:column:reason:)`` when
    ///   PostgreSQL's table does not fit them (missing, or a column missing or of another type: migrate, or use a
    ///   new scope); nothing is inserted then. Other PostgreSQL errors as the client reports them.
    @discardableResult
    public func insert(_ upload: AsymmetricUpload) async throws -> Int {
        try SQLName.check(scope: upload.scope)
        let type = try schema.asymmetricType(upload.objectType)
        if upload.objects.isEmpty { return 0 }
        let table = try schema.qualified(type.className)
        let columnNames = try type.columns.map { try SQLName.quoted($0.name) }
        var rows: [[String?]] = []
        rows.reserveCapacity(upload.objects.count)
        var sequences = Set<Int64>()
        for object in upload.objects {
            guard sequences.insert(object.clientSequence).inserted else {
                throw SyncError.invalidChange(
                    type: type.className, property: nil,
                    reason: "object \(object.clientSequence) is in the upload twice")
            }
            for name in object.values.keys where type.column(named: name) == nil {
                throw SyncError.unknownProperty(type: type.className, property: name)
            }
            var row: [String?] = [upload.scope, upload.clientID, String(object.clientSequence)]
            for column in type.columns {
                guard let value = object.values[column.name] else {
                    throw SyncError.invalidChange(
                        type: type.className, property: column.name, reason: "an uploaded object gives every property")
                }
                row.append(try value.sqlText(for: column, type: type.className))
            }
            rows.append(row)
        }
        let names = ["_strata_scope", "_strata_client_id", "_strata_client_seq"] + columnNames
        let rowsPerStatement = max(1, MergedRows.maximumBindings / names.count)
        let logger = logger
        do {
            return try await client.transaction(logger: logger) { connection in
                var inserted = 0
                var start = 0
                while start < rows.count {
                    let end = min(rows.count, start + rowsPerStatement)
                    var bindings = PostgresBindings(capacity: (end - start) * names.count)
                    var tuples: [String] = []
                    tuples.reserveCapacity(end - start)
                    for row in rows[start..<end] {
                        var placeholders: [String] = []
                        for (index, text) in row.enumerated() {
                            bindings.append(text)
                            let number = bindings.count
                            switch index {
                            case 0, 1: placeholders.append("$\(number)")
                            case 2: placeholders.append("$\(number)::bigint")
                            default: placeholders.append(type.columns[index - 3].parameterExpression(number))
                            }
                        }
                        tuples.append("(" + placeholders.joined(separator: ", ") + ")")
                    }
                    let result = try await connection.query(
                        PostgresQuery(
                            unsafeSQL: """
                                WITH inserted AS (
                                    INSERT INTO \(table) (\(names.joined(separator: ", ")))
                                    VALUES \(tuples.joined(separator: ", "))
                                    ON CONFLICT (_strata_client_id, _strata_client_seq) DO NOTHING RETURNING 1)
                                SELECT count(*) FROM inserted
                                """, binds: bindings), logger: logger)
                    for try await count in result.decode(Int64.self) { inserted += Int(count) }
                    start = end
                }
                return inserted
            }
        } catch let error as PSQLError {
            throw Self.schemaError(error, type: type.className) ?? error
        }
    }

    /// A typed error for PostgreSQL's refusals that mean its table does not fit the type: no such table (42P01),
    /// no such column (42703), a value of another type (42804, 22P02); nil for other errors.
    private static func schemaError(_ error: PSQLError, type: String) -> SyncError? {
        guard let state = error.serverInfo?[.sqlState], ["42P01", "42703", "42804", "22P02"].contains(state) else {
            return nil
        }
        let message = error.serverInfo?[.message] ?? state
        return .incompatibleSchema(
            type: type, column: "",
            reason: "PostgreSQL refused the insert (\(state): \(message)); run ServerSchema.migrate, or use a new scope"
        )
    }
}

import Logging
import PostgresNIO

extension ServerMerge {
    /// Reads every row of `scope` (live objects and delete markers, with their clocks and collection states),
    /// type by type in pages of at most `pageSize` rows ordered by primary key (keyset pagination, so a large
    /// scope never sits in memory whole), and hands each page to `body` as one change per object that carries
    /// its whole merge state (see `RowState.snapshotChange`); returns the scope's sequence that the snapshot
    /// shows: applying the pages, then the log after that sequence, gives a replica the scope's state.
    ///
    /// Every page and the sequence are read in one `REPEATABLE READ, READ ONLY` transaction, so they are one
    /// consistent snapshot whatever commits meanwhile; the transaction stays open while `body` runs.
    ///
    /// - Throws: ``SyncError/corruptServerState(_:)`` for a row this library cannot read, ``SyncError`` for an
    ///   invalid scope, the PostgreSQL client's error, or what `body` throws (the transaction then ends).
    public func snapshot(
        scope: String, pageSize: Int = 5000, _ body: ([ObjectChange]) async throws -> Void
    ) async throws -> Int64 {
        try SQLName.check(scope: scope)
        let schemaName = try SQLName.quoted(schema.namespace)
        let pageSize = Int64(max(1, pageSize))
        let logger = logger
        let schema = schema
        return try await client.transaction(logger: logger) { connection in
            try await connection.query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY", logger: logger)
            let scopeRows = try await connection.query(
                "SELECT last_seq FROM \(unescaped: schemaName).strata_scope WHERE scope = \(scope)", logger: logger)
            let sequence = try await scopeRows.decode(Int64.self).first(where: { _ in true }) ?? 0
            for type in Self.snapshotOrder(schema) {
                var after: String?
                repeat {
                    let page = try await Self.snapshotPage(
                        of: type, scope: scope, after: after, limit: pageSize, schema: schema, on: connection,
                        logger: logger)
                    if page.changes.isEmpty { break }
                    try await body(page.changes)
                    after = page.lastKey
                } while after != nil
            }
            return sequence
        }
    }

    /// The synced types, each after the types its links point to (by name where links form a cycle), so a
    /// replica applying the pages in order finds most link targets already there.
    static func snapshotOrder(_ schema: ServerSchema) -> [SyncedType] {
        var ordered: [SyncedType] = []
        var visited = Set<String>()
        func visit(_ type: SyncedType) {
            guard visited.insert(type.className).inserted else { return }
            for column in type.columns {
                if case .object(let target, _) = column.link, let targetType = schema.types[target] {
                    visit(targetType)
                }
            }
            ordered.append(type)
        }
        for type in schema.types.values.sorted(by: { $0.className < $1.className }) { visit(type) }
        return ordered
    }

    /// One page of `type`'s rows in `scope`: the rows after primary key `after` (as text; nil for the first page).
    private static func snapshotPage(
        of type: SyncedType, scope: String, after: String?, limit: Int64, schema: ServerSchema,
        on connection: PostgresConnection, logger: Logger
    ) async throws -> (changes: [ObjectChange], lastKey: String?) {
        let namespace = try SQLName.quoted(schema.namespace)
        let table = try schema.qualified(type.className)
        let key = try SQLName.quoted(type.primaryKey.name)
        let kinds = CaptureTrigger.valueKinds(of: type)
        let kindsJSON = try SyncJSON.text(kinds)
        var bindings = PostgresBindings(capacity: 5)
        bindings.append(scope)
        bindings.append(type.className)
        bindings.append(type.primaryKey.property.type.rawValue)
        bindings.append(kindsJSON)
        var condition = ""
        if let after {
            bindings.append(after)
            condition = "AND t.\(key) > $5::\(type.primaryKey.sqlType)"
        }
        // The values are read with the capture trigger's conversion, so they come out as the log would carry them.
        let rows = try await connection.query(
            PostgresQuery(
                unsafeSQL: """
                    SELECT t.\(key)::text, jsonb_build_object(
                        'objectType', $2::text,
                        'primaryKey', \(namespace).strata_sync_value($3, to_jsonb(t.\(key))),
                        'state', t._strata_state,
                        'values', (SELECT COALESCE(jsonb_object_agg(k.key,
                            \(namespace).strata_sync_value(k.value, to_jsonb(t) -> k.key)), '{}')
                            FROM jsonb_each_text($4::jsonb) AS k))::text
                    FROM \(table) t WHERE t._strata_scope = $1 \(condition) ORDER BY t.\(key) LIMIT \(limit)
                    """, binds: bindings), logger: logger)
        var changes: [ObjectChange] = []
        var lastKey: String?
        for try await (keyText, rowText) in rows.decode((String, String).self) {
            let row: SnapshotRow
            do {
                row = try SyncJSON.decode(SnapshotRow.self, from: rowText)
            } catch {
                throw SyncError.corruptServerState("the row \(type.className) \(keyText) is unreadable: \(error)")
            }
            changes.append(row.state.snapshotChange(type: row.objectType, key: row.primaryKey, values: row.values))
            lastKey = keyText
        }
        return (changes, Int64(changes.count) < limit ? nil : lastKey)
    }
}

/// A row of a synced table as a snapshot page reads it.
private struct SnapshotRow: Decodable {
    var objectType: String
    var primaryKey: SyncValue
    var state: RowState
    var values: [String: SyncValue]
}

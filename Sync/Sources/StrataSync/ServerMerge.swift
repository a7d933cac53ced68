import Logging
import PostgresNIO

/// Applies client uploads to PostgreSQL and serves the change log.
///
/// ``apply(_:)`` merges one ``UploadBatch`` in one PostgreSQL transaction:
/// 1. it takes the scope's next sequence number with `INSERT … ON CONFLICT DO UPDATE SET last_seq = last_seq + 1
///    RETURNING last_seq` on `strata_scope`, which locks the scope's row until the commit — merges of one scope
///    commit one after the other, so the sequence is gap-free (a rolled-back merge gives its number back) and in
///    commit order;
/// 2. it returns the earlier result if `(clientID, clientSequence)` is in `strata_upload` (a retry);
/// 3. per object, it locks the row (`SELECT … FOR UPDATE`), merges by the conflict rules (``RowMerge``) and
///    writes the changed columns;
/// 4. it records the upload in `strata_upload` and the accepted changes in `strata_change_log`, and calls
///    `pg_notify('strata_<scope>', seq)`, which PostgreSQL delivers after the commit (a wake-up only: ``pull``
///    reads the log by sequence, so a lost notification delays, never loses, a change).
///
/// A deadlock or serialization failure reported by PostgreSQL (possible only with other writers of the same
/// rows) rolls the transaction back and the merge runs again, up to ``maximumAttempts`` times.
public struct ServerMerge: Sendable {
    /// The synced types and where their tables are.
    public let schema: ServerSchema
    /// How many times a merge runs when PostgreSQL aborts it for a deadlock or serialization failure.
    public var maximumAttempts = 5
    private let client: PostgresClient
    private let logger: Logger

    /// Merges into the tables of `schema` (migrated with ``ServerSchema/migrate(_:logger:)``) through `client`,
    /// which the caller runs (`client.run()`).
    public init(schema: ServerSchema, client: PostgresClient, logger: Logger) {
        self.schema = schema
        self.client = client
        self.logger = logger
    }

    /// Applies `batch` once: a retried batch (same client id and sequence) changes nothing and returns the
    /// first result.
    ///
    /// - Throws: ``SyncError`` for a batch that does not fit the schema (nothing is applied then), or the
    ///   PostgreSQL client's error (the transaction is rolled back: nothing is applied).
    public func apply(_ batch: UploadBatch) async throws -> UploadResult {
        guard batch.formatVersion == UploadBatch.currentFormatVersion else {
            throw SyncError.unsupportedFormatVersion(batch.formatVersion)
        }
        try SQLName.check(scope: batch.scope)
        for change in batch.changes { try RowMerge.validate(change, of: try schema.type(change.objectType)) }
        var attempt = 1
        while true {
            do {
                return try await applyOnce(batch)
            } catch let error as PSQLError where attempt < maximumAttempts && Self.isTransient(error) {
                logger.debug("merge retried after a transient PostgreSQL error", metadata: ["error": "\(error)"])
                attempt += 1
            }
        }
    }

    /// Deadlock detected (40P01) or serialization failure (40001): the transaction may simply run again.
    private static func isTransient(_ error: PSQLError) -> Bool {
        let state = error.serverInfo?[.sqlState]
        return state == "40P01" || state == "40001"
    }

    /// Why a transaction was rolled back on purpose: the upload was applied before, as entry `sequence`.
    private struct AlreadyApplied: Error {
        var sequence: Int64
    }

    private func applyOnce(_ batch: UploadBatch) async throws -> UploadResult {
        let schemaName = try SQLName.quoted(schema.namespace)
        do {
            let entry = try await client.transaction(logger: logger) { connection in
                // The capture trigger leaves this transaction's writes alone: the merge logs them itself.
                try await connection.query("SELECT set_config('strata.merging', 'on', true)", logger: logger)
                let sequenceRows = try await connection.query(
                    PostgresQuery(
                        unsafeSQL: """
                            INSERT INTO \(schemaName).strata_scope AS s (scope, last_seq) VALUES ($1, 1)
                            ON CONFLICT (scope) DO UPDATE SET last_seq = s.last_seq + 1 RETURNING last_seq
                            """, binds: Self.binds([batch.scope])), logger: logger)
                guard let sequence = try await sequenceRows.decode(Int64.self).first(where: { _ in true }) else {
                    throw SyncError.corruptServerState("strata_scope returned no sequence")
                }
                let earlier = try await connection.query(
                    """
                    SELECT seq FROM \(unescaped: schemaName).strata_upload
                    WHERE client_id = \(batch.clientID) AND client_seq = \(batch.clientSequence)
                    """, logger: logger)
                if let earlierSequence = try await earlier.decode(Int64.self).first(where: { _ in true }) {
                    throw AlreadyApplied(sequence: earlierSequence)
                }
                var accepted: [ObjectChange] = []
                for change in batch.changes {
                    let merged = try await merge(change, scope: batch.scope, on: connection)
                    if !merged.isEmpty { accepted.append(merged) }
                }
                let entry = ChangeLogEntry(
                    scope: batch.scope, sequence: sequence, clientID: batch.clientID,
                    clientSequence: batch.clientSequence, changes: accepted)
                try await connection.query(
                    """
                    INSERT INTO \(unescaped: schemaName).strata_upload (client_id, client_seq, scope, seq)
                    VALUES (\(batch.clientID), \(batch.clientSequence), \(batch.scope), \(sequence))
                    """, logger: logger)
                try await connection.query(
                    """
                    INSERT INTO \(unescaped: schemaName).strata_change_log (scope, seq, client_id, client_seq, changes)
                    VALUES (\(batch.scope), \(sequence), \(batch.clientID), \(batch.clientSequence),
                        \(try SyncJSON.text(accepted))::jsonb)
                    """, logger: logger)
                try await connection.query(
                    "SELECT pg_notify(\("strata_" + batch.scope), \(String(sequence)))", logger: logger)
                return entry
            }
            return UploadResult(entry: entry, wasAlreadyApplied: false)
        } catch let applied as AlreadyApplied {
            guard let entry = try await pull(scope: batch.scope, after: applied.sequence - 1, limit: 1).first,
                entry.sequence == applied.sequence
            else {
                throw SyncError.corruptServerState("upload recorded as entry \(applied.sequence), which is missing")
            }
            return UploadResult(entry: entry, wasAlreadyApplied: true)
        }
    }

    /// Locks, merges and writes one object's row; returns the accepted part of `change`.
    private func merge(_ change: ObjectChange, scope: String, on connection: PostgresConnection) async throws
        -> ObjectChange
    {
        let type = try schema.type(change.objectType)
        let table = try schema.qualified(type.className)
        let keyColumn = try SQLName.quoted(type.primaryKey.name)
        let keyText = try change.primaryKey.primaryKeySQLText()
        let stateRows = try await connection.query(
            PostgresQuery(
                unsafeSQL: """
                    SELECT _strata_state::text FROM \(table)
                    WHERE _strata_scope = $1 AND \(keyColumn) = $2::\(type.primaryKey.sqlType) FOR UPDATE
                    """, binds: Self.binds([scope, keyText])), logger: logger)
        var state = RowState()
        if let stateText = try await stateRows.decode(String.self).first(where: { _ in true }) {
            do {
                state = try SyncJSON.decode(RowState.self, from: stateText)
            } catch {
                throw SyncError.corruptServerState(
                    "the _strata_state of \(type.className) \(keyText) is unreadable: \(error)")
            }
        }
        let merge = RowMerge(change, into: &state, type: type)
        if merge.accepted.isEmpty { return merge.accepted }

        var columns = [
            "_strata_scope", keyColumn, "_strata_state", "_strata_deleted", "_strata_created_at", "_strata_deleted_at",
        ]
        var expressions = ["$1", "$2::\(type.primaryKey.sqlType)", "$3::jsonb", "$4::boolean", "$5", "$6"]
        var parameters: [String?] = [
            scope, keyText, try SyncJSON.text(state), state.isLive ? "false" : "true", state.created?.description,
            state.deleted?.description,
        ]
        for column in type.columns {
            let text: String?
            if let value = merge.columnValues[column.name] {
                text = try value.flatMap { try $0.sqlText(for: column) }
            } else if let json = merge.collectionValues[column.name] {
                text = try SyncJSON.text(json)
            } else {
                continue
            }
            columns.append(try SQLName.quoted(column.name))
            parameters.append(text)
            expressions.append(column.parameterExpression(parameters.count))
        }
        let updates = columns.dropFirst(2).map { "\($0) = excluded.\($0)" }.joined(separator: ", ")
        try await connection.query(
            PostgresQuery(
                unsafeSQL: """
                    INSERT INTO \(table) (\(columns.joined(separator: ", "))) VALUES (\(expressions.joined(separator: ", ")))
                    ON CONFLICT (_strata_scope, \(keyColumn)) DO UPDATE SET \(updates)
                    """, binds: Self.binds(parameters)), logger: logger)
        return merge.accepted
    }

    /// The entries of `scope`'s change log after sequence `after`, at most `limit` of them, in sequence order.
    ///
    /// A client keeps the sequence of the last entry it applied as its checkpoint and pulls after it.
    ///
    /// - Throws: ``SyncError`` for an invalid scope or an unreadable entry, or the PostgreSQL client's error.
    public func pull(scope: String, after: Int64, limit: Int = 1000) async throws -> [ChangeLogEntry] {
        try SQLName.check(scope: scope)
        let schemaName = try SQLName.quoted(schema.namespace)
        let rows = try await client.query(
            """
            SELECT seq, client_id, client_seq, changes::text FROM \(unescaped: schemaName).strata_change_log
            WHERE scope = \(scope) AND seq > \(after) ORDER BY seq LIMIT \(Int64(max(0, limit)))
            """, logger: logger)
        var entries: [ChangeLogEntry] = []
        for try await (sequence, clientID, clientSequence, changes) in rows.decode(
            (Int64, String?, Int64?, String).self)
        {
            let decoded: [ObjectChange]
            do {
                decoded = try SyncJSON.decode([ObjectChange].self, from: changes)
            } catch {
                throw SyncError.corruptServerState("change-log entry \(sequence) of \(scope) is unreadable: \(error)")
            }
            entries.append(
                ChangeLogEntry(
                    scope: scope, sequence: sequence, clientID: clientID, clientSequence: clientSequence,
                    changes: decoded))
        }
        return entries
    }

    /// Text parameters (nil: NULL), which the statement casts where the column is not text.
    private static func binds(_ values: [String?]) -> PostgresBindings {
        var bindings = PostgresBindings(capacity: values.count)
        for value in values { bindings.append(value) }
        return bindings
    }
}

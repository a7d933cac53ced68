import Logging
import PostgresNIO

/// Applies client uploads to PostgreSQL and serves the change log.
///
/// `apply(_: [UploadBatch])` merges a client's batches, several per PostgreSQL transaction (at most
/// ``maximumBatchesPerTransaction`` and about ``maximumBytesPerTransaction`` of changes):
/// 1. it locks the scope's row of `strata_scope` (`INSERT … ON CONFLICT DO UPDATE … RETURNING last_seq`) until
///    the commit — merges of one scope commit one after the other, so the sequence is gap-free (a rolled-back
///    merge gives its numbers back) and in commit order;
/// 2. it leaves out the batches whose `(clientID, clientSequence)` is in `strata_upload` already (retries: they
///    get their first result back);
/// 3. it locks and reads the rows of every object the batches name, one `SELECT … FOR UPDATE` per type, merges
///    the batches in order in memory by the conflict rules (``RowMerge``), and writes the changed rows with one
///    multi-row upsert per type;
/// 4. it gives every batch its own entry of the scope's log (numbered last + 1, last + 2, …: other replicas see
///    whole client transactions), records the batches in `strata_upload`, moves `strata_scope.last_seq`, and calls
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
    /// How many batches one PostgreSQL transaction merges at most.
    public var maximumBatchesPerTransaction = 500
    /// About how many bytes of changes (estimated in the change format) one PostgreSQL transaction merges at most;
    /// a single larger batch still goes whole, alone.
    public var maximumBytesPerTransaction = 4 << 20
    let client: PostgresClient
    let logger: Logger

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
        guard let result = try await apply([batch]).first else {
            throw SyncError.corruptServerState("the merge of one batch returned no result")
        }
        return result
    }

    /// Applies `batches` — one client's, of one scope, in the client's order — each once, several per
    /// PostgreSQL transaction; returns a result per batch, in order. Each batch becomes one entry of the log.
    ///
    /// - Throws: ``SyncError`` when a batch does not fit the schema, or the batches are not of one scope and one
    ///   client with distinct sequences (nothing is applied then), or the PostgreSQL client's error (the
    ///   transaction that failed is rolled back; the transactions before it are committed, and a retry of the
    ///   same batches applies only what is missing).
    public func apply(_ batches: [UploadBatch]) async throws -> [UploadResult] {
        guard let first = batches.first else { return [] }
        try SQLName.check(scope: first.scope)
        var sequences = Set<Int64>()
        for batch in batches {
            guard batch.formatVersion == UploadBatch.currentFormatVersion else {
                throw SyncError.unsupportedFormatVersion(batch.formatVersion)
            }
            guard batch.scope == first.scope, batch.clientID == first.clientID,
                sequences.insert(batch.clientSequence).inserted
            else {
                throw SyncError.invalidChange(
                    type: "", property: nil,
                    reason: "batches merged together must be of one scope and one client, with distinct sequences")
            }
            for change in batch.changes {
                try RowMerge.validate(change, of: try schema.type(change.objectType), in: schema)
            }
        }
        var results: [UploadResult] = []
        results.reserveCapacity(batches.count)
        var start = 0
        while start < batches.count {
            var end = start + 1
            var bytes = batches[start].estimatedByteCount
            while end < batches.count, end - start < maximumBatchesPerTransaction {
                bytes += batches[end].estimatedByteCount
                if bytes > maximumBytesPerTransaction { break }
                end += 1
            }
            results += try await applyWithRetries(batches[start..<end])
            start = end
        }
        return results
    }

    private func applyWithRetries(_ batches: ArraySlice<UploadBatch>) async throws -> [UploadResult] {
        var attempt = 1
        while true {
            do {
                return try await applyOnce(batches)
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

    /// Merges `batches` (validated, one scope and client) in one transaction.
    private func applyOnce(_ batches: ArraySlice<UploadBatch>) async throws -> [UploadResult] {
        guard let first = batches.first else { return [] }
        let scope = first.scope
        let clientID = first.clientID
        let schemaName = try SQLName.quoted(schema.namespace)
        let schema = schema
        let logger = logger
        let (entries, earlier) = try await client.transaction(logger: logger) { connection in
            // The capture trigger leaves this transaction's writes alone: the merge logs them itself.
            try await connection.query("SELECT set_config('strata.merging', 'on', true)", logger: logger)
            let scopeRows = try await connection.query(
                """
                INSERT INTO \(unescaped: schemaName).strata_scope AS s (scope, last_seq) VALUES (\(scope), 0)
                ON CONFLICT (scope) DO UPDATE SET last_seq = s.last_seq RETURNING last_seq
                """, logger: logger)
            guard var sequence = try await scopeRows.decode(Int64.self).first(where: { _ in true }) else {
                throw SyncError.corruptServerState("strata_scope returned no sequence")
            }
            var earlier: [Int64: Int64] = [:]
            let uploaded = try await connection.query(
                """
                SELECT client_seq, seq FROM \(unescaped: schemaName).strata_upload
                WHERE client_id = \(clientID) AND client_seq = ANY(\(batches.map(\.clientSequence)))
                """, logger: logger)
            for try await (clientSequence, logSequence) in uploaded.decode((Int64, Int64).self) {
                earlier[clientSequence] = logSequence
            }
            let fresh = batches.filter { earlier[$0.clientSequence] == nil }
            if fresh.isEmpty { return ([ChangeLogEntry](), earlier) }
            var rows = try await MergedRows(
                locking: fresh.lazy.flatMap(\.changes), schema: schema, scope: scope, on: connection, logger: logger)
            var entries: [ChangeLogEntry] = []
            entries.reserveCapacity(fresh.count)
            for batch in fresh {
                sequence += 1
                var accepted: [ObjectChange] = []
                for change in batch.changes {
                    let merged = try await rows.merge(change, on: connection, logger: logger)
                    if !merged.isEmpty { accepted.append(merged) }
                }
                entries.append(
                    ChangeLogEntry(
                        scope: scope, sequence: sequence, clientID: clientID, clientSequence: batch.clientSequence,
                        changes: accepted))
            }
            try await rows.write(on: connection, logger: logger)
            try await connection.query(
                "UPDATE \(unescaped: schemaName).strata_scope SET last_seq = \(sequence) WHERE scope = \(scope)",
                logger: logger)
            let logSequences = entries.map(\.sequence)
            let clientSequences = entries.map { $0.clientSequence ?? 0 }
            try await connection.query(
                """
                INSERT INTO \(unescaped: schemaName).strata_upload (client_id, client_seq, scope, seq)
                SELECT \(clientID), u.client_seq, \(scope), u.seq
                FROM unnest(\(clientSequences)::bigint[], \(logSequences)::bigint[]) AS u(client_seq, seq)
                """, logger: logger)
            let changes = try entries.map { try SyncJSON.text($0.changes) }
            try await connection.query(
                """
                INSERT INTO \(unescaped: schemaName).strata_change_log (scope, seq, client_id, client_seq, changes)
                SELECT \(scope), u.seq, \(clientID), u.client_seq, u.changes::jsonb
                FROM unnest(\(logSequences)::bigint[], \(clientSequences)::bigint[], \(changes)::text[])
                    AS u(seq, client_seq, changes)
                """, logger: logger)
            try await connection.query("SELECT pg_notify(\("strata_" + scope), \(String(sequence)))", logger: logger)
            return (entries, earlier)
        }
        var fresh = entries.makeIterator()
        var results: [UploadResult] = []
        for batch in batches {
            if let applied = earlier[batch.clientSequence] {
                let logged: ChangeLogEntry?
                do {
                    logged = try await pull(scope: scope, after: applied - 1, limit: 1).first
                } catch SyncError.historyTrimmed {
                    // Its entry was trimmed away since: what it accepted is in the snapshot now.
                    logged = ChangeLogEntry(
                        scope: scope, sequence: applied, clientID: clientID, clientSequence: batch.clientSequence,
                        changes: [])
                }
                guard let entry = logged, entry.sequence == applied else {
                    throw SyncError.corruptServerState("upload recorded as entry \(applied), which is missing")
                }
                results.append(UploadResult(entry: entry, wasAlreadyApplied: true))
            } else if let entry = fresh.next() {
                results.append(UploadResult(entry: entry, wasAlreadyApplied: false))
            }
        }
        return results
    }

    /// The entries of `scope`'s change log after sequence `after`, at most `limit` of them, in sequence order.
    ///
    /// A client keeps the sequence of the last entry it applied as its checkpoint and pulls after it.
    ///
    /// The entries and the scope's trim horizon are read by one statement (one snapshot), so a trim running
    /// meanwhile either happened before (and is reported) or after (and the entries are complete).
    ///
    /// - Throws: ``SyncError/historyTrimmed(scope:after:trimmedThrough:)`` if entries after `after` were trimmed
    ///   away (``trimLog(scope:through:)``); ``SyncError`` for an invalid scope or an unreadable entry, or the
    ///   PostgreSQL client's error.
    public func pull(scope: String, after: Int64, limit: Int = 1000) async throws -> [ChangeLogEntry] {
        try SQLName.check(scope: scope)
        let schemaName = try SQLName.quoted(schema.namespace)
        let rows = try await client.query(
            """
            SELECT trimmed_through, NULL::bigint, NULL::text, NULL::bigint, NULL::text
            FROM \(unescaped: schemaName).strata_scope WHERE scope = \(scope)
            UNION ALL (
                SELECT NULL::bigint, seq, client_id, client_seq, changes::text
                FROM \(unescaped: schemaName).strata_change_log
                WHERE scope = \(scope) AND seq > \(after) ORDER BY seq LIMIT \(Int64(max(0, limit))))
            """, logger: logger)
        var entries: [ChangeLogEntry] = []
        var trimmedThrough: Int64 = 0
        for try await (horizon, logSequence, clientID, clientSequence, logChanges) in rows.decode(
            (Int64?, Int64?, String?, Int64?, String?).self)
        {
            if let horizon { trimmedThrough = horizon }
            guard let sequence = logSequence, let changes = logChanges else { continue }
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
        entries.sort { $0.sequence < $1.sequence }  // UNION ALL promises no order
        if after < trimmedThrough {
            throw SyncError.historyTrimmed(scope: scope, after: after, trimmedThrough: trimmedThrough)
        }
        return entries
    }
}

import Logging
import PostgresNIO

extension ServerMerge {
    /// Deletes the entries of `scope`'s change log up to and including sequence `through` (at most the scope's
    /// last sequence), and records it as the scope's trim horizon; returns how many entries went.
    ///
    /// A replica whose checkpoint is behind the horizon can no longer catch up from the log: its
    /// ``pull(scope:after:limit:)`` throws ``SyncError/historyTrimmed(scope:after:trimmedThrough:)`` and
    /// ``SyncClient`` bootstraps from a snapshot instead, then uploads its queued writes as usual. So an
    /// operator picks the point by how long a replica may stay offline and still catch up cheaply, e.g. the
    /// greatest sequence committed before a retention time:
    /// `SELECT max(seq) FROM strata_change_log WHERE scope = 'main' AND committed_at < now() - interval '30 days'`.
    /// Rows of the synced tables are never trimmed: their clocks and delete markers are the merge state.
    ///
    /// Runs in one transaction that locks the scope's row, so it commits between merges of the scope, never
    /// in the middle of one.
    ///
    /// - Throws: ``SyncError/invalidName(_:reason:)`` for an invalid scope, or the PostgreSQL client's error.
    @discardableResult
    public func trimLog(scope: String, through: Int64) async throws -> Int {
        try SQLName.check(scope: scope)
        let schemaName = try SQLName.quoted(schema.namespace)
        let logger = logger
        return try await client.transaction(logger: logger) { connection in
            let locked = try await connection.query(
                """
                SELECT last_seq FROM \(unescaped: schemaName).strata_scope WHERE scope = \(scope) FOR UPDATE
                """, logger: logger)
            guard let last = try await locked.decode(Int64.self).first(where: { _ in true }) else { return 0 }
            let horizon = min(through, last)
            let deleted = try await connection.query(
                """
                WITH gone AS (
                    DELETE FROM \(unescaped: schemaName).strata_change_log
                    WHERE scope = \(scope) AND seq <= \(horizon) RETURNING 1)
                SELECT count(*)::bigint FROM gone
                """, logger: logger)
            let count = try await deleted.decode(Int64.self).first(where: { _ in true }) ?? 0
            try await connection.query(
                """
                UPDATE \(unescaped: schemaName).strata_scope SET trimmed_through = greatest(trimmed_through, \(horizon))
                WHERE scope = \(scope)
                """, logger: logger)
            return Int(count)
        }
    }

    /// The trim horizon of `scope`: the log holds no entry at or before it (0 when never trimmed).
    ///
    /// - Throws: ``SyncError/invalidName(_:reason:)`` for an invalid scope, or the PostgreSQL client's error.
    public func trimHorizon(scope: String) async throws -> Int64 {
        try SQLName.check(scope: scope)
        let schemaName = try SQLName.quoted(schema.namespace)
        let rows = try await client.query(
            "SELECT trimmed_through FROM \(unescaped: schemaName).strata_scope WHERE scope = \(scope)",
            logger: logger)
        return try await rows.decode(Int64.self).first(where: { _ in true }) ?? 0
    }
}

import Foundation
import Logging
import PostgresNIO
import Strata
import StrataSync

/// The `bootstrap` row: a scope of `count` small objects written straight into the PostgreSQL table (one
/// statement, with the capture trigger off, as a scope built up over time holds them), its log trimmed, and a new
/// replica's bootstrap from a snapshot timed until its file holds every object and the checkpoint. Peak memory
/// is the process's (run it under `/usr/bin/time -v`).
func measureBootstrap(
    count: Int, postgres: PostgresClient, namespace: String, directory: URL, logger: Logger
) async throws -> [(String, String, String)] {
    let schema = try ServerSchema(namespace: namespace, classes: [BenchItem.self, BenchReading.self])
    try await schema.migrate(postgres, logger: logger)
    let stamp = "001764000000000.0000000000.bench"
    let quoted = "\"\(namespace)\""
    try await postgres.withTransaction(logger: logger) { connection in
        try await connection.query("SELECT set_config('strata.merging', 'on', true)", logger: logger)
        try await connection.query(
            PostgresQuery(
                unsafeSQL: """
                    INSERT INTO \(quoted)."BenchItem"
                        (_strata_scope, id, _strata_state, _strata_deleted, _strata_created_at, name, value)
                    SELECT 'bench', i, '{"created": "\(stamp)", "clocks": {"name": "\(stamp)", "value": "\(stamp)"}}',
                        false, '\(stamp)', 'item ' || i, i
                    FROM generate_series(1, \(count)) AS i
                    """), logger: logger)
        try await connection.query(
            PostgresQuery(
                unsafeSQL:
                    "INSERT INTO \(quoted).strata_scope (scope, last_seq, trimmed_through) VALUES ('bench', 1, 1)"
            ), logger: logger)
    }
    let configuration = Realm.Configuration(
        fileURL: directory.appendingPathComponent("bootstrap.strata"), objectTypes: [BenchItem.self, BenchReading.self])
    let sync = try SyncClient(
        configuration: configuration, schema: schema, client: postgres, scope: "bench", clientID: "bench-new",
        logger: logger)
    let clock = ContinuousClock()
    let elapsed = try await clock.measure { try await sync.syncOnce() }
    await sync.stop()
    let local = try await onThread { try Realm(configuration: configuration).objects(BenchItem.self).count }
    precondition(local == count, "the new replica holds \(local) of \(count) objects")
    let seconds = milliseconds(elapsed) / 1e3
    return [
        (
            "bootstrap of a new replica, \(count) objects (pages of 5,000, writes of 10,000)",
            "\(format(seconds, 1)) s, \(format(Double(count) / seconds, 0)) objects/s", "1M objects"
        )
    ]
}

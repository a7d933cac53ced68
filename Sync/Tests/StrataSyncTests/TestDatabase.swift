import Foundation
import Logging
import PostgresNIO
import Strata
import Testing

@testable import StrataSync

/// A PostgreSQL server named by the standard PGHOST, PGPORT, PGUSER, PGPASSWORD and PGDATABASE variables
/// (libpq's defaults where unset), and a PostgreSQL schema of its own per test so that tests and runs do not
/// see each other's tables. A test fails — never skips — when no server answers.
struct TestDatabase {
    let client: PostgresClient
    let namespace: String
    let logger: Logger

    static var configuration: PostgresClient.Configuration {
        let environment = ProcessInfo.processInfo.environment
        let user = environment["PGUSER"] ?? environment["USER"] ?? "postgres"
        let host = environment["PGHOST"].flatMap { $0.isEmpty ? nil : $0 } ?? "localhost"
        let port = environment["PGPORT"].flatMap { Int($0) } ?? 5432
        let password = environment["PGPASSWORD"].flatMap { $0.isEmpty ? nil : $0 }
        let database = environment["PGDATABASE"] ?? user
        var configuration: PostgresClient.Configuration
        if host.hasPrefix("/") {
            configuration = .init(
                unixSocketPath: "\(host)/.s.PGSQL.\(port)", username: user, password: password, database: database)
        } else {
            configuration = .init(
                host: host, port: port, username: user, password: password, database: database, tls: .disable)
        }
        configuration.options.connectTimeout = .seconds(5)
        return configuration
    }

    /// Runs `body` with a running client and a fresh, empty PostgreSQL schema, dropped afterwards.
    static func with(_ body: (TestDatabase) async throws -> Void) async throws {
        var logger = Logger(label: "strata-sync-tests")
        // The pool warns when a lease comes before `run()` has started, which the group below makes harmless.
        logger.logLevel = .error
        let client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await client.run() }
            defer { group.cancelAll() }
            let namespace = "strata_test_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
            do {
                try await client.query("SELECT 1", logger: logger)
            } catch {
                Issue.record(
                    """
                    no PostgreSQL server answers at \(configuration.host ?? configuration.unixSocketPath ?? "?"):\
                    \(configuration.port ?? 0) (set PGHOST, PGPORT, PGUSER, PGPASSWORD, PGDATABASE, or run \
                    `source .ci/postgres.sh`): \(String(reflecting: error))
                    """)
                throw error
            }
            let database = TestDatabase(client: client, namespace: namespace, logger: logger)
            do {
                try await body(database)
            } catch {
                try? await database.dropNamespace()
                throw error
            }
            try await database.dropNamespace()
        }
    }

    private func dropNamespace() async throws {
        try await client.query(
            PostgresQuery(unsafeSQL: "DROP SCHEMA IF EXISTS \"\(namespace)\" CASCADE"), logger: logger)
    }

    /// The schema of the test models in this test's namespace, migrated.
    func migratedSchema(_ classes: [ObjectBase.Type] = [SyncDog.self, SyncPerson.self, SyncAddress.self]) async throws
        -> ServerSchema
    {
        let schema = try ServerSchema(namespace: namespace, classes: classes)
        try await schema.migrate(client, logger: logger)
        return schema
    }

    /// The rows of `sql` (run with the namespace as search path), each as its columns' text.
    func rows(_ sql: String) async throws -> [[String?]] {
        try await client.withConnection { connection in
            try await connection.query(PostgresQuery(unsafeSQL: "SET search_path TO \"\(namespace)\""), logger: logger)
            let rows = try await connection.query(PostgresQuery(unsafeSQL: sql), logger: logger)
            var result: [[String?]] = []
            for try await row in rows {
                result.append(try row.map { cell in try cell.decode(String?.self) })
            }
            return result
        }
    }
}

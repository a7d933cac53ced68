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

    /// Where the server is, from the environment (libpq's defaults where unset).
    struct Server: Sendable {
        var host: String
        var port: Int
        var user: String
        var password: String?
        var database: String

        static var fromEnvironment: Server {
            let environment = ProcessInfo.processInfo.environment
            let user = environment["PGUSER"] ?? environment["USER"] ?? "postgres"
            return Server(
                host: environment["PGHOST"].flatMap { $0.isEmpty ? nil : $0 } ?? "localhost",
                port: environment["PGPORT"].flatMap { Int($0) } ?? 5432, user: user,
                password: environment["PGPASSWORD"].flatMap { $0.isEmpty ? nil : $0 },
                database: environment["PGDATABASE"] ?? user)
        }

        var socketPath: String? { host.hasPrefix("/") ? "\(host)/.s.PGSQL.\(port)" : nil }
    }

    /// One connection attempt for the whole run (nil if the server answered, else why not): without a server
    /// every test fails at once instead of waiting for the pool's retries.
    static let serverProblem = Task<String?, Never> {
        let server = Server.fromEnvironment
        var configuration: PostgresConnection.Configuration
        if let socketPath = server.socketPath {
            configuration = .init(
                unixSocketPath: socketPath, username: server.user, password: server.password, database: server.database)
        } else {
            configuration = .init(
                host: server.host, port: server.port, username: server.user, password: server.password,
                database: server.database, tls: .disable)
        }
        configuration.options.connectTimeout = .seconds(5)
        do {
            let connection = try await PostgresConnection.connect(
                configuration: configuration, id: 0, logger: Logger(label: "strata-sync-tests"))
            try await connection.close()
            return nil
        } catch {
            return """
                no PostgreSQL server answers at \(server.socketPath ?? "\(server.host):\(server.port)") as \(server.user) \
                (set PGHOST, PGPORT, PGUSER, PGPASSWORD, PGDATABASE, or run `source .ci/postgres.sh`): \
                \(String(reflecting: error))
                """
        }
    }

    /// Why the tests cannot reach PostgreSQL.
    struct NoServer: Error, CustomStringConvertible {
        var description: String
    }

    /// Runs `body` with a running client and a fresh, empty PostgreSQL schema, dropped afterwards; the client's
    /// connections carry `applicationName` when one is given.
    static func with(applicationName: String? = nil, _ body: (TestDatabase) async throws -> Void) async throws {
        if let problem = await serverProblem.value {
            throw NoServer(description: problem)
        }
        var logger = Logger(label: "strata-sync-tests")
        // The pool warns when a lease comes before `run()` has started, which the group below makes harmless.
        logger.logLevel = .error
        let client = PostgresClient(
            configuration: PostgresEnvironment.clientConfiguration(applicationName: applicationName),
            backgroundLogger: logger)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await client.run() }
            defer { group.cancelAll() }
            let namespace = "strata_test_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
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

    /// A merge into the tables of `classes`, migrated first (see ``migratedSchema(_:)``).
    func merge(_ classes: [ObjectBase.Type] = [SyncDog.self, SyncPerson.self, SyncAddress.self]) async throws
        -> ServerMerge
    {
        ServerMerge(schema: try await migratedSchema(classes), client: client, logger: logger)
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

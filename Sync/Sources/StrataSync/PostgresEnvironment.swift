import Foundation
import PostgresNIO

/// The PostgreSQL server that the standard `PGHOST`, `PGPORT`, `PGUSER`, `PGPASSWORD` and `PGDATABASE` variables
/// name, with libpq's defaults where they are unset, as a client configuration: what the tests, the benchmark and
/// the convergence suite's child processes connect with, and a start for a service's own configuration.
public enum PostgresEnvironment {
    /// A client configuration for the server the environment names (a `PGHOST` starting with `/` is the directory
    /// of the server's Unix socket; TLS off, a 5 s connect timeout); its connections carry `applicationName`
    /// (PostgreSQL's `application_name`, seen in `pg_stat_activity`) when one is given.
    public static func clientConfiguration(applicationName: String? = nil) -> PostgresClient.Configuration {
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
        if let applicationName {
            configuration.options.additionalStartupParameters = [("application_name", applicationName)]
        }
        return configuration
    }
}

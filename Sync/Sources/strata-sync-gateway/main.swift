// strata-sync-gateway: the Strata Sync HTTP gateway as a program. Configured by the environment:
//
//   PGHOST, PGPORT, PGUSER, PGPASSWORD, PGDATABASE  the PostgreSQL server (libpq's defaults where unset)
//   STRATA_GATEWAY_SCHEMA          a Strata file made by the app with its models (any replica's file, or an empty
//                                  one): its stored schema names the synced types; required
//   STRATA_GATEWAY_SCHEMA_VERSION  that file's schema version (default 0)
//   STRATA_GATEWAY_TOKENS          a JSON file of bearer tokens and their grants; required:
//                                  {"<token>": {"read": ["main"], "write": ["main"], "clientIDs": ["device-1"]}}
//                                  (clientIDs left out: any client id)
//   STRATA_GATEWAY_NAMESPACE       the PostgreSQL schema of the tables (default public)
//   STRATA_GATEWAY_HOST, STRATA_GATEWAY_PORT   where to listen (default 127.0.0.1 and 8080; port 0 picks a free
//                                  one); once listening it prints "listening on <host>:<port>" on standard output
//
// It migrates the tables (additive, idempotent) before serving, and stops on SIGTERM or SIGINT.
import Foundation
import Hummingbird
import Logging
import PostgresNIO
import ServiceLifecycle
import Strata
import StrataSync
import StrataSyncGateway

/// A configuration problem: printed, and the program exits with status 2.
struct ConfigurationError: Error, CustomStringConvertible {
    var description: String
}

let environment = ProcessInfo.processInfo.environment
var logger = Logger(label: "strata-sync-gateway")
logger.logLevel = environment["LOG_LEVEL"].flatMap(Logger.Level.init(rawValue:)) ?? .info

/// The value of the variable `name`, which must be set.
func required(_ name: String) throws -> String {
    guard let value = environment[name], !value.isEmpty else {
        throw ConfigurationError(description: "\(name) is not set")
    }
    return value
}

do {
    let schemaFile = URL(fileURLWithPath: try required("STRATA_GATEWAY_SCHEMA"))
    let version = UInt64(environment["STRATA_GATEWAY_SCHEMA_VERSION"] ?? "0") ?? 0
    let realm = try Realm(
        configuration: Realm.Configuration(fileURL: schemaFile, readOnly: true, schemaVersion: version, objectTypes: [])
    )
    let schema = try ServerSchema(
        namespace: environment["STRATA_GATEWAY_NAMESPACE"] ?? "public", objectSchemas: realm.schema.objectSchema)
    let tokensFile = URL(fileURLWithPath: try required("STRATA_GATEWAY_TOKENS"))
    let tokens = try JSONDecoder().decode([String: GatewayGrant].self, from: Data(contentsOf: tokensFile))
    let host = environment["STRATA_GATEWAY_HOST"] ?? "127.0.0.1"
    guard let port = Int(environment["STRATA_GATEWAY_PORT"] ?? "8080") else {
        throw ConfigurationError(description: "STRATA_GATEWAY_PORT is not a port number")
    }
    let client = PostgresClient(
        configuration: PostgresEnvironment.clientConfiguration(applicationName: "strata-sync-gateway"),
        backgroundLogger: logger)
    let gateway = SyncGateway(schema: schema, client: client, tokens: tokens, logger: logger)
    logger.info(
        "serving",
        metadata: [
            "address": "\(host):\(port)", "types": "\(schema.types.keys.sorted())", "tokens": "\(tokens.count)",
        ])
    try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { await client.run() }
        try await schema.migrate(client, logger: logger)
        // The port it got (STRATA_GATEWAY_PORT=0 picks a free one), on standard output for whoever started it.
        let application = gateway.application(host: host, port: port) { channel in
            FileHandle.standardOutput.write(Data("listening on \(host):\(channel.localAddress?.port ?? port)\n".utf8))
        }
        try await application.runService()
        group.cancelAll()
    }
} catch {
    FileHandle.standardError.write(Data("strata-sync-gateway: \(error)\n".utf8))
    exit(2)
}

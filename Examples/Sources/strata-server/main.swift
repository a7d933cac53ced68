import Foundation
import Logging
import StrataService

// strata-server: the library's HTTP API over a Strata file (or, with --backend grdb, over SQLite through GRDB).
// Stops gracefully on SIGTERM or SIGINT: requests in flight finish, then the file is closed.

let usage = """
    USAGE: strata-server [--path FILE] [--host HOST] [--port PORT] [--backend strata|grdb] [--log-level LEVEL]

      --path FILE        the database file (env STRATA_PATH; default library.strata, or library.sqlite for grdb)
      --host HOST        the address to listen on (env HOST; default 127.0.0.1)
      --port PORT        the port (env PORT; default 8080; 0 picks a free one)
      --backend NAME     strata (default) or grdb (env STRATA_BACKEND)
      --log-level LEVEL  trace, debug, info (default), notice, warning, error, critical (env STRATA_LOG_LEVEL)
    """

struct ServerOptions {
    var path: String?
    var host: String
    var port: Int
    var backend: String
    var logLevel: Logger.Level?

    init(arguments: [String], environment: [String: String]) {
        path = environment["STRATA_PATH"]
        host = environment["HOST"] ?? "127.0.0.1"
        port = environment["PORT"].flatMap { Int($0) } ?? 8080
        backend = environment["STRATA_BACKEND"] ?? "strata"
        var arguments = arguments[...]
        func value(_ name: String) -> String {
            guard let value = arguments.popFirst() else { fail("\(name) needs a value") }
            return value
        }
        while let argument = arguments.popFirst() {
            switch argument {
            case "--path": path = value(argument)
            case "--host": host = value(argument)
            case "--port":
                guard let number = Int(value(argument)), (0...65535).contains(number) else {
                    fail("--port needs a number from 0 to 65535")
                }
                port = number
            case "--backend": backend = value(argument)
            case "--log-level":
                guard let level = Logger.Level(rawValue: value(argument)) else { fail("unknown log level") }
                logLevel = level
            case "--help", "-h":
                print(usage)
                exit(0)
            default: fail("unknown argument \(argument)")
            }
        }
        guard backend == "strata" || backend == "grdb" else { fail("--backend is strata or grdb, not \(backend)") }
    }
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("strata-server: \(message)\n\n\(usage)\n".utf8))
    exit(2)
}

let options = ServerOptions(
    arguments: Array(CommandLine.arguments.dropFirst()), environment: ProcessInfo.processInfo.environment)
let logger = makeServiceLogger(level: options.logLevel)
do {
    let library: any LibraryRepository
    if options.backend == "grdb" {
        library = try GRDBLibrary(path: options.path ?? "library.sqlite", logger: logger)
    } else {
        let path = options.path ?? "library.strata"
        library = try await StrataLibrary.open(
            configuration: strataConfiguration(path: path, logger: logger), logger: logger)
    }
    let application = makeApplication(library: library, host: options.host, port: options.port, logger: logger)
    try await makeServiceGroup(library: library, application: application, logger: logger).run()
} catch {
    logger.critical("strata-server stopped", metadata: ["error": "\(error)"])
    exit(1)
}

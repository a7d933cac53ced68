import Foundation
import Logging
import Strata

// Logging in one place: the service's Logger, and the Strata configuration that logs through it. This is where
// the library's event hook (`Realm.Configuration.events`) is wired to swift-log.

/// The service's logger at `level` (`STRATA_LOG_LEVEL`, default info), printing to standard error.
public func makeServiceLogger(label: String = "strata-server", level: Logging.Logger.Level? = nil) -> Logging.Logger {
    var logger = Logging.Logger(label: label)
    let environment = ProcessInfo.processInfo.environment["STRATA_LOG_LEVEL"].flatMap(
        Logging.Logger.Level.init(rawValue:))
    logger.logLevel = level ?? environment ?? .info
    return logger
}

/// The configuration of the service's file at `path`: the library's two object types only, logging through
/// `logger`.
public func strataConfiguration(path: String, logger: Logging.Logger) -> Realm.Configuration {
    var configuration = Realm.Configuration(fileURL: URL(fileURLWithPath: path))
    configuration.objectTypes = [Author.self, Book.self]
    // Strata's own events, one log line each: every commit at debug (a busy service makes many), what an
    // operator should look at (a reader holding old versions, damage) at warning and error.
    configuration.events = { event in
        switch event {
        case .committed, .checkpointed, .copyProgress, .migrationProgress: logger.debug("\(event)")
        case .pinnedVersions: logger.warning("\(event)")
        case .damage: logger.error("\(event)")
        case .opened: logger.info("\(event)")
        }
    }
    return configuration
}

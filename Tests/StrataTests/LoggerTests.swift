import Foundation
import StrataStorage
import Testing

@testable import Strata

final class LoggedNote: Object {
    @Persisted var text = ""
}

/// `Logger` and `LogLevel` as the SDK documents them: `Logger(level:logFunction:)`, `Logger.shared`,
/// `Logger.shared.level = .debug`, fed by the events of `Realm.Configuration.events`. Serialized: the shared
/// logger belongs to the whole process.
@Suite("Logger", .serialized)
struct LoggerTests {
    /// The messages a logger received, with their levels.
    final class Received: Sendable {
        let lines = Locked<[(LogLevel, String)]>([])
        func messages(containing text: String) -> [(LogLevel, String)] {
            lines.withLock { $0 }.filter { $0.1.contains(text) }
        }
    }

    @Test func aLoggerPassesItsLevelAndTheMoreSevereOnes() {
        let received = Received()
        let logger = Logger(level: .warn) { level, message in received.lines.withLock { $0.append((level, message)) } }
        logger.log(level: .error, message: "disk")
        logger.log(level: .warn, message: "slow")
        logger.log(level: .info, message: "opened")
        logger.log(level: .off, message: "never")
        #expect(received.lines.withLock { $0 }.map(\.1) == ["disk", "slow"])
        logger.level = .all
        logger.log(level: .trace, message: "step")
        #expect(received.messages(containing: "step").count == 1)
        #expect(
            LogLevel.allCases.map(\.description) == [
                "off", "fatal", "error", "warn", "info", "detail", "debug", "trace", "all",
            ])
    }

    @Test func theSharedLoggerReceivesTheEventsOfRealms() throws {
        let previous = Logger.shared
        defer { Logger.shared = previous }
        let received = Received()
        Logger.shared = Logger(level: .debug) { level, message in
            received.lines.withLock { $0.append((level, message)) }
        }
        let identifier = "logger-\(UUID())"
        let realm = try Realm(
            configuration: Realm.Configuration(inMemoryIdentifier: identifier, objectTypes: [LoggedNote.self]))
        #expect(received.messages(containing: identifier).contains { $0.0 == .info && $0.1.contains("opened") })
        try realm.write { realm.add(LoggedNote()) }
        let afterFirstCommit = received.messages(containing: identifier).count
        #expect(received.messages(containing: identifier).contains { $0.0 == .debug })
        // The level is read at each message: at .info, commits (debug) are no longer passed on.
        Logger.shared.level = .info
        try realm.write { realm.add(LoggedNote()) }
        #expect(received.messages(containing: identifier).count == afterFirstCommit)
    }

    @Test func realmsInstallNoHandlerWhileTheSharedLoggerIsOff() {
        let previous = Logger.shared
        defer { Logger.shared = previous }
        Logger.shared = Logger(level: .off) { _, _ in }
        let configuration = Realm.Configuration(inMemoryIdentifier: "logger-off-\(UUID())")
        #expect(Realm.eventHandler(configuration) == nil)
        Logger.shared.level = .info
        #expect(Realm.eventHandler(configuration) != nil)
    }
}

import StrataStorage

/// How much a ``Logger`` reports, from nothing (``off``) to everything (``all``), as the SDK's `LogLevel`. A
/// logger passes on the messages at its level and the more severe ones.
public enum LogLevel: Int, Sendable, Hashable, Comparable, CaseIterable, CustomStringConvertible {
    /// Nothing.
    case off = 0
    /// Failures that end the process.
    case fatal = 1
    /// Errors: damage found in a file.
    case error = 2
    /// Warnings: a reader keeping many old versions alive.
    case warn = 3
    /// What an operator wants in a log: opens, finished migrations of a class.
    case info = 4
    /// More detail: checkpoints of the commit log, migration progress.
    case detail = 5
    /// Debugging: every commit and copy progress.
    case debug = 6
    /// Tracing (nothing more is reported at this level yet).
    case trace = 7
    /// Everything.
    case all = 8

    /// Whether `lhs` is less verbose than `rhs`.
    public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool { lhs.rawValue < rhs.rawValue }

    /// The level's name (`debug`).
    public var description: String {
        switch self {
        case .off: "off"
        case .fatal: "fatal"
        case .error: "error"
        case .warn: "warn"
        case .info: "info"
        case .detail: "detail"
        case .debug: "debug"
        case .trace: "trace"
        case .all: "all"
        }
    }
}

/// Log messages from every Realm of the process, as the SDK's `Logger`: the same events as
/// ``Realm/Configuration/events`` (opens, commits, checkpoints, copies, readers keeping versions alive, damage,
/// migration progress), each as one line at a ``LogLevel``.
///
/// ```swift
/// Logger.shared = Logger(level: .info) { level, message in
///     print("Strata [\(level)]: \(message)")
/// }
/// Logger.shared.level = .debug  // commits too
/// ```
///
/// A Realm feeds the logger that is ``shared`` when the Realm's file is opened, if its level is not ``LogLevel/off``
/// then; a logger set afterwards sees the Realms opened afterwards. At ``LogLevel/off`` (the default: unlike the
/// SDK's, the shared logger prints nothing until you set it up, so a library never writes to a service's output
/// unasked) Realms install no handler, so logging costs nothing. The log function runs on the thread that
/// produced the event, synchronously: keep it short and thread-safe.
public final class Logger: Sendable {
    private let state: Locked<LogLevel>
    private let function: @Sendable (LogLevel, String) -> Void

    /// A logger that passes messages at `level` and the more severe ones to `logFunction`.
    public init(level: LogLevel, logFunction: @escaping @Sendable (LogLevel, String) -> Void) {
        state = Locked(level)
        function = logFunction
    }

    /// The most verbose level passed on; settable at any time from any thread.
    public var level: LogLevel {
        get { state.withLock { $0 } }
        set { state.withLock { $0 = newValue } }
    }

    /// Passes `message` to the log function if `level` is enabled (not ``LogLevel/off``, and at most as
    /// verbose as ``level``).
    public func log(level: LogLevel, message: String) {
        guard level != .off, level <= self.level else { return }
        function(level, message)
    }

    private static let current = Locked(
        Logger(level: .off) { level, message in print("Strata [\(level)]: \(message)") })

    /// The logger of the process; at ``LogLevel/off`` until set (printing to standard output once a level is set).
    public static var shared: Logger {
        get { current.withLock { $0 } }
        set { current.withLock { $0 = newValue } }
    }

    /// The level at which an event is logged.
    static func level(of event: Realm.Event) -> LogLevel {
        switch event {
        case .opened: .info
        case .committed: .debug
        case .checkpointed: .detail
        case .copyProgress: .debug
        case .pinnedVersions: .warn
        case .damage: .error
        case .migrationProgress(let progress): progress.objectsDone == progress.objectsTotal ? .info : .detail
        }
    }
}

extension Realm {
    /// The handler of `configuration`'s events: its own ``Configuration/events`` and the shared ``Logger`` (if its
    /// level is not off now); nil when neither listens, so that nothing is built for events nobody reads.
    static func eventHandler(_ configuration: Configuration) -> (@Sendable (Realm.Event) -> Void)? {
        let logger = Logger.shared
        let events = configuration.events
        guard logger.level != .off else { return events }
        return { event in
            events?(event)
            logger.log(level: Logger.level(of: event), message: event.description)
        }
    }
}

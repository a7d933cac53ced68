import Foundation
public import StrataStorage

/// Whether the files of a test are plain or encrypted (issue 26): the crash, multi-process and damaged-file suites
/// run each test both ways, and pass the choice to their child processes in ``environmentVariable``.
public enum FileEncryption: String, CaseIterable, Sendable, CustomStringConvertible {
    case plain
    case encrypted

    /// The key of every encrypted test file.
    public static let key: [UInt8] = (0..<64).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
    /// Tells a child process how its parent's files are encrypted: `encrypted`, or unset for plain.
    public static let environmentVariable = "STRATA_TEST_ENCRYPTION"

    /// The choice of this process's parent (plain when it made none).
    public static var inherited: FileEncryption {
        ProcessInfo.processInfo.environment[environmentVariable].flatMap(FileEncryption.init(rawValue:)) ?? .plain
    }

    /// The key files are opened with: nil for plain files.
    public var key: [UInt8]? { self == .encrypted ? Self.key : nil }

    /// `options` with this choice's key.
    public func options(_ options: StoreOptions = StoreOptions()) -> StoreOptions {
        var options = options
        options.encryptionKey = key
        return options
    }

    /// The environment a child process is started with, to make the same choice.
    public var childEnvironment: [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment[Self.environmentVariable] = rawValue
        return environment
    }

    /// `plain` or `encrypted`, as test names show it.
    public var description: String { rawValue }
}

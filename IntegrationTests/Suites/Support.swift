import Foundation
import StrataStorage
@_exported import StrataTestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// Whether the long soak variants run (`STRATA_SOAK=1`).
var soak: Bool { ProcessInfo.processInfo.environment["STRATA_SOAK"] != nil }

/// The child executable built next to the test bundle.
let childExecutable: URL = {
    #if os(macOS)
        for bundle in Bundle.allBundles where bundle.bundlePath.hasSuffix(".xctest") {
            return bundle.bundleURL.deletingLastPathComponent().appendingPathComponent("strata-integration-child")
        }
    #endif
    let me = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
    return me.deletingLastPathComponent().appendingPathComponent("strata-integration-child")
}()

/// A running `strata-integration-child`, read line by line.
final class Child {
    let process = Process()
    private let output = Pipe()
    private let input = Pipe()
    private let errors = Pipe()
    private lazy var lines = OutputLines(output.fileHandleForReading)

    /// Starts the child with `arguments`, its files plain or encrypted as `encryption` says.
    init(_ arguments: [String], encryption: FileEncryption = .plain) throws {
        process.executableURL = childExecutable
        process.arguments = arguments
        process.environment = encryption.childEnvironment
        process.standardOutput = output
        process.standardInput = input
        process.standardError = errors
        try process.run()
    }

    /// Everything the child wrote to standard error (blocks until it closes it, i.e. exits).
    func errorOutput() -> String {
        String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    }

    /// The next line the child printed, or nil at end of output. Blocks until it arrives.
    func readLine() -> String? { lines.next() }

    func send(_ line: String) { input.fileHandleForWriting.write(Data((line + "\n").utf8)) }

    /// SIGKILL: no cleanup, no flush, like a crash or power cut of the process.
    func kill() {
        Glibc.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    func wait() -> Int32 {
        process.waitUntilExit()
        return process.terminationStatus
    }

    /// Runs a child that is meant to stop the process on a trap: its output lines, its standard error, and whether
    /// it ended by a signal (a trap) rather than an exit.
    static func runToTrap(_ arguments: [String]) throws -> (lines: [String], errors: String, trapped: Bool) {
        let child = try Child(arguments)
        var lines: [String] = []
        while let line = child.readLine() { lines.append(line) }
        let errors = child.errorOutput()
        let status = child.wait()
        return (lines, errors, status != 0 && child.process.terminationReason == .uncaughtSignal)
    }
}

/// A child's standard output, line by line as it arrives.
struct OutputLines {
    private let handle: FileHandle
    private var buffer: [UInt8] = []

    init(_ handle: FileHandle) { self.handle = handle }

    /// The next line, or nil at the end of the output. Blocks until it arrives.
    mutating func next() -> String? {
        while true {
            if let newline = buffer.firstIndex(of: 10) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                return line
            }
            let data = handle.availableData
            if data.isEmpty { return nil }
            buffer += data
        }
    }
}

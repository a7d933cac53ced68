import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A `strata-integration-child` whose output is read with a deadline, for children that may hang or die: a line
/// that does not arrive in time is reported as such, and the child can then be killed.
final class TimedChild {
    private let process = Process()
    private let output = Pipe()
    private let input = Pipe()
    private var buffer: [UInt8] = []
    /// Where the child's standard error goes (a file, so that a child writing a lot never blocks on a pipe).
    let errorPath: String

    /// Starts the child with `arguments`. Its runtime prints no backtrace when it traps, which would take
    /// seconds each time. Its files are plain or encrypted as `encryption` says.
    init(_ arguments: [String], errorPath: String, encryption: FileEncryption = .plain) throws {
        self.errorPath = errorPath
        _ = FileManager.default.createFile(atPath: errorPath, contents: nil)
        process.executableURL = childExecutable
        process.arguments = arguments
        process.standardOutput = output
        process.standardInput = input
        process.standardError = FileHandle(forWritingAtPath: errorPath)
        var environment = encryption.childEnvironment
        environment["SWIFT_BACKTRACE"] = "enable=no"
        process.environment = environment
        try process.run()
    }

    enum Line: Equatable {
        case line(String)
        /// The child closed its output: it exited or died.
        case ended
        /// Nothing arrived before the deadline.
        case timedOut
    }

    /// The next line, waiting at most `seconds`.
    func readLine(within seconds: Double) -> Line {
        let deadline = Date().addingTimeInterval(seconds)
        let fd = output.fileHandleForReading.fileDescriptor
        while true {
            if let newline = buffer.firstIndex(of: 10) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                return .line(line)
            }
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else { return .timedOut }
            var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, Int32(min(remaining * 1000, 1_000)))
            if ready < 0 && errno != EINTR { return .ended }
            guard ready > 0 else { continue }
            var chunk = [UInt8](repeating: 0, count: 65_536)
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return .ended }
            buffer += chunk[..<count]
        }
    }

    func send(_ line: String) {
        // A child that died cannot take input: ignore the broken pipe (the caller learns of it from readLine).
        let data = Array((line + "\n").utf8)
        _ = data.withUnsafeBytes { Glibc.write(input.fileHandleForWriting.fileDescriptor, $0.baseAddress, $0.count) }
    }

    /// Closes the child's input (it then finishes) and waits for it.
    func finish() {
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }

    /// SIGKILL, then wait.
    func kill() {
        Glibc.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// How the child ended, once it has: "signal N" or "exit N".
    func termination() -> String {
        process.waitUntilExit()
        return process.terminationReason == .uncaughtSignal
            ? "signal \(process.terminationStatus)" : "exit \(process.terminationStatus)"
    }

    /// The first line of the child's standard error that says why it stopped (a fatal error's message), or its
    /// last line.
    func stopMessage() -> String {
        let text = (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? ""
        let lines = text.split(separator: "\n").map(String.init)
        return lines.first { $0.contains("Fatal error") || $0.contains("child error") } ?? lines.last ?? ""
    }
}

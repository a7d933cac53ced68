import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A `strata-sync-replica` child process (the convergence suite's replica in a process of its own), driven by
/// commands on its standard input and read line by line with a deadline: a child that hangs or dies fails the
/// test with what it last said instead of blocking the run.
final class ReplicaProcess {
    private let process = Process()
    private let output = Pipe()
    private let input = Pipe()
    private var buffer: [UInt8] = []
    let errorPath: String

    /// The executable, built next to the test bundle by `swift build --build-tests`.
    static let executable: URL = {
        let me = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        return me.deletingLastPathComponent().appendingPathComponent("strata-sync-replica")
    }()

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Starts `strata-sync-replica` with `arguments` (its standard error goes to `errorPath`); the PG*
    /// variables of this process name its server.
    init(_ arguments: [String], errorPath: String) throws {
        self.errorPath = errorPath
        _ = FileManager.default.createFile(atPath: errorPath, contents: nil)
        process.executableURL = Self.executable
        process.arguments = arguments
        process.standardOutput = output
        process.standardInput = input
        process.standardError = FileHandle(forWritingAtPath: errorPath)
        var environment = ProcessInfo.processInfo.environment
        environment["SWIFT_BACKTRACE"] = "enable=no"
        process.environment = environment
        try process.run()
    }

    /// The next line, waiting at most `seconds` (a deadline against hangs, not a synchronisation).
    func readLine(within seconds: Double = 60) throws -> String {
        let deadline = Date().addingTimeInterval(seconds)
        let fd = output.fileHandleForReading.fileDescriptor
        while true {
            if let newline = buffer.firstIndex(of: 10) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                return line
            }
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else { throw Failure(description: "no line within \(seconds) s; \(stopMessage())") }
            var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, Int32(min(remaining * 1000, 1_000)))
            if ready < 0 && errno != EINTR { throw Failure(description: "poll failed: \(errno)") }
            guard ready > 0 else { continue }
            var chunk = [UInt8](repeating: 0, count: 65_536)
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { throw Failure(description: "the replica ended: \(stopMessage())") }
            buffer += chunk[..<count]
        }
    }

    /// Reads lines until one starts with `prefix` (returned); lines before it go to `other`.
    func waitFor(_ prefix: String, other: (String) throws -> Void = { _ in }) throws -> String {
        while true {
            let line = try readLine()
            if line.hasPrefix(prefix) { return line }
            try other(line)
        }
    }

    func send(_ line: String) {
        let data = Array((line + "\n").utf8)
        _ = data.withUnsafeBytes { Glibc.write(input.fileHandleForWriting.fileDescriptor, $0.baseAddress, $0.count) }
    }

    /// SIGKILL, then wait: no cleanup, like a crash of the process.
    func kill() {
        Glibc.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// Asks the replica to exit and waits for it.
    func finish() {
        send("exit")
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }

    /// The last lines of the child's standard error.
    func stopMessage() -> String {
        let text = (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").suffix(3).joined(separator: " | ")
    }
}

import Foundation
import StrataTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The integration tests' child executable, built next to the test bundle.
let childExecutable = strataExecutable.deletingLastPathComponent().appendingPathComponent("strata-integration-child")

/// `strata-integration-child write-ledger PATH`, running: it commits until stopped, and this object follows how far
/// it got (its "committed N" lines are read on a thread of their own, so the pipe never fills and stalls it).
final class LedgerWriter: @unchecked Sendable {
    let process = Process()
    private let output = Pipe()
    private let errors = Pipe()
    private let condition = NSCondition()
    private var committed = 0
    private var ended = false

    init(path: String) throws {
        process.executableURL = childExecutable
        process.arguments = ["write-ledger", path]
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let handle = output.fileHandleForReading
        Thread { [self] in
            var buffer: [UInt8] = []
            while true {
                let data = handle.availableData
                if data.isEmpty { break }
                buffer += data
                while let newline = buffer.firstIndex(of: 10) {
                    let line = String(decoding: buffer[..<newline], as: UTF8.self)
                    buffer.removeSubrange(...newline)
                    if let count = Int(line.dropFirst("committed ".count)), line.hasPrefix("committed ") {
                        condition.withLock {
                            committed = count
                            condition.broadcast()
                        }
                    }
                }
            }
            condition.withLock {
                ended = true
                condition.broadcast()
            }
        }.start()
    }

    /// The last commit the writer acknowledged: every commit up to it is in the file.
    var acknowledged: Int { condition.withLock { committed } }

    /// Waits until the writer has acknowledged `count` commits; false if it ended first.
    func waitFor(_ count: Int) -> Bool {
        condition.withLock {
            while committed < count && !ended { condition.wait() }
            return committed >= count
        }
    }

    /// Everything the writer wrote to standard error (once it ended).
    func errorOutput() -> String {
        String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    }

    func stop() {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }
}

@Suite("strata on a file another process is writing")
struct ConcurrentWriterTests {
    let directory = TemporaryDirectory()

    @Test func everyCommandSeesOneConsistentCommittedVersionWhileAWriterCommits() throws {
        let path = directory.file("ledger.strata")
        let writer = try LedgerWriter(path: path)
        defer { writer.stop() }
        try #require(writer.waitFor(20), "the writer stopped: \(writer.errorOutput())")
        let rounds = ProcessInfo.processInfo.environment["STRATA_SOAK"] == nil ? 3 : 50
        for _ in 0..<rounds {
            // Every commit acknowledged before a command starts is in what it reads.
            var before = writer.acknowledged
            let entries = try strata("dump", path, "LedgerEntry")
            #expect(entries.status == 0, "\(entries.errors)")
            let seqs = try entries.lines.map { line in
                let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
                #expect((object["note"] as? String)?.isEmpty == false, "\(line)")
                return try #require(object["seq"] as? Int)
            }
            // One version: the last 100 entries up to n, none missing, none torn.
            let last = try #require(seqs.last)
            #expect(last >= before, "\(last) of \(before)")
            #expect(seqs == Array(max(1, last - 99)...last), "\(seqs)")

            before = writer.acknowledged
            let total = try strata("dump", path, "LedgerTotal")
            #expect(total.status == 0, "\(total.errors)")
            let object = try #require(
                try JSONSerialization.jsonObject(with: Data(total.output.utf8)) as? [String: Any])
            let count = try #require(object["count"] as? Int)
            #expect(count >= before && object["sum"] as? Int == count * (count + 1) / 2)

            before = writer.acknowledged
            let info = try strata("info", path, "--json")
            #expect(info.status == 0, "\(info.errors)")
            let report = try jsonObject(info.output)
            #expect(report["schemaVersion"] as? Int == 2)
            let classes = try #require(report["classes"] as? [[String: Any]])
            let ledger = classes.first { $0["name"] as? String == "LedgerEntry" }
            // The last 100 entries (fewer while the writer has made fewer).
            #expect((ledger?["objects"] as? Int).map { (min(before, 100)...100).contains($0) } == true)
            let readers = try #require(report["openReaders"] as? [[String: Any]])
            #expect(readers.contains { $0["pid"] as? Int == Int(writer.process.processIdentifier) }, "\(readers)")

            let verify = try strata("verify", path)
            #expect(verify.status == 0, "\(verify.output)\(verify.errors)")
            #expect(verify.output.contains("object schema: 2 classes, readable"), "\(verify.output)")

            let schema = try strata("schema", path, "--json")
            try #require(schema.status == 0, "\(schema.errors)")
            #expect(try jsonObject(schema.output)["schemaVersion"] as? Int == 2)
        }
        #expect(writer.process.isRunning, "the writer stopped: \(writer.errorOutput())")
    }
}

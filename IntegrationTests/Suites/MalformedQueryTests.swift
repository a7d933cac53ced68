import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Generated malformed and huge queries (random tokens, truncations, mutations, deep nesting, long chains, wrong
/// arguments, huge `where {}` trees) run in child processes on a 512 KiB stack: every query is accepted and
/// evaluates the same outside and inside a write, or is rejected with a typed `invalidQuery` error. None crashes
/// or hangs the process, and the trapping `filter` / `where` trap with the error's message, never a signal.
@Suite("Malformed queries")
struct MalformedQueryTests {
    /// What a run of the child found.
    struct Tally: CustomStringConvertible {
        var queries = 0
        var accepted = 0
        var rejected = 0
        /// Queries that failed with something else than `invalidQuery`, or evaluated differently in a write.
        var others: [String] = []
        /// Queries during which the child died: index, kind, how it ended and the end of its error output.
        var crashes: [String] = []
        var rejectedIndices: [Int] = []
        var byKind: [String: [String: Int]] = [:]

        var description: String {
            "\(queries) queries: \(accepted) accepted, \(rejected) typed errors, \(others.count) other errors, "
                + "\(crashes.count) crashes; by kind: "
                + byKind.keys.sorted().map { kind in
                    "\(kind) "
                        + byKind[kind]!.keys.sorted().map { "\($0) \(byKind[kind]![$0]!)" }.joined(separator: "/")
                }.joined(separator: ", ")
        }

        mutating func count(_ kind: String, _ outcome: String) { byKind[kind, default: [:]][outcome, default: 0] += 1 }
    }

    /// A child whose standard error goes to a file: a trap's message repeats the whole query, which may be far
    /// larger than a pipe holds, and the child would block writing it while the parent waits for its output.
    final class QuietChild {
        let process = Process()
        private let output = Pipe()
        private let errors: URL
        private lazy var lines = OutputLines(output.fileHandleForReading)

        init(_ arguments: [String], errors: URL) throws {
            self.errors = errors
            _ = FileManager.default.createFile(atPath: errors.path, contents: nil)
            process.executableURL = childExecutable
            process.arguments = arguments
            process.standardOutput = output
            process.standardError = try FileHandle(forWritingTo: errors)
            try process.run()
        }

        /// The next line the child printed, or nil at the end of its output.
        func readLine() -> String? { lines.next() }

        /// Waits for the child to end: its status (or signal) and what it wrote to standard error.
        func finish() -> (status: Int32, signalled: Bool, errors: String) {
            process.waitUntilExit()
            let text = (try? Data(contentsOf: errors)).map { String(decoding: $0, as: UTF8.self) } ?? ""
            return (process.terminationStatus, process.terminationReason == .uncaughtSignal, text)
        }
    }

    /// Runs queries `range` of `seed` in children, starting a new child after each crash.
    static func run(seed: UInt64, _ range: Range<Int>, path: String) throws -> Tally {
        var tally = Tally()
        var next = range.lowerBound
        let errors = URL(fileURLWithPath: path + ".errors")
        while next < range.upperBound {
            let child = try QuietChild(
                ["malformed-queries", path, "\(seed)", "\(next)", "\(range.upperBound - next)"], errors: errors)
            var current: (index: Int, kind: String)?
            var finished = false
            while let line = child.readLine() {
                let words = line.split(separator: " ", maxSplits: 2).map(String.init)
                switch words.first {
                case "query":
                    current = (Int(words[1])!, words[2])
                    tally.queries += 1
                case "done":
                    finished = true
                case let outcome?:
                    guard let (index, kind) = current else { continue }
                    switch outcome {
                    case "accepted": tally.accepted += 1
                    case "rejected":
                        tally.rejected += 1
                        tally.rejectedIndices.append(index)
                    default: tally.others.append("query \(index) (\(kind)): \(line)")
                    }
                    tally.count(kind, outcome)
                    current = nil
                    next = index + 1
                case nil: break
                }
            }
            let (status, signalled, errorText) = child.finish()
            if finished { break }
            guard let (index, kind) = current else {
                tally.crashes.append("child ended between queries (status \(status)): \(errorText.suffix(300))")
                break
            }
            let ending = signalled ? "signal \(status)" : "exit status \(status)"
            tally.crashes.append("query \(index) (\(kind)): \(ending): \(errorText.suffix(300))")
            tally.count(kind, "crashed")
            next = index + 1
        }
        return tally
    }

    /// Runs rejected query `index` through the trapping `filter` / `where`: the child must stop with a trap whose
    /// message is the query's error.
    static func trapMessage(seed: UInt64, index: Int, path: String) throws -> (signal: Int32?, errors: String) {
        let child = try QuietChild(
            ["malformed-query-trap", path, "\(seed)", "\(index)"], errors: URL(fileURLWithPath: path + ".trap"))
        while child.readLine() != nil {}
        let (status, signalled, errors) = child.finish()
        return (signalled ? status : nil, errors)
    }

    @Test func malformedQueriesAreRejectedWithTypedErrorsAndNeverCrash() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("queries.strata")
        let seed: UInt64 = 19
        let count = soak ? 24_000 : 240
        let tally = try Self.run(seed: seed, 0..<count, path: path)
        print("malformed queries: \(tally)")
        #expect(tally.queries == count)
        #expect(tally.crashes.isEmpty, "\(tally.crashes.prefix(10).joined(separator: "\n"))")
        #expect(tally.others.isEmpty, "\(tally.others.prefix(10).joined(separator: "\n"))")
        // Both outcomes occur: the run is not all errors (valid queries, long chains) nor all accepted.
        #expect(tally.accepted > count / 10)
        #expect(tally.rejected > count / 10)
        // The trapping APIs trap with the query's error (a sample of the rejected queries).
        let sample = stride(from: 0, to: tally.rejectedIndices.count, by: soak ? 100 : 40).map {
            tally.rejectedIndices[$0]
        }
        for index in sample {
            let (signal, errors) = try Self.trapMessage(seed: seed, index: index, path: path)
            #expect(
                signal == SIGILL || signal == SIGTRAP,
                "query \(index) ended with signal \(signal.map(String.init) ?? "none")")
            #expect(errors.contains("invalid query at "), "query \(index): \(errors.suffix(300))")
        }
    }
}

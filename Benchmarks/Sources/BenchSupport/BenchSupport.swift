import Foundation

// Helpers shared by the benchmark executables: a seeded generator, timing, checks and formatting.

/// Deterministic 64-bit generator (SplitMix64), so every run and every engine sees the same data.
public struct SplitMix64: RandomNumberGenerator {
    /// The generator's state: advanced by every draw.
    public var state: UInt64

    /// A generator starting from `seed`.
    @inlinable
    public init(seed: UInt64) { state = seed }

    /// The next 64 random bits.
    @inlinable
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// A progress line on stderr (stdout carries the report alone).
public func log(_ text: String) {
    FileHandle.standardError.write(Data((text + "\n").utf8))
}

/// Reports a bad command line: `message`, then the usage text, on stderr; exits with status 2.
public func failUsage(_ message: String, usage: String) -> Never {
    log("\(message)\n\n\(usage)")
    exit(2)
}

/// A line of the report on stdout, written at once (rows appear as they are measured).
public func emit(_ line: String = "") {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

/// The wall-clock time `body` takes.
@inline(never)
public func time(_ body: () throws -> Void) rethrows -> Duration {
    let clock = ContinuousClock()
    let start = clock.now
    try body()
    return clock.now - start
}

/// `body`'s result and the wall-clock time it took.
@inline(never)
public func measure<T>(_ body: () throws -> T) rethrows -> (T, Duration) {
    let clock = ContinuousClock()
    let start = clock.now
    let result = try body()
    return (result, clock.now - start)
}

/// `duration` in seconds.
public func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) * 1e-18
}

/// A verification that failed: the benchmark stops rather than post a time for a wrong answer.
public struct Failure: Error, CustomStringConvertible {
    /// What failed.
    public let description: String

    /// A failure described by `description`.
    public init(description: String) { self.description = description }
}

/// Throws a ``Failure`` naming `what` unless `condition` holds.
public func check(_ condition: Bool, _ what: String) throws {
    if !condition { throw Failure(description: "verification failed: \(what)") }
}

/// "1.23 s", "12.3 ms", or "45.6 µs" below a tenth of a millisecond.
public func format(_ duration: Duration) -> String {
    let value = seconds(duration)
    if value >= 1 { return String(format: "%.2f s", value) }
    if value >= 1e-4 { return String(format: "%.1f ms", value * 1000) }
    return String(format: "%.1f µs", value * 1e6)
}

/// Time per operation in nanoseconds: "1234 ns/op".
public func perOperation(_ duration: Duration, _ count: Int) -> String {
    String(format: "%.0f ns/op", seconds(duration) * 1e9 / Double(count))
}

/// The median of `values` (the upper one of the middle two for an even count).
public func median(_ values: [Duration]) -> Duration {
    let sorted = values.sorted()
    return sorted[sorted.count / 2]
}

/// 1234567 -> "1,234,567".
public func group(_ value: Int) -> String {
    let digits = String(value.magnitude)
    var result = ""
    for (offset, character) in digits.enumerated() {
        if offset > 0 && (digits.count - offset) % 3 == 0 { result.append(",") }
        result.append(character)
    }
    return value < 0 ? "-" + result : result
}

/// Machine-readable results for `strata-report` (the "How cost grows with size" section of the report): one
/// tab-separated line per measured cell, `benchmark, workload, size, engine, seconds, operations, unit`, under a
/// header line. `seconds` is the cell's time (the median shown in the table) for `operations` operations of
/// `unit` (one put, one query, one read…). Workload titles do not contain the size, so that the same workload at
/// different sizes (and from different runs of an executable) lines up. The file is rewritten after every cell,
/// so a run that stops early leaves what it measured.
public struct ResultsFile {
    /// The first line of every results file.
    public static let header = "benchmark\tworkload\tsize\tengine\tseconds\toperations\tunit"

    private let path: String?
    private let benchmark: String
    private var lines: [String] = [ResultsFile.header]
    private var reportedFailure = false

    /// Results of `benchmark` written to `path`; nil writes nothing.
    public init(path: String?, benchmark: String) {
        self.path = path
        self.benchmark = benchmark
    }

    /// Records one cell: `time` for `operations` operations of `unit` by `engine` on `workload` at `size`.
    public mutating func add(
        _ workload: String, size: Int, engine: String, time: Duration, operations: Int, unit: String
    ) {
        guard let path else { return }
        let fields = [benchmark, workload, String(size), engine, String(seconds(time)), String(operations), unit]
        lines.append(fields.map(Self.clean).joined(separator: "\t"))
        do {
            try (lines.joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        } catch {
            if !reportedFailure { log("cannot write the results to \(path): \(error)") }
            reportedFailure = true
        }
    }

    /// `text` without the tabs and line breaks that would break the format.
    private static func clean(_ text: String) -> String {
        String(text.map { $0 == "\t" || $0.isNewline ? " " : $0 })
    }
}

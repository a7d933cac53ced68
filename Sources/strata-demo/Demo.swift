import StrataStorage
import Synchronization

// strata-demo: the README's main job. A small async service on an embedded file: several writer tasks ingest
// records concurrently through asyncWrite, a reader task checks a consistency invariant on every snapshot it
// takes, a snapshot is handed to another task, a few queries run, and the file is verified. Until the object
// layer lands this exercises the storage engine directly.
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

struct Options {
    var records = 20_000
    var writers = 4
    var batch = 100
    var path = "default.strata"
    var inMemory = false
}

let help = """
    strata-demo — an async service on an embedded Strata file

    USAGE
      swift run strata-demo [--records N] [--writers N] [--batch N] [--path FILE] [--in-memory]

    OPTIONS
      --records N    records to ingest (default 20000)
      --writers N    concurrent writer tasks (default 4)
      --batch N      records per transaction (default 100)
      --path FILE    the file to use (default ./default.strata; it is reused across runs)
      --in-memory    keep everything in memory, no file
      --help         this text
    """

func parseOptions() -> Options {
    var options = Options()
    var arguments = CommandLine.arguments.dropFirst()
    func number(_ name: String) -> Int {
        guard let text = arguments.popFirst(), let value = Int(text), value > 0 else {
            print("strata-demo: \(name) needs a positive number\n\n\(help)")
            exit(2)
        }
        return value
    }
    while let argument = arguments.popFirst() {
        switch argument {
        case "--records": options.records = number(argument)
        case "--writers": options.writers = number(argument)
        case "--batch": options.batch = number(argument)
        case "--path":
            guard let path = arguments.popFirst() else {
                print("strata-demo: --path needs a file name")
                exit(2)
            }
            options.path = path
        case "--in-memory": options.inMemory = true
        case "--help", "-h":
            print(help)
            exit(0)
        default:
            print("strata-demo: unknown option \(argument)\n\n\(help)")
            exit(2)
        }
    }
    return options
}

func bigEndian(_ value: UInt64) -> [UInt8] { withUnsafeBytes(of: value.bigEndian) { Array($0) } }
func number(_ bytes: [UInt8]) -> UInt64 {
    bytes.withUnsafeBytes { UInt64(bigEndian: $0.loadUnaligned(as: UInt64.self)) }
}
func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}
func rounded(_ value: Double) -> Double { (value * 10).rounded() / 10 }

/// Progress shared by the writer tasks.
final class Progress: Sendable {
    private let written = Atomic<Int>(0)
    func add(_ count: Int) -> Int { written.add(count, ordering: .relaxed).newValue }
    var value: Int { written.load(ordering: .relaxed) }
}

@main
struct Demo {
    static func main() async throws {
        let options = parseOptions()
        let clock = ContinuousClock()
        let started = clock.now
        let store: Store
        if options.inMemory {
            store = try Store.inMemory()
            print("Strata demo — in memory")
        } else {
            store = try Store.open(path: options.path)
            print("Strata demo — file \(options.path)")
        }
        // A snapshot pins its version until released: read what we need and let it go, or every page freed
        // from now on would have to be kept for it.
        let existing: Int
        do {
            let before = try store.read()
            existing = try before.tree(named: "records")?.count ?? 0
            print("opened at version \(before.version) with \(existing) records from earlier runs")
        }

        // 1. Writers ingest concurrently. Every transaction adds a batch of records and bumps a counter in the
        //    same commit, so any consistent snapshot has counter == number of records.
        let progress = Progress()
        let ingest = clock.now
        let step = max(options.records / 10, 1)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<options.writers {
                group.addTask {
                    let share = options.records / options.writers + (writer < options.records % options.writers ? 1 : 0)
                    var done = 0
                    while done < share {
                        let count = min(options.batch, share - done)
                        try await store.asyncWrite { txn in
                            let records = try txn.tree(named: "records", create: .keyed)!
                            let stats = try txn.tree(named: "stats", create: .keyed)!
                            for _ in 0..<count {
                                let id = try txn.nextSequence(in: records)
                                let body = Array(
                                    "{\"writer\":\(writer),\"id\":\(id),\"payload\":\"\(String(repeating: "x", count: Int(id % 64)))\"}"
                                        .utf8)
                                try txn.put(bigEndian(id), body, in: records)
                            }
                            let total = try txn.get(Array("count".utf8), in: stats).map(number) ?? 0
                            try txn.put(Array("count".utf8), bigEndian(total + UInt64(count)), in: stats)
                        }
                        done += count
                        let now = progress.add(count)
                        if now / step != (now - count) / step { print("  ingested \(now)/\(options.records)") }
                    }
                }
            }
            // 2. Meanwhile a reader checks the invariant on every snapshot it takes: readers never wait.
            group.addTask {
                var snapshots = 0
                var versions = Set<UInt64>()
                while progress.value < options.records {
                    let snapshot = try store.read()
                    let records = try snapshot.tree(named: "records")?.count ?? 0
                    let counted = try snapshot.tree(named: "stats")?.get(Array("count".utf8)).map(number) ?? 0
                    guard UInt64(records) == counted else {
                        throw DemoError.inconsistent(
                            "version \(snapshot.version): \(records) records, counter \(counted)")
                    }
                    snapshots += 1
                    versions.insert(snapshot.version)
                    await Task.yield()
                }
                print("  reader: \(snapshots) snapshots over \(versions.count) versions, all consistent")
            }
            try await group.waitForAll()
        }
        let ingestTime = seconds(clock.now - ingest)
        print(
            "ingested \(options.records) records with \(options.writers) writers in \(rounded(ingestTime * 1000)) ms "
                + "(\(Int(Double(options.records) / max(ingestTime, 1e-9))) records/s)")

        // 3. A snapshot handed to another task: it stays at its version while writers go on.
        let snapshot = try store.read()
        let audit = Task.detached { () throws -> (UInt64, Int) in
            var bytes = 0
            try snapshot.tree(named: "records")?.scan { _, value in
                bytes += value.count
                return true
            }
            return (snapshot.version, bytes)
        }
        try await store.asyncWrite { txn in
            try txn.put(
                Array("last-run".utf8), bigEndian(UInt64(options.records)),
                in: try txn.tree(named: "stats", create: .keyed)!)
        }
        let (auditVersion, auditBytes) = try await audit.value
        print(
            "audit task read version \(auditVersion) (\(auditBytes) bytes of records) while version \(store.latestVersion) was committed"
        )

        // 4. Queries: a range scan, a positional lookup, a rank.
        let latest = try store.read()
        let records = try latest.tree(named: "records")!
        var firstTen: [UInt64] = []
        try records.scan(from: bigEndian(UInt64(existing + 1))) { key, _ in
            firstTen.append(number(key))
            return firstTen.count < 10
        }
        print("range scan from id \(existing + 1): \(firstTen)")
        let median = try records.element(at: records.count / 2)
        print("median record (position \(records.count / 2)): \(String(decoding: median.value, as: UTF8.self))")
        let (rank, _) = try records.rank(of: bigEndian(UInt64(records.count / 4)))
        print("record id \(records.count / 4) is at position \(rank)")

        // 5. Integrity and summary.
        let verifyStart = clock.now
        let report = try store.verify()
        print(
            "verify: \(report.isValid ? "OK" : "DAMAGED") — \(report.reachablePages) pages reachable, \(report.freePages) free "
                + "(\(rounded(seconds(clock.now - verifyStart) * 1000)) ms)")
        if !report.isValid {
            print(report)
            exit(1)
        }
        let stats = try store.statistics()
        print(
            "summary: \(records.count) records, version \(stats.version), \(stats.pageCount) pages of \(stats.pageSize) bytes "
                + "(\(stats.pageCount * stats.pageSize / 1024) KiB), total \(rounded(seconds(clock.now - started) * 1000)) ms"
        )
    }
}

enum DemoError: Error, CustomStringConvertible {
    case inconsistent(String)
    var description: String {
        switch self {
        case .inconsistent(let text): "inconsistent snapshot: \(text)"
        }
    }
}

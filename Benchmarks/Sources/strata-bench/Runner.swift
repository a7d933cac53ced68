import BenchSupport
import Foundation

/// The timed workloads, in table order.
enum Workload: CaseIterable {
    case sequentialInsert
    case randomInsert
    case randomGet
    case scan
    case durableCommits
    case coldOpen

    /// Opens timed by the cold-open workload, each of the database closed since.
    static let coldOpens = 20

    func title(size: Int, commits: Int) -> String {
        switch self {
        case .sequentialInsert: "Sequential insert, 1 txn (\(group(size)) puts)"
        case .randomInsert: "Random insert, 1 txn (\(group(size)) puts)"
        case .randomGet: "Random get, 1 read txn (\(group(size)) gets)"
        case .scan: "Ordered scan (\(group(size)) entries)"
        case .durableCommits: "Durable single-put commits (\(group(commits)) txns, DB holds \(group(size)) keys)"
        case .coldOpen: "Cold open + 1 get, then close (\(Self.coldOpens) opens, DB holds \(group(size)) keys)"
        }
    }

    var shortTitle: String {
        switch self {
        case .sequentialInsert: "Sequential insert"
        case .randomInsert: "Random insert"
        case .randomGet: "Random get"
        case .scan: "Ordered scan"
        case .durableCommits: "Durable commits"
        case .coldOpen: "Cold open"
        }
    }

    func operations(size: Int, commits: Int) -> Int {
        switch self {
        case .durableCommits: commits
        case .coldOpen: Self.coldOpens
        default: size
        }
    }

    /// What one operation is, for the machine-readable results.
    var unit: String {
        switch self {
        case .sequentialInsert, .randomInsert: "put"
        case .randomGet: "get"
        case .scan: "entry"
        case .durableCommits: "commit"
        case .coldOpen: "open"
        }
    }
}

/// The keys of one size, shared by all engines.
struct Dataset {
    let size: Int
    let sequentialKeys: KeyTable
    let randomKeys: KeyTable
    /// A permutation of 0..<size: the order of the random gets.
    let getOrder: [Int]
    /// Keys absent from the database, one per durable commit.
    let commitKeys: KeyTable

    init(size: Int, commits: Int) {
        self.size = size
        sequentialKeys = .sequential(count: size)
        randomKeys = .random(count: size, seed: 0x5354_5241_5441_0001 &+ UInt64(size))
        var generator = SplitMix64(seed: 0x5354_5241_5441_0002 &+ UInt64(size))
        var order = Array(0..<size)
        order.shuffle(using: &generator)
        getOrder = order
        commitKeys = .random(count: commits, seed: 0x5354_5241_5441_0003 &+ UInt64(size))
    }
}

/// Results of one engine at one size: the times measured, and the error that stopped it, if any.
struct EngineResult {
    var times: [Workload: Duration] = [:]
    /// Fastest and slowest run of each workload (set by `median(of:)`).
    var spread: [Workload: (min: Duration, max: Duration)] = [:]
    var error: String?

    /// The median time of each workload over several runs (the upper median for an even count); the first
    /// error, if any run failed. A workload that failed in any run has no time.
    static func median(of runs: [EngineResult]) -> EngineResult {
        var result = EngineResult()
        result.error = runs.lazy.compactMap(\.error).first
        for workload in Workload.allCases {
            let times = runs.compactMap { $0.times[workload] }.sorted()
            if !times.isEmpty && times.count == runs.count {
                result.times[workload] = times[times.count / 2]
                result.spread[workload] = (times[0], times[times.count - 1])
            }
        }
        return result
    }
}

enum Runner {
    static func seconds(_ duration: Duration) -> Double { BenchSupport.seconds(duration) }

    static func log(_ message: String) { BenchSupport.log(message) }

    /// Runs `body`, returning its result and the wall-clock time it took.
    static func measure<T>(_ body: () throws -> T) rethrows -> (T, Duration) { try BenchSupport.measure(body) }

    /// Runs every workload of `engine` at `dataset.size`, in fresh directories under `base`, and removes them.
    static func run<E: Engine>(_ engine: E.Type, dataset: Dataset, base: String, quiet: Bool = false) -> EngineResult {
        var result = EngineResult()
        let directory = base + "/\(E.slug)-\(dataset.size)"
        let manager = FileManager.default
        defer { try? manager.removeItem(atPath: directory) }
        func note(_ workload: Workload, _ duration: Duration) {
            result.times[workload] = duration
            if !quiet {
                let name = E.name.padding(toLength: 16, withPad: " ", startingAt: 0)
                let label = "\(workload)".padding(toLength: 18, withPad: " ", startingAt: 0)
                log("  \(name) \(label) " + String(format: "%10.2f ms", seconds(duration) * 1000))
            }
        }
        do {
            try? manager.removeItem(atPath: directory)
            let sequentialDirectory = directory + "/sequential"
            let randomDirectory = directory + "/random"
            try manager.createDirectory(atPath: sequentialDirectory, withIntermediateDirectories: true)
            try manager.createDirectory(atPath: randomDirectory, withIntermediateDirectories: true)
            let n = dataset.size

            do {
                let database = try E(directory: sequentialDirectory)
                sync()
                let (_, time) = try measure { try database.insertAll(dataset.sequentialKeys) }
                let count = try database.entryCount()
                guard count == n else {
                    throw BenchError.verification("sequential insert left \(count) entries, expected \(n)")
                }
                note(.sequentialInsert, time)
            }
            try? manager.removeItem(atPath: sequentialDirectory)

            do {
                // Closed at the end of this block, for the cold opens.
                let database = try E(directory: randomDirectory)
                sync()
                let (_, insertTime) = try measure { try database.insertAll(dataset.randomKeys) }
                let count = try database.entryCount()
                guard count == n else {
                    throw BenchError.verification("random insert left \(count) entries, expected \(n)")
                }
                note(.randomInsert, insertTime)

                sync()
                let (found, getTime) = try measure { try database.getAll(dataset.randomKeys, order: dataset.getOrder) }
                guard found == n else {
                    throw BenchError.verification("random get found \(found) of \(n) keys with the right value")
                }
                note(.randomGet, getTime)

                sync()
                let (summary, scanTime) = try measure { try database.scanAll() }
                try summary.verify(expectedCount: n)
                note(.scan, scanTime)

                sync()
                let commits = dataset.commitKeys.count
                let (_, commitTime) = try measure { try database.commitEach(dataset.commitKeys, firstIndex: n) }
                let total = try database.entryCount()
                guard total == n + commits else {
                    throw BenchError.verification("after \(commits) commits: \(total) entries, expected \(n + commits)")
                }
                note(.durableCommits, commitTime)
            }
            // The database is closed: each open now starts from the file alone, as a new process would (the
            // files stay in the system's page cache: this is the open's own work, not the disk's). One untimed
            // open first: it finishes what the durable commits left (Strata replays its commit log into the main
            // file and syncs it, SQLite checkpoints its WAL), work of those commits rather than of opening.
            guard try E.openAndGet(directory: randomDirectory, keys: dataset.randomKeys, index: dataset.getOrder[0])
            else { throw BenchError.verification("the first open did not find its key") }
            sync()
            var good = 0
            let (_, openTime) = try measure {
                for open in 0..<Workload.coldOpens {
                    let index = dataset.getOrder[open % n]
                    if try E.openAndGet(directory: randomDirectory, keys: dataset.randomKeys, index: index) {
                        good += 1
                    }
                }
            }
            guard good == Workload.coldOpens else {
                throw BenchError.verification("cold opens found \(good) of \(Workload.coldOpens) keys")
            }
            note(.coldOpen, openTime)
        } catch {
            result.error = "\(error)"
            log("  \(E.name) FAILED at N = \(dataset.size): \(error)")
        }
        return result
    }

    static func run(slug: String, dataset: Dataset, base: String, quiet: Bool = false) -> EngineResult {
        switch slug {
        case StrataEngine.slug: run(StrataEngine.self, dataset: dataset, base: base, quiet: quiet)
        case EncryptedStrataEngine.slug: run(EncryptedStrataEngine.self, dataset: dataset, base: base, quiet: quiet)
        case LMDBEngine.slug: run(LMDBEngine.self, dataset: dataset, base: base, quiet: quiet)
        default: run(SQLiteEngine.self, dataset: dataset, base: base, quiet: quiet)
        }
    }
}

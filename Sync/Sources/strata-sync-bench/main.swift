// strata-sync-bench: the first Strata Sync numbers, with two replicas (two Strata files, two SyncClients, one
// scope) against the PostgreSQL named by PGHOST, PGPORT, PGUSER, PGPASSWORD and PGDATABASE.
//
//     source .ci/postgres.sh
//     swift build -c release --package-path Sync
//     Sync/.build/release/strata-sync-bench [latency writes] [throughput writes]
//     strata_postgres_stop
//     Sync/.build/release/strata-sync-bench lists    # only (4), no PostgreSQL needed
//     Sync/.build/release/strata-sync-bench bootstrap 1000000    # only (6): a new replica's bootstrap of N objects
//     Sync/.build/release/strata-sync-bench gateway 200    # only (7): (1) with B behind the HTTP gateway
//
// It measures (1) a write on replica A until an observer on replica B fires, both clients in `run()`; (2) the
// upload of N queued single-object commits (and of the same number of objects in 100-object commits) until the
// server acknowledged all of them, and their download and apply on B; (3) the local commit of a synced write
// (capture on) against the same write in a file without sync; (4) the commit of one edit of a long synced list
// against the same edit without capture (`ListEditBench.swift`); (5) the upload of 10 × N asymmetric objects from
// A's outbox until PostgreSQL committed them and they left the outbox; (6) alone, with `bootstrap N`: a new
// replica's bootstrap from a snapshot of N objects (`BootstrapBench.swift`); (7) alone, with `gateway N`: (1) with
// B a device behind the HTTP gateway, in this process on a loopback port (`GatewayBench.swift`). It prints a Markdown table. Its PostgreSQL
// schema and its files are removed at the end. Not part of CI: its numbers depend on the machine's load.
import Foundation
import Logging
import PostgresNIO
import Strata
import StrataSync
import Synchronization

/// The benchmark's one synced type: a small object (primary key, a string and an integer).
final class BenchItem: Object {
    @Persisted(primaryKey: true) var id: Int
    @Persisted var name: String
    @Persisted var value: Int
}

/// The benchmark's upload-only type: a small asymmetric object (a string and an integer).
final class BenchReading: AsymmetricObject {
    @Persisted var name: String
    @Persisted var value: Int
}

let arguments = CommandLine.arguments.dropFirst().compactMap { Int($0) }
let latencyWrites = max(1, arguments.first ?? 200)
let throughputWrites = max(10, arguments.dropFirst().first ?? 2_000)

/// Runs Realm work on a thread of its own (a write waits for the file's lock and must not block Swift's pool).
func onThread<Result: Sendable>(_ work: @escaping @Sendable () throws -> Result) async throws -> Result {
    try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Result, any Error>) in
        Thread {
            do { continuation.resume(returning: try work()) } catch { continuation.resume(throwing: error) }
        }.start()
    }
}

/// Creates `count` items from `first` on, `perCommit` to a write transaction, in the file of `configuration`.
func writeItems(_ configuration: Realm.Configuration, from first: Int, count: Int, perCommit: Int = 1) throws {
    let realm = try Realm(configuration: configuration)
    var next = first
    while next < first + count {
        let end = min(next + perCommit, first + count)
        try realm.write {
            for id in next..<end { realm.create(BenchItem.self, value: ["id": id, "name": "item \(id)", "value": id]) }
        }
        next = end
    }
}

/// Observes B's items on an actor-confined Realm and reports each inserted item's id with the time it was seen.
actor Watcher {
    func watch(
        _ configuration: Realm.Configuration, ready: AsyncStream<Void>.Continuation,
        arrivals: AsyncStream<(id: Int, at: ContinuousClock.Instant)>.Continuation
    ) async throws {
        let realm = try await Realm(configuration: configuration, actor: self)
        for await change in realm.objects(BenchItem.self).changes {
            switch change {
            case .initial: ready.yield()
            case .update(let items, _, let insertions, _):
                let now = ContinuousClock.now
                for index in insertions { arrivals.yield((items[index].id, now)) }
            case .error: return
            }
        }
    }
}

/// The value at quantile `q` (0...1) of sorted `values` (nearest rank).
func quantile(_ sorted: [Double], _ q: Double) -> Double {
    sorted[min(sorted.count - 1, max(0, Int((q * Double(sorted.count)).rounded(.up)) - 1))]
}

func milliseconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) * 1e3 + Double(duration.components.attoseconds) / 1e15
}

func format(_ value: Double, _ digits: Int = 1) -> String { String(format: "%.\(digits)f", value) }

if CommandLine.arguments.dropFirst().first == "lists" {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("strata-sync-bench-\(UUID())")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    let listRows = try measureListEdits(in: directory)
    try? FileManager.default.removeItem(at: directory)
    print("| Measure | Result | Target |")
    print("|---|---|---|")
    for (measure, result, target) in listRows { print("| \(measure) | \(result) | \(target) |") }
    exit(0)
}

var logger = Logger(label: "strata-sync-bench")
logger.logLevel = .error
let postgres = PostgresClient(configuration: PostgresEnvironment.clientConfiguration(), backgroundLogger: logger)
let directory = FileManager.default.temporaryDirectory.appendingPathComponent("strata-sync-bench-\(UUID().uuidString)")
try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
let namespace = "strata_bench_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()

if let mode = CommandLine.arguments.dropFirst().first, mode == "bootstrap" || mode == "gateway" {
    let count = CommandLine.arguments.dropFirst(2).first.flatMap { Int($0) }
    let task = Task { await postgres.run() }
    var modeRows: [(String, String, String)] = []
    var failure: (any Error)?
    do {
        if mode == "gateway" {
            modeRows = try await measureGatewayLatency(
                writes: max(1, count ?? 200), postgres: postgres, namespace: namespace, directory: directory,
                logger: logger)
        } else {
            modeRows = try await measureBootstrap(
                count: max(1, count ?? 100_000), postgres: postgres, namespace: namespace, directory: directory,
                logger: logger)
        }
    } catch {
        failure = error
    }
    _ = try? await postgres.query(
        PostgresQuery(unsafeSQL: "DROP SCHEMA IF EXISTS \"\(namespace)\" CASCADE"), logger: logger)
    task.cancel()
    try? FileManager.default.removeItem(at: directory)
    if let failure {
        print("strata-sync-bench failed: \(String(reflecting: failure))")
        exit(1)
    }
    print("| Measure | Result | Target |")
    print("|---|---|---|")
    for (measure, result, target) in modeRows { print("| \(measure) | \(result) | \(target) |") }
    exit(0)
}
func configuration(_ name: String) -> Realm.Configuration {
    Realm.Configuration(
        fileURL: directory.appendingPathComponent("\(name).strata"), objectTypes: [BenchItem.self, BenchReading.self])
}
let (a, b, plain) = (configuration("a"), configuration("b"), configuration("plain"))

var rows: [(String, String, String)] = []
let postgresTask = Task { await postgres.run() }
defer {
    postgresTask.cancel()
    try? FileManager.default.removeItem(at: directory)
}
do {
    let schema = try ServerSchema(namespace: namespace, classes: [BenchItem.self, BenchReading.self])
    try await schema.migrate(postgres, logger: logger)
    let syncA = try SyncClient(
        configuration: a, schema: schema, client: postgres, scope: "bench", clientID: "bench-a", logger: logger)
    let syncB = try SyncClient(
        configuration: b, schema: schema, client: postgres, scope: "bench", clientID: "bench-b", logger: logger)

    // 1. A write on A until B's observer fires, both clients running as a service would run them.
    let latencies = try await measureWriteToObserverLatency(
        writes: latencyWrites, a: a, b: b, syncA: syncA, syncB: syncB)
    rows.append(
        ("write on A → observer fired on B, p50", "\(format(quantile(latencies, 0.5))) ms", "< 50 ms"))
    rows.append(("write on A → observer fired on B, p99", "\(format(quantile(latencies, 0.99))) ms", "< 250 ms"))
    rows.append(
        (
            "write on A → observer fired on B, min / max",
            "\(format(latencies.first!)) / \(format(latencies.last!)) ms", ""
        ))
    try await syncA.syncOnce()
    try await syncB.syncOnce()

    // 2. Sustained upload and download: queued writes on A until the server acknowledged them all, then B pulls
    // and applies them all. Once with one object per commit, once with 100.
    var first = 1_000_000
    for perCommit in [1, 100] {
        let count = throughputWrites
        let from = first
        try await onThread { try writeItems(a, from: from, count: count, perCommit: perCommit) }
        first += count
        let clock = ContinuousClock()
        let upload = try await clock.measure { try await syncA.uploadPending() }
        let download = try await clock.measure { try await syncB.downloadPending() }
        let (onA, onB) = try await onThread { () -> (Int, Int) in
            (
                try Realm(configuration: a).objects(BenchItem.self).count,
                try Realm(configuration: b).objects(BenchItem.self).count
            )
        }
        precondition(onA == onB, "B has \(onB) items, A \(onA)")
        let label = perCommit == 1 ? "\(count) single-object commits" : "\(count) objects in commits of \(perCommit)"
        rows.append(
            ("upload, \(label)", "\(format(Double(count) / (milliseconds(upload) / 1e3), 0)) ops/s", "≥ 10,000 ops/s"))
        rows.append(
            (
                "download + apply, \(label)", "\(format(Double(count) / (milliseconds(download) / 1e3), 0)) ops/s",
                "≥ 10,000 ops/s"
            ))
    }

    // 3. The local commit of a synced write (A: capture on) against the same write in a file without sync,
    // alternating rounds (and which goes first) so that the machine's load falls on both alike.
    // The file without sync gets as many items as A has, so that both trees have the same depth.
    try await onThread {
        let count = try Realm(configuration: a).objects(BenchItem.self).count
        try writeItems(plain, from: 1, count: count, perCommit: 100)
    }
    var synced: [Double] = []
    var unsynced: [Double] = []
    let perRound = max(1, throughputWrites / 10)
    for round in 0..<10 {
        let order = [(a, true), (plain, false)]
        for (target, isSynced) in round.isMultiple(of: 2) ? order : order.reversed() {
            let from = 3_000_000 + round * perRound
            let elapsed = try await onThread { () -> Duration in
                try ContinuousClock().measure { try writeItems(target, from: from, count: perRound) }
            }
            let perCommit = milliseconds(elapsed) / Double(perRound)
            if isSynced { synced.append(perCommit) } else { unsynced.append(perCommit) }
        }
        try await syncA.uploadPending()  // the queue stays short, as it does while the client runs
    }
    synced.sort()
    unsynced.sort()
    let syncedMedian = quantile(synced, 0.5)
    let unsyncedMedian = quantile(unsynced, 0.5)
    rows.append(("local commit, unsynced (one object)", "\(format(unsyncedMedian, 2)) ms", ""))
    rows.append(
        (
            "local commit, synced (capture on)",
            "\(format(syncedMedian, 2)) ms (\(format((syncedMedian / unsyncedMedian - 1) * 100, 0)) %)", "≤ +20 %"
        ))

    // 5. Asymmetric ingest: objects queued in A's outbox (commits of 1,000) until PostgreSQL committed them all and
    // they left the outbox.
    let readings = 10 * throughputWrites
    try await onThread {
        let realm = try Realm(configuration: a)
        var next = 0
        while next < readings {
            let end = min(next + 1_000, readings)
            try realm.write {
                for value in next..<end {
                    realm.create(BenchReading.self, value: ["name": "r\(value)", "value": value])
                }
            }
            next = end
        }
    }
    let ingestStart = ContinuousClock.now
    let ingested = try await syncA.uploadAsymmetricPending()
    let ingest = ContinuousClock.now - ingestStart
    precondition(ingested == readings, "\(ingested) of \(readings) asymmetric objects uploaded")
    rows.append(
        (
            "asymmetric ingest, \(readings) objects in commits of 1,000",
            "\(format(Double(readings) / (milliseconds(ingest) / 1e3), 0)) objects/s", ""
        ))
    await syncA.stop()
    await syncB.stop()

    // 4. One edit of a long synced list, capture on and off.
    rows += try await onThread { try measureListEdits(in: directory) }
} catch {
    _ = try? await postgres.query(
        PostgresQuery(unsafeSQL: "DROP SCHEMA IF EXISTS \"\(namespace)\" CASCADE"), logger: logger)
    try? FileManager.default.removeItem(at: directory)
    print("strata-sync-bench failed: \(String(reflecting: error))")
    exit(1)
}
try await postgres.query(PostgresQuery(unsafeSQL: "DROP SCHEMA IF EXISTS \"\(namespace)\" CASCADE"), logger: logger)

print("| Measure | Result | Target |")
print("|---|---|---|")
for (measure, result, target) in rows { print("| \(measure) | \(result) | \(target) |") }
print("")
print("latency: \(latencyWrites) writes one at a time (after 10 to warm up); throughput: \(throughputWrites) writes")

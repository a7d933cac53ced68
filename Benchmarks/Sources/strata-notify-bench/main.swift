import BenchSupport
import Foundation
import GRDB
import Strata

// Notification benchmark: Strata's change notifications (actor-confined Realms, `for await` over `changes`)
// against GRDB's ValueObservation (async sequences on a DatabasePool), in one run: the latency from a commit
// returning to an observer's loop body, the throughput of small commits from several writers, and readers'
// throughput while a writer commits. Both sides commit durably.
// Usage: strata-notify-bench [--commits 300] [--observers 1,100] [--writers 8,32] [--writes 1000] [--readers 4]
//                            [--duration 2] [--items 1000] [--timeout 10] [--dir PATH] [--only latency,...]
//                            [--tsv PATH]

struct Options {
    var commits = 300
    var warmup = 10
    var observers = [1, 100]
    var writers = [8, 32]
    var writes = 1_000
    var readers = 4
    var duration = 2.0
    var items = [1_000]
    var timeout = 10.0
    var directory: String?
    var only: Set<String> = ["latency", "throughput", "readers"]
    var tsv: String?
    /// Besides the actor-confined observers: the other places latency observers' Realms live in.
    var homes: [ObserverHome] = [.task, .mainActor]

    static let usage = """
        usage: strata-notify-bench [--commits 300] [--observers 1,100] [--writers 8,32] [--writes 1000] [--readers 4]
                                   [--duration 2] [--items 1000] [--timeout 10] [--dir PATH] [--only latency,...]
                                   [--tsv PATH]

          --commits    latency rows: timed commits per run (default 300), after 10 untimed warm-up commits
          --warmup     latency rows: untimed commits before the timed ones (default 10)
          --observers  latency rows: observer counts, one run each (default 1,100)
          --writers    throughput rows: concurrent writers, one row per count, comma-separated (default 8,32)
          --writes     throughput rows: commits per writer (default 1,000)
          --readers    reader row: concurrent readers (default 4)
          --duration   reader row: seconds of reading (default 2)
          --items      reader rows: objects counted and summed by every read (default 1,000); a comma-separated
                       list runs the reader rows once per count
          --timeout    seconds a commit may go unobserved before the run is declared failed (default 10)
          --dir        where to create the temporary databases (default: the system temporary directory)
          --only       workloads to run, comma-separated: latency, throughput, readers (default: all)
          --tsv        also write the reader rows (the ones that depend on a size) as tab-separated lines to PATH
                       (for strata-report)
          --homes      latency rows: where else observers' Realms live besides their own actors, compared with
                       the actor-confined rows: task (opened in a nonisolated async function), main (the main
                       actor), none (default: task,main)
        """

    init(_ arguments: [String]) {
        var iterator = arguments.makeIterator()
        func text(_ flag: String) -> String {
            guard let text = iterator.next() else { Options.fail("\(flag) needs a value") }
            return text
        }
        func number(_ flag: String, allowZero: Bool = false) -> Int {
            guard let value = Int(text(flag).replacingOccurrences(of: "_", with: "")),
                value > 0 || allowZero && value == 0
            else { Options.fail("\(flag) needs a positive number") }
            return value
        }
        while let argument = iterator.next() {
            switch argument {
            case "--commits": commits = number(argument)
            case "--warmup": warmup = number(argument, allowZero: true)
            case "--writes": writes = number(argument)
            case "--readers": readers = number(argument)
            case "--items":
                let values = text(argument).split(separator: ",").map {
                    Int($0.replacingOccurrences(of: "_", with: ""))
                }
                guard !values.isEmpty, values.allSatisfy({ ($0 ?? 0) > 0 }) else {
                    Options.fail("--items needs a comma-separated list of positive numbers")
                }
                items = values.compactMap { $0 }
            case "--writers":
                let values = text(argument).split(separator: ",").map {
                    Int($0.replacingOccurrences(of: "_", with: ""))
                }
                guard !values.isEmpty, values.allSatisfy({ ($0 ?? 0) > 0 }) else {
                    Options.fail("--writers needs a comma-separated list of positive numbers")
                }
                writers = values.compactMap { $0 }
            case "--observers":
                let values = text(argument).split(separator: ",").map {
                    Int($0.replacingOccurrences(of: "_", with: ""))
                }
                guard !values.isEmpty, values.allSatisfy({ ($0 ?? 0) > 0 }) else {
                    Options.fail("--observers needs a comma-separated list of positive numbers")
                }
                observers = values.compactMap { $0 }
            case "--duration", "--timeout":
                guard let value = Double(text(argument)), value > 0 else {
                    Options.fail("\(argument) needs a positive number of seconds")
                }
                if argument == "--duration" { duration = value } else { timeout = value }
            case "--dir": directory = text(argument)
            case "--homes":
                let names = text(argument).split(separator: ",").map { $0.lowercased() }
                guard names.allSatisfy({ ["task", "main", "none"].contains($0) }) else {
                    Options.fail("--homes takes task, main or none")
                }
                homes = names.compactMap { $0 == "task" ? .task : $0 == "main" ? .mainActor : nil }
            case "--tsv": tsv = text(argument)
            case "--only":
                only = Set(text(argument).split(separator: ",").map { $0.lowercased() })
                let known: Set<String> = ["latency", "throughput", "readers"]
                guard only.isSubset(of: known), !only.isEmpty else {
                    Options.fail("--only takes latency, throughput and/or readers")
                }
            case "--help", "-h":
                print(Options.usage)
                exit(0)
            default: Options.fail("unknown argument '\(argument)'")
            }
        }
    }

    static func fail(_ message: String) -> Never { failUsage(message, usage: usage) }
}

/// The first three fields of /proc/loadavg ("?" where there is none).
func loadAverage() -> String {
    guard let text = try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8) else { return "?" }
    return text.split(separator: " ").prefix(3).joined(separator: " ")
}

/// "0.83×", or three decimals below 0.1.
func ratio(_ strata: Double, _ grdb: Double) -> String {
    let value = strata / grdb
    return String(format: value < 0.1 ? "%.3f×" : "%.2f×", value)
}

/// Emits one table row.
func row(_ title: String, _ strata: String, _ grdb: String, _ ratio: String) {
    emit("| \(title) | \(strata) | \(grdb) | \(ratio) |")
}

/// The wall-clock time `body` takes.
func timeAsync(_ body: () async throws -> Void) async rethrows -> Duration {
    let clock = ContinuousClock()
    let start = clock.now
    try await body()
    return clock.now - start
}

/// "1 observer", "100 observers".
func observersText(_ count: Int) -> String { count == 1 ? "1 observer" : "\(group(count)) observers" }

let options = Options(Array(CommandLine.arguments.dropFirst()))
let base = options.directory.map { URL(fileURLWithPath: $0) } ?? FileManager.default.temporaryDirectory
let root = base.appendingPathComponent("strata-notify-bench-\(getpid())")
let timeout = Duration.milliseconds(Int(options.timeout * 1000))
var notes: [String] = []
var failed = false
var results = ResultsFile(path: options.tsv, benchmark: "Change notifications (strata-notify-bench)")
/// Latency runs of observers living elsewhere than on their own actors, each with the actor-confined run of the
/// same observer count.
var homeRuns: [(count: Int, home: ObserverHome, summary: LatencyRecorder.Summary, actor: LatencyRecorder.Summary)] =
    []

/// The second table: each home's collection-`changes` latency against the actor-confined observers' of the same
/// run (the same writer, commits and observer count).
func confinementRows(
    _ runs: [(count: Int, home: ObserverHome, summary: LatencyRecorder.Summary, actor: LatencyRecorder.Summary)]
) {
    emit()
    emit(
        "Where the observers' Realms live: the same latency run (collection `changes`) with each observer's Realm "
            + "confined to a task (opened in a nonisolated async function of a detached task; its `for await` is "
            + "woken by the commit and refreshes the Realm in the task) or to the main actor (all observers share "
            + "its one Realm), against the actor-confined observers above. Ratio = this / actor-confined.")
    emit()
    emit("| Workload | This confinement | Actor-confined | Ratio |")
    emit("|---|---:|---:|---:|")
    for run in runs {
        for (title, path) in [
            ("Latency from commit returned", \LatencyRecorder.Summary.fromReturn),
            ("Latency from commit call", \LatencyRecorder.Summary.fromCall),
        ] {
            for fraction in [0.5, 0.99] {
                let name = "\(title), p\(Int(fraction * 100)), \(observersText(run.count)), \(run.home.rawValue)"
                guard !run.summary[keyPath: path].isEmpty, !run.actor[keyPath: path].isEmpty else {
                    row(name, run.summary[keyPath: path].isEmpty ? "FAILED" : "", "", "—")
                    continue
                }
                let value = percentile(run.summary[keyPath: path], fraction)
                let actor = percentile(run.actor[keyPath: path], fraction)
                let shown = value > .zero && actor > .zero ? ratio(seconds(value), seconds(actor)) : "—"
                row(name, short(value), short(actor), shown)
            }
        }
    }
}

/// A short time with three significant digits: "-13.5 µs", "152 µs", "1.92 ms", "1.23 s".
func short(_ duration: Duration) -> String {
    let value = seconds(duration)
    let magnitude = abs(value)
    if magnitude >= 1 { return String(format: "%.2f s", value) }
    if magnitude >= 1e-3 { return String(format: "%.2f ms", value * 1e3) }
    if magnitude >= 1e-4 { return String(format: "%.0f µs", value * 1e6) }
    return String(format: "%.1f µs", value * 1e6)
}

/// One latency run on Strata: a writer actor and `count` observers whose Realms live in `home` (by default each on
/// an actor of its own, with its own Realm), on a new file.
func strataLatency(observers count: Int, kind: ObservedKind, home: ObserverHome = .actor, file: String) async throws
    -> LatencyRecorder.Summary
{
    let configuration = strataConfiguration(root.appendingPathComponent(file), [NotifyTick.self])
    let total = options.warmup + options.commits
    let recorder = LatencyRecorder(observers: count, commits: total)
    let writer = StrataLatencyWriter()
    try await writer.open(configuration)
    var observers: [RunningObserver] = []
    for index in 0..<count {
        observers.append(
            try await startObserver(
                index: index, home: home, kind: kind, configuration: configuration, recorder: recorder))
    }
    let guardTask = watchdog(recorder, timeout: timeout)
    _ = try await writer.run(commits: total, recorder: recorder)
    guardTask.cancel()
    for observer in observers { await observer.stop() }
    await writer.close()
    return recorder.summary(from: options.warmup + 1, to: total)
}

/// The same on GRDB: `count` ValueObservation tasks and one writer on a new DatabasePool.
func grdbLatency(observers count: Int, file: String) async throws -> LatencyRecorder.Summary {
    let pool = try openPool(root.appendingPathComponent(file).path)
    try createTick(pool)
    let total = options.warmup + options.commits
    let recorder = LatencyRecorder(observers: count, commits: total)
    let tasks = await startGRDBObservers(pool, count: count, recorder: recorder)
    let guardTask = watchdog(recorder, timeout: timeout)
    _ = try await runGRDBLatencyWriter(pool, commits: total, recorder: recorder)
    guardTask.cancel()
    for task in tasks { task.cancel() }
    for task in tasks { await task.value }
    try pool.close()
    return recorder.summary(from: options.warmup + 1, to: total)
}

/// Notes on a latency run; marks the run failed when it had failures.
@MainActor
func describe(_ summary: LatencyRecorder.Summary, _ what: String) {
    if !summary.failures.isEmpty {
        failed = true
        for failure in summary.failures {
            log("FAILURE (\(what)): \(failure)")
            notes.append("**FAILURE** \(what): \(failure)")
        }
    }
    var facts = [
        "\(group(summary.early)) of \(group(summary.fromReturn.count)) observations ran before the commit call had "
            + "returned to the writer"
    ]
    if summary.repeats > 0 {
        let deliveries = summary.repeats == 1 ? "delivery" : "deliveries"
        facts.append("\(group(summary.repeats)) \(deliveries) repeated an unchanged value")
    }
    if !summary.skips.isEmpty {
        let examples = summary.skips.prefix(3).joined(separator: ", ")
        let deliveries = summary.skips.count == 1 ? "delivery" : "deliveries"
        facts.append("\(summary.skips.count) \(deliveries) covered several commits (e.g. \(examples))")
    }
    notes.append("\(what): " + facts.joined(separator: "; ") + ".")
}

/// The latency rows of one Strata run against one GRDB run: from the commit returning (p50, p99), from the commit
/// call (p50, p99), and the commit call itself (p50).
func latencyRows(_ label: String, _ strata: LatencyRecorder.Summary, _ grdb: LatencyRecorder.Summary) {
    let series: [(String, KeyPath<LatencyRecorder.Summary, [Duration]>, [Double])] = [
        ("Latency from commit returned", \.fromReturn, [0.5, 0.99]),
        ("Latency from commit call (durable commit included)", \.fromCall, [0.5, 0.99]),
        ("Commit call itself", \.commits, [0.5]),
    ]
    for (title, path, fractions) in series {
        for fraction in fractions {
            let name = "\(title), p\(Int(fraction * 100)), \(label)"
            guard !strata[keyPath: path].isEmpty, !grdb[keyPath: path].isEmpty else {
                row(
                    name, strata[keyPath: path].isEmpty ? "FAILED" : "", grdb[keyPath: path].isEmpty ? "FAILED" : "",
                    "—")
                continue
            }
            let strataValue = percentile(strata[keyPath: path], fraction)
            let grdbValue = percentile(grdb[keyPath: path], fraction)
            // A ratio of a negative time (the observer ran before the writer resumed) means nothing.
            let shown =
                strataValue > .zero && grdbValue > .zero ? ratio(seconds(strataValue), seconds(grdbValue)) : "—"
            row(name, short(strataValue), short(grdbValue), shown)
        }
    }
}

do {
    try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: root) }
    let versionPool = try openPool(root.appendingPathComponent("version.sqlite").path)
    let sqlite = try sqliteVersion(versionPool)
    try versionPool.close()

    emit("## Strata change notifications vs GRDB ValueObservation")
    emit()
    emit(
        "- Strata: every writer, observer and reader is an actor with its own actor-confined Realm "
            + "(`Realm(configuration:actor:)`) on one file per run; commits with `asyncWrite`, durable (Strata's "
            + "default `StoreOptions.durability = .full`: each commit is synced before it returns).")
    emit("- SQLite \(sqlite) (system library) through GRDB 7.10.0: \(grdbSettings).")
    emit(
        "- Machine: \(ProcessInfo.processInfo.activeProcessorCount) CPUs; load average at start (1, 5, 15 min): "
            + "\(loadAverage()) — other work on the machine skews the numbers. Databases in `\(root.path)`.")
    if options.only.contains("latency") {
        emit(
            "- Latency: one object (Strata `NotifyTick`, id 1) / one row (SQL `tick`, id 1); the writer sets its "
                + "`value` (and `stamp`) to 1, 2, 3, … one commit at a time; the writer waits until every observer "
                + "has seen a commit before the next one, so each commit is observed on its own. Three timestamps "
                + "(`ContinuousClock`): just before the writer calls the commit (`asyncWrite` on the writer's actor / "
                + "`await pool.write`), right after that call returns to the writer, and the first statement of each "
                + "observer's `for await` body that sees the new value. *From commit returned* = body − return: "
                + "negative when the observer's body ran before the writer got control back (both sides let observers "
                + "start as soon as the transaction is committed, on the other core); *from commit call* = body − "
                + "call, the end-to-end time a user sees, which includes the durable commit (its sync dominates, and "
                + "varies run to run on this virtual disk). p50 and p99 (nearest rank) over every (commit, observer) "
                + "pair of \(group(options.commits)) commits, after "
                + "\(options.warmup) untimed ones. Strata observers: each its own actor and Realm, `for await` over "
                + "`realm.objects(NotifyTick.self).changes` (collection rows) or over `tick.changes` (object rows), "
                + "started from the actor. GRDB observers: each a detached task iterating `ValueObservation.tracking "
                + "{ try Int.fetchOne($0, sql: \"SELECT value FROM tick WHERE id = 1\") }.values(in: pool)` "
                + "(scheduler `.task`); one GRDB run per observer count serves both the collection and object rows.")
    }
    if options.only.contains("throughput") {
        emit(
            "- Throughput: \(options.writers.map(String.init).joined(separator: ", ")) writers (one row each, "
                + "Strata then GRDB), each committing \(group(options.writes)) times one new small object / row (Int "
                + "id, Int, Double), all at once; wall time from the start to the last commit. Strata: one actor per "
                + "writer with its own Realm, `asyncWrite { create(…) }`; GRDB: one task per writer, `try await "
                + "pool.write { INSERT … }`. Ratio = Strata time / GRDB time.")
    }
    if options.only.contains("readers") {
        let counts = options.items.map(group).joined(separator: ", ")
        emit(
            "- Readers: \(counts) objects / rows\(options.items.count > 1 ? " (one run each)" : ""); for "
                + "\(options.duration) s, \(options.readers) readers each read the count and the sum of `value` in one "
                + "consistent view, in a loop, while one writer moves one unit of `value` between two random objects "
                + "per commit (so every read must see the count N and the sum 1,000 × N: checked). Strata: reader "
                + "actors doing `await realm.asyncRefresh()`, `objects(…).count`, `sum(ofProperty: \"value\")`, then "
                + "`await Task.yield()` (without it four looping readers hold both cooperative threads and starve "
                + "the writer); GRDB: tasks doing `try await pool.read { COUNT(*); SUM(value) }`. Time per read = "
                + "duration / all readers' reads.")
    }
    emit()
    emit("| Workload | Strata | GRDB | Strata/GRDB |")
    emit("|---|---:|---:|---:|")

    if options.only.contains("latency") {
        for count in options.observers {
            log("latency, \(observersText(count)): GRDB")
            let grdb = try await grdbLatency(observers: count, file: "latency-\(count).sqlite")
            describe(grdb, "GRDB, \(observersText(count))")
            log("latency, \(observersText(count)): Strata, collection changes")
            let collection = try await strataLatency(
                observers: count, kind: .collection, file: "latency-collection-\(count).strata")
            describe(collection, "Strata collection `changes`, \(observersText(count))")
            latencyRows("\(observersText(count)), collection `changes`", collection, grdb)
            log("latency, \(observersText(count)): Strata, object changes")
            let object = try await strataLatency(
                observers: count, kind: .object, file: "latency-object-\(count).strata")
            describe(object, "Strata object `changes`, \(observersText(count))")
            latencyRows("\(observersText(count)), object `changes`", object, grdb)
            for home in options.homes {
                log("latency, \(observersText(count)): Strata, collection changes, \(home.rawValue)")
                let elsewhere = try await strataLatency(
                    observers: count, kind: .collection, home: home, file: "latency-\(home)-\(count).strata")
                describe(elsewhere, "Strata collection `changes`, \(observersText(count)), \(home.rawValue)")
                homeRuns.append((count, home, elsewhere, collection))
            }
        }
    }

    if options.only.contains("throughput") {
        for count in options.writers { try await throughputRow(writers: count) }
    }

    if options.only.contains("readers") {
        for items in options.items {
            let (strata, grdb) = try await readersRun(items: items)
            for (name, outcome) in [("Strata", strata), ("GRDB", grdb)] where outcome.wrong > 0 {
                failed = true
                log(
                    "FAILURE (readers, \(group(items)) objects): \(name): \(outcome.wrong) of \(outcome.reads) reads saw "
                        + "a wrong count or sum")
                notes.append(
                    "**FAILURE** \(name) readers, \(group(items)) objects: \(outcome.wrong) of \(outcome.reads) reads "
                        + "were wrong.")
            }
            func perRead(_ reads: Int) -> Double { options.duration / Double(max(reads, 1)) }
            func readCell(_ reads: Int) -> String {
                "\(short(.seconds(perRead(reads)))) (\(group(Int(Double(reads) / options.duration))) reads/s)"
            }
            func perCommit(_ commits: Int) -> Double { options.duration / Double(max(commits, 1)) }
            func commitCell(_ commits: Int) -> String {
                "\(short(.seconds(perCommit(commits)))) (\(group(Int(Double(commits) / options.duration))) commits/s)"
            }
            row(
                "Readers: \(options.readers) reading count + sum of \(group(items)) while 1 writer commits, "
                    + "time per read", readCell(strata.reads), readCell(grdb.reads),
                ratio(perRead(strata.reads), perRead(grdb.reads)))
            row(
                "Readers: the writer's commits meanwhile (\(group(items)) objects), time per commit",
                commitCell(strata.commits), commitCell(grdb.commits),
                ratio(perCommit(strata.commits), perCommit(grdb.commits)))
            let window = Duration.milliseconds(Int(options.duration * 1000))
            for (engine, outcome) in [("Strata", strata), ("GRDB", grdb)] where outcome.wrong == 0 {
                results.add(
                    "Readers: count + sum of all objects while 1 writer commits", size: items,
                    engine: engine, time: window, operations: outcome.reads, unit: "read")
                results.add(
                    "Readers: the writer's commits meanwhile", size: items, engine: engine,
                    time: window, operations: outcome.commits, unit: "commit")
            }
        }
    }

    emit()
    emit("Ratio = Strata / GRDB: below 1 means Strata is faster.")
    if !homeRuns.isEmpty { confinementRows(homeRuns) }
    if !notes.isEmpty {
        emit()
        for note in notes { emit("- \(note)") }
    }
    emit()
    emit("Load average at the end (1, 5, 15 min): \(loadAverage()).")
} catch {
    log("failed: \(error)")
    exit(1)
}
if failed {
    log("\n*** FAILURE: see the notes under the table ***")
    exit(1)
}

/// One throughput row: `count` writers each committing `options.writes` small inserts, on Strata (one actor and
/// Realm per writer) and then on GRDB (one task per writer on one pool), each on a new file; both counts checked.
func throughputRow(writers count: Int) async throws {
    let total = count * options.writes
    log("throughput, \(count) writers: Strata")
    let configuration = strataConfiguration(
        root.appendingPathComponent("throughput-\(count).strata"), [NotifyItem.self])
    let writers = (0..<count).map { StrataThroughputWriter(index: $0) }
    for writer in writers { try await writer.open(configuration) }
    let writes = options.writes
    let strata = try await timeAsync {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in writers { group.addTask { try await writer.run(commits: writes) } }
            try await group.waitForAll()
        }
    }
    for writer in writers { await writer.close() }
    let checker = StrataReader()
    try await checker.open(configuration)
    let strataCount = try await checker.totals().count
    await checker.close()
    try check(strataCount == total, "Strata holds \(strataCount) objects after the throughput row, not \(total)")

    log("throughput, \(count) writers: GRDB")
    let pool = try openPool(root.appendingPathComponent("throughput-\(count).sqlite").path)
    try createItems(pool)
    let grdb = try await runGRDBThroughput(pool, writers: count, commits: options.writes)
    let grdbCount = try await pool.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM item") } ?? -1
    try pool.close()
    try check(grdbCount == total, "GRDB holds \(grdbCount) rows after the throughput row, not \(total)")

    func cell(_ duration: Duration) -> String {
        "\(format(duration)) (\(group(Int(Double(total) / seconds(duration)))) commits/s)"
    }
    row(
        "Throughput: \(count) writer\(count == 1 ? "" : "s") × \(group(options.writes)) commits", cell(strata),
        cell(grdb), ratio(seconds(strata), seconds(grdb)))
}

/// Reads, wrong reads and commits added up over the parts a readers workload's task group returns.
func addUp(
    _ group: inout ThrowingTaskGroup<(reads: Int, wrong: Int, commits: Int), any Error>,
    isolation: isolated (any Actor)? = #isolation
) async throws -> (reads: Int, wrong: Int, commits: Int) {
    var total = (reads: 0, wrong: 0, commits: 0)
    for try await part in group {
        total.reads += part.reads
        total.wrong += part.wrong
        total.commits += part.commits
    }
    return total
}

/// One readers run over `items` objects / rows on each engine: reads, wrong reads and commits of each.
func readersRun(items: Int) async throws -> (
    strata: (reads: Int, wrong: Int, commits: Int), grdb: (reads: Int, wrong: Int, commits: Int)
) {
    let sum = items * 1_000
    let window = Duration.milliseconds(Int(options.duration * 1000))
    log("readers, \(group(items)) objects: Strata")
    let configuration = strataConfiguration(
        root.appendingPathComponent("readers-\(items).strata"), [NotifyItem.self])
    let writer = StrataChurnWriter()
    try await writer.open(configuration)
    try await writer.load(items: items)
    let readers = (0..<options.readers).map { _ in StrataReader() }
    for reader in readers { try await reader.open(configuration) }
    let deadline = ContinuousClock.now + window
    let strata = try await withThrowingTaskGroup(of: (reads: Int, wrong: Int, commits: Int).self) { group in
        group.addTask { (0, 0, try await writer.run(items: items, until: deadline)) }
        for reader in readers {
            group.addTask {
                let (reads, wrong) = try await reader.run(until: deadline, count: items, sum: sum)
                return (reads, wrong, 0)
            }
        }
        return try await addUp(&group)
    }
    for reader in readers { await reader.close() }
    await writer.close()

    log("readers, \(group(items)) objects: GRDB")
    let pool = try openPool(root.appendingPathComponent("readers-\(items).sqlite").path)
    try createItems(pool)
    try loadGRDBItems(pool, items: items)
    let grdb = try await runGRDBReaders(pool, readers: options.readers, items: items, sum: sum, until: .now + window)
    try pool.close()
    return (strata, grdb)
}

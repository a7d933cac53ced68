import BenchSupport
import Foundation
import GRDB
import Strata

// Query benchmark (issue 5): the same queries on Strata objects and on SQLite through GRDB, on the same data,
// in one run. Every answer is checked against the other engine and against the answer computed in Swift from the
// generated data; a disagreement prints MISMATCH and the run exits with status 1.
// Usage: strata-query-bench [--count 1000000] [--repeat 3] [--dir PATH] [--texts 100000] [--only TEXT] [--tsv PATH]

struct Options {
    var count = 1_000_000
    var repeats = 3
    var directory: String?
    var texts = 100_000
    var only: String?
    var tsv: String?

    static let usage = """
        usage: strata-query-bench [--count 1000000] [--repeat 3] [--dir PATH] [--texts 100000] [--only TEXT]
                                  [--tsv PATH]

          --count   objects queried (default 1,000,000)
          --repeat  timed runs of every row; the table shows the median (default 3), after one untimed warm-up run
          --dir     where to create the temporary databases (default: the system temporary directory)
          --texts   texts for the full-text rows (default 100,000)
          --only    run only the rows whose title contains TEXT (case-insensitive)
          --tsv     also write every cell as a tab-separated line to PATH (for strata-report)
        """

    init(_ arguments: [String]) {
        var iterator = arguments.makeIterator()
        func number(_ flag: String) -> Int {
            guard let text = iterator.next(), let value = Int(text.replacingOccurrences(of: "_", with: "")), value > 0
            else { Options.fail("\(flag) needs a positive number") }
            return value
        }
        while let argument = iterator.next() {
            switch argument {
            case "--count": count = number(argument)
            case "--repeat": repeats = number(argument)
            case "--texts": texts = number(argument)
            case "--dir":
                guard let path = iterator.next() else { Options.fail("--dir needs a path") }
                directory = path
            case "--only":
                guard let text = iterator.next() else { Options.fail("--only needs a text") }
                only = text
            case "--tsv":
                guard let path = iterator.next() else { Options.fail("--tsv needs a path") }
                tsv = path
            case "--help", "-h":
                print(Options.usage)
                exit(0)
            default: Options.fail("unknown argument '\(argument)'")
            }
        }
    }

    static func fail(_ message: String) -> Never { failUsage(message, usage: usage) }
}

/// What one row measured.
struct Outcome {
    var strataTimes: [Duration] = []
    var grdbTimes: [Duration] = []
    var strataAnswer: [Int] = []
    var grdbAnswer: [Int] = []
    /// Why Strata could not run the query (a missing feature), or nil.
    var unsupported: String?
    /// Wrong answers, one line each.
    var problems: [String] = []
    /// Facts worth a note that are not errors.
    var notes: [String] = []
}

/// A Strata warm-up run slower than this is not repeated (its time is reported, marked as one run).
let slowRun = Duration.seconds(20)

/// The first query whose answers differ, described.
func firstDifference(_ left: [Int], _ right: [Int], _ leftName: String, _ rightName: String) -> String? {
    if left.count != right.count { return "\(leftName) gave \(left.count) answers, \(rightName) \(right.count)" }
    guard let index = left.indices.first(where: { left[$0] != right[$0] }) else { return nil }
    let differing = left.indices.filter { left[$0] != right[$0] }.count
    return "query #\(index + 1) of \(left.count): \(leftName) \(left[index]), \(rightName) \(right[index]) "
        + "(\(differing) of \(left.count) queries differ)"
}

func run(_ workload: Workload, realm: Realm, queue: DatabaseQueue, repeats: Int) throws -> Outcome {
    var outcome = Outcome()
    var strataRuns = repeats
    for round in 0...repeats {
        if outcome.unsupported == nil && round <= strataRuns {
            do {
                let (answer, duration) = try measure { try workload.strata(realm) }
                if round == 0 {
                    outcome.strataAnswer = answer
                    if duration > slowRun {
                        // Pathologically slow: report the warm-up run rather than spend minutes repeating it.
                        strataRuns = 0
                        outcome.strataTimes = [duration]
                        outcome.notes.append("Strata took \(format(duration)) for one run: timed once")
                    }
                } else {
                    outcome.strataTimes.append(duration)
                }
            } catch let error as Realm.Error where workload.mayBeUnsupported {
                outcome.unsupported = "\(error)"
            }
        }
        let (answer, duration) = try measure { try queue.read { db in try workload.grdb(db) } }
        if round == 0 { outcome.grdbAnswer = answer } else { outcome.grdbTimes.append(duration) }
    }
    if let expected = workload.expected {
        if outcome.unsupported == nil,
            let difference = firstDifference(outcome.strataAnswer, expected, "Strata", "expected")
        {
            outcome.problems.append(difference)
        }
        if let difference = firstDifference(outcome.grdbAnswer, expected, "SQLite", "expected") {
            outcome.problems.append(difference)
        }
        if outcome.unsupported == nil,
            let difference = firstDifference(outcome.strataAnswer, outcome.grdbAnswer, "Strata", "SQLite")
        {
            outcome.problems.append(difference)
        }
    }
    if let verify = workload.verify {
        if outcome.unsupported == nil, let problem = verify(outcome.strataAnswer) {
            outcome.problems.append("Strata: \(problem)")
        }
        if let problem = verify(outcome.grdbAnswer) { outcome.problems.append("SQLite: \(problem)") }
        if outcome.problems.isEmpty {
            outcome.notes.append(
                outcome.strataAnswer == outcome.grdbAnswer
                    ? "both orders identical" : "both correctly sorted; equal keys in a different order")
        }
    }
    return outcome
}

func nanosecondsPerRow(_ duration: Duration, queries: Int, rows: Int?) -> String {
    guard let rows else { return "—" }
    return String(format: "%.1f", seconds(duration) * 1e9 / Double(queries * rows))
}

/// The first three fields of /proc/loadavg ("?" where there is none).
func loadAverage() -> String {
    guard let text = try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8) else { return "?" }
    return text.split(separator: " ").prefix(3).joined(separator: " ")
}

func cell(_ duration: Duration, queries: Int) -> String {
    queries == 1 ? format(duration) : "\(format(duration)) (\(format(duration / queries))/query)"
}

let options = Options(Array(CommandLine.arguments.dropFirst()))
let base = options.directory.map { URL(fileURLWithPath: $0) } ?? FileManager.default.temporaryDirectory
let root = base.appendingPathComponent("strata-query-bench-\(getpid())")
var mismatches = 0
var results = ResultsFile(path: options.tsv, benchmark: "Queries (strata-query-bench)")
do {
    try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: root) }
    log("generating \(group(options.count)) items and \(group(options.texts)) texts")
    let data = Dataset(count: options.count, textCount: options.texts)
    log("loading Strata")
    let (realm, strataLoad) = try measure { try loadStrata(data, url: root.appendingPathComponent("query.strata")) }
    log("loading SQLite")
    let (queue, grdbLoad) = try measure { try loadGRDB(data, path: root.appendingPathComponent("query.sqlite").path) }
    let sqliteVersion = try queue.read { try String.fetchOne($0, sql: "SELECT sqlite_version()") } ?? "?"
    // Cold and warm unindexed scans: the first scan of a class extracts the scanned column of every segment of its
    // rows (kept in the file's segment cache); later scans, at this or later versions, reuse the extracts of the
    // segments no commit has touched since.
    let probe = data.values[data.values.count / 2]
    let (coldAnswer, cold) = measure { realm.objects(QBItem.self).filter("value == $0", probe).count }
    let (warmAnswer, warm) = measure { realm.objects(QBItem.self).filter("value == $0", probe).count }
    let (sqlAnswer, sqlScan) = try measure {
        try queue.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM item WHERE value = ?", arguments: [probe]) }
    }
    if coldAnswer != warmAnswer || coldAnswer != sqlAnswer {
        mismatches += 1
        log(
            "MISMATCH in the cold scan: Strata \(coldAnswer) cold, \(warmAnswer) warm; SQLite \(sqlAnswer.map(String.init) ?? "nil")"
        )
    } else {
        let title = "Cold first `value == k` scan after loading (not in the table)"
        results.add(title, size: options.count, engine: "Strata", time: cold, operations: 1, unit: "query")
        results.add(title, size: options.count, engine: "SQLite", time: sqlScan, operations: 1, unit: "query")
    }
    var workloads = makeWorkloads(data)
    if let only = options.only?.lowercased() { workloads = workloads.filter { $0.title.lowercased().contains(only) } }

    emit("## Strata queries vs SQLite (GRDB)")
    emit()
    emit(
        "- Data: \(group(options.count)) `QBItem` objects (Int primary key `id`; `value` uniform in 0..<1,000,000, "
            + "unindexed; `indexedValue`, same distribution, indexed; `name`, 8–16 random letters, a quarter upper "
            + "case; `score: Double`; `owner`, a to-one link to one of 1,000 `QBOwner`s with `name` and `age`, nil "
            + "for every 100th item) and \(group(options.texts)) `QBText` objects (5–12 words from a vocabulary of "
            + "5,000, word ranks log-uniform, full-text indexed). The same data, from one seed, in both engines.")
    emit(
        "- SQLite \(sqliteVersion) (system library) through GRDB 7.10.0: tables `owner` and `item` (owner as "
            + "a foreign-key column `ownerId`), indexes on `item(indexedValue)` and `item(ownerId)`, an FTS5 table for "
            + "the texts; \(sqliteSettings).")
    emit("- Load (not in the table): Strata \(format(strataLoad)), SQLite \(format(grdbLoad)).")
    emit(
        "- Cold scan (not in the table): the first `value == k` scan after loading, which also extracts the column "
            + "into the segment cache, took \(format(cold)) (\(String(format: "%.2f×", cold / sqlScan)) SQLite's "
            + "\(format(sqlScan))); the same scan again \(format(warm)). The table's rows run warm, after a warm-up.")
    emit("- Load average at start (1, 5, 15 min): \(loadAverage()) — other work on the machine skews the numbers.")
    emit(
        "- Each row runs its queries (different parameters, the same on both sides) in one timed run; the median of "
            + "\(options.repeats) runs after one untimed warm-up run, engines taking turns. GRDB runs inside one read "
            + "transaction per run, statements cached. Every answer is checked against the other engine and against "
            + "the answer computed in Swift. Ratio = Strata / SQLite: below 1 means Strata is faster. ns/row: time per "
            + "query divided by the rows it has to examine (the whole table for scans, the sorted rows for sorts).")
    emit()
    emit("### N = \(group(options.count))")
    emit()
    emit(
        "| # | Workload | Queries/run | Answer (1st query) | Strata | SQLite (GRDB) | Strata/SQLite | Strata ns/row | SQLite ns/row |"
    )
    emit("|---:|---|---:|---:|---:|---:|---:|---:|---:|")
    var notes: [String] = []
    for (number, workload) in workloads.enumerated() {
        log("\(workload.title)")
        let outcome = try run(workload, realm: realm, queue: queue, repeats: options.repeats)
        let grdb = median(outcome.grdbTimes)
        let answer =
            outcome.grdbAnswer.first.map {
                workload.verify == nil ? group($0) : "\(group(outcome.grdbAnswer.count)) ids"
            } ?? "—"
        var row = ["\(number + 1)", workload.title, group(workload.queries), answer]
        if let reason = outcome.unsupported {
            row += ["not supported yet", cell(grdb, queries: workload.queries), "—", "—"]
            notes.append("Row \(number + 1): Strata does not support this query yet: \(reason)")
        } else {
            let strata = median(outcome.strataTimes)
            row += [
                cell(strata, queries: workload.queries), cell(grdb, queries: workload.queries),
                String(format: strata / grdb < 0.1 ? "%.3f×" : "%.2f×", strata / grdb),
                nanosecondsPerRow(strata, queries: workload.queries, rows: workload.rowsPerQuery),
            ]
        }
        row.append(nanosecondsPerRow(grdb, queries: workload.queries, rows: workload.rowsPerQuery))
        if !outcome.problems.isEmpty {
            mismatches += 1
            row[1] = "**MISMATCH** " + row[1]
            for problem in outcome.problems {
                log("MISMATCH in row \(number + 1) (\(workload.title)): \(problem)")
                notes.append("**MISMATCH** row \(number + 1) (`\(workload.strataText)`): \(problem)")
            }
        }
        for note in outcome.notes { notes.append("Row \(number + 1): \(note).") }
        if outcome.problems.isEmpty {
            // Per row examined where the table has ns/row columns (scans and sorts), else per query.
            let title = workload.resultsTitle ?? workload.title
            let operations = workload.queries * (workload.rowsPerQuery ?? 1)
            let unit = workload.rowsPerQuery == nil ? "query" : "row examined"
            if outcome.unsupported == nil {
                results.add(
                    title, size: options.count, engine: "Strata", time: median(outcome.strataTimes),
                    operations: operations, unit: unit)
            }
            results.add(title, size: options.count, engine: "SQLite", time: grdb, operations: operations, unit: unit)
        }
        emit("| " + row.joined(separator: " | ") + " |")
    }
    emit()
    emit("Queries:")
    emit()
    for (number, workload) in workloads.enumerated() {
        emit("\(number + 1). Strata `\(workload.strataText)`; SQL `\(workload.sqlText)`")
    }
    if !notes.isEmpty {
        emit()
        for note in notes { emit("- \(note)") }
    }
    // SQLite's plans, so that a reader can see which rows used an index.
    emit()
    emit("SQLite query plans (EXPLAIN QUERY PLAN):")
    emit()
    try queue.read { db in
        for (number, workload) in workloads.enumerated() {
            let sql = workload.sqlText.replacingOccurrences(of: " OR …", with: "")
                .replacingOccurrences(of: ", …", with: "")
            // Parameters left NULL: the plan does not depend on their values.
            let parameters = sql.filter { $0 == "?" }.count
            let plan = try Row.fetchAll(
                db, sql: "EXPLAIN QUERY PLAN " + sql,
                arguments: StatementArguments(Array(repeating: DatabaseValue.null, count: parameters))
            ).map { $0["detail"] as String? ?? "" }
            emit("\(number + 1). \(plan.joined(separator: "; "))")
        }
    }
    emit()
    emit("Load average at the end (1, 5, 15 min): \(loadAverage()).")
} catch {
    log("failed: \(error)")
    exit(1)
}
if mismatches > 0 {
    log("\n*** MISMATCH: \(mismatches) row(s) gave different answers (see the notes under the table) ***")
    exit(1)
}

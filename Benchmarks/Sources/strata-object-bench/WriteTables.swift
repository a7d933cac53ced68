import BenchSupport
import Foundation

// The report's write-path tables (issue 25): the write cases against SQLite's prepared statements, and the peak
// memory of one large write transaction. Their cells also go to the machine-readable results, so the report's
// "How cost grows with size" section covers them.

/// Runs the write cases `repeats` times at `size` (fresh files each run, Strata then SQLite) and prints their table
/// of medians.
@MainActor
func writePathsTable(size: Int, repeats: Int, root: URL) throws {
    var strataRuns: [[WriteCase: Duration]] = []
    var sqliteRuns: [[WriteCase: Duration]] = []
    var oneStatementUpdates: [Duration] = []
    for run in 0..<repeats {
        log("writes N = \(size): run \(run + 1) of \(repeats)")
        let directory = root.appendingPathComponent("writes-\(size)-\(run)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        strataRuns.append(try WritePaths.runStrata(size: size, directory: directory))
        let sqlite = try WritePaths.runSQLite(size: size, directory: directory)
        sqliteRuns.append(sqlite.times)
        oneStatementUpdates.append(sqlite.oneStatementUpdate)
    }
    print("### Write paths, N = \(size)\n")
    print(
        "Issue 25's write rows: Strata objects against SQLite driven through statements prepared once per case (raw "
            + "handles, `sqlite3_bind_*`/`sqlite3_step`, no record encoding; WAL, synchronous=FULL), each case one "
            + "write transaction on fresh files. The deletes remove every 10th key of all keys shuffled with a fixed "
            + "seed (\(group(WriteCase.delete.operations(size: size))) objects). Median of \(repeats) runs; ratio = "
            + "Strata / SQLite.\n")
    print("| Workload | Strata | SQLite | Strata/SQLite | Target |")
    print("|---|---:|---:|---:|---|")
    var strataMedians: [WriteCase: Duration] = [:]
    for write in WriteCase.allCases {
        let strata = BenchSupport.median(strataRuns.compactMap { $0[write] })
        let sqlite = BenchSupport.median(sqliteRuns.compactMap { $0[write] })
        strataMedians[write] = strata
        let operations = write.operations(size: size)
        print(
            "| \(write.rawValue) (\(write.detail)) | \(format(strata)) (\(perOperation(strata, operations))) | "
                + "\(format(sqlite)) (\(perOperation(sqlite, operations))) | "
                + "\(String(format: "%.2f×", strata / sqlite)) | \(write.target) |")
        for (engine, time) in [("Strata", strata), ("SQLite", sqlite)] {
            results.add(write.rawValue, size: size, engine: engine, time: time, operations: operations, unit: "object")
        }
    }
    let oneStatement = BenchSupport.median(oneStatementUpdates)
    let update = strataMedians[.update] ?? .zero
    print(
        "| \(WriteCase.update.rawValue), SQLite in one statement (`UPDATE item SET score = score + 1`; a reference) "
            + "| \(format(update)) (\(perOperation(update, size))) | \(format(oneStatement)) "
            + "(\(perOperation(oneStatement, size))) | \(String(format: "%.2f×", update / oneStatement)) | — |")
    results.add(
        WriteCase.update.rawValue, size: size, engine: "SQLite, one statement", time: oneStatement,
        operations: size, unit: "object")
    let upsert = strataMedians[.upsert] ?? .zero
    print(
        "\nStrata's upsert / its plain update: \(String(format: "%.2f×", upsert / update)) (target ≤ 1.5×).\n")
}

/// Measures the peak memory of one write transaction of `size` objects, each engine in a child process, and prints
/// its table.
func peakMemoryTable(size: Int, root: URL) throws {
    log("peak memory: one write of \(group(size)) objects, a child process per engine")
    let strata = try measurePeakMemory(
        engine: "strata", size: size, directory: root.appendingPathComponent("peak-strata-\(size)"))
    let sqlite = try measurePeakMemory(
        engine: "sqlite", size: size, directory: root.appendingPathComponent("peak-sqlite-\(size)"))
    let mebibytes = { (bytes: Int) in String(format: "%.1f MiB", Double(bytes) / 1_048_576) }
    let ratio = { (measured: PeakMemory) in
        measured.fileGrowth > 0
            ? String(format: "%.2f×", Double(measured.peakGrowth) / Double(measured.fileGrowth)) : "—"
    }
    print("### Peak memory of one write transaction of \(size) objects\n")
    print(
        "Each engine in a child process of its own: its resident set just before the transaction, its high-water mark "
            + "by the commit (reset to the resident set first, through /proc/self/clear_refs), and the growth of the "
            + "database's files (SQLite's WAL checkpointed into the database first). One run.\n")
    print("| Engine | Transaction | Resident before | Resident peak growth | File growth | Peak growth / file growth |")
    print("|---|---:|---:|---:|---:|---:|")
    for (engine, measured) in [("Strata", strata), ("SQLite (prepared `INSERT`)", sqlite)] {
        print(
            "| \(engine) | \(String(format: "%.2f s", measured.seconds)) | \(mebibytes(measured.residentBefore)) | "
                + "\(mebibytes(measured.peakGrowth)) | \(mebibytes(measured.fileGrowth)) | \(ratio(measured)) |")
    }
    let peakRatio =
        sqlite.peakGrowth > 0 ? String(format: "%.2f×", Double(strata.peakGrowth) / Double(sqlite.peakGrowth)) : "—"
    print("\nTarget: Strata's peak growth ≤ 2× its file growth. Strata's peak growth / SQLite's: \(peakRatio).")
    if !strata.peakReset || !sqlite.peakReset {
        print(
            "\nThe high-water mark could not be reset here (no /proc/self/clear_refs): the peaks also cover opening "
                + "the database, an upper bound.")
    }
    print("")
}

import BenchSupport
import Foundation

/// Builds the Markdown report.
enum Report {
    static let columns: [(slug: String, name: String)] = [
        (StrataEngine.slug, StrataEngine.name), (EncryptedStrataEngine.slug, EncryptedStrataEngine.name),
        (LMDBEngine.slug, LMDBEngine.name), (SQLiteEngine.slug, SQLiteEngine.name),
    ]

    static func header(options: Options, machine: MachineInfo, command: String, directory: String) -> String {
        var lines: [String] = []
        lines.append("## Strata storage benchmark: StrataStorage vs LMDB vs SQLite")
        lines.append("")
        lines.append("- Command: `\(command)`")
        lines.append("- Date: \(Date.now.formatted(.iso8601))")
        lines.append("- Machine: \(machine.processors) CPUs (`nproc`), \(machine.cpuModel), \(machine.memory) RAM")
        lines.append("- System: \(machine.system), Linux kernel \(machine.kernel)")
        lines.append("- Databases in: `\(directory)` — \(machine.filesystem)")
        lines.append(
            "- Load average at start (1, 5, 15 min): \(MachineInfo.loadAverage()) — other work on the machine skews the numbers"
        )
        lines.append("- Swift: \(machine.swiftVersion); release build (`swift run -c release`)")
        lines.append(
            "- Strata: git \(machine.strataRevision); LMDB: \(MachineInfo.lmdbVersion); SQLite: \(MachineInfo.sqliteVersion) (system libsqlite3) through GRDB 7.10.0"
        )
        lines.append(
            "- Engines run: \(options.engines.joined(separator: ", ")); warm-up round: \(options.warmup ? "yes" : "no"); "
                + "runs per cell: \(options.repeats) (median shown, engines taking turns)")
        lines.append("")
        lines.append("Settings:")
        lines.append("")
        lines.append("- Strata: \(StrataEngine.settings).")
        if options.engines.contains(EncryptedStrataEngine.slug) {
            lines.append("- Strata encrypted: \(EncryptedStrataEngine.settings).")
        }
        lines.append("- LMDB: \(LMDBEngine.settings).")
        lines.append("- SQLite: \(SQLiteEngine.settings).")
        lines.append("")
        lines.append(
            """
            Keys are 16 bytes, values 100 bytes. Sequential keys are 128-bit big-endian counters; random keys come from \
            a fixed seed. Each engine gets fresh directories per N. Random gets, the scan and the durable commits run on \
            the database built by the random insert. Every workload is verified after timing (entry counts, every get \
            found with its own value, scan order, count, bytes and values), so a broken engine cannot post a time. \
            Each cell: total wall-clock time of the workload (commit included) and, in parentheses, time per operation; \
            the median of the runs, each on fresh databases. \
            Ratio = Strata time / other engine's time: below 1 means Strata is faster.
            """)
        return lines.joined(separator: "\n") + "\n"
    }

    static func table(size: Int, commits: Int, results: [String: EngineResult]) -> String {
        var lines: [String] = []
        lines.append("### N = \(group(size)) keys")
        lines.append("")
        // The encrypted column (and its ratio to plain Strata) only when it ran.
        let encrypted = results[EncryptedStrataEngine.slug] != nil
        let shown = columns.filter { encrypted || $0.slug != EncryptedStrataEngine.slug }
        if encrypted {
            lines.append(
                "| Workload | Strata | Strata encrypted | LMDB | SQLite | encrypted/plain | Strata/LMDB | Strata/SQLite |"
            )
            lines.append("|---|---:|---:|---:|---:|---:|---:|---:|")
        } else {
            lines.append("| Workload | Strata | LMDB | SQLite | Strata/LMDB | Strata/SQLite |")
            lines.append("|---|---:|---:|---:|---:|---:|")
        }
        for workload in Workload.allCases {
            let operations = workload.operations(size: size, commits: commits)
            var row = ["\(workload.title(size: size, commits: commits))"]
            for column in shown {
                guard let result = results[column.slug] else {
                    row.append("—")
                    continue
                }
                if let time = result.times[workload] {
                    row.append(cell(time, operations: operations))
                } else {
                    row.append(result.error == nil ? "—" : "failed")
                }
            }
            let strata = results[StrataEngine.slug]?.times[workload]
            if encrypted {
                if let strata, let time = results[EncryptedStrataEngine.slug]?.times[workload] {
                    row.append(String(format: "%.2f×", Runner.seconds(time) / Runner.seconds(strata)))
                } else {
                    row.append("—")
                }
            }
            for other in [LMDBEngine.slug, SQLiteEngine.slug] {
                if let strata, let time = results[other]?.times[workload] {
                    row.append(String(format: "%.2f×", Runner.seconds(strata) / Runner.seconds(time)))
                } else {
                    row.append("—")
                }
            }
            lines.append("| " + row.joined(separator: " | ") + " |")
        }
        if results.values.contains(where: { !$0.spread.isEmpty }) {
            lines.append("")
            lines.append("Run-to-run spread (fastest–slowest run, ms):")
            lines.append("")
            for workload in Workload.allCases {
                let parts = columns.compactMap { column -> String? in
                    guard let spread = results[column.slug]?.spread[workload] else { return nil }
                    return "\(column.name) \(milliseconds(spread.min))–\(milliseconds(spread.max))"
                }
                if !parts.isEmpty { lines.append("- \(workload.shortTitle): " + parts.joined(separator: ", ")) }
            }
        }
        let failures = columns.compactMap { column in
            results[column.slug]?.error.map { "- \(column.name) failed: \($0)" }
        }
        if !failures.isEmpty {
            lines.append("")
            lines.append(contentsOf: failures)
        }
        return lines.joined(separator: "\n") + "\n"
    }

    static func cell(_ time: Duration, operations: Int) -> String {
        let perOperation = Runner.seconds(time) * 1e9 / Double(max(1, operations))
        let ns = perOperation >= 100 ? group(Int(perOperation.rounded())) : String(format: "%.1f", perOperation)
        return "\(milliseconds(time)) ms (\(ns) ns/op)"
    }

    /// Milliseconds with three significant digits or more.
    static func milliseconds(_ time: Duration) -> String {
        let ms = Runner.seconds(time) * 1000
        return ms >= 100 ? String(format: "%.0f", ms) : String(format: ms >= 10 ? "%.1f" : "%.2f", ms)
    }
}

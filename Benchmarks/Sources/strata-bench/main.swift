import BenchSupport
import Foundation

let options: Options
do {
    options = try Options.parse(Array(CommandLine.arguments.dropFirst()))
} catch {
    if error.description == Options.usage {
        print(Options.usage)
        exit(0)
    }
    Runner.log(error.description)
    exit(2)
}

let base: String
do {
    let parent = options.directory ?? FileManager.default.temporaryDirectory.path
    base =
        (parent.hasSuffix("/") ? String(parent.dropLast()) : parent)
        + "/strata-bench-\(ProcessInfo.processInfo.processIdentifier)"
    try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
} catch {
    Runner.log("cannot create the database directory: \(error)")
    exit(1)
}

let command =
    ProcessInfo.processInfo.environment["STRATA_BENCH_COMMAND"]
    ?? CommandLine.arguments.joined(separator: " ")
let machine = MachineInfo.collect(databaseDirectory: base)
var report = Report.header(options: options, machine: machine, command: command, directory: base)
print(report)
fflush(nil)

func writeReport(_ report: String, to path: String?) {
    guard let path else { return }
    do {
        try report.write(toFile: path, atomically: true, encoding: .utf8)
    } catch {
        Runner.log("cannot write \(path): \(error)")
    }
}

if options.warmup {
    Runner.log("warm-up (N = 5,000, 20 commits; not reported)")
    let warmup = Dataset(size: 5_000, commits: 20)
    for slug in options.engines {
        _ = Runner.run(slug: slug, dataset: warmup, base: base + "/warmup", quiet: true)
    }
}

var results = ResultsFile(path: options.tsv, benchmark: "Storage engine (strata-bench)")
var failed = false
for size in options.sizes {
    Runner.log("N = \(group(size)): generating keys")
    let dataset = Dataset(size: size, commits: options.commits)
    var runs: [String: [EngineResult]] = [:]
    // Engines take turns within each repetition, so that slow drifts of the machine spread over all of them.
    for repetition in 1...options.repeats {
        for slug in options.engines {
            Runner.log("N = \(group(size)): \(slug), run \(repetition) of \(options.repeats)")
            let result = Runner.run(slug: slug, dataset: dataset, base: base)
            if result.error != nil { failed = true }
            runs[slug, default: []].append(result)
        }
    }
    let medians = runs.mapValues(EngineResult.median)
    let table = Report.table(size: size, commits: options.commits, results: medians)
    for column in Report.columns {
        for workload in Workload.allCases {
            guard let time = medians[column.slug]?.times[workload] else { continue }
            results.add(
                workload.shortTitle, size: size, engine: column.name, time: time,
                operations: workload.operations(size: size, commits: options.commits), unit: workload.unit)
        }
    }
    print(table)
    fflush(nil)
    report += "\n" + table
    writeReport(report, to: options.output)
}
let footer = "Load average at the end (1, 5, 15 min): \(MachineInfo.loadAverage())\n"
print(footer)
report += "\n" + footer
writeReport(report, to: options.output)
if let output = options.output { Runner.log("report written to \(output)") }
try? FileManager.default.removeItem(atPath: base)
exit(failed ? 1 : 0)

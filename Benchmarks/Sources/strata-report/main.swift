import BenchSupport
import Foundation

// Puts the benchmarks' outputs together into one Markdown report: a summary of the run, each benchmark's own
// Markdown (machine facts, settings, tables with ratios), and "How cost grows with size", computed from the
// tab-separated results the benchmarks wrote with --tsv. run.sh writes its inputs into one directory:
//
//   run.tsv     key<TAB>value lines: command, started and finished (Unix seconds), sizes (comma-separated),
//               settings (the rest of the settings, one line of text), raw (the directory, as shown)
//   parts.tsv   one line per benchmark run, in report order: id<TAB>command<TAB>exit status
//   ID.md       that run's standard output (Markdown); ID.tsv its results; ID.log its standard error
//
// Usage: strata-report --raw DIRECTORY --output PATH
// Exit status: 0 when every benchmark exited 0 and no output reports a MISMATCH, FAILURE or failed cell; 1
// otherwise; 2 for bad usage or unreadable inputs.

struct Part {
    var id: String
    var command: String
    var status: Int
    var markdown: String
    var log: String

    /// The markers the benchmarks print for a wrong answer or a failed check.
    var failureMarkers: [String] {
        var found: [String] = []
        for marker in ["**MISMATCH**", "**FAILURE**", "| failed |", "FAILED"] where markdown.contains(marker) {
            found.append(marker.trimmingCharacters(in: CharacterSet(charactersIn: "*| ")))
        }
        return found
    }

    var failed: Bool { status != 0 || !failureMarkers.isEmpty }
}

func fail(_ message: String) -> Never {
    log("strata-report: \(message)\nusage: strata-report --raw DIRECTORY --output PATH")
    exit(2)
}

func read(_ path: String) -> String? { try? String(contentsOfFile: path, encoding: .utf8) }

var raw: String?
var output: String?
var arguments = CommandLine.arguments.dropFirst().makeIterator()
while let argument = arguments.next() {
    switch argument {
    case "--raw": raw = arguments.next()
    case "--output": output = arguments.next()
    case "--help", "-h":
        print("usage: strata-report --raw DIRECTORY --output PATH")
        exit(0)
    default: fail("unknown argument '\(argument)'")
    }
}
guard let raw, let output else { fail("--raw and --output are required") }
guard let partList = read(raw + "/parts.tsv") else { fail("cannot read \(raw)/parts.tsv") }

var run: [String: String] = [:]
for line in (read(raw + "/run.tsv") ?? "").split(separator: "\n") {
    let fields = line.split(separator: "\t", maxSplits: 1, omittingEmptySubsequences: false)
    if fields.count == 2 { run[String(fields[0])] = String(fields[1]) }
}

var parts: [Part] = []
var measurements: [Measurement] = []
for line in partList.split(separator: "\n") {
    let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
    guard fields.count == 3, let status = Int(fields[2]) else { fail("bad line in parts.tsv: \(line)") }
    let id = fields[0]
    parts.append(
        Part(
            id: id, command: fields[1], status: status, markdown: read("\(raw)/\(id).md") ?? "",
            log: read("\(raw)/\(id).log") ?? ""))
    for line in (read("\(raw)/\(id).tsv") ?? "").split(separator: "\n") {
        if let measurement = Measurement(line: line) { measurements.append(measurement) }
    }
}

/// "1 h 02 min", "12 min 05 s", "48 s".
func elapsed(_ seconds: Int) -> String {
    if seconds >= 3600 { return String(format: "%d h %02d min", seconds / 3600, seconds % 3600 / 60) }
    if seconds >= 60 { return String(format: "%d min %02d s", seconds / 60, seconds % 60) }
    return "\(seconds) s"
}

func date(_ unix: String?) -> String {
    guard let unix, let seconds = Double(unix) else { return "unknown" }
    return Date(timeIntervalSince1970: seconds).formatted(.iso8601)
}

let failedParts = parts.filter(\.failed)
var lines = ["# Strata benchmark report", ""]
lines.append("- Command: `\(run["command"] ?? "bash Benchmarks/run.sh")`")
var timing = "- Started \(date(run["started"])), finished \(date(run["finished"]))"
if let started = Int(run["started"] ?? ""), let finished = Int(run["finished"] ?? "") {
    timing += " (\(elapsed(finished - started)) wall clock, builds excluded)"
}
lines.append(timing)
let sizes = (run["sizes"] ?? "").split(separator: ",").compactMap { Int($0) }
var settings = sizes.isEmpty ? "" : "Sizes (N): " + sizes.map(Growth.label).joined(separator: ", ")
if let more = run["settings"] { settings += (settings.isEmpty ? "" : "; ") + more }
if !settings.isEmpty { lines.append("- \(settings)") }
if failedParts.isEmpty {
    lines.append("- Checks: every benchmark exited normally; no mismatch or failed verification.")
} else {
    let names = failedParts.map { part in
        let markers = part.failureMarkers
        return "`\(part.command)` (exit status \(part.status)"
            + (markers.isEmpty ? "" : "; " + markers.joined(separator: ", ")) + ")"
    }
    lines.append("- **Checks FAILED**: " + names.joined(separator: "; ") + ". Their times are not to be trusted.")
}
if let rawShown = run["raw"] {
    lines.append(
        "- Raw outputs (each run's Markdown, tab-separated results and progress log): `\(rawShown)`")
}
lines.append("")
lines.append("Sections:")
lines.append("")
for part in parts {
    let title =
        part.markdown.split(separator: "\n").first { $0.hasPrefix("## ") }.map { String($0.dropFirst(3)) }
        ?? part.id
    lines.append("- \(title) — `\(part.command)`")
}
lines.append("- How cost grows with size")
lines.append("")
var guide = "Every ratio is Strata's time divided by the other engine's: **below 1 means Strata is faster**."
if parts.contains(where: { $0.id == "storage" }) {
    guide += " The machine facts and the build are at the top of the storage section; each section states its own "
    guide += "data and settings."
}
lines.append(guide)
lines.append("")
var report = lines.joined(separator: "\n") + "\n"

for part in parts {
    var markdown = part.markdown.trimmingCharacters(in: .whitespacesAndNewlines)
    if markdown.isEmpty { markdown = "## `\(part.command)`\n\nNo output." }
    report += "\n" + markdown + "\n"
    if part.failed {
        report += "\n**FAILED**: `\(part.command)` exited with status \(part.status)"
        report += part.failureMarkers.isEmpty ? ".\n" : " (\(part.failureMarkers.joined(separator: ", "))).\n"
        let tail = part.log.split(separator: "\n").suffix(15).joined(separator: "\n")
        if !tail.isEmpty { report += "Last lines of its log:\n\n```\n\(tail)\n```\n" }
    }
}
report += "\n" + Growth.section(measurements)

do {
    try report.write(toFile: output, atomically: true, encoding: .utf8)
} catch {
    fail("cannot write \(output): \(error)")
}
exit(failedParts.isEmpty ? 0 : 1)

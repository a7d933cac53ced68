import BenchSupport
import Foundation

/// One line of a results file (see `ResultsFile`): a cell's time for a number of operations.
struct Measurement {
    var benchmark: String
    var workload: String
    var size: Int
    var engine: String
    var seconds: Double
    var operations: Int
    var unit: String

    /// Seconds per operation.
    var perOperation: Double { seconds / Double(operations) }

    /// The measurement on `line`, or nil for the header, a blank line or a malformed line.
    init?(line: Substring) {
        let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
        guard fields.count == 7, fields[0] != "benchmark", let size = Int(fields[2]), let seconds = Double(fields[4]),
            let operations = Int(fields[5]), operations > 0, seconds.isFinite, seconds >= 0
        else { return nil }
        benchmark = fields[0]
        workload = fields[1]
        self.size = size
        engine = fields[3]
        self.seconds = seconds
        self.operations = operations
        unit = fields[6]
    }
}

/// The "How cost grows with size" section: for every benchmark, workload and engine, the time per operation at each
/// size, the growth factor from one size to the next and the exponent of a power law through the smallest and the
/// largest size.
enum Growth {
    /// An exponent difference below this is not called out in the summary (noise of a few runs on a shared machine).
    static let notableExponentGap = 0.15
    /// Strata's exponent must exceed this too: a negative exponent is a fixed cost spread over more operations,
    /// and which engine amortises more of one says nothing about how its cost grows.
    static let notableExponent = 0.1

    static func section(_ measurements: [Measurement]) -> String {
        var lines = ["## How cost grows with size", ""]
        lines.append(
            """
            Derived from the machine-readable results the benchmarks wrote next to their tables. For every workload \
            and engine: the **time per operation** at each size (the cell's median time divided by its operations: \
            one put, get, object, query, read…, named in the workload column); the **growth factor** from one size \
            to the next (time per operation at the larger size / at the smaller one: 1.00× means an operation costs \
            the same however large the data; sizes ten times apart give about 1.2–1.3× for a cost growing as log N \
            and 10× for one growing as N); and the **exponent** k of the power law through the smallest and the \
            largest size, time per operation ∝ N^k (0: constant, 1: proportional to N; a workload of N operations \
            then takes time ∝ N^(1+k)). Some workloads do a fixed amount of work whatever N (1,000 durable commits, \
            10 queries, the 100,000 rows of the sorts, the full-text rows over a fixed set of texts, a List edit): \
            their row shows how the size of the rest of the data affects them. Small sizes take milliseconds on a \
            shared two-core machine: growth factors within about ±30 % of each other are noise.
            """)
        lines.append("")
        var benchmarks: [String] = []
        for measurement in measurements where !benchmarks.contains(measurement.benchmark) {
            benchmarks.append(measurement.benchmark)
        }
        if benchmarks.isEmpty {
            lines.append("No machine-readable results were found: every benchmark failed before its first table.")
            return lines.joined(separator: "\n") + "\n"
        }
        for benchmark in benchmarks {
            lines.append(contentsOf: table(benchmark, measurements.filter { $0.benchmark == benchmark }))
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The table of one benchmark, and a list of the workloads where Strata's cost grows faster than another
    /// engine's.
    static func table(_ benchmark: String, _ measurements: [Measurement]) -> [String] {
        let sizes = Array(Set(measurements.map(\.size))).sorted()
        var workloads: [String] = []
        var engines: [String] = []
        // The last measurement of each (workload, engine, size) wins.
        var cells: [String: [String: [Int: Measurement]]] = [:]
        for measurement in measurements {
            if !workloads.contains(measurement.workload) { workloads.append(measurement.workload) }
            if !engines.contains(measurement.engine) { engines.append(measurement.engine) }
            cells[measurement.workload, default: [:]][measurement.engine, default: [:]][measurement.size] = measurement
        }
        var lines = ["### \(benchmark)", ""]
        var header = ["Workload", "Engine"] + sizes.map(label)
        header += zip(sizes, sizes.dropFirst()).map { "\(label($0))→\(label($1))" }
        if sizes.count > 2 { header.append("\(label(sizes[0]))→\(label(sizes[sizes.count - 1]))") }
        header.append("Exponent k")
        lines.append("| " + header.joined(separator: " | ") + " |")
        lines.append("|---|---|" + String(repeating: "---:|", count: header.count - 2))
        var gaps: [String] = []
        for workload in workloads {
            guard let byEngine = cells[workload] else { continue }
            var first = true
            var exponents: [String: Double] = [:]
            for engine in engines {
                guard let bySize = byEngine[engine] else { continue }
                let units = Set(bySize.values.map(\.unit)).sorted().joined(separator: ", ")
                var row = [first ? "\(workload) (per \(units))" : "", engine]
                first = false
                row += sizes.map { size in bySize[size].map { short($0.perOperation) } ?? "—" }
                var pairs = Array(zip(sizes, sizes.dropFirst()))
                if sizes.count > 2 { pairs.append((sizes[0], sizes[sizes.count - 1])) }
                for (small, large) in pairs {
                    if let small = bySize[small], let large = bySize[large], small.perOperation > 0 {
                        row.append(String(format: "%.2f×", large.perOperation / small.perOperation))
                    } else {
                        row.append("—")
                    }
                }
                let measured = sizes.compactMap { bySize[$0] }
                if let smallest = measured.first, let largest = measured.last, largest.size > smallest.size,
                    smallest.perOperation > 0, largest.perOperation > 0
                {
                    let exponent =
                        log(largest.perOperation / smallest.perOperation)
                        / log(Double(largest.size) / Double(smallest.size))
                    exponents[engine] = exponent
                    row.append(String(format: "%.2f", exponent))
                } else {
                    row.append("—")
                }
                lines.append("| " + row.joined(separator: " | ") + " |")
            }
            if let strata = exponents["Strata"], strata > notableExponent {
                for (engine, other) in exponents.sorted(by: { $0.key < $1.key })
                where !engine.hasPrefix("Strata") && strata - other > notableExponentGap {
                    gaps.append(
                        "\(workload): Strata k = \(String(format: "%.2f", strata)), \(engine) k = "
                            + String(format: "%.2f", other))
                }
            }
        }
        lines.append("")
        if sizes.count > 1 {
            let rule =
                "Strata's exponent above \(String(format: "%.2f", notableExponent)) and more than "
                + "\(String(format: "%.2f", notableExponentGap)) above the other engine's"
            if gaps.isEmpty {
                lines.append(
                    "Strata's time per operation grows no faster than the other engines' on any workload here "
                        + "(none with \(rule)).")
            } else {
                lines.append("Where Strata's time per operation grows faster than another engine's (\(rule)):")
                lines.append("")
                lines.append(contentsOf: gaps.map { "- " + $0 })
            }
            lines.append("")
        }
        return lines
    }

    /// "10k", "100k", "1M", "1,500".
    static func label(_ size: Int) -> String {
        if size >= 1_000_000 && size % 1_000_000 == 0 { return "\(size / 1_000_000)M" }
        if size >= 1_000 && size % 1_000 == 0 { return "\(size / 1_000)k" }
        return group(size)
    }

    /// A time in seconds with three significant digits: "48.2 ns", "1.21 µs", "35.4 ms", "2.10 s".
    static func short(_ seconds: Double) -> String {
        let (value, unit): (Double, String) =
            // Bounds just below the next unit, so that 999.7 ns shows as "1.00 µs", not "1000 ns".
            switch seconds {
            case ..<999.5e-9: (seconds * 1e9, "ns")
            case ..<999.5e-6: (seconds * 1e6, "µs")
            case ..<0.9995: (seconds * 1e3, "ms")
            default: (seconds, "s")
            }
        let format = value >= 100 ? "%.0f" : value >= 10 ? "%.1f" : "%.2f"
        return String(format: format, value) + " " + unit
    }
}

import CLMDB
import Foundation
import GRDBSQLite

/// Facts about the machine and the build, printed above the results.
struct MachineInfo {
    var processors: String
    var cpuModel: String
    var memory: String
    var kernel: String
    var system: String
    var swiftVersion: String
    var strataRevision: String
    var filesystem: String

    static func collect(databaseDirectory: String) -> MachineInfo {
        let cpuinfo = readFile("/proc/cpuinfo")
        let meminfo = readFile("/proc/meminfo")
        let nproc = run(["nproc"]) ?? String(ProcessInfo.processInfo.activeProcessorCount)
        let swift = run(["swift", "--version"])?.split(separator: "\n").first.map(String.init)
        let root = packageRoot()
        var revision = run(["git", "-C", root, "rev-parse", "--short=12", "HEAD"]) ?? "unknown"
        if let status = run(["git", "-C", root, "status", "--porcelain", "--", "Sources/StrataStorage"]),
            !status.isEmpty
        {
            revision += " (StrataStorage has uncommitted changes)"
        }
        return MachineInfo(
            processors: nproc,
            cpuModel: field("model name", in: cpuinfo) ?? "unknown",
            memory: field("MemTotal", in: meminfo).map(formatMemory) ?? "unknown",
            kernel: readFile("/proc/sys/kernel/osrelease")?.trimmingCharacters(in: .whitespacesAndNewlines)
                ?? "unknown",
            system: osRelease() ?? "unknown",
            swiftVersion: swift ?? "unknown",
            strataRevision: revision,
            filesystem: filesystem(of: databaseDirectory))
    }

    /// The root of the Strata repository (the parent of the Benchmarks package), from this file's path.
    static func packageRoot() -> String {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<4 { url.deleteLastPathComponent() }
        return url.path
    }

    private static func readFile(_ path: String) -> String? { try? String(contentsOfFile: path, encoding: .utf8) }

    private static func field(_ name: String, in text: String?) -> String? {
        guard let text else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix(name) {
            if let colon = line.firstIndex(of: ":") {
                return line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
        }
        return nil
    }

    private static func formatMemory(_ value: String) -> String {
        guard let kib = Double(value.split(separator: " ").first ?? "") else { return value }
        return String(format: "%.1f GiB", kib / 1_048_576)
    }

    private static func osRelease() -> String? {
        guard let text = readFile("/etc/os-release") else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix("PRETTY_NAME=") {
            return line.dropFirst("PRETTY_NAME=".count).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
        }
        return nil
    }

    /// File system type of the mount holding `path` (longest matching mount point in /proc/mounts).
    private static func filesystem(of path: String) -> String {
        guard let mounts = readFile("/proc/mounts") else { return "unknown" }
        let resolved = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
        var best: (mount: String, type: String, device: String)?
        for line in mounts.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count >= 3 else { continue }
            let mount = String(fields[1])
            let matches = mount == "/" || resolved == mount || resolved.hasPrefix(mount + "/")
            if matches, mount.count >= (best?.mount.count ?? -1) {
                best = (mount, String(fields[2]), String(fields[0]))
            }
        }
        guard let best else { return "unknown" }
        return "\(best.type) (\(best.device) mounted on \(best.mount))"
    }

    /// Output of a command found on PATH, trimmed; nil when it fails.
    static func run(_ arguments: [String]) -> String? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            return nil
        }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { return nil }
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The 1-, 5- and 15-minute load averages (other work on the machine skews every number).
    static func loadAverage() -> String {
        guard let text = readFile("/proc/loadavg") else { return "unknown" }
        return text.split(separator: " ").prefix(3).joined(separator: " ")
    }

    static var lmdbVersion: String { LMDBEngine.version }
    static var sqliteVersion: String { String(cString: sqlite3_libversion()) }
}

import BenchSupport
import Foundation
import GRDB
import Strata

#if canImport(Glibc)
    import Glibc
#endif

// Peak memory of one write transaction of N objects, each engine in a child process of its own (this executable
// again, with `--peak-memory-child`), so that the peak is that transaction's and not an earlier case's. The child
// opens a fresh database, then measures its resident set just before the transaction and its high-water mark after
// the commit (on Linux the mark is first reset to the current resident set through /proc/self/clear_refs), and the
// growth of the database's files (SQLite's WAL checkpointed into the database first).

/// What a child reports: resident bytes before the transaction, the resident peak during it, the database files'
/// bytes before and after, the transaction's time, and whether the peak could be reset before the transaction.
struct PeakMemory {
    var residentBefore: Int
    var residentPeak: Int
    var filesBefore: Int
    var filesAfter: Int
    var seconds: Double
    /// False where the high-water mark could not be reset: the peak then also covers opening the database.
    var peakReset: Bool

    /// How far the resident set rose above where it stood before the transaction.
    var peakGrowth: Int { max(0, residentPeak - residentBefore) }
    var fileGrowth: Int { max(0, filesAfter - filesBefore) }

    /// The line a child prints on stdout, and parses back in the parent.
    var line: String {
        "\(residentBefore) \(residentPeak) \(filesBefore) \(filesAfter) \(seconds) \(peakReset ? 1 : 0)"
    }

    init(residentBefore: Int, residentPeak: Int, filesBefore: Int, filesAfter: Int, seconds: Double, peakReset: Bool) {
        self.residentBefore = residentBefore
        self.residentPeak = residentPeak
        self.filesBefore = filesBefore
        self.filesAfter = filesAfter
        self.seconds = seconds
        self.peakReset = peakReset
    }

    init?(line: String) {
        let fields = line.split(separator: " ")
        guard fields.count == 6, let before = Int(fields[0]), let peak = Int(fields[1]),
            let filesBefore = Int(fields[2]),
            let filesAfter = Int(fields[3]), let seconds = Double(fields[4])
        else { return nil }
        self.init(
            residentBefore: before, residentPeak: peak, filesBefore: filesBefore, filesAfter: filesAfter,
            seconds: seconds, peakReset: fields[5] == "1")
    }
}

enum ResidentMemory {
    /// A field of /proc/self/status in bytes ("VmRSS", "VmHWM"), nil where there is no such file (macOS).
    static func status(_ field: String) -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix(field + ":") {
            // "VmRSS:\t   12345 kB"
            let kibibytes = line.dropFirst(field.count + 1).split(whereSeparator: \.isWhitespace).first.flatMap {
                Int($0)
            }
            return kibibytes.map { $0 * 1024 }
        }
        return nil
    }

    /// The process's peak resident set so far, from getrusage (kilobytes on Linux, bytes on macOS).
    static func maximumResident() -> Int {
        var usage = rusage()
        #if os(Linux)
            getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
            return usage.ru_maxrss * 1024
        #else
            getrusage(RUSAGE_SELF, &usage)
            return usage.ru_maxrss
        #endif
    }

    /// The resident set now (Linux), or the peak so far where the current size cannot be read.
    static func current() -> Int { status("VmRSS") ?? maximumResident() }

    /// Resets the high-water mark to the current resident set (Linux ≥ 4.0); false where that is not possible, in
    /// which case the peak includes whatever the process reached before (a fresh child: opening the database).
    static func resetPeak() -> Bool {
        guard let handle = FileHandle(forWritingAtPath: "/proc/self/clear_refs") else { return false }
        defer { try? handle.close() }
        return (try? handle.write(contentsOf: Data("5".utf8))) != nil
    }

    /// The peak since the last reset (Linux), or since the process started.
    static func peak() -> Int { status("VmHWM") ?? maximumResident() }
}

/// The bytes of every file in `directory` (a database and its companion files).
func filesBytes(_ directory: URL) -> Int {
    let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
    return names.reduce(0) { total, name in
        let attributes = try? FileManager.default.attributesOfItem(atPath: directory.appendingPathComponent(name).path)
        return total + ((attributes?[.size] as? NSNumber)?.intValue ?? 0)
    }
}

/// The child's side: `arguments` are `ENGINE SIZE DIRECTORY` (ENGINE `strata` or `sqlite`). Prints one
/// `PeakMemory` line on stdout; returns the exit status.
func peakMemoryChild(_ arguments: [String]) -> Int32 {
    guard arguments.count == 3, let size = Int(arguments[1]), size > 0 else {
        log("--peak-memory-child needs ENGINE SIZE DIRECTORY")
        return 2
    }
    let directory = URL(fileURLWithPath: arguments[2])
    do {
        let measured: PeakMemory
        switch arguments[0] {
        case "strata": measured = try strataPeak(size: size, directory: directory)
        case "sqlite": measured = try sqlitePeak(size: size, directory: directory)
        default:
            log("unknown engine '\(arguments[0])'")
            return 2
        }
        print(measured.line)
        return 0
    } catch {
        log("peak memory child failed: \(error)")
        return 1
    }
}

/// Measures `transaction`: the resident set and the files in `directory` before it, the resident peak right after it,
/// and the files again once `settle` has run (SQLite: the WAL checkpointed into the database).
private func measurePeak(directory: URL, _ transaction: () throws -> Void, settle: () throws -> Void) throws
    -> PeakMemory
{
    let filesBefore = filesBytes(directory)
    let residentBefore = ResidentMemory.current()
    let peakReset = ResidentMemory.resetPeak()
    let elapsed = try time(transaction)
    let residentPeak = ResidentMemory.peak()
    try settle()
    return PeakMemory(
        residentBefore: residentBefore, residentPeak: residentPeak, filesBefore: filesBefore,
        filesAfter: filesBytes(directory), seconds: seconds(elapsed), peakReset: peakReset)
}

private func strataPeak(size: Int, directory: URL) throws -> PeakMemory {
    let realm = try Realm(
        configuration: Realm.Configuration(
            fileURL: directory.appendingPathComponent("peak.strata"), objectTypes: [Item.self]))
    let measured = try measurePeak(directory: directory) {
        try realm.write {
            for index in 0..<size {
                realm.add(Item.numbered(index))
            }
        }
    } settle: {
    }
    try check(realm.objects(Item.self).count == size, "peak memory: strata count")
    return measured
}

private func sqlitePeak(size: Int, directory: URL) throws -> PeakMemory {
    let queue = try WritePaths.openSQLite(directory.appendingPathComponent("peak.sqlite").path)
    try queue.write { db in try WritePaths.createItemTable(db, "item") }
    try queue.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
    let measured = try measurePeak(directory: directory) {
        try queue.write { db in try WritePaths.insertItems(db, "item", size: size) }
    } settle: {
        // The rows in the database file itself, not in the WAL (which would count them twice after a checkpoint).
        try queue.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
    }
    try check(try queue.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM item") } == size, "peak: sqlite count")
    return measured
}

/// The parent's side: runs `engine`'s transaction of `size` objects in a child process in `directory`.
func measurePeakMemory(engine: String, size: Int, directory: URL) throws -> PeakMemory {
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let process = Process()
    process.executableURL = Bundle.main.executableURL ?? URL(fileURLWithPath: CommandLine.arguments[0])
    process.arguments = ["--peak-memory-child", engine, String(size), directory.path]
    let output = Pipe()
    process.standardOutput = output
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    guard process.terminationStatus == 0, let measured = PeakMemory(line: text) else {
        throw Failure(
            description: "peak memory child (\(engine), \(size)) exited with \(process.terminationStatus): \(text)")
    }
    return measured
}

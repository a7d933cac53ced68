import BenchSupport
import Foundation
import GRDB
import Strata

// Object-layer benchmark: the same five workloads on Strata objects and on GRDB records, in one run, and the write
// paths against SQLite's prepared statements (WritePaths.swift).
// Usage: strata-object-bench [--sizes 10000,100000,1000000] [--repeat 3] [--each-size] [--tsv PATH] [--dir PATH]

/// The model: an Int primary key, a String, an Int, a Double and a Date.
final class Item: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var name = ""
    @Persisted var count = 0
    @Persisted var score = 0.0
    @Persisted var date = Date(timeIntervalSinceReferenceDate: 0)
}

/// The same record for GRDB.
struct ItemRecord: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "item"
    var id: Int
    var name: String
    var count: Int
    var score: Double
    var date: Date
}

enum Workload: String, CaseIterable {
    case insert = "Insert, 1 write"
    case lookup = "Primary-key lookups"
    case iterate = "Iterate, read 2 properties"
    case update = "Update 1 property, 1 write"
    case queryRange = "Query: count of an Int range (unindexed), x10"
    case queryPrefix = "Query: count of String BEGINSWITH (unindexed), x10"
    case queryIn = "Query: primary key IN 100 values, x10"
    case querySort = "Query: all sorted by a Double, read ids"
    case delete = "Delete all, 1 write"

    /// Operations in one timed run, for the machine-readable results: objects, queries or sorts.
    func operations(size: Int) -> Int {
        switch self {
        case .queryRange, .queryPrefix, .queryIn: 10
        case .querySort: 1
        default: size
        }
    }

    /// What one operation is, for the machine-readable results.
    var unit: String {
        switch self {
        case .queryRange, .queryPrefix, .queryIn: "query"
        case .querySort: "sort"
        default: "object"
        }
    }
}

struct Options {
    var sizes = [10_000, 100_000]
    var repeats = 3
    /// Run the collection and projection workloads at every size of `sizes` instead of once at their own sizes.
    var eachSize = false
    var tsv: String?
    var directory: String?
    /// Only the property-read comparison and the confinement table (an actor, the main actor, a task).
    var confinementOnly = false
    /// Only the write-path tables (and the peak memory, unless `peakMemory` is off).
    var writesOnly = false
    /// Measure the peak memory of one write transaction of N objects at every size (a child process per engine).
    var peakMemory = true
    /// Also run the object workloads on an encrypted file, taking turns with the plain one (issue 26).
    var encrypted = false

    static let usage = """
        usage: strata-object-bench [--sizes 10000,100000] [--repeat 3] [--each-size] [--tsv PATH] [--dir PATH]
                                   [--confinement-only] [--writes-only] [--no-peak-memory] [--encrypted]

          --sizes      object counts, comma-separated (default 10000,100000)
          --repeat     runs of the object workloads per size, each on fresh files; the table shows the median
                       (default 3)
          --each-size  also run the collection workloads (a List and a Map of N elements) and the class projections
                       (iterate N objects) at every size; by default they run once, at STRATA_LIST_SIZE (1,000,000),
                       STRATA_MAP_SIZE (100,000) and STRATA_PROJECTION_SIZE (100,000)
          --tsv        also write every cell as a tab-separated line to PATH (for strata-report)
          --dir        where to create the temporary databases (default: the system temporary directory)
          --confinement-only
                       only the property-read comparison and the confinement table: reads and small asyncWrites on
                       an actor-, a main-actor- and a task-confined Realm, --repeat rounds, and one executor hop
          --writes-only
                       only the write-path tables at every size: insert, update, upsert and scattered deletes against
                       SQLite's prepared statements, and the peak memory of one write of N objects
          --no-peak-memory
                       skip the peak memory of one write of N objects (two child processes per size)
          --encrypted  also run the object workloads on an encrypted file (a 64-byte encryptionKey), taking turns
                       with the plain file in every run, and print them side by side with the encrypted/plain ratio
        """

    init(_ arguments: [String]) {
        var iterator = arguments.makeIterator()
        func value(_ flag: String) -> String {
            guard let value = iterator.next() else { Options.fail("\(flag) needs a value") }
            return value
        }
        while let argument = iterator.next() {
            switch argument {
            case "--sizes":
                let list = value(argument).split(separator: ",").map { Int($0.replacingOccurrences(of: "_", with: "")) }
                guard !list.isEmpty, list.allSatisfy({ ($0 ?? 0) >= 100 }) else {
                    Options.fail("--sizes needs a comma-separated list of numbers of at least 100")
                }
                sizes = list.compactMap { $0 }
            case "--repeat":
                guard let number = Int(value(argument)), number > 0 else {
                    Options.fail("--repeat needs a positive number")
                }
                repeats = number
            case "--each-size": eachSize = true
            case "--confinement-only": confinementOnly = true
            case "--writes-only": writesOnly = true
            case "--no-peak-memory": peakMemory = false
            case "--encrypted": encrypted = true
            case "--tsv": tsv = value(argument)
            case "--dir": directory = value(argument)
            case "--help", "-h":
                print(Options.usage)
                exit(0)
            default: Options.fail("unknown argument '\(argument)'")
            }
        }
    }

    static func fail(_ message: String) -> Never { failUsage(message, usage: usage) }
}

let base = Date(timeIntervalSince1970: 1_700_000_000)

/// How many of "item 0" … "item N-1" start with "item 9".
func expectedPrefixMatches(_ size: Int) -> Int { (0..<size).filter { String($0).hasPrefix("9") }.count }

/// The 64-byte key of the encrypted runs (`--encrypted`).
let benchmarkEncryptionKey = Data((0..<64).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })

/// Strata: a file in `directory`, durable commits; encrypted with `encryptionKey` when one is given.
func runStrata(size: Int, order: [Int], directory: URL, encryptionKey: Data? = nil) throws -> [Workload: Duration] {
    var configuration = Realm.Configuration(
        fileURL: directory.appendingPathComponent(encryptionKey == nil ? "bench.strata" : "encrypted.strata"),
        objectTypes: [Item.self])
    configuration.encryptionKey = encryptionKey
    let realm = try Realm(configuration: configuration)
    var times: [Workload: Duration] = [:]
    times[.insert] = try time {
        try realm.write {
            for index in 0..<size {
                let item = Item()
                item.id = index
                item.name = "item \(index)"
                item.count = index
                item.score = Double(index) * 0.5
                item.date = base + Double(index)
                realm.add(item)
            }
        }
    }
    try check(realm.objects(Item.self).count == size, "strata insert count")
    var found = 0
    times[.lookup] = time {
        for index in order where realm.object(ofType: Item.self, forPrimaryKey: index) != nil { found += 1 }
    }
    try check(found == size, "strata lookups")
    var sum = 0
    var scores = 0.0
    times[.iterate] = time {
        for item in realm.objects(Item.self) {
            sum &+= item.count
            scores += item.score
        }
    }
    try check(sum == size * (size - 1) / 2, "strata iterate sum")
    times[.update] = try time {
        try realm.write {
            for item in realm.objects(Item.self) { item.count += 1 }
        }
    }
    try check(realm.object(ofType: Item.self, forPrimaryKey: size - 1)?.count == size, "strata update")
    var matches = 0
    times[.queryRange] = time {
        for round in 0..<10 {
            matches = realm.objects(Item.self).filter("count >= $0 AND count < $1", size / 4 + round, size / 2).count
        }
    }
    try check(matches == size / 2 - size / 4 - 9, "strata range")
    times[.queryPrefix] = time {
        for _ in 0..<10 { matches = realm.objects(Item.self).filter("name BEGINSWITH 'item 9'").count }
    }
    try check(matches == expectedPrefixMatches(size), "strata prefix")
    let keys = (0..<100).map { $0 * (size / 100) }
    times[.queryIn] = time {
        for _ in 0..<10 { matches = realm.objects(Item.self).filter("id IN $0", keys).count }
    }
    try check(matches == 100, "strata in")
    var ids = 0
    times[.querySort] = time {
        for item in realm.objects(Item.self).sorted(byKeyPath: "score", ascending: false) { ids &+= item.id }
    }
    try check(ids == size * (size - 1) / 2, "strata sort")
    times[.delete] = try time {
        try realm.write { realm.delete(realm.objects(Item.self)) }
    }
    try check(realm.objects(Item.self).isEmpty, "strata delete")
    return times
}

/// GRDB: records in a WAL database with synchronous=FULL, every workload in one transaction.
func runGRDB(size: Int, order: [Int], directory: URL) throws -> [Workload: Duration] {
    var config = Configuration()
    config.journalMode = .wal
    let queue = try DatabaseQueue(path: directory.appendingPathComponent("bench.sqlite").path, configuration: config)
    try queue.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = FULL") }
    try queue.write { db in
        try db.create(table: "item") { table in
            table.primaryKey("id", .integer)
            table.column("name", .text).notNull()
            table.column("count", .integer).notNull()
            table.column("score", .double).notNull()
            table.column("date", .datetime).notNull()
        }
    }
    var times: [Workload: Duration] = [:]
    times[.insert] = try time {
        try queue.write { db in
            for index in 0..<size {
                try ItemRecord(
                    id: index, name: "item \(index)", count: index, score: Double(index) * 0.5,
                    date: base + Double(index)
                ).insert(db)
            }
        }
    }
    try check(try queue.read { try ItemRecord.fetchCount($0) } == size, "grdb insert count")
    var found = 0
    times[.lookup] = try time {
        try queue.read { db in
            for index in order where try ItemRecord.fetchOne(db, key: index) != nil { found += 1 }
        }
    }
    try check(found == size, "grdb lookups")
    var sum = 0
    var scores = 0.0
    times[.iterate] = try time {
        try queue.read { db in
            let cursor = try ItemRecord.fetchCursor(db)
            while let item = try cursor.next() {
                sum &+= item.count
                scores += item.score
            }
        }
    }
    try check(sum == size * (size - 1) / 2, "grdb iterate sum")
    times[.update] = try time {
        try queue.write { db in
            let cursor = try ItemRecord.fetchCursor(db)
            var items: [ItemRecord] = []
            while let item = try cursor.next() { items.append(item) }
            for var item in items {
                item.count += 1
                try item.update(db)
            }
        }
    }
    try check(try queue.read { try ItemRecord.fetchOne($0, key: size - 1)?.count } == size, "grdb update")
    var matches = 0
    times[.queryRange] = try time {
        try queue.read { db in
            for round in 0..<10 {
                matches = try ItemRecord.filter(
                    sql: "count >= ? AND count < ?", arguments: [size / 4 + round, size / 2]
                )
                .fetchCount(db)
            }
        }
    }
    try check(matches == size / 2 - size / 4 - 9, "grdb range")
    times[.queryPrefix] = try time {
        try queue.read { db in
            for _ in 0..<10 { matches = try ItemRecord.filter(sql: "name GLOB 'item 9*'").fetchCount(db) }
        }
    }
    try check(matches == expectedPrefixMatches(size), "grdb prefix")
    let keys = (0..<100).map { $0 * (size / 100) }
    times[.queryIn] = try time {
        try queue.read { db in
            for _ in 0..<10 { matches = try ItemRecord.filter(keys: keys).fetchCount(db) }
        }
    }
    try check(matches == 100, "grdb in")
    var ids = 0
    times[.querySort] = try time {
        try queue.read { db in
            let cursor = try Int.fetchCursor(db, sql: "SELECT id FROM item ORDER BY score DESC")
            while let id = try cursor.next() { ids &+= id }
        }
    }
    try check(ids == size * (size - 1) / 2, "grdb sort")
    times[.delete] = try time {
        try queue.write { db in _ = try ItemRecord.deleteAll(db) }
    }
    try check(try queue.read { try ItemRecord.fetchCount($0) } == 0, "grdb delete")
    return times
}

/// A managed property read against a `Dictionary<Int, Int>` lookup, per operation.
func propertyReadComparison(size: Int, directory: URL) throws -> (property: Duration, dictionary: Duration) {
    let realm = try Realm(
        configuration: Realm.Configuration(
            fileURL: directory.appendingPathComponent("read.strata"), objectTypes: [Item.self]))
    try realm.write {
        for index in 0..<size { realm.add(Item(value: ["id": index, "count": index])) }
    }
    let objects = Array(realm.objects(Item.self).prefix(1000))
    var dictionary: [Int: Int] = [:]
    for index in 0..<size { dictionary[index] = index }
    let reads = 1_000_000
    var sum = 0
    let property = time {
        for round in 0..<reads { sum &+= objects[round % objects.count].count }
    }
    var total = 0
    let lookup = time {
        for round in 0..<reads { total &+= dictionary[(round &* 7919) % size] ?? 0 }
    }
    try check(sum > 0 && total > 0, "read comparison")
    return (property / reads, lookup / reads)
}

func median(_ runs: [[Workload: Duration]], _ workload: Workload) -> Duration {
    BenchSupport.median(runs.compactMap { $0[workload] })
}

// A child process measuring one engine's peak memory (PeakMemory.swift) does only that.
if CommandLine.arguments.dropFirst().first == "--peak-memory-child" {
    exit(peakMemoryChild(Array(CommandLine.arguments.dropFirst(2))))
}
let options = Options(Array(CommandLine.arguments.dropFirst()))
let root = (options.directory.map { URL(fileURLWithPath: $0) } ?? FileManager.default.temporaryDirectory)
    .appendingPathComponent("strata-object-bench-\(getpid())")
defer { try? FileManager.default.removeItem(at: root) }
var results = ResultsFile(path: options.tsv, benchmark: "Objects (strata-object-bench)")

/// Runs the collection workloads on a List of `listSize` and a Map of `mapSize` and prints their table.
@MainActor
func collectionsTable(listSize: Int, mapSize: Int, directory: URL, title: String) throws {
    log("collections: List of \(group(listSize)), Map of \(group(mapSize))")
    let collections = try runCollections(listSize: listSize, mapSize: mapSize, directory: directory)
    print("### \(title)\n")
    print("| Workload | Strata | GRDB | Strata/GRDB |")
    print("|---|---:|---:|---:|")
    for row in collections.rows {
        print(
            "| \(row.title) | \(format(row.strata)) (\(perOperation(row.strata, row.operations))) | \(format(row.grdb)) (\(perOperation(row.grdb, row.grdbOperations))) | \(String(format: "%.2f×", (row.strata / row.operations) / (row.grdb / row.grdbOperations))) |"
        )
        results.add(
            row.key, size: row.size, engine: "Strata", time: row.strata, operations: row.operations, unit: row.unit)
        results.add(
            row.key, size: row.size, engine: "GRDB", time: row.grdb, operations: row.grdbOperations, unit: row.unit)
    }
    print("")
}

/// Prints one row per workload: the medians of `first` and `second` with their time per object, and `ratio` of
/// the two; records the medians of `recorded` (engine name and runs) in the tab-separated results.
@MainActor
func workloadTable(
    size: Int, header: String, first: [[Workload: Duration]], second: [[Workload: Duration]],
    ratio: (_ first: Duration, _ second: Duration) -> Double, recorded: [(engine: String, runs: [[Workload: Duration]])]
) {
    print(header)
    print("|---|---:|---:|---:|")
    for workload in Workload.allCases {
        let (a, b) = (median(first, workload), median(second, workload))
        print(
            "| \(workload.rawValue) | \(format(a)) (\(perOperation(a, size))) | \(format(b)) "
                + "(\(perOperation(b, size))) | \(String(format: "%.2f×", ratio(a, b))) |")
        for (engine, runs) in recorded {
            results.add(
                workload.rawValue, size: size, engine: engine, time: median(runs, workload),
                operations: workload.operations(size: size), unit: workload.unit)
        }
    }
}

/// Prints the object workloads on an encrypted file beside the plain one (`--encrypted`), with the ratio.
@MainActor
func encryptedTable(size: Int, plainRuns: [[Workload: Duration]], encryptedRuns: [[Workload: Duration]]) {
    print("\n#### Encrypted vs plain, N = \(size)\n")
    print(
        "The same workloads on a file opened with a 64-byte `encryptionKey` (AES-256-GCM pages, the system's "
            + "libcrypto), in the same runs. Ratio = encrypted / plain: 1.10× is 10 % slower.\n")
    workloadTable(
        size: size, header: "| Workload | Strata | Strata encrypted | encrypted/plain |", first: plainRuns,
        second: encryptedRuns, ratio: { plain, encrypted in encrypted / plain },
        recorded: [("Strata encrypted", encryptedRuns)])
}

/// Runs the class projection workload over `size` objects and prints its table.
@MainActor
func projectionsTable(size: Int, directory: URL) throws {
    log("projections: \(group(size)) objects")
    let projected = try runProjections(size: size, repeats: 5, directory: directory)
    print("### Class projections: iterate \(size) objects, read 2 properties (median of 5)\n")
    print("| Workload | Time | Per object | Ratio |")
    print("|---|---:|---:|---:|")
    for (title, engine, duration) in [
        ("Through `ItemProjection` (2 @Projected properties)", "Strata projection", projected.projections),
        ("Root objects (`Item`)", "Strata objects", projected.objects),
        ("GRDB: `Row` cursor over the same 2 columns", "GRDB rows", projected.grdb),
    ] {
        print(
            "| \(title) | \(format(duration)) | \(perOperation(duration, size)) | \(String(format: "%.2f×", duration / projected.objects)) |"
        )
        results.add(
            "Class projections: iterate, read 2 properties", size: size, engine: engine, time: duration,
            operations: size, unit: "object")
    }
    print("\nRatio = time / root objects' time; projection overhead target: under 1.5×.\n")
}

if options.writesOnly {
    print("## Strata object writes vs SQLite prepared statements\n")
} else {
    print("## Strata objects vs GRDB records\n")
    print(
        "Model: Int primary key, String, Int, Double, Date. Both on files, durable commits (GRDB: WAL, synchronous=FULL). "
            + "Median of \(options.repeats) runs, each on fresh files. Ratio = Strata / GRDB: below 1 means Strata is faster.\n"
    )
}
do {
    if options.writesOnly {
        for size in options.sizes {
            try writePathsTable(size: size, repeats: options.repeats, root: root)
            if options.peakMemory { try peakMemoryTable(size: size, root: root) }
        }
        try? FileManager.default.removeItem(at: root)
        exit(0)
    }
    for size in options.confinementOnly ? [] : options.sizes {
        var generator = SystemRandomNumberGenerator()
        let order = Array(0..<size).shuffled(using: &generator)
        var strataRuns: [[Workload: Duration]] = []
        var grdbRuns: [[Workload: Duration]] = []
        var encryptedRuns: [[Workload: Duration]] = []
        for run in 0..<options.repeats {
            log("N = \(size): run \(run + 1) of \(options.repeats)")
            let directory = root.appendingPathComponent("\(size)-\(run)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            strataRuns.append(try runStrata(size: size, order: order, directory: directory))
            grdbRuns.append(try runGRDB(size: size, order: order, directory: directory))
            if options.encrypted {
                encryptedRuns.append(
                    try runStrata(size: size, order: order, directory: directory, encryptionKey: benchmarkEncryptionKey)
                )
            }
            try? FileManager.default.removeItem(at: directory)
        }
        print("### N = \(size)\n")
        workloadTable(
            size: size, header: "| Workload | Strata | GRDB | Strata/GRDB |", first: strataRuns, second: grdbRuns,
            ratio: { strata, grdb in strata / grdb }, recorded: [("Strata", strataRuns), ("GRDB", grdbRuns)])
        if options.encrypted { encryptedTable(size: size, plainRuns: strataRuns, encryptedRuns: encryptedRuns) }
        let validationDirectory = root.appendingPathComponent("validation-\(size)")
        try FileManager.default.createDirectory(at: validationDirectory, withIntermediateDirectories: true)
        let (cold, warm) = try pageValidationCost(size: size, runs: options.repeats, directory: validationDirectory)
        try? FileManager.default.removeItem(at: validationDirectory)
        let difference =
            cold > warm
            ? "\(perOperation(cold - warm, size)) more the first time, mapping the pages included"
            : "no difference this run can measure"
        print(
            "\nPage validation: iterating the \(size) objects right after opening their file (every page checksummed "
                + "and its structure checked, once) took \(format(cold)) (\(perOperation(cold, size))); again, "
                + "\(format(warm)) (\(perOperation(warm, size))): \(difference) (median of \(options.repeats) opens).")
        print("")
        try writePathsTable(size: size, repeats: options.repeats, root: root)
        if options.peakMemory { try peakMemoryTable(size: size, root: root) }
    }
    let environment = ProcessInfo.processInfo.environment
    if options.eachSize && !options.confinementOnly {
        for size in options.sizes {
            let directory = root.appendingPathComponent("collections-\(size)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try collectionsTable(
                listSize: size, mapSize: size, directory: directory,
                title: "Collections (one owner object), N = \(size)")
            try projectionsTable(size: size, directory: directory)
            try? FileManager.default.removeItem(at: directory)
        }
    }
    let directory = root.appendingPathComponent("reads")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    if !options.eachSize && !options.confinementOnly {
        try collectionsTable(
            listSize: Int(environment["STRATA_LIST_SIZE"] ?? "") ?? 1_000_000,
            mapSize: Int(environment["STRATA_MAP_SIZE"] ?? "") ?? 100_000, directory: directory,
            title: "Collections (one owner object)")
        try projectionsTable(
            size: Int(environment["STRATA_PROJECTION_SIZE"] ?? "") ?? 100_000, directory: directory)
    }
    let (property, dictionary) = try propertyReadComparison(size: 100_000, directory: directory)
    let nanoseconds = { (duration: Duration) in
        String(
            format: "%.1f ns",
            Double(duration.components.attoseconds) / 1e9 + Double(duration.components.seconds) * 1e9)
    }
    print(
        "Managed property read: \(nanoseconds(property)) per read; Dictionary<Int, Int> lookup: "
            + "\(nanoseconds(dictionary)) per lookup; ratio \(String(format: "%.1f×", property / dictionary)).")
    // The same reads and small durable writes on each confinement: an actor, the main actor, a task.
    try await confinementTable(directory: directory, rounds: options.repeats)
} catch {
    log("failed: \(error)")
    exit(1)
}

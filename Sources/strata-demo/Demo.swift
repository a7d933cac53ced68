import Foundation
import Strata
import StrataStorage

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// strata-demo: the README's main job. A small async service on an embedded file:
// 1. several writer actors ingest sensor readings concurrently with `asyncWrite`, each through its own
//    actor-confined Realm (`try await Realm(actor: self)`), while
// 2. an observer actor follows `for await` change sets (insertions, deletions, modifications) as they commit;
// 3. the service queries with RQL and with a type-safe `where {}`, and shows a dashboard through a `Projection`;
// 4. a frozen snapshot goes to a detached task that reads it while the service updates and deletes;
// 5. a summary (objects, versions committed, file size, timings, ingest rate) and an integrity check.

// MARK: Models

/// A sensor reading.
final class Reading: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted(indexed: true) var sensor = ""
    @Persisted var value = 0.0
    @Persisted var takenAt = Date()
    @Persisted var place: Place?
    @Persisted var flagged = false
}

/// Where a reading was taken; stored with (and deleted with) its reading.
final class Place: EmbeddedObject {
    @Persisted var name = ""
    @Persisted var latitude = 0.0
    @Persisted var longitude = 0.0
}

/// A named number. "last id" hands out reading ids (so concurrent writers never collide and a reused file
/// continues where the last run stopped); "readings" counts the readings, updated in the same transaction as
/// they are, so every committed version has counter == number of readings.
final class Counter: Object {
    @Persisted(primaryKey: true) var name = ""
    @Persisted var count = 0
}

/// One row of the dashboard: a view model over a reading, reading only what the row shows.
final class ReadingRow: Projection<Reading> {
    @Projected(\Reading.id) var id
    @Projected(\Reading.sensor) var sensor
    @Projected(\Reading.value) var value
    @Projected(\Reading.place?.name) var city
}

let sensors = ["north", "south", "east", "west", "roof", "cellar"]
let places = [("Oslo", 59.91, 10.75), ("Lima", -12.05, -77.04), ("Osaka", 34.69, 135.50)]

extension Reading {
    /// The reading with id `id`: its values follow from the id, so every run makes the same kind of data.
    convenience init(id: Int) {
        let place = places[id % places.count]
        self.init(value: [
            "id": id, "sensor": sensors[id % sensors.count], "value": Double((id * 7919) % 1000) / 10,
            "takenAt": Date(timeIntervalSince1970: 1_700_000_000 + Double(id)),
            "place": ["name": place.0, "latitude": place.1, "longitude": place.2],
        ])
    }
}

// MARK: Options

struct Options {
    var records = 10_000
    var writers = 4
    var batch = 100
    var path = "default.strata"
    var inMemory = false
    var reset = false
}

let help = """
    strata-demo — a small async service on an embedded Strata file

    Writer actors ingest sensor readings concurrently (asyncWrite), an observer actor prints the change sets
    as they commit (for await), then the service queries (RQL and where {}), shows a dashboard through a
    projection, hands a frozen snapshot to a concurrent reader while it updates and deletes, and ends with a
    summary and an integrity check of the file.

    USAGE
      swift run strata-demo [--records N] [--writers N] [--batch N] [--path FILE] [--in-memory] [--reset]

    OPTIONS
      --records N    readings to ingest (default 10000)
      --writers N    concurrent writer actors, each with its own Realm (default 4)
      --batch N      readings per write transaction (default 100)
      --path FILE    the file to use (default ./default.strata)
      --in-memory    keep everything in memory, no file
      --reset        delete the file first and start from an empty one
      --help         this text

    REUSING THE FILE
      The file is kept: the next run opens it, adds N more readings with ids continuing after the highest
      one so far, and works on everything it holds. --reset starts over. Inspect the file with
      `swift run strata info default.strata` or `swift run strata dump default.strata Reading --limit 3`.
    """

func parseOptions() -> Options {
    var options = Options()
    var arguments = CommandLine.arguments.dropFirst()
    func number(_ name: String) -> Int {
        guard let text = arguments.popFirst(), let value = Int(text), value > 0 else {
            standardError("strata-demo: \(name) needs a positive number\n\n\(help)")
            exit(2)
        }
        return value
    }
    while let argument = arguments.popFirst() {
        switch argument {
        case "--records": options.records = number(argument)
        case "--writers": options.writers = number(argument)
        case "--batch": options.batch = number(argument)
        case "--path":
            guard let path = arguments.popFirst() else {
                standardError("strata-demo: --path needs a file name")
                exit(2)
            }
            options.path = path
        case "--in-memory": options.inMemory = true
        case "--reset": options.reset = true
        case "--help", "-h":
            say(help)
            exit(0)
        default:
            standardError("strata-demo: unknown option \(argument)\n\n\(help)")
            exit(2)
        }
    }
    return options
}

// MARK: Output

/// Prints a line at once (also when standard output is a pipe, so progress shows as it happens).
func say(_ text: String = "") {
    FileHandle.standardOutput.write(Data((text + "\n").utf8))
}

func standardError(_ text: String) {
    FileHandle.standardError.write(Data((text + "\n").utf8))
}

/// `20000` as `20,000`.
func grouped(_ number: Int) -> String {
    let digits = String(number.magnitude)
    var text = ""
    for (index, digit) in digits.enumerated() {
        if index > 0 && (digits.count - index) % 3 == 0 { text += "," }
        text.append(digit)
    }
    return number < 0 ? "-" + text : text
}

func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}

func milliseconds(_ duration: Duration) -> String { String(format: "%.1f ms", seconds(duration) * 1000) }

// MARK: Writers

/// One writer: ingests its share of readings through its own actor-confined Realm.
actor Ingestor {
    let configuration: Realm.Configuration

    init(configuration: Realm.Configuration) { self.configuration = configuration }

    /// Adds `count` readings in transactions of `batch`; returns the number of commits. `asyncWrite` waits for
    /// the file's write lock by suspending, so four writers share two cooperative threads without blocking them.
    func ingest(count: Int, batch: Int) async throws -> Int {
        let realm = try await Realm(configuration: configuration, actor: self)
        var done = 0
        var commits = 0
        while done < count {
            let size = min(batch, count - done)
            try await realm.asyncWrite {
                let lastId =
                    realm.object(ofType: Counter.self, forPrimaryKey: "last id")
                    ?? realm.create(Counter.self, value: ["name": "last id"])
                let readings =
                    realm.object(ofType: Counter.self, forPrimaryKey: "readings")
                    ?? realm.create(Counter.self, value: ["name": "readings"])
                for id in lastId.count + 1...lastId.count + size { realm.add(Reading(id: id)) }
                lastId.count += size
                readings.count += size
            }
            done += size
            commits += 1
        }
        return commits
    }
}

// MARK: Observer

/// Follows every change to the readings with `for await`, on its own actor and Realm, and prints the change sets:
/// during the ingest one line per tenth of the expected insertions, afterwards every change set.
actor Observer {
    /// What the observer has seen so far.
    struct Totals: Sendable {
        var changeSets = 0
        var inserted = 0
        var deleted = 0
        var modified = 0
        /// The number of readings in the newest version delivered.
        var count = 0
        /// Whether the sequence ended (cancelled, or an error).
        var ended = false
    }

    private let configuration: Realm.Configuration
    private var realm: Realm?
    private var task: Task<Void, Never>?
    private var totals = Totals()
    /// A caller of ``waitUntil(_:)`` and what it waits for.
    private typealias Waiter = (condition: @Sendable (Totals) -> Bool, continuation: CheckedContinuation<Totals, Never>)
    private var waiters: [Waiter] = []
    /// Insertions expected from the ingest, for the progress lines (0 once it is over: every change set is printed).
    private var expectedInsertions = 0
    private var nextReport = 1

    init(configuration: Realm.Configuration) { self.configuration = configuration }

    /// Opens the observer's Realm and starts the `for await` loop; returns once the loop has the initial state, so
    /// that every later commit reaches it as a change.
    func start(expectingInsertions count: Int) async throws -> Totals {
        realm = try await Realm(configuration: configuration, actor: self)
        expectedInsertions = count
        task = Task { await self.follow() }
        return await waitUntil { $0.changeSets > 0 || $0.ended }
    }

    private func follow() async {
        guard let realm else { return }
        for await change in realm.objects(Reading.self).changes {
            switch change {
            case .initial(let readings):
                totals.count = readings.count
                totals.changeSets += 1
            case .update(let readings, let deletions, let insertions, let modifications):
                totals.changeSets += 1
                totals.inserted += insertions.count
                totals.deleted += deletions.count
                totals.modified += modifications.count
                totals.count = readings.count
                report(deletions.count, insertions.count, modifications.count)
            case .error(let error):
                say("  observer: \(error)")
            }
            resumeWaiters()
        }
        totals.ended = true
        resumeWaiters()
    }

    private func report(_ deletions: Int, _ insertions: Int, _ modifications: Int) {
        let change = "+\(grouped(insertions)) −\(grouped(deletions)) ~\(grouped(modifications))"
        guard expectedInsertions > 0 else {
            say("  observer: change set \(change), \(grouped(totals.count)) readings")
            return
        }
        let percent = totals.inserted * 100 / expectedInsertions
        guard percent >= nextReport * 10 else { return }
        nextReport = percent / 10 + 1
        say(
            "  \(percent)% ingested — observer: \(grouped(totals.inserted)) insertions in \(grouped(totals.changeSets - 1)) "
                + "change sets (latest \(change)), \(grouped(totals.count)) readings")
    }

    /// Prints every change set from now on.
    func ingestIsOver() { expectedInsertions = 0 }

    /// Returns the totals once `condition` holds for them (or the sequence ended).
    func waitUntil(_ condition: @escaping @Sendable (Totals) -> Bool) async -> Totals {
        if condition(totals) || totals.ended { return totals }
        return await withCheckedContinuation { waiters.append((condition, $0)) }
    }

    private func resumeWaiters() {
        var waiting: [Waiter] = []
        for waiter in waiters {
            if waiter.condition(totals) || totals.ended {
                waiter.continuation.resume(returning: totals)
            } else {
                waiting.append(waiter)
            }
        }
        waiters = waiting
    }

    /// Ends the `for await` loop (cancelling its task ends the sequence) and closes the Realm.
    func stop() async -> Totals {
        task?.cancel()
        await task?.value
        task = nil
        realm = nil
        return totals
    }
}

// MARK: The service

/// The service's own actor and Realm: queries, the dashboard, updates and deletes.
actor Service {
    private let configuration: Realm.Configuration
    private var realm: Realm!

    init(configuration: Realm.Configuration) { self.configuration = configuration }

    func open() async throws {
        realm = try await Realm(configuration: configuration, actor: self)
    }

    /// Lets go of the Realm. An idle Realm keeps the version it reads pinned, and pages freed after that version
    /// cannot be reused while it is: the file would grow by every page the writers copy.
    func release() { realm = nil }

    /// The readings and the last id handed out.
    func state() async -> (readings: Int, lastId: Int, counter: Int) {
        await realm.asyncRefresh()
        return (
            realm.objects(Reading.self).count,
            realm.object(ofType: Counter.self, forPrimaryKey: "last id")?.count ?? 0,
            realm.object(ofType: Counter.self, forPrimaryKey: "readings")?.count ?? 0
        )
    }

    /// An RQL query, a type-safe query, a primary-key lookup and an aggregate, each timed.
    func query() async {
        await realm.asyncRefresh()
        let clock = ContinuousClock()
        let readings = realm.objects(Reading.self)

        var started = clock.now
        let hot = readings.filter("value >= 99.5 AND place.name == $0 SORT(value DESC, id ASC)", "Osaka")
        let hotIds = hot.prefix(3).map { "#\($0.id)" }.joined(separator: ", ")
        say(
            "  RQL    \"value >= 99.5 AND place.name == 'Osaka' SORT(value DESC, id ASC)\": \(grouped(hot.count)) readings "
                + "(first \(hotIds)) in \(milliseconds(clock.now - started))")

        started = clock.now
        let roof = readings.where { $0.sensor == "roof" && $0.value.contains(10.0...20.0) }
        say(
            "  where  { $0.sensor == \"roof\" && $0.value.contains(10.0...20.0) }: \(grouped(roof.count)) readings "
                + "in \(milliseconds(clock.now - started))")

        started = clock.now
        let lastId = realm.object(ofType: Counter.self, forPrimaryKey: "last id")?.count ?? 0
        var found = 0
        for id in stride(from: lastId, to: max(lastId - 1000, 0), by: -1)
        where realm.object(ofType: Reading.self, forPrimaryKey: id) != nil {
            found += 1
        }
        say("  lookup 1,000 primary keys: \(grouped(found)) found in \(milliseconds(clock.now - started))")

        started = clock.now
        let average = readings.average(ofProperty: "value") as Double? ?? 0
        say(
            "  aggregate average(value) over \(grouped(readings.count)): \(String(format: "%.2f", average)) "
                + "in \(milliseconds(clock.now - started))")
    }

    /// The dashboard: the three highest readings, each shown through its `ReadingRow` projection.
    func dashboard() async {
        await realm.asyncRefresh()
        let rows = realm.objects(ReadingRow.self).sorted(byKeyPath: "value", ascending: false)
        say("  id        sensor  value  city")
        for row in rows.prefix(3) {
            let id = "#\(row.id)".padding(toLength: 9, withPad: " ", startingAt: 0)
            let sensor = row.sensor.padding(toLength: 7, withPad: " ", startingAt: 0)
            say("  \(id) \(sensor) \(String(format: "%5.1f", row.value))  \(row.city ?? "?")")
        }
    }

    /// A frozen snapshot of every reading: `Sendable`, pinned to the version the service reads now.
    func snapshot() async -> Frozen<Results<Reading>> {
        await realm.asyncRefresh()
        return Frozen(realm.objects(Reading.self))
    }

    /// Flags the readings above 99 that are not flagged yet, in one transaction; returns how many.
    func flagHighReadings() async throws -> Int {
        let high = Array(realm.objects(Reading.self).where { $0.value > 99 && !$0.flagged })
        try await realm.asyncWrite {
            for reading in high { reading.flagged = true }
        }
        return high.count
    }

    /// Deletes the cellar's readings (their places go with them) and updates the counter, in one transaction;
    /// returns how many.
    func deleteCellar() async throws -> Int {
        let cellar = Array(realm.objects(Reading.self).filter("sensor == 'cellar'"))
        try await realm.asyncWrite {
            realm.delete(cellar)
            realm.object(ofType: Counter.self, forPrimaryKey: "readings")?.count -= cellar.count
        }
        return cellar.count
    }
}

/// What the snapshot reader found in its frozen version.
struct SnapshotReport: Sendable {
    var readings = 0
    var counter = 0
    var averages: [(sensor: String, average: Double, count: Int)] = []
}

/// Reads a frozen snapshot on a detached task (any thread): averages per sensor, and the counter of the same
/// version, which must match however many commits landed since.
func readSnapshot(_ snapshot: Frozen<Results<Reading>>) -> SnapshotReport {
    let readings = snapshot.value
    var sums: [String: (count: Int, sum: Double)] = [:]
    for reading in readings {
        sums[reading.sensor, default: (0, 0)].count += 1
        sums[reading.sensor, default: (0, 0)].sum += reading.value
    }
    let counter = readings.realm?.object(ofType: Counter.self, forPrimaryKey: "readings")?.count ?? 0
    return SnapshotReport(
        readings: readings.count, counter: counter,
        averages: sums.sorted { $0.key < $1.key }.map {
            ($0.key, $0.value.sum / Double($0.value.count), $0.value.count)
        }
    )
}

// MARK: Main

enum DemoError: Error, CustomStringConvertible {
    case inconsistent(String)
    var description: String {
        switch self {
        case .inconsistent(let text): "inconsistent: \(text)"
        }
    }
}

@main
struct Demo {
    static func main() async {
        let options = parseOptions()
        do {
            try await run(options)
        } catch let error as Realm.Error {
            if case .schemaMismatch = error {
                standardError(
                    "strata-demo: \(options.path) holds another schema (another program's file?): \(error)\n"
                        + "Use --path for another file, or --reset to start this one over.")
            } else {
                standardError("strata-demo: \(error)")
            }
            exit(1)
        } catch {
            standardError("strata-demo: \(error)")
            exit(1)
        }
    }

    static func run(_ options: Options) async throws {
        let clock = ContinuousClock()
        let started = clock.now
        let types: [ObjectBase.Type] = [Reading.self, Counter.self]
        let configuration =
            options.inMemory
            ? Realm.Configuration(inMemoryIdentifier: "strata-demo", objectTypes: types)
            : Realm.Configuration(fileURL: URL(fileURLWithPath: options.path), objectTypes: types)
        if options.reset && !options.inMemory, try Realm.deleteFiles(for: configuration) {
            say("deleted \(options.path) (--reset)")
        }

        // The file at the storage level, for version numbers, statistics and the integrity check. (An in-memory
        // store with the same identifier shares the Realms' data.)
        let store =
            options.inMemory
            ? try Store.inMemory(identifier: "strata-demo") : try Store.open(path: options.path)
        let firstVersion = try store.statistics().version
        // The service's Realm registers the models' schema in a new file, or checks it against the stored one.
        let service = Service(configuration: configuration)
        try await service.open()
        let before = await service.state()
        say("Strata demo — \(options.inMemory ? "in memory" : "file \(options.path)")")
        if before.readings > 0 {
            say(
                "opened with \(grouped(before.readings)) readings from earlier runs; new ids continue after \(grouped(before.lastId))"
            )
        } else {
            say("opened an empty database")
        }

        await service.release()

        // 1–2. Writers ingest while the observer follows.
        say(
            "\ningest: \(grouped(options.records)) readings, \(options.writers) writer actors, "
                + "\(options.batch) per transaction")
        let observer = Observer(configuration: configuration)
        _ = try await observer.start(expectingInsertions: options.records)
        let ingestStarted = clock.now
        let commits = try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<options.writers {
                let share = options.records / options.writers + (index < options.records % options.writers ? 1 : 0)
                guard share > 0 else { continue }
                let writer = Ingestor(configuration: configuration)
                group.addTask { try await writer.ingest(count: share, batch: options.batch) }
            }
            return try await group.reduce(0, +)
        }
        let ingestTime = clock.now - ingestStarted
        let expected = before.readings + options.records
        let seen = await observer.waitUntil { $0.inserted >= options.records }
        await observer.ingestIsOver()
        let rate = Double(options.records) / max(seconds(ingestTime), 1e-9)
        say(
            "ingested \(grouped(options.records)) readings in \(grouped(commits)) commits in \(milliseconds(ingestTime)) "
                + "(\(grouped(Int(rate))) readings/s); the observer saw all \(grouped(seen.inserted)) insertions "
                + "in \(grouped(seen.changeSets - 1)) change sets")

        // 3. Queries and the dashboard.
        try await service.open()
        say("\nqueries")
        await service.query()
        say("\ndashboard (ReadingRow projections, highest values)")
        await service.dashboard()

        // 4. A frozen snapshot, read on another task while the service updates and deletes.
        let snapshot = await service.snapshot()
        let reader = Task.detached { readSnapshot(snapshot) }
        say("\nupdate and delete (the snapshot reader runs meanwhile)")
        let updateStarted = clock.now
        let flagged = try await service.flagHighReadings()
        let afterUpdate = await observer.waitUntil { $0.modified >= flagged }
        say(
            "flagged \(grouped(flagged)) readings above 99 in \(milliseconds(clock.now - updateStarted)); "
                + "observer: \(grouped(afterUpdate.modified)) modifications")
        let deleteStarted = clock.now
        let deleted = try await service.deleteCellar()
        let afterDelete = await observer.waitUntil { $0.deleted >= deleted }
        say(
            "deleted \(grouped(deleted)) cellar readings (and their places) in \(milliseconds(clock.now - deleteStarted)); "
                + "observer: \(grouped(afterDelete.deleted)) deletions")
        let frozen = await reader.value
        say(
            "snapshot reader: \(grouped(frozen.readings)) readings in its frozen version (counter \(grouped(frozen.counter))), "
                + "untouched by the update and delete:")
        for entry in frozen.averages {
            say("  \(entry.sensor): average \(String(format: "%.2f", entry.average)) over \(grouped(entry.count))")
        }
        let final = await observer.stop()

        // 5. Summary and integrity.
        let after = await service.state()
        let stats = try store.statistics()
        var problems: [String] = []
        if frozen.readings != frozen.counter || frozen.readings != expected {
            problems.append(
                "the snapshot holds \(frozen.readings) readings, its counter \(frozen.counter), expected \(expected)")
        }
        if after.readings != after.counter { problems.append("\(after.readings) readings, counter \(after.counter)") }
        if final.count != after.readings {
            problems.append("observer's last state has \(final.count) readings, the file \(after.readings)")
        }
        let report = try store.verify()
        var size = stats.pageCount * stats.pageSize
        var fileInfo = stat()
        if !options.inMemory, stat(options.path, &fileInfo) == 0 { size = Int(fileInfo.st_size) }
        say("\nsummary")
        say(
            "  readings:   \(grouped(after.readings)) (\(grouped(options.records)) added, \(grouped(flagged)) flagged, "
                + "\(grouped(deleted)) deleted this run)")
        say(
            "  versions:   \(grouped(Int(stats.version - firstVersion))) committed this run (version \(firstVersion) -> \(stats.version))"
        )
        say(
            "  \(options.inMemory ? "memory:   " : "file size:")  \(String(format: "%.1f", Double(size) / 1_048_576)) MiB, "
                + "\(grouped(stats.pageCount)) pages of \(stats.pageSize) bytes, \(grouped(stats.freePages)) free")
        say(
            "  ingest:     \(grouped(Int(rate))) readings/s with \(options.writers) writer actors "
                + "(\(milliseconds(ingestTime)))")
        say("  total:      \(milliseconds(clock.now - started))")
        say(
            "  integrity:  verify \(report.isValid ? "OK" : "FAILED") (\(grouped(report.reachablePages)) pages reachable, "
                + "\(grouped(report.freePages)) free); "
                + (problems.isEmpty ? "counter, observer and snapshot consistent" : problems.joined(separator: "; ")))
        guard report.isValid else {
            say("\(report)")
            exit(1)
        }
        guard problems.isEmpty else { throw DemoError.inconsistent(problems.joined(separator: "; ")) }
    }
}

import Dispatch
import Foundation
import Strata
import StrataStorage
import Synchronization

// strata-demo: the README's main job. A small service on an embedded file, with models: several writer threads
// ingest sensor readings concurrently (each with its own Realm), a reader thread checks an invariant on every
// version it sees, then the service looks objects up by primary key, aggregates, updates and deletes, and
// verifies the file. (Actor-confined Realms, asyncWrite and `for await` change streams arrive with the
// concurrency work; until then the demo uses thread-confined Realms on threads of its own, so it never blocks
// Swift's cooperative pool.)

/// A sensor reading.
final class Reading: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted(indexed: true) var sensor = ""
    @Persisted var value = 0.0
    @Persisted var takenAt = Date()
    @Persisted var place: Place?
    @Persisted var flagged = false
}

/// Where a reading was taken; stored with its reading.
final class Place: EmbeddedObject {
    @Persisted var name = ""
    @Persisted var latitude = 0.0
    @Persisted var longitude = 0.0
}

/// A named number: how many readings exist (every write updates it in the same transaction as the readings),
/// and the last reading id handed out.
final class Counter: Object {
    @Persisted(primaryKey: true) var name = ""
    @Persisted var count = 0
}

struct Options {
    var records = 20_000
    var writers = 4
    var batch = 100
    var path = "default.strata"
    var inMemory = false
}

let help = """
    strata-demo — a small service on an embedded Strata file

    USAGE
      swift run strata-demo [--records N] [--writers N] [--batch N] [--path FILE] [--in-memory]

    OPTIONS
      --records N    readings to ingest (default 20000)
      --writers N    concurrent writer threads, each with its own Realm (default 4)
      --batch N      readings per write transaction (default 100)
      --path FILE    the file to use (default ./default.strata; it is reused across runs)
      --in-memory    keep everything in memory, no file
      --help         this text
    """

func parseOptions() -> Options {
    var options = Options()
    var arguments = CommandLine.arguments.dropFirst()
    func number(_ name: String) -> Int {
        guard let text = arguments.popFirst(), let value = Int(text), value > 0 else {
            print("strata-demo: \(name) needs a positive number\n\n\(help)")
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
                print("strata-demo: --path needs a file name")
                exit(2)
            }
            options.path = path
        case "--in-memory": options.inMemory = true
        case "--help", "-h":
            print(help)
            exit(0)
        default:
            print("strata-demo: unknown option \(argument)\n\n\(help)")
            exit(2)
        }
    }
    return options
}

func milliseconds(_ duration: Duration) -> String {
    let value = Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
    return String(format: "%.1f ms", value)
}

let sensors = ["north", "south", "east", "west", "roof", "cellar"]
let places = [("Oslo", 59.91, 10.75), ("Lima", -12.05, -77.04), ("Osaka", 34.69, 135.50)]

/// Runs `body` on `count` threads of its own and waits for all of them; the first error wins.
func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) throws -> Void) throws {
    let failure = Mutex<(any Error)?>(nil)
    let group = DispatchGroup()
    for index in 0..<count {
        group.enter()
        let thread = Thread {
            do {
                try body(index)
            } catch {
                failure.withLock { if $0 == nil { $0 = error } }
            }
            group.leave()
        }
        thread.start()
    }
    group.wait()
    if let error = failure.withLock({ $0 }) { throw error }
}

@main
struct Demo {
    static func main() throws {
        let options = parseOptions()
        let clock = ContinuousClock()
        let started = clock.now
        let configuration =
            options.inMemory
            ? Realm.Configuration(inMemoryIdentifier: "strata-demo", objectTypes: [Reading.self, Counter.self])
            : Realm.Configuration(
                fileURL: URL(fileURLWithPath: options.path), objectTypes: [Reading.self, Counter.self])
        let realm = try Realm(configuration: configuration)
        print("Strata demo — \(options.inMemory ? "in memory" : "file \(options.path)")")
        let existing = realm.objects(Reading.self).count
        print("opened with \(existing) readings from earlier runs")

        // 1. Writer threads ingest concurrently, each through its own Realm: one writer at a time per file, and
        //    every transaction adds a batch and bumps the counter, so each committed version has
        //    counter == number of readings.
        let written = Atomic<Int>(0)
        let finished = Atomic<Bool>(false)
        let step = max(options.records / 10, 1)
        let ingest = clock.now
        let readerReport = Mutex<String>("")
        try onThreads(options.writers + 1) { index in
            let realm = try Realm(configuration: configuration)
            guard index < options.writers else {
                // 2. The reader: readers never wait for the writer; each refresh shows one consistent version.
                var checks = 0
                var versions = 0
                while !finished.load(ordering: .acquiring) {
                    if realm.refresh() { versions += 1 }
                    let readings = realm.objects(Reading.self).count
                    let counted = realm.object(ofType: Counter.self, forPrimaryKey: "readings")?.count ?? 0
                    guard readings == counted else {
                        throw DemoError.inconsistent("\(readings) readings, counter \(counted)")
                    }
                    checks += 1
                }
                readerReport.withLock { $0 = "reader: \(checks) checks over \(versions) versions, all consistent" }
                return
            }
            // A failed writer must not leave the reader waiting forever.
            var succeeded = false
            defer { if !succeeded { finished.store(true, ordering: .releasing) } }
            let share = options.records / options.writers + (index < options.records % options.writers ? 1 : 0)
            var done = 0
            while done < share {
                let count = min(options.batch, share - done)
                try realm.write {
                    let counter =
                        realm.object(ofType: Counter.self, forPrimaryKey: "readings")
                        ?? realm.create(Counter.self, value: ["name": "readings"])
                    let lastId =
                        realm.object(ofType: Counter.self, forPrimaryKey: "last id")
                        ?? realm.create(Counter.self, value: ["name": "last id"])
                    let first = lastId.count
                    lastId.count += count
                    for offset in 0..<count {
                        let id = first + offset + 1
                        let place = places[id % places.count]
                        realm.add(
                            Reading(value: [
                                "id": id, "sensor": sensors[id % sensors.count], "value": Double(id % 1000) / 10,
                                "takenAt": Date(timeIntervalSince1970: 1_700_000_000 + Double(id)),
                                "place": ["name": place.0, "latitude": place.1, "longitude": place.2],
                            ]))
                    }
                    counter.count += count
                }
                done += count
                let now = written.add(count, ordering: .relaxed).newValue
                if now / step != (now - count) / step { print("  ingested \(now)/\(options.records)") }
            }
            succeeded = true
            if written.load(ordering: .relaxed) >= options.records { finished.store(true, ordering: .releasing) }
        }
        let ingestTime = clock.now - ingest
        print(
            "ingested \(options.records) readings with \(options.writers) writer threads in \(milliseconds(ingestTime))"
        )
        print(readerReport.withLock { $0 })

        // 3. Reads on the service's own Realm: it advances to the newest version on refresh.
        realm.refresh()
        let readings = realm.objects(Reading.self)
        let total = readings.count
        let lookups = clock.now
        var found = 0
        let lastId = realm.object(ofType: Counter.self, forPrimaryKey: "last id")?.count ?? 0
        for id in stride(from: lastId - total + 1, through: lastId, by: max(total / 1000, 1))
        where realm.object(ofType: Reading.self, forPrimaryKey: id) != nil {
            found += 1
        }
        print("primary-key lookups: \(found) found in \(milliseconds(clock.now - lookups))")
        let aggregate = clock.now
        var sums: [String: (count: Int, sum: Double)] = [:]
        for reading in readings {
            sums[reading.sensor, default: (0, 0)].count += 1
            sums[reading.sensor, default: (0, 0)].sum += reading.value
        }
        print("average value per sensor over \(total) readings (\(milliseconds(clock.now - aggregate))):")
        for (sensor, entry) in sums.sorted(by: { $0.key < $1.key }) {
            print("  \(sensor): \(String(format: "%.2f", entry.sum / Double(entry.count))) (\(entry.count) readings)")
        }
        if let sample = readings.last {
            print(
                "reading \(sample.id): \(sample.sensor) = \(sample.value) at \(sample.place?.name ?? "?") on \(sample.takenAt)"
            )
        }

        // 4. Updates and deletes, each in one transaction.
        let update = clock.now
        var flagged = 0
        try realm.write {
            for reading in readings where reading.value > 99 {
                reading.flagged = true
                flagged += 1
            }
        }
        print("flagged \(flagged) readings above 99 in \(milliseconds(clock.now - update))")
        let cellar = Array(readings).filter { $0.sensor == "cellar" }
        let delete = clock.now
        try realm.write {
            realm.delete(cellar)
            if let counter = realm.object(ofType: Counter.self, forPrimaryKey: "readings") {
                counter.count -= cellar.count
            }
        }
        print("deleted \(cellar.count) cellar readings (and their places) in \(milliseconds(clock.now - delete))")

        // 5. Integrity and summary.
        let remaining = realm.objects(Reading.self).count
        guard remaining == realm.object(ofType: Counter.self, forPrimaryKey: "readings")?.count else {
            throw DemoError.inconsistent("counter does not match after the deletes")
        }
        if !options.inMemory {
            let store = try Store.open(path: options.path)
            let report = try store.verify()
            let stats = try store.statistics()
            print(
                "verify: \(report.isValid ? "OK" : "DAMAGED") — \(report.reachablePages) pages reachable, "
                    + "\(report.freePages) free; file \(stats.pageCount * stats.pageSize / 1024) KiB at version \(stats.version)"
            )
            if !report.isValid {
                print(report)
                exit(1)
            }
        }
        print("summary: \(remaining) readings, total \(milliseconds(clock.now - started))")
    }
}

enum DemoError: Error, CustomStringConvertible {
    case inconsistent(String)
    var description: String {
        switch self {
        case .inconsistent(let text): "inconsistent snapshot: \(text)"
        }
    }
}

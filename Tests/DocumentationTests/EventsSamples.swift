import Foundation
import Strata
import StrataStorage
import Synchronization
import Testing

// Documentation/Events.md: the events hook on a Realm's configuration and on a store. (The swift-log and
// swift-metrics adapters of the page are `swift fragment` blocks: those packages are not dependencies here.)

enum EventsSample {
    /// The first sample: returns the Realm and the lines printed.
    static func printEvents(recording record: @escaping @Sendable (String) -> Void) throws -> Realm {
        var configuration = Realm.Configuration(inMemoryIdentifier: "events")
        configuration.events = { event in print(event) }
        let printing = configuration.events
        configuration.events = { event in
            printing?(event)
            record(event.description)
        }
        let realm = try Realm(configuration: configuration)  // "opened memory:events at version 0"
        return realm
    }

    /// Commits and the slowest time to durable seen, for a health endpoint.
    final class CommitStatistics: Sendable {
        private let state = Mutex((commits: 0, slowestNanoseconds: UInt64(0)))

        func record(_ event: Realm.Event) {
            guard case .committed(let commit) = event else { return }
            state.withLock { state in
                state.commits += 1
                state.slowestNanoseconds = max(state.slowestNanoseconds, commit.nanosecondsToDurable)
            }
        }

        var summary: (commits: Int, slowestNanoseconds: UInt64) { state.withLock { $0 } }
    }

    /// Warnings collected from the committing thread.
    final class PinnedWarnings: Sendable {
        private let warnings = Mutex<[StoreEvent.PinnedVersions]>([])
        func append(_ warning: StoreEvent.PinnedVersions) { warnings.withLock { $0.append(warning) } }
        var all: [StoreEvent.PinnedVersions] { warnings.withLock { $0 } }
    }

    final class Reading: Object {
        @Persisted var value = 0
        override class func className() -> String { "EventsSampleReading" }
    }

    /// The counting sample: commits three times and returns the statistics.
    static func countCommits() throws -> CommitStatistics {
        let statistics = CommitStatistics()
        var counted = Realm.Configuration(inMemoryIdentifier: "counted")
        counted.events = { event in statistics.record(event) }
        counted.objectTypes = [Reading.self]
        let realm = try Realm(configuration: counted)
        for value in 1...3 { try realm.write { realm.add(Reading(value: ["value": value])) } }
        return statistics
    }

    /// The storage sample: a reader left on an old version while `commits` commits go by; returns the warnings.
    static func watchPinnedVersions(path: String, commits: Int) throws -> [StoreEvent.PinnedVersions] {
        let warnings = PinnedWarnings()
        var options = StoreOptions()
        options.durability = .none
        options.events = { event in
            if case .pinnedVersions(let pinned) = event {
                print(pinned)  // pinned version …: 1 reader in this process … 128 versions behind …
                warnings.append(pinned)
            }
        }
        let store = try Store.open(path: path, options: options)
        let reader = try store.read()
        for round in 0..<commits {
            try store.write { transaction in
                let tree = try transaction.tree(named: "counter", create: .keyed)!
                try transaction.put(Array("n".utf8), withUnsafeBytes(of: round) { Array($0) }, in: tree)
            }
        }
        withExtendedLifetime(reader) {}
        return warnings.all
    }
}

/// Lines collected from any thread.
final class Lines: Sendable {
    private let lines = Mutex<[String]>([])
    func append(_ line: String) { lines.withLock { $0.append(line) } }
    var first: String? { lines.withLock { $0.first } }
}

@Suite("Events samples")
struct EventsSampleTests {
    @Test func printingEventsGivesOneLinePerEvent() throws {
        let lines = Lines()
        let realm = try EventsSample.printEvents { line in lines.append(line) }
        #expect(lines.first == "opened memory:events at version 0")
        #expect(realm.configuration.events != nil)
    }

    @Test func commitsAreCountedWithoutAnyPackage() throws {
        let summary = try EventsSample.countCommits().summary
        #expect(summary.commits == 4)  // the schema's commit and three writes
        #expect(summary.slowestNanoseconds > 0)
    }

    @Test func aStoreReportsAReaderLeftBehind() throws {
        let folder = TemporaryFolder()
        let warnings = try EventsSample.watchPinnedVersions(
            path: folder.url.appendingPathComponent("pinned.strata").path, commits: 130)
        #expect(warnings.map(\.versionsBehind) == [128])
        #expect(warnings.first?.pinnedVersion == 0)
    }
}

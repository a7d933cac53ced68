import Foundation
import StrataStorage
import Synchronization
import Testing

@testable import Strata

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What `Realm.Configuration.events` receives: the storage engine's events for the Realm's file, migration progress
/// per class, and the damage reads find; nothing without a handler.
@Suite("Realm events")
struct RealmEventTests {
    final class Gauge: Object {
        @Persisted(primaryKey: true) var id = 0
        @Persisted var reading = 0
        @Persisted var label = ""
        override class func className() -> String { "EventGauge" }
    }

    final class GaugeV2: Object {
        @Persisted(primaryKey: true) var id = 0
        @Persisted var reading = 0
        @Persisted var label = ""
        @Persisted var unit = "kPa"
        override class func className() -> String { "EventGauge" }
    }

    final class Probe: Object {
        @Persisted var serial = ""
        override class func className() -> String { "EventProbe" }
    }

    final class ProbeV2: Object {
        @Persisted var serial = ""
        @Persisted var active = false
        override class func className() -> String { "EventProbe" }
    }

    /// Collects a configuration's events.
    final class EventLog: Sendable {
        private let events = Mutex<[Realm.Event]>([])
        var handler: @Sendable (Realm.Event) -> Void { { event in self.events.withLock { $0.append(event) } } }
        var all: [Realm.Event] { events.withLock { $0 } }
        var opened: [Realm.Event.Opened] { all.compactMap { if case .opened(let e) = $0 { e } else { nil } } }
        var commits: [Realm.Event.Commit] { all.compactMap { if case .committed(let e) = $0 { e } else { nil } } }
        var copies: [Realm.Event.CopyProgress] {
            all.compactMap { if case .copyProgress(let e) = $0 { e } else { nil } }
        }
        var pinned: [Realm.Event.PinnedVersions] {
            all.compactMap { if case .pinnedVersions(let e) = $0 { e } else { nil } }
        }
        var damage: [Realm.Event.Damage] { all.compactMap { if case .damage(let e) = $0 { e } else { nil } } }
        var migration: [Realm.MigrationProgress] {
            all.compactMap { if case .migrationProgress(let e) = $0 { e } else { nil } }
        }
    }

    @Test func openingAndEachWriteAreReportedWithTheRealmsVersion() throws {
        let scratch = try Scratch()
        let log = EventLog()
        var configuration = scratch.configuration([Gauge.self])
        configuration.events = log.handler
        let realm = try Realm(configuration: configuration)
        #expect(log.opened.map(\.path) == [configuration.fileURL!.path])
        #expect(log.opened.first?.version == 0)
        #expect(log.opened.first?.recovered == false)
        // Opening a new file stored the schema: one commit, the Realm's current version.
        #expect(log.commits.map(\.version) == [realm.currentSnapshot.version])
        for round in 1...3 {
            try realm.write { realm.add(Gauge(value: ["id": round, "reading": round * 10])) }
            #expect(log.commits.last?.version == realm.currentSnapshot.version)
        }
        #expect(log.commits.count == 4)
        #expect(log.commits.allSatisfy { $0.durable && $0.pagesWritten > 0 && $0.nanosecondsToDurable > 0 })
        #expect(log.all.allSatisfy { !$0.description.isEmpty && !$0.description.contains("\n") })
    }

    @Test func migrationReportsProgressPerClassEndingAtItsObjectCount() throws {
        let scratch = try Scratch()
        let url = scratch.url.appendingPathComponent("migrated.strata")
        do {
            let realm = try Realm(
                configuration: Realm.Configuration(fileURL: url, objectTypes: [Gauge.self, Probe.self]))
            try realm.write {
                for id in 0..<250 { realm.add(Gauge(value: ["id": id, "reading": id])) }
                for serial in 0..<120 { realm.add(Probe(value: ["serial": "p\(serial)"])) }
            }
        }
        let log = EventLog()
        var configuration = Realm.Configuration(
            fileURL: url, schemaVersion: 1, migrationBlock: { _, _ in }, objectTypes: [GaugeV2.self, ProbeV2.self])
        configuration.events = log.handler
        let realm = try Realm(configuration: configuration)
        #expect(realm.objects(GaugeV2.self).count == 250)
        let progress = log.migration
        let byClass = Dictionary(grouping: progress, by: \.className)
        #expect(Set(byClass.keys) == ["EventGauge", "EventProbe"])
        for (_, reports) in byClass {
            #expect(zip(reports, reports.dropFirst()).allSatisfy { $0.objectsDone <= $1.objectsDone })
            #expect(reports.first?.objectsDone == 0)
            #expect(reports.allSatisfy { $0.objectsTotal == reports[0].objectsTotal && $0.path == url.path })
            #expect(reports.last?.objectsDone == reports.last?.objectsTotal)
        }
        #expect(byClass["EventGauge"]?.last?.objectsTotal == 250)
        #expect(byClass["EventProbe"]?.last?.objectsTotal == 120)
        // Per class, the final counts add up to the objects in the file.
        let finals = byClass.values.compactMap { $0.last?.objectsDone }
        #expect(finals.reduce(0, +) == 370)
        #expect(byClass["EventGauge"]!.count > 2)  // progress on the way, not only the start and the end
        #expect(progress.last?.description.hasPrefix("migration \(url.path): ") == true)
    }

    @Test func writeCopyReportsMonotoneProgressEndingAtTheTotal() throws {
        let scratch = try Scratch()
        let log = EventLog()
        var configuration = scratch.configuration([Gauge.self])
        configuration.events = log.handler
        let realm = try Realm(configuration: configuration)
        try realm.write {
            for id in 0..<2000 { realm.add(Gauge(value: ["id": id, "label": String(repeating: "x", count: 40)])) }
        }
        let copy = scratch.url.appendingPathComponent("copy.strata")
        try realm.writeCopy(toFile: copy)
        let progress = log.copies
        let total = try #require(progress.last?.pagesTotal)
        #expect(total > 10)
        #expect(progress.count >= 3)
        #expect(progress.allSatisfy { $0.pagesTotal == total && $0.destination == copy.path && $0.operation == .copy })
        #expect(zip(progress, progress.dropFirst()).allSatisfy { $0.pagesDone <= $1.pagesDone })
        #expect(progress.last?.pagesDone == total)
    }

    @Test func aFrozenRealmHoldingManyVersionsIsReported() throws {
        let log = EventLog()
        var configuration = Realm.Configuration(
            inMemoryIdentifier: "events-pinned-\(UUID())", objectTypes: [Gauge.self])
        configuration.events = log.handler
        let realm = try Realm(configuration: configuration)
        try realm.write { realm.add(Gauge(value: ["id": 1])) }
        let frozen = realm.freeze()
        let frozenVersion = try #require(frozen.pinned?.version)
        let gauge = try #require(realm.object(ofType: Gauge.self, forPrimaryKey: 1))
        for reading in 1...300 { try realm.write { gauge.reading = reading } }
        let warnings = log.pinned
        #expect(warnings.map(\.versionsBehind) == [128, 256])
        for warning in warnings {
            #expect(warning.pinnedVersion == frozenVersion)
            #expect(warning.inThisProcess)
            #expect(warning.readers >= 1)
            #expect(warning.pid == Int(getpid()))
            #expect(warning.pagesHeld >= Int(warning.versionsBehind))
            #expect(warning.bytesHeld == warning.pagesHeld * 4096)
        }
        #expect(frozen.objects(Gauge.self).first?.reading == 0)
    }

    @Test func damageAReadFoundIsReportedWithItsPage() throws {
        let scratch = try Scratch()
        let configuration = scratch.configuration([Gauge.self, Probe.self])
        do {
            let realm = try Realm(configuration: configuration)
            try realm.write {
                for id in 1...3 { realm.add(Gauge(value: ["id": id, "label": "needle-\(id)"])) }
            }
            try realm.write { realm.add(Probe(value: ["serial": "later"])) }
        }
        // Zero the page holding the gauges (not written by the newest commit), with no log to repair it from.
        let path = configuration.fileURL!.path
        for suffix in [".log", ".lock"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        var bytes = [UInt8](try Data(contentsOf: configuration.fileURL!))
        let needle = Array("needle-2".utf8)
        let offset = try #require(
            (0...(bytes.count - needle.count)).first { bytes[$0..<($0 + needle.count)].elementsEqual(needle) })
        let page = offset / 4096
        bytes.replaceSubrange(page * 4096..<(page + 1) * 4096, with: repeatElement(0, count: 4096))
        try Data(bytes).write(to: configuration.fileURL!)

        let log = EventLog()
        var watched = configuration
        watched.events = log.handler
        let realm = try Realm(configuration: watched)
        #expect(log.damage.isEmpty)
        #expect(realm.object(ofType: Gauge.self, forPrimaryKey: 2)?.label ?? "" == "")
        let damage = try #require(log.damage.first)
        #expect(log.damage.count == 1)
        #expect(damage.page == UInt32(page))
        #expect(damage.path == path)
        #expect(damage.reason == realm.damage?.description)
        // Later reads of the same damage report nothing more: the first is what the app is told about.
        _ = realm.object(ofType: Gauge.self, forPrimaryKey: 1)?.label
        #expect(log.damage.count == 1)
    }

    /// A Realm whose configuration has no handler reports nothing; a Realm on the same file with one reports only
    /// what it does itself.
    @Test func aConfigurationWithoutAHandlerReportsNothing() throws {
        let scratch = try Scratch()
        let log = EventLog()
        var watchedConfiguration = scratch.configuration([Gauge.self])
        watchedConfiguration.events = log.handler
        let watched = try Realm(configuration: watchedConfiguration)
        let before = log.all.count
        // Another instance (as another thread's would be: on this one the cache would return `watched`).
        let quiet = try Realm.independent(scratch.configuration([Gauge.self]))
        #expect(quiet.configuration.events == nil)
        for id in 0..<5 { try quiet.write { quiet.add(Gauge(value: ["id": id])) } }
        try quiet.writeCopy(toFile: scratch.url.appendingPathComponent("quiet-copy.strata"))
        #expect(log.all.count == before)
        try watched.write { watched.add(Gauge(value: ["id": 99])) }
        #expect(log.commits.last?.version == watched.currentSnapshot.version)
    }
}

import Foundation
@_spi(StrataSync) import Strata
import Testing

/// Strata Sync's change capture is atomic with the write and survives kill -9: a child process commits captured
/// writes in a loop (`sync-capture-loop`) and is killed with SIGKILL at random moments. After each kill the file
/// must hold every write the child acknowledged, and its upload queue must say exactly what the file holds: one
/// entry per write, gap-free sequences, and replaying the entries from an empty file gives the file's objects. A
/// queue entry committed apart from its write would leave a write without an entry (or an entry without its write)
/// whenever the kill falls between the two.
@Suite("Sync capture crash (SIGKILL)", .serialized)
struct SyncCaptureCrashTests {
    static var kills: Int { soak ? 500 : 30 }

    @Test func killedWriterKeepsItsQueueInStepWithItsData() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("capture.strata")
        var generator = SystemRandomNumberGenerator()
        var acknowledged = 0  // highest acknowledged write so far
        for round in 0..<Self.kills {
            let child = try Child(["sync-capture-loop", path, "\(round + 1)"])
            // Let it run for a random number of writes, then kill it wherever it is.
            for _ in 0..<Int.random(in: 1...30, using: &generator) {
                guard let line = child.readLine() else { break }
                let parts = line.split(separator: " ")
                if parts.count == 2, parts[0] == "acked", let n = Int(parts[1]) { acknowledged = n }
            }
            child.kill()
            try checkQueueMatchesData(path: path, acknowledged: acknowledged, round: round)
        }
        #expect(acknowledged > Self.kills, "the child acknowledged only \(acknowledged) writes")
    }

    /// Reopens the file (capture off) and checks the queue against the data.
    private func checkQueueMatchesData(path: String, acknowledged: Int, round: Int) throws {
        let realm = try Realm(
            configuration: Realm.Configuration(
                fileURL: URL(fileURLWithPath: path), objectTypes: [CaptureCounter.self, CaptureItem.self]))
        realm.refresh()
        let counter = realm.object(ofType: CaptureCounter.self, forPrimaryKey: 1)?.counter ?? 0
        #expect(counter >= acknowledged, "round \(round): the file holds \(counter) writes, \(acknowledged) acked")

        let queue = try realm.syncQueue()
        let gap = queue.indices.first { queue[$0].sequence != Int64($0) + 1 }
        #expect(
            gap == nil, "round \(round): queue entry \(gap ?? 0) has sequence \(gap.map { queue[$0].sequence } ?? 0)")

        // Replay the queue from an empty file: each entry sets the counter to its write's number, in order, and
        // the items come out as the file holds them.
        var counters: [Int] = []
        var items: [CapturedValue: [String: CapturedValue]] = [:]
        for entry in queue {
            for change in entry.changes {
                switch change.className {
                case "CaptureCounter":
                    if case .int(let value) = change.values["counter"] { counters.append(Int(value)) }
                case "CaptureItem":
                    if change.isDeleted {
                        items[change.primaryKey] = nil
                    } else if change.isCreated {
                        items[change.primaryKey] = change.values
                    } else {
                        items[change.primaryKey, default: [:]].merge(change.values) { $1 }
                    }
                default:
                    Issue.record("round \(round): entry \(entry.sequence) changes \(change.className)")
                }
            }
        }
        // Entry k sets the counter to k, and the last one to the file's counter: no write without its entry, no
        // entry without its write.
        let wrong = counters.indices.first { counters[$0] != $0 + 1 }
        let wrongValue = wrong.map { counters[$0] } ?? 0
        #expect(
            wrong == nil && counters.count == counter,
            "round \(round): file counter \(counter), \(counters.count) entries, entry \((wrong ?? -1) + 1) sets \(wrongValue)"
        )
        #expect(counters.count == queue.count, "round \(round): an entry that does not number its write")
        var stored: [CapturedValue: [String: CapturedValue]] = [:]
        for item in realm.objects(CaptureItem.self) {
            stored[.int(Int64(item.id))] = ["value": .int(Int64(item.value)), "label": .string(item.label)]
        }
        let differing = Set(items.keys).union(stored.keys).filter { items[$0] != stored[$0] }
        #expect(differing.isEmpty, "round \(round): replaying the queue gives other values for items \(differing)")
    }
}

/// The child's classes (see IntegrationTests/Child/SyncCaptureLoop.swift), for reading its file.
final class CaptureCounter: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var counter = 0
}

final class CaptureItem: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var value = 0
    @Persisted var label = ""
}

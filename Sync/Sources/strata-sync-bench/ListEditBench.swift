import Foundation
@_spi(StrataSync) import Strata
import StrataSync

/// The list of the list-edit rows: one object holding a long list of strings.
final class BenchList: Object {
    @Persisted(primaryKey: true) var id: Int
    @Persisted var items: List<String>
}

/// Stamps captured commits as the sync client does (hybrid timestamps), without a server.
final class BenchRecorder: SyncCaptureRecorder {
    let clock = HybridLogicalClock(replica: "bench")
    func stamp() -> String { clock.now().description }
}

/// The commit of one edit of a synced list of `elements` strings (capture on, as a `SyncClient` turns it on)
/// against the same edit of the same list in a file without capture: one append, one insert at 0, one removal in
/// the middle, `rounds` times each, alternating which file goes first. Median milliseconds per write
/// transaction (the edit and its durable commit). Needs no PostgreSQL: the capture runs inside Strata.
func measureListEdits(in directory: URL, elements: Int = 20_000, rounds: Int = 15) throws -> [(String, String, String)]
{
    func configuration(_ name: String) -> Realm.Configuration {
        Realm.Configuration(fileURL: directory.appendingPathComponent("\(name).strata"), objectTypes: [BenchList.self])
    }
    let synced = configuration("list-synced")
    let plain = configuration("list-plain")
    synced.startSyncCapture(classes: ["BenchList"], recorder: BenchRecorder())
    defer { synced.stopSyncCapture() }
    let values = (0..<elements).map { "item \($0)" }
    for target in [synced, plain] {
        let realm = try Realm(configuration: target)
        try realm.write { realm.create(BenchList.self, value: ["id": 1, "items": values]) }
    }
    let edits: [(String, (List<String>) -> Void)] = [
        ("append", { $0.append("appended") }),
        ("insert at 0", { $0.insert("first", at: 0) }),
        ("remove in the middle", { $0.remove(at: $0.count / 2) }),
    ]
    var rows: [(String, String, String)] = []
    for (name, edit) in edits {
        var times: [Bool: [Double]] = [true: [], false: []]
        for round in 0..<rounds {
            let order = [(synced, true), (plain, false)]
            for (target, isSynced) in round.isMultiple(of: 2) ? order : order.reversed() {
                let realm = try Realm(configuration: target)
                let list = realm.object(ofType: BenchList.self, forPrimaryKey: 1)!.items
                let elapsed = try ContinuousClock().measure { try realm.write { edit(list) } }
                times[isSynced]!.append(milliseconds(elapsed))
            }
        }
        let syncedMedian = quantile(times[true]!.sorted(), 0.5)
        let plainMedian = quantile(times[false]!.sorted(), 0.5)
        rows.append(
            (
                "list of \(elements) strings, one \(name): commit with capture / without",
                "\(format(syncedMedian, 2)) / \(format(plainMedian, 2)) ms", ""
            ))
    }
    return rows
}

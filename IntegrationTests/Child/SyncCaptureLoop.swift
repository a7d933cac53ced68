import Foundation
@_spi(StrataSync) import Strata
import StrataTestSupport

// Mode `sync-capture-loop PATH SEED` (for SyncCaptureCrashTests: Strata Sync's upload queue survives kill -9 in step
// with the data): opens PATH with change capture on for both classes below and commits until it is killed. Write n
// sets CaptureCounter 1's `counter` to n and creates, updates or deletes up to four CaptureItems (ids 0..<40) at
// random; after `write` returns it prints "acked n". On a file written before, it continues after the file's
// counter, so the rounds of a test build one history.

/// One object every write changes: its `counter` numbers the writes.
final class CaptureCounter: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var counter = 0
}

/// Objects the writes create, change and delete.
final class CaptureItem: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var value = 0
    @Persisted var label = ""
}

/// Stamps every captured write alike: the test checks order by the queue's sequences, not by timestamps.
final class FixedStampRecorder: SyncCaptureRecorder {
    func stamp() -> String { "sync-capture-loop" }
}

func runSyncCaptureLoop(_ arguments: [String]) throws {
    guard arguments.count >= 4, let seed = UInt64(arguments[3]) else { fail("sync-capture-loop needs PATH SEED") }
    let path = arguments[2]
    let configuration = Realm.Configuration(
        fileURL: URL(fileURLWithPath: path), objectTypes: [CaptureCounter.self, CaptureItem.self])
    configuration.startSyncCapture(classes: ["CaptureCounter", "CaptureItem"], recorder: FixedStampRecorder())
    let realm = try Realm(configuration: configuration)
    var generator = SeededGenerator(seed: seed)
    var n = realm.object(ofType: CaptureCounter.self, forPrimaryKey: 1)?.counter ?? 0
    while true {
        n += 1
        try realm.write {
            let counter =
                realm.object(ofType: CaptureCounter.self, forPrimaryKey: 1)
                ?? realm.create(CaptureCounter.self, value: ["id": 1])
            counter.counter = n
            for _ in 0..<Int.random(in: 0...4, using: &generator) {
                let id = Int.random(in: 0..<40, using: &generator)
                if let item = realm.object(ofType: CaptureItem.self, forPrimaryKey: id) {
                    if Bool.random(using: &generator) {
                        realm.delete(item)
                    } else {
                        item.value = n
                        if Bool.random(using: &generator) { item.label = "changed by \(n)" }
                    }
                } else {
                    realm.create(CaptureItem.self, value: ["id": id, "value": n, "label": "created by \(n)"])
                }
            }
        }
        say("acked \(n)")
    }
}

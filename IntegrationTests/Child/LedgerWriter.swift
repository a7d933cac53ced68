import Foundation
import Strata

// Mode `write-ledger PATH` (for the CLI tests: a file another process is writing while `strata` reads it): creates
// the file at schema version 1, migrates it to version 2, then commits until it is killed. Commit n adds
// LedgerEntry n (seq n, amount n), deletes entry n - 100 (the file keeps its size, and freed pages are reused
// under the readers' feet), and sets LedgerTotal 1 to count n and sum 1 + … + n; after each commit returns it
// prints "committed n".

/// Schema version 1 of `LedgerEntry`.
final class LedgerEntryV1: Object {
    @Persisted(primaryKey: true) var seq = 0
    @Persisted var amount = 0
    override class func className() -> String { "LedgerEntry" }
}

/// Schema version 2: a note and a time.
final class LedgerEntry: Object {
    @Persisted(primaryKey: true) var seq = 0
    @Persisted var amount = 0
    @Persisted var note = ""
    @Persisted var at: Date?
}

final class LedgerTotal: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var count = 0
    @Persisted var sum = 0
}

func writeLedger(path: String) throws {
    let url = URL(fileURLWithPath: path)
    do {
        let realm = try Realm(configuration: .init(fileURL: url, schemaVersion: 1, objectTypes: [LedgerEntryV1.self]))
        try realm.write { realm.create(LedgerEntryV1.self, value: ["seq": 1, "amount": 1]) }
    }
    var configuration = Realm.Configuration(
        fileURL: url, schemaVersion: 2, objectTypes: [LedgerEntry.self, LedgerTotal.self])
    configuration.migrationBlock = { migration, _ in
        migration.enumerateObjects(ofType: "LedgerEntry") { _, new in new?["note"] = "from version 1" }
    }
    let realm = try Realm(configuration: configuration)
    try realm.write { realm.create(LedgerTotal.self, value: ["id": 1, "count": 1, "sum": 1]) }
    say("committed 1")
    var count = 1
    while true {
        count += 1
        try realm.write {
            realm.create(
                LedgerEntry.self, value: ["seq": count, "amount": count, "note": "entry \(count)", "at": Date()])
            if let old = realm.object(ofType: LedgerEntry.self, forPrimaryKey: count - 100) { realm.delete(old) }
            let total = realm.object(ofType: LedgerTotal.self, forPrimaryKey: 1)!
            total.count = count
            total.sum += count
        }
        say("committed \(count)")
    }
}

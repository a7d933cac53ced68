import BenchSupport
import Foundation
import Strata

// The write paths of issue 25, Strata against SQLite driven through prepared statements (WritePathsSQLite.swift):
// insert, update one property, upsert existing objects, and delete a scattered 10% with and without an index and
// backlinks. Each case runs on the same objects as `Item` (five properties incl. the primary key).

/// `Item` with its Int property indexed: deleting one also removes its index entry.
final class IndexedItem: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var name = ""
    @Persisted(indexed: true) var count = 0
    @Persisted var score = 0.0
    @Persisted var date = Date(timeIntervalSinceReferenceDate: 0)
}

/// `Item` as the target of a link: deleting one clears the link of the `ItemReferrer` pointing at it.
final class LinkedItem: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var name = ""
    @Persisted var count = 0
    @Persisted var score = 0.0
    @Persisted var date = Date(timeIntervalSinceReferenceDate: 0)
    @Persisted(originProperty: "target") var referrers: LinkingObjects<ItemReferrer>
}

/// One per `LinkedItem` (same id), linking to it.
final class ItemReferrer: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var target: LinkedItem?
}

/// The five properties of every object the write cases make (`Item`, `IndexedItem`, `LinkedItem`).
protocol NumberedItem: Object {
    var id: Int { get set }
    var name: String { get set }
    var count: Int { get set }
    var score: Double { get set }
    var date: Date { get set }
}

extension NumberedItem {
    /// A new unmanaged object with the values of object `index` (see `WritePaths.name(_:)`). Used where the
    /// objects are set up, not where an insert is timed: the timed loops stay written out as a user writes them.
    static func numbered(_ index: Int) -> Self {
        let item = Self()
        item.id = index
        item.name = WritePaths.name(index)
        item.count = index
        item.score = WritePaths.score(index)
        item.date = WritePaths.date(index)
        return item
    }
}

extension Item: NumberedItem {}
extension IndexedItem: NumberedItem {}
extension LinkedItem: NumberedItem {}

/// One row of the write-path table.
enum WriteCase: String, CaseIterable {
    case insert = "Insert 5 properties incl. primary key, 1 write"
    case update = "Update 1 property of every object, 1 write"
    case upsert = "Upsert every existing object, 1 write"
    case delete = "Delete 10% scattered, 1 write"
    case deleteIndexed = "Delete 10% scattered, with an indexed property, 1 write"
    case deleteLinked = "Delete 10% scattered, with backlinks, 1 write"

    /// What each side does, for the table's first column.
    var detail: String {
        switch self {
        case .insert: "Strata `realm.add`; SQLite prepared `INSERT`"
        case .update: "Strata `item.score += 1` over `objects(Item.self)`; SQLite `UPDATE … WHERE id = ?` row by row"
        case .upsert:
            "Strata `create(Item.self, value: [5 values], update: .modified)`, one value changed; "
                + "SQLite `INSERT … ON CONFLICT(id) DO UPDATE`"
        case .delete: "Strata `object(ofType:forPrimaryKey:)` + `delete`; SQLite `DELETE … WHERE id = ?`"
        case .deleteIndexed: "`@Persisted(indexed: true)` Int; SQLite `CREATE INDEX` on it"
        case .deleteLinked:
            "a `LinkingObjects` target, one referrer each; SQLite a foreign key `ON DELETE SET NULL`, indexed"
        }
    }

    /// Objects written or deleted by one timed run.
    func operations(size: Int) -> Int {
        switch self {
        case .insert, .update, .upsert: size
        case .delete, .deleteIndexed, .deleteLinked: (size + 9) / 10
        }
    }

    /// The target for this row, as the table states it.
    var target: String {
        switch self {
        case .insert: "≤ 800 ns/object, ≤ 0.50×"
        case .update: "≤ 300 ns/object, ≤ 0.50×"
        case .upsert: "≤ 1.5× Strata's update"
        case .delete, .deleteIndexed, .deleteLinked: "≤ 1.00×"
        }
    }
}

/// The times of one run of every write case.
struct WriteTimes {
    var strata: [WriteCase: Duration] = [:]
    var sqlite: [WriteCase: Duration] = [:]
    /// SQLite's update as one statement, `UPDATE item SET score = score + 1`: a reference, not a target.
    var sqliteOneStatementUpdate: Duration = .zero
}

enum WritePaths {
    /// The objects the delete cases remove: every 10th key of all keys shuffled with a fixed seed, so every run
    /// and both engines delete the same scattered keys in the same order.
    static func victims(size: Int) -> [Int] {
        var generator = SplitMix64(seed: 25)
        let shuffled = Array(0..<size).shuffled(using: &generator)
        return stride(from: 0, to: size, by: 10).map { shuffled[$0] }
    }

    /// The values of object `index`, as the object benchmark writes them; `score` is varied by the updates.
    static func name(_ index: Int) -> String { "item \(index)" }
    static func score(_ index: Int) -> Double { Double(index) * 0.5 }
    static func date(_ index: Int) -> Date { base + Double(index) }

    /// One run of every case on fresh Strata files in `directory`.
    static func runStrata(size: Int, directory: URL) throws -> [WriteCase: Duration] {
        var times: [WriteCase: Duration] = [:]
        let victims = victims(size: size)
        do {
            let realm = try Realm(
                configuration: Realm.Configuration(
                    fileURL: directory.appendingPathComponent("writes.strata"), objectTypes: [Item.self]))
            times[.insert] = try time {
                try realm.write {
                    for index in 0..<size {
                        let item = Item()
                        item.id = index
                        item.name = name(index)
                        item.count = index
                        item.score = score(index)
                        item.date = date(index)
                        realm.add(item)
                    }
                }
            }
            try check(realm.objects(Item.self).count == size, "strata writes: insert count")
            times[.update] = try time {
                try realm.write {
                    for item in realm.objects(Item.self) { item.score += 1 }
                }
            }
            let last = size - 1
            try check(
                realm.object(ofType: Item.self, forPrimaryKey: last)?.score == score(last) + 1, "strata writes: update")
            times[.upsert] = try time {
                try realm.write {
                    for index in 0..<size {
                        realm.create(
                            Item.self,
                            value: [
                                "id": index, "name": name(index), "count": index, "score": score(index) + 2,
                                "date": date(index),
                            ], update: .modified)
                    }
                }
            }
            let upserted = realm.object(ofType: Item.self, forPrimaryKey: last)
            try check(
                realm.objects(Item.self).count == size && upserted?.score == score(last) + 2
                    && upserted?.count == last && upserted?.name == name(last),
                "strata writes: upsert")
            times[.delete] = try time {
                try realm.write {
                    for key in victims {
                        if let item = realm.object(ofType: Item.self, forPrimaryKey: key) { realm.delete(item) }
                    }
                }
            }
            try check(
                realm.objects(Item.self).count == size - victims.count
                    && realm.object(ofType: Item.self, forPrimaryKey: victims[0]) == nil,
                "strata writes: delete")
        }
        do {
            let realm = try Realm(
                configuration: Realm.Configuration(
                    fileURL: directory.appendingPathComponent("indexed.strata"), objectTypes: [IndexedItem.self]))
            try realm.write {
                for index in 0..<size {
                    realm.add(IndexedItem.numbered(index))
                }
            }
            times[.deleteIndexed] = try time {
                try realm.write {
                    for key in victims {
                        if let item = realm.object(ofType: IndexedItem.self, forPrimaryKey: key) { realm.delete(item) }
                    }
                }
            }
            // The index answers for the survivors and no longer for the deleted.
            try check(
                realm.objects(IndexedItem.self).count == size - victims.count
                    && realm.objects(IndexedItem.self).filter("count == $0", victims[0]).isEmpty
                    && realm.objects(IndexedItem.self).filter("count == $0", survivor(size: size)).count == 1,
                "strata writes: indexed delete")
        }
        do {
            let realm = try Realm(
                configuration: Realm.Configuration(
                    fileURL: directory.appendingPathComponent("linked.strata"),
                    objectTypes: [LinkedItem.self, ItemReferrer.self]))
            try realm.write {
                for index in 0..<size {
                    let item = LinkedItem.numbered(index)
                    realm.add(item)
                    let referrer = ItemReferrer()
                    referrer.id = index
                    referrer.target = item
                    realm.add(referrer)
                }
            }
            times[.deleteLinked] = try time {
                try realm.write {
                    for key in victims {
                        if let item = realm.object(ofType: LinkedItem.self, forPrimaryKey: key) { realm.delete(item) }
                    }
                }
            }
            try check(
                realm.objects(LinkedItem.self).count == size - victims.count
                    && realm.objects(ItemReferrer.self).filter("target == nil").count == victims.count
                    && realm.object(ofType: ItemReferrer.self, forPrimaryKey: victims[0])?.target == nil,
                "strata writes: delete with backlinks")
        }
        return times
    }

    /// A key the delete cases keep.
    static func survivor(size: Int) -> Int {
        let deleted = Set(victims(size: size))
        return (0..<size).first { !deleted.contains($0) } ?? 0
    }
}

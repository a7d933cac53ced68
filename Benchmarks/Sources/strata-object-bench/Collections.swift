import BenchSupport
import Foundation
import GRDB
import Strata

/// The owner of the benchmarked collections.
final class Bag: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var numbers: List<Int>
    @Persisted var settings: Map<String, Int>
}

/// Collection workloads: a List of `listSize` Ints (append all in one write, 1,000 random positional inserts and
/// removes, iterate) and a Map of `mapSize` entries (set all in one write, get every key), against GRDB with a
/// join table (`owner, position, value`) and a key/value table (`owner, key, value`).
struct CollectionResults {
    /// One row: the times and the operations each engine did (they differ only where the GRDB side is O(n) per
    /// operation and would take minutes); `key`, `size` and `unit` name it in the machine-readable results.
    struct Row {
        var title: String
        var strata: Duration
        var grdb: Duration
        var operations: Int
        var grdbOperations: Int
        var key: String
        var size: Int
        var unit: String
    }

    var rows: [Row] = []
}

func runCollections(listSize: Int, mapSize: Int, directory: URL) throws -> CollectionResults {
    var results = CollectionResults()
    var generator = SystemRandomNumberGenerator()
    let edits = 1_000
    let positions = (0..<edits).map { _ in Int.random(in: 0..<listSize, using: &generator) }
    // A positional insert in SQL renumbers the tail: O(n) per operation, so GRDB does fewer of them.
    let grdbEdits = max(10, min(edits, 2_000_000 / listSize))

    // Strata
    let realm = try Realm(
        configuration: Realm.Configuration(
            fileURL: directory.appendingPathComponent("bag.strata"), objectTypes: [Bag.self]))
    try realm.write { realm.add(Bag(value: ["id": 1])) }
    let bag = realm.object(ofType: Bag.self, forPrimaryKey: 1)!
    log("  strata list append")
    let strataAppend = try time { try realm.write { for value in 0..<listSize { bag.numbers.append(value) } } }
    log("  strata list edits")
    let strataEdit = try time {
        try realm.write {
            for position in positions {
                bag.numbers.insert(-1, at: position)
                bag.numbers.remove(at: (position + 1) % bag.numbers.count)
            }
        }
    }
    var sum = 0
    let strataIterate = time { for value in bag.numbers { sum &+= value } }
    try check(bag.numbers.count == listSize, "strata list size")
    log("  strata map")
    let strataMapSet = try time {
        try realm.write { for index in 0..<mapSize { bag.settings["key\(index)"] = index } }
    }
    var found = 0
    let strataMapGet = time { for index in 0..<mapSize where bag.settings["key\(index)"] == index { found += 1 } }
    try check(found == mapSize, "strata map gets")

    // GRDB
    var config = Configuration()
    config.journalMode = .wal
    let queue = try DatabaseQueue(path: directory.appendingPathComponent("bag.sqlite").path, configuration: config)
    try queue.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = FULL") }
    try queue.write { db in
        try db.execute(
            sql: """
                CREATE TABLE number(owner INTEGER, position INTEGER, value INTEGER, PRIMARY KEY(owner, position));
                CREATE TABLE setting(owner INTEGER, key TEXT, value INTEGER, PRIMARY KEY(owner, key));
                """)
    }
    let grdbAppend = try time {
        try queue.write { db in
            let statement = try db.makeStatement(sql: "INSERT INTO number(owner, position, value) VALUES (1, ?, ?)")
            for value in 0..<listSize { try statement.execute(arguments: [value, value]) }
        }
    }
    log("  grdb list edits")
    let grdbEdit = try time {
        try queue.write { db in
            var count = listSize
            for position in positions.prefix(grdbEdits) {
                // Positional insert: shift the tail, then insert; positional remove: delete, then shift back.
                try db.execute(
                    sql: "UPDATE number SET position = -(position + 1) WHERE owner = 1 AND position >= ?",
                    arguments: [position])
                try db.execute(
                    sql: "UPDATE number SET position = -position WHERE owner = 1 AND position < 0")
                try db.execute(
                    sql: "INSERT INTO number(owner, position, value) VALUES (1, ?, -1)", arguments: [position])
                count += 1
                let removed = (position + 1) % count
                try db.execute(sql: "DELETE FROM number WHERE owner = 1 AND position = ?", arguments: [removed])
                try db.execute(
                    sql: "UPDATE number SET position = -(position - 1) WHERE owner = 1 AND position > ?",
                    arguments: [removed])
                try db.execute(sql: "UPDATE number SET position = -position WHERE owner = 1 AND position < 0")
                count -= 1
            }
        }
    }
    var grdbSum = 0
    var grdbCount = 0
    let grdbIterate = try time {
        try queue.read { db in
            let cursor = try Int.fetchCursor(db, sql: "SELECT value FROM number WHERE owner = 1 ORDER BY position")
            while let value = try cursor.next() {
                grdbSum &+= value
                grdbCount += 1
            }
        }
    }
    try check(grdbCount == listSize && sum != 0 && grdbSum != 0, "grdb list iterated")
    let grdbMapSet = try time {
        try queue.write { db in
            let statement = try db.makeStatement(
                sql: "INSERT OR REPLACE INTO setting(owner, key, value) VALUES (1, ?, ?)")
            for index in 0..<mapSize { try statement.execute(arguments: ["key\(index)", index]) }
        }
    }
    var grdbFound = 0
    let grdbMapGet = try time {
        try queue.read { db in
            let statement = try db.makeStatement(sql: "SELECT value FROM setting WHERE owner = 1 AND key = ?")
            for index in 0..<mapSize where try Int.fetchOne(statement, arguments: ["key\(index)"]) == index {
                grdbFound += 1
            }
        }
    }
    try check(grdbFound == mapSize, "grdb map gets")

    results.rows = [
        .init(
            title: "List<Int>: append \(listSize) in one write", strata: strataAppend, grdb: grdbAppend,
            operations: listSize, grdbOperations: listSize, key: "List<Int>: append all in one write",
            size: listSize, unit: "element"),
        .init(
            title:
                "List<Int> of \(listSize): random positional insert + remove (Strata \(edits), GRDB \(grdbEdits))",
            strata: strataEdit, grdb: grdbEdit, operations: edits, grdbOperations: grdbEdits,
            key: "List<Int>: random positional insert + remove", size: listSize, unit: "insert + remove"),
        .init(
            title: "List<Int>: iterate \(listSize)", strata: strataIterate, grdb: grdbIterate, operations: listSize,
            grdbOperations: listSize, key: "List<Int>: iterate", size: listSize, unit: "element"),
        .init(
            title: "Map<String, Int>: set \(mapSize) keys in one write", strata: strataMapSet, grdb: grdbMapSet,
            operations: mapSize, grdbOperations: mapSize, key: "Map<String, Int>: set every key in one write",
            size: mapSize, unit: "key"),
        .init(
            title: "Map<String, Int>: get \(mapSize) keys", strata: strataMapGet, grdb: grdbMapGet,
            operations: mapSize, grdbOperations: mapSize, key: "Map<String, Int>: get every key", size: mapSize,
            unit: "key"),
    ]
    return results
}

import BenchSupport
import Foundation
import GRDB
import Strata

/// Two of `Item`'s properties, renamed, as a view model.
final class ItemProjection: Projection<Item> {
    @Projected(\Item.count) var quantity
    @Projected(\Item.score) var rating
}

/// Iterating `size` objects reading two properties: through `ItemProjection`s, over the root objects, and GRDB
/// fetching the same two columns (median of `repeats` passes each).
func runProjections(size: Int, repeats: Int, directory: URL) throws -> (
    projections: Duration, objects: Duration, grdb: Duration
) {
    let realm = try Realm(
        configuration: Realm.Configuration(
            fileURL: directory.appendingPathComponent("projections.strata"), objectTypes: [Item.self]))
    try realm.write {
        for index in 0..<size { realm.add(Item(value: ["id": index, "count": index, "score": Double(index) * 0.5])) }
    }
    let expected = size * (size - 1) / 2
    var projectionTimes: [Duration] = []
    var objectTimes: [Duration] = []
    for _ in 0..<repeats {
        var sum = 0
        var scores = 0.0
        objectTimes.append(
            time {
                for item in realm.objects(Item.self) {
                    sum &+= item.count
                    scores += item.score
                }
            })
        try check(sum == expected && scores > 0, "objects sum")
        sum = 0
        scores = 0
        projectionTimes.append(
            time {
                for item in realm.objects(ItemProjection.self) {
                    sum &+= item.quantity
                    scores += item.rating
                }
            })
        try check(sum == expected && scores > 0, "projections sum")
    }

    var config = Configuration()
    config.journalMode = .wal
    let queue = try DatabaseQueue(
        path: directory.appendingPathComponent("projections.sqlite").path, configuration: config)
    try queue.write { db in
        try db.execute(sql: "CREATE TABLE item (id INTEGER PRIMARY KEY, count INTEGER NOT NULL, score REAL NOT NULL)")
        let statement = try db.makeStatement(sql: "INSERT INTO item (id, count, score) VALUES (?, ?, ?)")
        for index in 0..<size { try statement.execute(arguments: [index, index, Double(index) * 0.5]) }
    }
    var grdbTimes: [Duration] = []
    for _ in 0..<repeats {
        var sum = 0
        var scores = 0.0
        grdbTimes.append(
            try time {
                try queue.read { db in
                    let rows = try Row.fetchCursor(db, sql: "SELECT count, score FROM item")
                    while let row = try rows.next() {
                        sum &+= row[0] as Int
                        scores += row[1] as Double
                    }
                }
            })
        try check(sum == expected && scores > 0, "grdb sum")
    }
    return (median(projectionTimes), median(objectTimes), median(grdbTimes))
}

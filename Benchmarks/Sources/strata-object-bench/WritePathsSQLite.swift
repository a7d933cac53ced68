import BenchSupport
import Foundation
import GRDB
import GRDBSQLite

// SQLite's side of the write-path rows, as a SQL user who wants speed writes it: no record encoding, statements
// prepared once per case through GRDB's connection and driven through their raw `sqliteStatement` handles
// (`sqlite3_bind_*`, `sqlite3_step`, `sqlite3_reset`), so no argument boxing per row. Same settings as the GRDB
// records of the object benchmark: WAL, synchronous=FULL, default page cache, each case one transaction.

extension WritePaths {
    /// The item table: the five columns of `Item`, the date as a REAL (seconds since 1970).
    static func createItemTable(_ db: Database, _ table: String) throws {
        try db.execute(
            sql: """
                CREATE TABLE \(table)(id INTEGER PRIMARY KEY, name TEXT NOT NULL, count INTEGER NOT NULL,
                                      score REAL NOT NULL, date REAL NOT NULL)
                """)
    }

    /// A fresh WAL database at `path` with synchronous=FULL (GRDB's WAL setup picks NORMAL).
    static func openSQLite(_ path: String) throws -> DatabaseQueue {
        var config = Configuration()
        config.journalMode = .wal
        let queue = try DatabaseQueue(path: path, configuration: config)
        try queue.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = FULL") }
        return queue
    }

    /// Steps `statement` once (it must not return rows) and resets it for the next row.
    static func step(_ db: Database, _ statement: Statement, _ what: String) throws {
        let handle = statement.sqliteStatement
        let code = sqlite3_step(handle)
        sqlite3_reset(handle)
        guard code == SQLITE_DONE else {
            throw Failure(
                description: "\(what): SQLite error \(code): \(String(cString: sqlite3_errmsg(db.sqliteConnection)))")
        }
    }

    /// Binds object `index`'s five values, with `score` as given, to a statement whose parameters are
    /// `(id, name, count, score, date)`, and steps it.
    static func writeItem(_ db: Database, _ statement: Statement, index: Int, score: Double, _ what: String) throws {
        let handle = statement.sqliteStatement
        sqlite3_bind_int64(handle, 1, Int64(index))
        sqlite3_bind_int64(handle, 3, Int64(index))
        sqlite3_bind_double(handle, 4, score)
        sqlite3_bind_double(handle, 5, date(index).timeIntervalSince1970)
        // SQLITE_STATIC (nil): SQLite reads the text during the step, while the C string is alive.
        try name(index).withCString { text in
            sqlite3_bind_text(handle, 2, text, -1, nil)
            try step(db, statement, what)
        }
    }

    /// Inserts objects `0..<size` into `table` through one prepared statement, in the caller's transaction.
    static func insertItems(_ db: Database, _ table: String, size: Int) throws {
        let insert = try db.makeStatement(
            sql: "INSERT INTO \(table)(id, name, count, score, date) VALUES (?, ?, ?, ?, ?)")
        for index in 0..<size { try writeItem(db, insert, index: index, score: score(index), "insert") }
    }

    /// Deletes `keys` from `table` one by one through a prepared `DELETE … WHERE id = ?`, in one transaction.
    static func deleteItems(_ queue: DatabaseQueue, _ table: String, keys: [Int]) throws -> Duration {
        try time {
            try queue.write { db in
                let delete = try db.makeStatement(sql: "DELETE FROM \(table) WHERE id = ?")
                for key in keys {
                    sqlite3_bind_int64(delete.sqliteStatement, 1, Int64(key))
                    try step(db, delete, "delete")
                }
            }
        }
    }

    /// One run of every case on fresh SQLite files in `directory`.
    static func runSQLite(size: Int, directory: URL) throws -> (
        times: [WriteCase: Duration], oneStatementUpdate: Duration
    ) {
        var times: [WriteCase: Duration] = [:]
        let victims = victims(size: size)
        let last = size - 1
        let queue = try openSQLite(directory.appendingPathComponent("writes.sqlite").path)
        try queue.write { db in try createItemTable(db, "item") }
        times[.insert] = try time { try queue.write { db in try insertItems(db, "item", size: size) } }
        try check(try queue.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM item") } == size, "sqlite insert")
        times[.update] = try time {
            try queue.write { db in
                let update = try db.makeStatement(sql: "UPDATE item SET score = score + 1 WHERE id = ?")
                for index in 0..<size {
                    sqlite3_bind_int64(update.sqliteStatement, 1, Int64(index))
                    try step(db, update, "update")
                }
            }
        }
        let lastScore = {
            try queue.read { try Double.fetchOne($0, sql: "SELECT score FROM item WHERE id = ?", arguments: [last]) }
        }
        try check(try lastScore() == score(last) + 1, "sqlite update row by row")
        let oneStatementUpdate = try time {
            try queue.write { db in try db.execute(sql: "UPDATE item SET score = score + 1") }
        }
        try check(try lastScore() == score(last) + 2, "sqlite update in one statement")
        times[.upsert] = try time {
            try queue.write { db in
                let upsert = try db.makeStatement(
                    sql: """
                        INSERT INTO item(id, name, count, score, date) VALUES (?, ?, ?, ?, ?)
                        ON CONFLICT(id) DO UPDATE SET name = excluded.name, count = excluded.count,
                                                      score = excluded.score, date = excluded.date
                        """)
                for index in 0..<size { try writeItem(db, upsert, index: index, score: score(index) + 3, "upsert") }
            }
        }
        try check(
            try lastScore() == score(last) + 3
                && queue.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM item") } == size,
            "sqlite upsert")
        times[.delete] = try deleteItems(queue, "item", keys: victims)
        try check(
            try queue.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM item") } == size - victims.count,
            "sqlite delete")

        let indexed = try openSQLite(directory.appendingPathComponent("indexed.sqlite").path)
        try indexed.write { db in
            try createItemTable(db, "item")
            try db.execute(sql: "CREATE INDEX item_count ON item(count)")
            try insertItems(db, "item", size: size)
        }
        times[.deleteIndexed] = try deleteItems(indexed, "item", keys: victims)
        try indexed.read { db in
            try check(
                try Int.fetchOne(db, sql: "SELECT count(*) FROM item") == size - victims.count
                    && Int.fetchOne(db, sql: "SELECT count(*) FROM item WHERE count = ?", arguments: [victims[0]]) == 0,
                "sqlite indexed delete")
        }

        // GRDB enables foreign keys on its connections (PRAGMA foreign_keys = ON): the delete nulls the referrers'
        // column, found through its index.
        let linked = try openSQLite(directory.appendingPathComponent("linked.sqlite").path)
        try linked.write { db in
            try createItemTable(db, "item")
            try db.execute(
                sql: """
                    CREATE TABLE referrer(id INTEGER PRIMARY KEY, target INTEGER REFERENCES item(id) ON DELETE SET NULL);
                    CREATE INDEX referrer_target ON referrer(target);
                    """)
            try insertItems(db, "item", size: size)
            let refer = try db.makeStatement(sql: "INSERT INTO referrer(id, target) VALUES (?, ?)")
            for index in 0..<size {
                sqlite3_bind_int64(refer.sqliteStatement, 1, Int64(index))
                sqlite3_bind_int64(refer.sqliteStatement, 2, Int64(index))
                try step(db, refer, "insert referrer")
            }
        }
        times[.deleteLinked] = try deleteItems(linked, "item", keys: victims)
        try linked.read { db in
            try check(
                try Int.fetchOne(db, sql: "PRAGMA foreign_keys") == 1
                    && Int.fetchOne(db, sql: "SELECT count(*) FROM item") == size - victims.count
                    && Int.fetchOne(db, sql: "SELECT count(*) FROM referrer WHERE target IS NULL") == victims.count,
                "sqlite delete with a foreign key")
        }
        return (times, oneStatementUpdate)
    }
}

import GRDB
import GRDBSQLite

/// SQLite through GRDB: GRDB opens and configures the database and manages transactions and statements;
/// the hot loops bind and step GRDB's prepared statements through their raw `sqliteStatement` handles with
/// SQLITE_STATIC blobs (no per-row allocation or value boxing), which is the fastest legitimate use of SQLite.
final class SQLiteEngine: Engine {
    static let name = "SQLite"
    static let slug = "sqlite"
    static let cacheSizeKiB = 1_048_576
    static let settings = """
        SQLite \(String(cString: sqlite3_libversion())) via GRDB 7.10.0: `journal_mode=WAL`, `synchronous=FULL`, \
        `cache_size=-\(cacheSizeKiB)` (1 GiB page cache), page_size 4096, wal_autocheckpoint 1000 (default), \
        mmap off (default); table `CREATE TABLE kv(k BLOB PRIMARY KEY, v BLOB) WITHOUT ROWID`; statements \
        prepared once per workload, blobs bound with SQLITE_STATIC, values read in place with sqlite3_column_blob; \
        bulk inserts in one `BEGIN`…`COMMIT` (GRDB `write`), reads in one read transaction (GRDB `read`), \
        single-put commits in autocommit mode
        """

    private let queue: DatabaseQueue

    private static var configuration: Configuration {
        var config = Configuration()
        config.journalMode = .wal
        config.prepareDatabase { db in
            try db.execute(sql: "PRAGMA cache_size = -\(SQLiteEngine.cacheSizeKiB)")
        }
        return config
    }

    init(directory: String) throws {
        queue = try DatabaseQueue(path: directory + "/bench.sqlite", configuration: Self.configuration)
        // GRDB's WAL setup picks synchronous=NORMAL after prepareDatabase; the comparison needs FULL (a DatabaseQueue
        // has one connection, so the setting holds for every workload).
        try queue.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = FULL") }
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE kv(k BLOB PRIMARY KEY, v BLOB) WITHOUT ROWID")
        }
        // The settings the results claim are the ones in force.
        try queue.inDatabase { db in
            let journal = try String.fetchOne(db, sql: "PRAGMA journal_mode")
            let synchronous = try Int.fetchOne(db, sql: "PRAGMA synchronous")
            let cache = try Int.fetchOne(db, sql: "PRAGMA cache_size")
            guard journal == "wal", synchronous == 2, cache == -SQLiteEngine.cacheSizeKiB else {
                throw BenchError.engine(
                    "SQLite settings not applied: journal_mode=\(journal ?? "?") synchronous=\(synchronous ?? -1) cache_size=\(cache ?? 0)"
                )
            }
        }
    }

    private static func failure(_ db: Database, _ code: Int32, _ what: String) -> BenchError {
        .engine("\(what): SQLite error \(code): \(String(cString: sqlite3_errmsg(db.sqliteConnection)))")
    }

    func insertAll(_ keys: KeyTable) throws {
        try queue.write { db in try Self.insert(keys, firstValue: 0, into: db) }
    }

    /// Inserts every key with its value (value index `firstValue + i`) through one prepared statement. Inside a
    /// transaction the rows commit together; in autocommit mode each statement is its own synced transaction.
    private static func insert(_ keys: KeyTable, firstValue: Int, into db: Database) throws {
        let values = ValueBuffer()
        let statement = try db.makeStatement(sql: "INSERT INTO kv(k, v) VALUES (?, ?)")
        let handle = statement.sqliteStatement
        defer {
            sqlite3_reset(handle)
            sqlite3_clear_bindings(handle)
        }
        for index in 0..<keys.count {
            let value = values.value(for: firstValue + index)
            sqlite3_bind_blob(handle, 1, keys.pointer(index), Int32(KeyTable.keySize), nil)
            sqlite3_bind_blob(handle, 2, value.baseAddress, Int32(value.count), nil)
            let code = sqlite3_step(handle)
            guard code == SQLITE_DONE else { throw failure(db, code, "insert") }
            sqlite3_reset(handle)
        }
    }

    func getAll(_ keys: KeyTable, order: [Int]) throws -> Int {
        try queue.read { db in
            let statement = try db.makeStatement(sql: "SELECT v FROM kv WHERE k = ?")
            let handle = statement.sqliteStatement
            defer {
                sqlite3_reset(handle)
                sqlite3_clear_bindings(handle)
            }
            var good = 0
            for index in order {
                sqlite3_bind_blob(handle, 1, keys.pointer(index), Int32(KeyTable.keySize), nil)
                let code = sqlite3_step(handle)
                if code == SQLITE_ROW {
                    let bytes = sqlite3_column_blob(handle, 0)
                    let count = Int(sqlite3_column_bytes(handle, 0))
                    if ValueBuffer.matches(bytes, count: count, index: index) { good &+= 1 }
                } else if code != SQLITE_DONE {
                    throw Self.failure(db, code, "get")
                }
                sqlite3_reset(handle)
            }
            return good
        }
    }

    func scanAll() throws -> ScanSummary {
        try queue.read { db in
            let statement = try db.makeStatement(sql: "SELECT k, v FROM kv ORDER BY k")
            let handle = statement.sqliteStatement
            defer { sqlite3_reset(handle) }
            var summary = ScanSummary()
            var code = sqlite3_step(handle)
            while code == SQLITE_ROW {
                let key = sqlite3_column_blob(handle, 0)
                let keyCount = Int(sqlite3_column_bytes(handle, 0))
                let value = sqlite3_column_blob(handle, 1)
                let valueCount = Int(sqlite3_column_bytes(handle, 1))
                summary.add(key: key, keyCount: keyCount, value: value, valueCount: valueCount)
                code = sqlite3_step(handle)
            }
            guard code == SQLITE_DONE else { throw Self.failure(db, code, "scan") }
            return summary
        }
    }

    func commitEach(_ keys: KeyTable, firstIndex: Int) throws {
        // Autocommit: each insert is its own transaction, committed (WAL frame synced) on return.
        try queue.writeWithoutTransaction { db in try Self.insert(keys, firstValue: firstIndex, into: db) }
    }

    static func openAndGet(directory: String, keys: KeyTable, index: Int) throws -> Bool {
        // The queue is closed when it is released, at the end of this call.
        let queue = try DatabaseQueue(path: directory + "/bench.sqlite", configuration: configuration)
        return try queue.read { db in
            let statement = try db.makeStatement(sql: "SELECT v FROM kv WHERE k = ?")
            let handle = statement.sqliteStatement
            defer { sqlite3_reset(handle) }
            sqlite3_bind_blob(handle, 1, keys.pointer(index), Int32(KeyTable.keySize), nil)
            let code = sqlite3_step(handle)
            if code == SQLITE_DONE { return false }
            guard code == SQLITE_ROW else { throw failure(db, code, "get") }
            let bytes = sqlite3_column_blob(handle, 0)
            return ValueBuffer.matches(bytes, count: Int(sqlite3_column_bytes(handle, 0)), index: index)
        }
    }

    func entryCount() throws -> Int {
        try queue.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM kv") ?? -1 }
    }
}

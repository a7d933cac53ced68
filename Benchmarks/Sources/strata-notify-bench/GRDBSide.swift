import BenchSupport
import Foundation
import GRDB

// The GRDB half of every workload: a DatabasePool (WAL) with synchronous=FULL, so that its commits are as durable
// as Strata's; observers are ValueObservations iterated as async sequences on their own tasks.

/// The settings the GRDB side uses, as printed in the report.
let grdbSettings =
    "`DatabasePool` (journal_mode=WAL), `PRAGMA synchronous = FULL` on its writer connection (GRDB's WAL setup "
    + "picks NORMAL; set after opening and checked), other settings default (maximumReaderCount 5, statements of "
    + "the observations not cached, as written in the docs)"

/// Opens a pool at `path` with synchronous=FULL and checks that WAL and FULL are in force.
func openPool(_ path: String) throws -> DatabasePool {
    let pool = try DatabasePool(path: path)
    // GRDB's WAL setup runs `PRAGMA synchronous = NORMAL` after `prepareDatabase`, so FULL is set here, on the
    // pool's one writer connection (the only one that commits).
    try pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = FULL") }
    let (journal, synchronous) = try pool.write { db in
        (
            try String.fetchOne(db, sql: "PRAGMA journal_mode") ?? "?",
            try Int.fetchOne(db, sql: "PRAGMA synchronous") ?? -1
        )
    }
    try check(journal == "wal", "GRDB journal_mode is \(journal), expected wal")
    try check(synchronous == 2, "GRDB synchronous is \(synchronous), expected 2 (FULL)")
    return pool
}

/// The SQLite library's version.
func sqliteVersion(_ pool: DatabasePool) throws -> String {
    try pool.read { try String.fetchOne($0, sql: "SELECT sqlite_version()") } ?? "?"
}

/// Creates `tick` with one row (id 1, value 0) for the latency rows.
func createTick(_ pool: DatabasePool) throws {
    try pool.write { db in
        try db.execute(sql: "CREATE TABLE tick(id INTEGER PRIMARY KEY, value INTEGER NOT NULL, stamp REAL NOT NULL)")
        try db.execute(sql: "INSERT INTO tick(id, value, stamp) VALUES (1, 0, 0)")
    }
}

/// Creates `item`, empty, for the throughput and reader rows.
func createItems(_ pool: DatabasePool) throws {
    try pool.write { db in
        try db.execute(sql: "CREATE TABLE item(id INTEGER PRIMARY KEY, value INTEGER NOT NULL, stamp REAL NOT NULL)")
    }
}

/// Starts `count` observers, each a detached task iterating
/// `ValueObservation.tracking { SELECT value FROM tick WHERE id = 1 }.values(in: pool)`; returns once each has
/// received its initial value.
func startGRDBObservers(_ pool: DatabasePool, count: Int, recorder: LatencyRecorder) async -> [Task<Void, Never>] {
    var tasks: [Task<Void, Never>] = []
    for index in 0..<count {
        let (ready, signal) = AsyncStream<Void>.makeStream()
        tasks.append(
            Task.detached {
                defer { signal.finish() }
                let observation = ValueObservation.tracking { db in
                    try Int.fetchOne(db, sql: "SELECT value FROM tick WHERE id = 1")
                }
                var initial = true
                do {
                    for try await value in observation.values(in: pool) {
                        let now = ContinuousClock.now
                        if initial {
                            initial = false
                            signal.finish()
                            continue
                        }
                        guard let value else {
                            recorder.failed(observer: index, "row 1 missing")
                            continue
                        }
                        recorder.saw(observer: index, value: value, at: now)
                    }
                } catch is CancellationError {
                } catch {
                    recorder.failed(observer: index, "error \(error)")
                }
            })
        for await _ in ready { break }
    }
    return tasks
}

/// Commits values 1...`commits` (`UPDATE tick SET value = ?`), each in its own `pool.write`, timestamping right
/// after each returns and waiting until every observer has seen it. Returns false when a commit was not delivered
/// in time.
func runGRDBLatencyWriter(_ pool: DatabasePool, commits: Int, recorder: LatencyRecorder) async throws -> Bool {
    for value in 1...commits {
        let started = ContinuousClock.now
        try await pool.write { db in
            try db.execute(
                sql: "UPDATE tick SET value = ?, stamp = ? WHERE id = 1", arguments: [value, stampNow()])
        }
        let returned = ContinuousClock.now
        recorder.committed(value, started: started, returned: returned)
        guard await recorder.waitForAll(value) else { return false }
    }
    return true
}

/// `writers` tasks, each doing `commits` `pool.write`s of one inserted row; returns the wall time.
func runGRDBThroughput(_ pool: DatabasePool, writers: Int, commits: Int) async throws -> Duration {
    let clock = ContinuousClock()
    let start = clock.now
    try await withThrowingTaskGroup(of: Void.self) { group in
        for index in 0..<writers {
            group.addTask {
                for offset in 0..<commits {
                    let id = index * commits + offset
                    try await pool.write { db in
                        try db.execute(
                            sql: "INSERT INTO item(id, value, stamp) VALUES (?, ?, ?)",
                            arguments: [id, offset, stampNow()])
                    }
                }
            }
        }
        try await group.waitForAll()
    }
    return clock.now - start
}

/// Loads `items` rows with value 1,000 each.
func loadGRDBItems(_ pool: DatabasePool, items: Int) throws {
    try pool.write { db in
        let statement = try db.makeStatement(sql: "INSERT INTO item(id, value, stamp) VALUES (?, 1000, 0)")
        for id in 0..<items { try statement.execute(arguments: [id]) }
    }
}

/// `readers` tasks reading `COUNT(*)` and `SUM(value)` (cached statements) in one `pool.read` each, in a loop until `deadline`, while
/// one task moves a unit of `value` between two rows per `pool.write`. Returns reads, wrong answers, commits.
func runGRDBReaders(
    _ pool: DatabasePool, readers: Int, items: Int, sum: Int, until deadline: ContinuousClock.Instant
) async throws -> (reads: Int, wrong: Int, commits: Int) {
    try await withThrowingTaskGroup(of: (reads: Int, wrong: Int, commits: Int).self) { group in
        group.addTask {
            var generator = SplitMix64(seed: 7)
            var commits = 0
            while ContinuousClock.now < deadline {
                let from = Int(generator.next() % UInt64(items))
                let to = Int(generator.next() % UInt64(items))
                try await pool.write { db in
                    try db.execute(
                        sql: "UPDATE item SET value = value - 1, stamp = ? WHERE id = ?", arguments: [stampNow(), from])
                    try db.execute(sql: "UPDATE item SET value = value + 1 WHERE id = ?", arguments: [to])
                }
                commits += 1
            }
            return (0, 0, commits)
        }
        for _ in 0..<readers {
            group.addTask {
                var reads = 0
                var wrong = 0
                while ContinuousClock.now < deadline {
                    let (count, total) = try await pool.read { db in
                        (
                            try Int.fetchOne(db.cachedStatement(sql: "SELECT COUNT(*) FROM item")) ?? -1,
                            try Int.fetchOne(db.cachedStatement(sql: "SELECT SUM(value) FROM item")) ?? -1
                        )
                    }
                    if count != items || total != sum { wrong += 1 }
                    reads += 1
                }
                return (reads, wrong, 0)
            }
        }
        return try await addUp(&group)
    }
}

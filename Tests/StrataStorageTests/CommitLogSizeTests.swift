import Foundation
import Testing

@testable import StrataStorage

/// The commit log is sized to the work: none beside a file nobody writes through it, a small one for a few
/// commits, room for an epoch under a stream of commits, and back down at a checkpoint once the work is small.
@Suite("Commit log size")
struct CommitLogSizeTests {
    private func logSize(_ path: String) -> Int? {
        (try? FileManager.default.attributesOfItem(atPath: path + ".log"))?[.size] as? Int
    }

    /// One commit putting `count` values of `size` bytes under random keys below `keys`.
    private func commit(
        _ store: Store, count: Int, size: Int, keys: Int = 5000, _ generator: inout SeededGenerator
    ) throws {
        try store.write { txn in
            let tree = try #require(try txn.tree(named: "data", create: .keyed))
            for _ in 0..<count {
                let value = [UInt8](repeating: UInt8.random(in: 0...255, using: &generator), count: size)
                try txn.put(key(Int.random(in: 0..<keys, using: &generator)), value, in: tree)
            }
        }
    }

    /// One commit too large for the log (about 600 pages of 4 KiB): `count` new keys from `first` on.
    private func bulkCommit(_ store: Store, first: Int, count: Int = 8000) throws {
        try store.write { txn in
            let tree = try #require(try txn.tree(named: "data", create: .keyed))
            for index in first..<(first + count) {
                try txn.put(key(index), [UInt8](repeating: UInt8(truncatingIfNeeded: index), count: 300), in: tree)
            }
        }
    }

    @Test func aFileNobodyWritesThroughTheLogGetsNone() throws {
        var generator = SeededGenerator(seed: 5)
        let directory = TemporaryDirectory()
        let path = directory.file("new.strata")
        let store = try Store.open(path: path)
        #expect(logSize(path) == nil, "opening a new file makes no log")
        // A first commit too large for the log writes the file directly: still no log.
        try bulkCommit(store, first: 1_000_000)
        #expect(logSize(path) == nil)
        let readOnly = try Store.open(path: path, options: StoreOptions(readOnly: true))
        #expect(try readOnly.read().tree(named: "data")?.count == 8000)
        #expect(logSize(path) == nil)
        // The first small durable commit makes it, with room for a few records and no more.
        try commit(store, count: 1, size: 100, &generator)
        let size = try #require(logSize(path))
        #expect(size <= CommitLog.growthBytes, "\(size) bytes")
        // A compacted copy is one file: no log, no lock file (and nothing half-written on the way).
        let copy = directory.file("copy.strata")
        try store.compact(to: copy)
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        #expect(files == ["copy.strata", "new.strata", "new.strata.lock", "new.strata.log"])
        let reopened = try Store.open(path: copy, options: StoreOptions(readOnly: true))
        #expect(try reopened.verify().isValid)
        #expect(try reopened.read().tree(named: "data")?.count == store.read().tree(named: "data")?.count)
    }

    @Test func theLogGrowsWithACommitStreamAndShrinksAtACheckpoint() throws {
        var generator = SeededGenerator(seed: 9)
        let directory = TemporaryDirectory()
        let path = directory.file("stream.strata")
        let store = try Store.open(path: path)
        let log = try #require(store.shared.commitLog)
        log.growthStep = 16 << 10
        log.checkpointThreshold = 512 << 10
        try bulkCommit(store, first: 1_000_000)  // too large to log: no log yet
        #expect(logSize(path) == nil)
        try commit(store, count: 1, size: 100, &generator)
        let first = try #require(logSize(path))
        #expect(first <= 2 * log.growthStep, "\(first) bytes after one commit")
        // A stream of commits of about ten pages each: the log grows to hold an epoch, and checkpoints keep it
        // from growing further.
        var sizes: [Int] = []
        for _ in 0..<60 {
            try commit(store, count: 10, size: 300, &generator)
            sizes.append(try #require(logSize(path)))
        }
        let peak = try #require(sizes.max())
        let epochMost = log.checkpointThreshold + (CommitLog.maxPages(pageSize: store.pageSize) + 2) * store.pageSize
        #expect(peak >= log.checkpointThreshold, "\(sizes)")
        #expect(peak <= epochMost + 2 * log.growthStep, "\(sizes)")
        // A checkpoint (a commit too large for the log makes one) cuts the log to what the epoch it ends used, and
        // one growth step more.
        let step = log.growthStep
        let used = log.end
        try bulkCommit(store, first: 2_000_000)
        let cut = try #require(logSize(path))
        #expect(cut == (used + step - 1) / step * step + step && cut < peak, "used \(used), cut to \(cut)")
        // The work gets small: three one-put commits. The next checkpoint cuts the log to about their size.
        for _ in 0..<3 { try commit(store, count: 1, size: 100, &generator) }
        try bulkCommit(store, first: 3_000_000)
        let after = try #require(logSize(path))
        #expect(after <= 3 * step && after < peak / 4, "peak \(peak), after the checkpoint \(after)")
        // It grows again on demand, and everything committed is there after reopening.
        try commit(store, count: 10, size: 300, &generator)
        let expected = try contents(of: store.read().tree(named: "data"))
        let reopened = try Store.open(path: path, options: StoreOptions(readOnly: true))
        #expect(try contents(of: reopened.read().tree(named: "data")) == expected)
        #expect(try reopened.verify().isValid)
    }

    /// On a nearly full disk a growth step does not fit: the log then grows by exactly what the record needs, and
    /// once it cannot grow at all it starts over early (a checkpoint) to reuse its space. A commit whose record
    /// does not fit even then fails whole, with the store at its base.
    @Test func onANearlyFullDiskTheLogTakesOnlyWhatCommitsNeed() throws {
        var generator = SeededGenerator(seed: 13)
        let main = FaultInjectingFile(name: "main")
        let logFile = FaultInjectingFile(name: "log")
        // Room for the log's header and eight pages of records: opening needs the header, the first commit its
        // record.
        let limit = 9 * 1024
        logFile.schedule(.init(spaceLimit: limit))
        let store = try Store.open(file: main, log: logFile, options: StoreOptions(pageSize: 1024, durability: .full))
        try commit(store, count: 1, size: 100, &generator)
        #expect(try logFile.size() <= limit)
        for _ in 0..<30 { try commit(store, count: 2, size: 100, &generator) }
        #expect(try logFile.size() <= limit)
        let version = store.latestVersion
        let committed = try contents(of: store.read().tree(named: "data"))
        #expect(version == 31 && committed.count > 30)
        // Twenty scattered puts need a record of about twenty pages: more than the disk has room for.
        #expect(throws: StorageError.diskFull(path: "log")) {
            try commit(store, count: 20, size: 300, &generator)
        }
        #expect(store.latestVersion == version)
        #expect(try contents(of: store.read().tree(named: "data")) == committed)
        // What a power cut leaves now recovers to the last commit that returned.
        let recovered = try Store.open(
            file: FaultInjectingFile(name: "m", image: main.durableImage),
            log: FaultInjectingFile(name: "l", image: logFile.durableImage))
        #expect(recovered.latestVersion == version)
        #expect(try contents(of: recovered.read().tree(named: "data")) == committed)
        #expect(try recovered.verify().isValid)
    }
}

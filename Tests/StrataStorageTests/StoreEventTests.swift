import Foundation
import Synchronization
import Testing

@testable import StrataStorage

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What a handle's event handler (`StoreOptions.events`) receives: the open, commits, checkpoints, copy progress,
/// readers that keep old versions alive, damage; and nothing for a handle without a handler.
@Suite("Store events")
struct StoreEventTests {
    let directory = TemporaryDirectory()

    /// Collects the events of a handle.
    final class EventLog: Sendable {
        private let events = Mutex<[StoreEvent]>([])
        var handler: @Sendable (StoreEvent) -> Void { { event in self.events.withLock { $0.append(event) } } }
        var all: [StoreEvent] { events.withLock { $0 } }
        var opened: [StoreEvent.Opened] { all.compactMap { if case .opened(let e) = $0 { e } else { nil } } }
        var commits: [StoreEvent.Commit] { all.compactMap { if case .committed(let e) = $0 { e } else { nil } } }
        var checkpoints: [StoreEvent.Checkpoint] {
            all.compactMap { if case .checkpointed(let e) = $0 { e } else { nil } }
        }
        var copies: [StoreEvent.CopyProgress] {
            all.compactMap { if case .copyProgress(let e) = $0 { e } else { nil } }
        }
        var pinned: [StoreEvent.PinnedVersions] {
            all.compactMap { if case .pinnedVersions(let e) = $0 { e } else { nil } }
        }
        var damage: [StoreEvent.Damage] { all.compactMap { if case .damage(let e) = $0 { e } else { nil } } }
    }

    func put(_ store: Store, _ key: [UInt8], _ value: [UInt8], tree: String = "data") throws {
        try store.write { txn in
            let handle = try #require(try txn.tree(named: tree, create: .keyed))
            try txn.put(key, value, in: handle)
        }
    }

    @Test func openingReportsTheVersionAndThatNothingWasRecovered() throws {
        let path = directory.file("open.strata")
        try put(try Store.open(path: path, options: StoreOptions(durability: .none)), key(1), key(1))
        let log = EventLog()
        let store = try Store.open(path: path, options: StoreOptions(readOnly: true, events: log.handler))
        #expect(
            log.opened == [
                StoreEvent.Opened(path: path, version: 1, readOnly: true, recovery: nil, replayedCommits: 0)
            ])
        #expect(log.opened.first?.recovered == false)
        #expect(store.latestVersion == 1)
        #expect(log.opened.first?.description == "opened \(path) at version 1 (read-only)")
    }

    /// The state a power cut leaves behind with the commit log: the main file as of its last checkpoint, the log
    /// holding the commits since; the open replays them and says how many.
    @Test func openingAfterAPowerCutReportsTheCommitsReplayedFromTheLog() throws {
        let original = directory.file("original.strata")
        let store = try Store.open(path: original)
        let staleMain = try Data(contentsOf: URL(fileURLWithPath: original))
        for round in 0..<3 { try put(store, key(round), key(round)) }
        let logBytes = try Data(contentsOf: URL(fileURLWithPath: original + ".log"))
        let copy = directory.file("crashed.strata")
        try staleMain.write(to: URL(fileURLWithPath: copy))
        try logBytes.write(to: URL(fileURLWithPath: copy + ".log"))

        let log = EventLog()
        let recovered = try Store.open(path: copy, options: StoreOptions(events: log.handler))
        #expect(recovered.latestVersion == 3)
        let opened = try #require(log.opened.first)
        #expect(opened.version == 3)
        #expect(opened.replayedCommits == 3)
        #expect(opened.recovery == nil)
        #expect(opened.recovered)
        #expect(opened.description.contains("replayed 3 commits from the commit log"))
    }

    @Test func openingPastADamagedNewestCommitReportsTheDroppedVersion() throws {
        let path = directory.file("dropped.strata")
        do {
            // Closed and released before the damage: a later open must open the file afresh.
            let writer = try Store.open(path: path, options: StoreOptions(durability: .none))
            for round in 1...3 { try put(writer, key(1), key(round)) }
        }
        // Version 3 is in meta slot 1: flip a byte of its catalog descriptor.
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
        try handle.seek(toOffset: UInt64(4096 + Meta.catalogOffset + 8))
        let byte = try #require(try handle.read(upToCount: 1))
        try handle.seek(toOffset: UInt64(4096 + Meta.catalogOffset + 8))
        try handle.write(contentsOf: Data([~byte[0]]))
        try handle.close()

        let events = try reopenInFreshProcessState(path)
        let opened = try #require(events.opened.first)
        #expect(opened.version == 2)
        #expect(opened.recovery?.droppedVersion == 3)
        #expect(opened.recovery?.page == 1)
        #expect(opened.recovered)
    }

    /// Opens `path` after every handle of this test on it is gone, collecting the events.
    private func reopenInFreshProcessState(_ path: String) throws -> EventLog {
        let log = EventLog()
        _ = try Store.open(path: path, options: StoreOptions(durability: .none, events: log.handler))
        return log
    }

    /// A delete finds its key's path before copying any page of it: a write that deletes only absent keys of a deep
    /// tree (between its keys, before the first, past the last) changes no page and commits nothing.
    @Test func deletesOfAbsentKeysCopyNoPageAndCommitNothing() throws {
        let log = EventLog()
        let store = try Store.open(
            path: directory.file("absent.strata"),
            options: StoreOptions(pageSize: 1024, durability: .none, events: log.handler))
        try store.write { txn in
            let tree = try #require(try txn.tree(named: "data", create: .keyed))
            for k in stride(from: 2, to: 6_000, by: 2) {
                try txn.put(key(k), [UInt8](repeating: 1, count: 30), in: tree)
            }
        }
        let committed = log.commits.count
        let version = try store.read().version
        try store.write { txn in
            let tree = try #require(try txn.tree(named: "data"))
            for k in [0, 1, 3, 2_999, 5_999, 6_000, 1_000_000] { #expect(try !txn.delete(key(k), in: tree)) }
        }
        #expect(log.commits.count == committed)
        #expect(try store.read().version == version)
    }

    @Test func eachCommitReportsItsVersionPagesBytesAndDurability() throws {
        let log = EventLog()
        let store = try Store.open(path: directory.file("commits.strata"), options: StoreOptions(events: log.handler))
        var versions: [UInt64] = []
        for round in 0..<3 {
            versions.append(
                try store.write { txn in
                    let tree = try #require(try txn.tree(named: "data", create: .keyed))
                    try txn.put(key(round), [UInt8](repeating: 7, count: 100), in: tree)
                    return txn.version
                })
        }
        #expect(versions == [1, 2, 3])
        #expect(log.commits.map(\.version) == versions)
        for commit in log.commits {
            #expect(commit.pagesWritten >= 2)  // a leaf and the catalog at least
            #expect(commit.bytesWritten == commit.pagesWritten * store.pageSize)
            #expect(commit.durable)
            #expect(commit.logged)  // small durable commits go through the commit log
            #expect(commit.nanosecondsToDurable > 0)
            #expect(commit.path == store.path)
        }
        // An empty transaction commits nothing and reports nothing.
        try store.write { _ in }
        #expect(log.commits.count == 3)

        let fast = EventLog()
        let undurable = try Store.open(
            path: directory.file("fast.strata"), options: StoreOptions(durability: .none, events: fast.handler))
        try put(undurable, key(1), key(1))
        #expect(fast.commits.map(\.version) == [1])
        #expect(fast.commits.first?.durable == false)
        #expect(fast.commits.first?.logged == false)
    }

    @Test func checkpointsOfTheCommitLogAreReportedBeforeTheCommitThatMadeThem() throws {
        let log = EventLog()
        let store = try Store.open(
            path: directory.file("checkpoint.strata"), options: StoreOptions(events: log.handler))
        // The first logged commit starts the log's epoch at its base: the main file is made durable at version 0.
        try put(store, key(0), key(0))
        #expect(log.checkpoints.map(\.version) == [0])
        #expect(log.checkpoints.map(\.commitsFolded) == [0])
        // A commit too large for the log first folds the log (one commit) into the main file at its base.
        try store.write { txn in
            let tree = try #require(try txn.tree(named: "data", create: .keyed))
            for index in 1...400 { try txn.put(key(index), [UInt8](repeating: 1, count: 3000), in: tree) }
        }
        #expect(log.checkpoints.map(\.version) == [0, 1])
        #expect(log.checkpoints.map(\.commitsFolded) == [0, 1])
        #expect(log.checkpoints.allSatisfy { $0.path == store.path && $0.nanoseconds > 0 })
        #expect(log.commits.map(\.logged) == [true, false])
        let order = log.all.compactMap { event -> String? in
            switch event {
            case .checkpointed(let checkpoint): "checkpoint at \(checkpoint.version)"
            case .committed(let commit): "commit \(commit.version)"
            default: nil
            }
        }
        #expect(order == ["checkpoint at 0", "commit 1", "checkpoint at 1", "commit 2"])
    }

    /// Checkpoints are kept only for a commit whose handle reports them: a handle without a handler, committing
    /// for as long as a service runs, keeps none.
    @Test func withoutAHandlerCheckpointsAreNotKept() throws {
        let store = try Store.open(path: directory.file("unreported.strata"))
        try put(store, key(0), key(0))  // its first logged commit checkpoints the log
        try store.write { txn in
            let tree = try #require(try txn.tree(named: "data", create: .keyed))
            for index in 1...400 { try txn.put(key(index), [UInt8](repeating: 1, count: 3000), in: tree) }
        }
        #expect(store.shared.checkpoints == nil)
    }

    @Test func compactionReportsMonotoneProgressEndingAtTheTotal() throws {
        let log = EventLog()
        let path = directory.file("compact.strata")
        let store = try Store.open(
            path: path, options: StoreOptions(pageSize: 1024, durability: .none, events: log.handler))
        try store.write { txn in
            let tree = try #require(try txn.tree(named: "data", create: .keyed))
            for index in 0..<3000 { try txn.put(key(index), [UInt8](repeating: 3, count: 40), in: tree) }
        }
        let result = try store.compact(to: directory.file("compacted.strata"))
        let progress = log.copies
        #expect(progress.count >= 3)
        let total = try #require(progress.first?.pagesTotal)
        #expect(total == result.sourcePages - 2 - (try store.statistics().freePages))
        #expect(progress.allSatisfy { $0.pagesTotal == total && $0.operation == .copy })
        #expect(progress.first?.pagesDone == 0)
        #expect(zip(progress, progress.dropFirst()).allSatisfy { $0.pagesDone <= $1.pagesDone })
        #expect(progress.last?.pagesDone == total)
        #expect(progress.dropLast().allSatisfy { $0.pagesDone < total })
        #expect(progress.last?.destination == directory.file("compacted.strata"))
    }

    @Test func aReaderOnAnOldVersionIsReportedWithWhatItHolds() throws {
        let log = EventLog()
        let store = try Store.inMemory(options: StoreOptions(pageSize: 1024, events: log.handler))
        try put(store, key(1), key(0))
        var reader: ReadTransaction? = try store.read()
        let pinned = try #require(reader?.version)
        for round in 1...300 { try put(store, key(1), key(round)) }
        let warnings = log.pinned
        // Reported when 128 versions behind, then again when the gap doubled: not on every commit.
        #expect(warnings.map(\.versionsBehind) == [128, 256])
        for warning in warnings {
            #expect(warning.pinnedVersion == pinned)
            #expect(warning.inThisProcess)
            #expect(warning.readers == 1)
            #expect(warning.pid == Int(getpid()))
            // Each commit rewrote a leaf and the catalog: two pages freed per version since.
            #expect(warning.pagesHeld >= Int(warning.versionsBehind))
            #expect(warning.bytesHeld == warning.pagesHeld * 1024)
        }
        #expect(warnings.first?.description.contains("1 reader in this process") == true)
        reader = nil
        for round in 301...700 { try put(store, key(1), key(round)) }
        #expect(log.pinned.count == 2)
    }

    @Test func verifyReportsTheDamagedPage() throws {
        let path = directory.file("damaged.strata")
        do {
            let writer = try Store.open(path: path, options: StoreOptions(durability: .none))
            try writer.write { txn in
                let tree = try #require(try txn.tree(named: "data", create: .keyed))
                for index in 0..<200 { try txn.put(key(index), Array("needle-\(index)".utf8), in: tree) }
            }
            try put(writer, key(1), key(1), tree: "other")
        }
        // Zero the page holding one value written by the first commit (not the newest: the file still opens).
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let needle = Array("needle-100".utf8)
        let offset = try #require(
            (0...(bytes.count - needle.count)).first { bytes[$0..<($0 + needle.count)].elementsEqual(needle) })
        let page = offset / 4096
        bytes.replaceSubrange(page * 4096..<(page + 1) * 4096, with: repeatElement(0, count: 4096))
        try Data(bytes).write(to: URL(fileURLWithPath: path))

        let log = EventLog()
        let store = try Store.open(path: path, options: StoreOptions(durability: .none, events: log.handler))
        let report = try store.verify()
        #expect(!report.problems.isEmpty)
        #expect(log.damage.count == report.problems.count)
        #expect(log.damage.contains { $0.page == UInt32(page) })
        #expect(log.damage.allSatisfy { $0.path == path })
    }

    @Test func aFileThatIsNotAStoreIsReportedAsDamageWhenOpening() throws {
        let path = directory.file("garbage.strata")
        try Data(repeating: 0xAB, count: 8192).write(to: URL(fileURLWithPath: path))
        let log = EventLog()
        #expect(throws: StorageError.self) {
            try Store.open(path: path, options: StoreOptions(events: log.handler))
        }
        let damage = try #require(log.damage.first)
        #expect(damage.path == path)
        #expect(log.opened.isEmpty)
    }

    /// The handler belongs to the handle opened with it: another handle on the same file, without one, reports
    /// nothing, and its commits do not reach the first handle's handler.
    @Test func aHandleWithoutAHandlerReportsNothing() throws {
        let path = directory.file("quiet.strata")
        let log = EventLog()
        let watched = try Store.open(path: path, options: StoreOptions(durability: .none, events: log.handler))
        let quiet = try Store.open(path: path, options: StoreOptions(durability: .none))
        for round in 0..<5 { try put(quiet, key(round), key(round)) }
        _ = try quiet.compact(to: directory.file("quiet-copy.strata"))
        #expect(log.all.count == 1)  // its own open
        try put(watched, key(9), key(9))
        #expect(log.commits.map(\.version) == [6])
    }
}

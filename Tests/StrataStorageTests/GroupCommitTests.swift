import Foundation
import StrataTestSupport
import Synchronization
import Testing

@testable import StrataStorage

/// Durable group commit (see `GroupCommit`): writers that arrive while a commit's log sync runs share the next
/// sync; every commit returns only once durable; a failed sync fails every pending commit and stops the writers.
@Suite("Group commit")
struct GroupCommitTests {
    static let options = StoreOptions(pageSize: 1024, durability: .full)

    /// Commits one key (`n`, value `n`) in its own transaction.
    private static func commitKey(_ store: Store, _ n: Int) async throws {
        try await store.asyncWrite { txn in
            try txn.put(key(n), key(n), in: try #require(try txn.tree(named: "data", create: .keyed)))
        }
    }

    /// The keys of tree "data" in `store`'s newest version.
    private static func committedKeys(_ store: Store) throws -> Set<Int> {
        Set(try contents(of: try store.read().tree(named: "data")).keys.map { Int(decodeBigEndian($0)) })
    }

    /// Holds the write lock while `count` tasks queue for it, then commits: every commit of the burst is
    /// grouped. The log's syncs are held back until all of them are appended, so they must share syncs.
    @Test func concurrentCommitsShareSyncs() async throws {
        let log = HeldSyncFile(name: "held-log")
        let store = try Store.open(file: MemoryFile(name: "main"), log: log, options: Self.options)
        try await Self.commitKey(store, 0)  // creates the log: its own syncs
        let count = 16
        let holder = try await store.beginWrite()
        try holder.put(key(1000), [1], in: try #require(try holder.tree(named: "data", create: .keyed)))
        let syncs = try await commitBurstWithHeldSyncs(store, log: log, holder: holder, count: count) { n in
            try await Self.commitKey(store, n)
        }
        #expect(syncs < count + 1, "\(count + 1) commits made \(syncs) log syncs")
        #expect(try Self.committedKeys(store) == Set([0, 1000]).union(1...count))
    }

    /// Many tasks commit at once on a simulated disk; as soon as a commit returns, the disk's durable bytes alone
    /// (what survives a power cut at that moment) hold it.
    @Test func everyAcknowledgedCommitIsDurable() async throws {
        let main = FaultInjectingFile(name: "main")
        let log = FaultInjectingFile(name: "log")
        let store = try Store.open(file: main, log: log, options: Self.options)
        let lost = try await withThrowingTaskGroup(of: Int.self) { tasks in
            for writer in 0..<8 {
                tasks.addTask {
                    var lost = 0
                    for n in 0..<20 {
                        try await Self.commitKey(store, writer * 1000 + n)
                        // The main file first: it changes only at checkpoints, the log then holds what it lacks.
                        let mainImage = main.durableImage
                        let crashed = try Store.open(
                            file: FaultInjectingFile(name: "main-\(writer)-\(n)", image: mainImage),
                            log: FaultInjectingFile(name: "log-\(writer)-\(n)", image: log.durableImage))
                        if try !Self.committedKeys(crashed).contains(writer * 1000 + n) {
                            lost += 1
                        }
                    }
                    return lost
                }
            }
            return try await tasks.reduce(0, +)
        }
        #expect(lost == 0, "acknowledged commits missing from the durable bytes")
        let expected = Set((0..<8).flatMap { writer in (0..<20).map { writer * 1000 + $0 } })
        #expect(try Self.committedKeys(store) == expected)
    }

    /// Threads (blocking `write`s) commit at once: each returns only once durable.
    @Test func concurrentThreadCommitsAreDurable() throws {
        let main = FaultInjectingFile(name: "main")
        let log = FaultInjectingFile(name: "log")
        let store = try Store.open(file: main, log: log, options: Self.options)
        let failures = Atomic<Int>(0)
        DispatchQueue.concurrentPerform(iterations: 8) { writer in
            for n in 0..<30 {
                do {
                    try store.write { txn in
                        try txn.put(key(writer * 1000 + n), [1], in: txn.tree(named: "data", create: .keyed)!)
                    }
                } catch {
                    failures.add(1, ordering: .relaxed)
                }
            }
        }
        #expect(failures.load(ordering: .relaxed) == 0)
        let reopened = try Store.open(
            file: FaultInjectingFile(name: "main2", image: main.durableImage),
            log: FaultInjectingFile(name: "log2", image: log.durableImage))
        #expect(try Self.committedKeys(reopened).count == 8 * 30)
    }

    /// The sync of a group fails: every commit of the group fails with the sync's error, later writes are
    /// refused with it, nothing of the group becomes visible, and the durable bytes reopen to exactly the commits
    /// acknowledged before.
    @Test func failedGroupSyncFailsEveryPendingCommit() async throws {
        let main = FaultInjectingFile(name: "main")
        let log = FaultInjectingFile(name: "log")
        let store = try Store.open(file: main, log: log, options: Self.options)
        for n in 0..<5 { try await Self.commitKey(store, n) }
        let acknowledged = Set(0..<5)
        let count = 8
        let holder = try await store.beginWrite()
        try holder.put(key(1000), [1], in: try #require(try holder.tree(named: "data", create: .keyed)))
        let writers = (1...count).map { n in
            Task { () -> Result<Void, StorageError> in
                do {
                    try await Self.commitKey(store, 100 + n)
                    return .success(())
                } catch {
                    return .failure(error as? StorageError ?? .invalidArgument("\(error)"))
                }
            }
        }
        while store.queuedWriterTasks < count { await Task.yield() }
        // The holder's commit is grouped (writers wait): its record is appended unsynced, so the next sync of the
        // log is the group's.
        log.schedule(FaultInjectingFile.Faults(failSync: 1))
        let expectedError = StorageError.io(path: log.path, operation: "fdatasync", code: EIO)
        await #expect(throws: expectedError) { try await holder.commit() }
        for writer in writers {
            guard case .failure(let error) = await writer.value else {
                Issue.record("a commit after the failed sync succeeded")
                continue
            }
            #expect(error == expectedError)
        }
        #expect(throws: expectedError) { try store.beginWrite() }
        #expect(try Self.committedKeys(store) == acknowledged)
        let reopened = try Store.open(
            file: FaultInjectingFile(name: "main2", image: main.durableImage),
            log: FaultInjectingFile(name: "log2", image: log.durableImage))
        #expect(try Self.committedKeys(reopened) == acknowledged)
        #expect(try reopened.verify().isValid)
    }
}

/// A log file whose syncs can be held back (a slow disk, controlled by the test): while held, `sync()` blocks.
/// Commits a burst while `log`'s syncs are held: `count` writers (`commit(n)`, n in 1...count) queue behind
/// `holder`, an open write transaction, and the syncs are let go once all `count + 1` commits are appended (or
/// after 20 s, so that a store that does not group fails its caller's assertions instead of hanging). Returns the
/// log syncs the burst made.
func commitBurstWithHeldSyncs(
    _ store: Store, log: HeldSyncFile, holder: WriteTransaction, count: Int,
    commit: @escaping @Sendable (Int) async throws -> Void
) async throws -> Int {
    let writers = (1...count).map { n in Task { try await commit(n) } }
    while store.queuedWriterTasks < count { await Task.yield() }
    let syncsBefore = store.shared.commitSyncs.load(ordering: .relaxed)
    log.hold()
    let group = store.shared.group
    let releaser = Thread {
        // The bound is only for a broken build: the wait ends as soon as the burst is pending. In the whole suite on
        // two cores, long synchronous tests can hold the cooperative pool's threads for minutes, and the writers
        // then reach the log late; a short bound released the syncs early and the test saw no sharing.
        group.waitForPending(atLeast: count + 1, seconds: 900)
        log.release()
    }
    releaser.start()
    try await holder.commit()
    for writer in writers { try await writer.value }
    return store.shared.commitSyncs.load(ordering: .relaxed) - syncsBefore
}

final class HeldSyncFile: MemoryFile, @unchecked Sendable {
    private let gate = Locked((held: false, waiting: [ThreadSignal]()))

    func hold() { gate.withLock { $0.held = true } }

    func release() {
        let waiting = gate.withLock { state in
            state.held = false
            defer { state.waiting = [] }
            return state.waiting
        }
        for signal in waiting { signal.signal() }
    }

    override func sync() throws(StorageError) {
        let signal: ThreadSignal? = gate.withLock { state in
            guard state.held else { return nil }
            let signal = ThreadSignal()
            state.waiting.append(signal)
            return signal
        }
        signal?.wait()
        try super.sync()
    }
}

import Foundation
import StrataStorage
import Synchronization
import Testing

/// Readers and writers in one process: snapshots are consistent, async writers suspend instead of blocking the
/// cooperative pool, and cancellation releases a waiting task. (The CI runs this suite under ThreadSanitizer.)
@Suite("Concurrency")
struct ConcurrencyTests {
    static let accounts = 64
    static let initialBalance: UInt64 = 1000

    private static func balance(_ bytes: [UInt8]) -> UInt64 { decodeBigEndian(bytes) }

    /// One writer moves money between accounts in random transfers while 8 reader tasks sum every account of
    /// the snapshots they take. Every snapshot must hold the same total, and versions never go backwards.
    @Test func eightReadersOneWriterKeepTheInvariant() async throws {
        let directory = TemporaryDirectory()
        let store = try Store.open(
            path: directory.file("bank.strata"), options: StoreOptions(pageSize: 1024, durability: .none))
        try store.write { txn in
            let ledger = try txn.tree(named: "ledger", create: .keyed)!
            for account in 0..<Self.accounts {
                try txn.put(bigEndian(UInt64(account)), bigEndian(Self.initialBalance), in: ledger)
            }
        }
        let expected = UInt64(Self.accounts) * Self.initialBalance
        let transfers = soak ? 40_000 : 3_000
        let finished = Flag()

        try await withThrowingTaskGroup(of: Int.self) { group in
            group.addTask {
                var generator = SystemRandomNumberGenerator()
                for _ in 0..<transfers {
                    try await store.asyncWrite { txn in
                        let ledger = try txn.tree(named: "ledger")!
                        let from = bigEndian(UInt64.random(in: 0..<UInt64(Self.accounts), using: &generator))
                        let to = bigEndian(UInt64.random(in: 0..<UInt64(Self.accounts), using: &generator))
                        let fromBalance = Self.balance(try txn.get(from, in: ledger)!)
                        let amount = UInt64.random(in: 0...min(fromBalance, 50), using: &generator)
                        try txn.put(from, bigEndian(fromBalance - amount), in: ledger)
                        let toBalance = Self.balance(try txn.get(to, in: ledger)!)
                        try txn.put(to, bigEndian(toBalance + amount), in: ledger)
                    }
                    // asyncWrite does not suspend when the lock is free; yield so readers run between commits.
                    await Task.yield()
                }
                finished.set()
                return 0
            }
            for _ in 0..<8 {
                group.addTask {
                    var snapshots = 0
                    var lastVersion: UInt64 = 0
                    repeat {
                        let snapshot = try store.read()
                        #expect(snapshot.version >= lastVersion)
                        lastVersion = snapshot.version
                        var total: UInt64 = 0
                        try snapshot.tree(named: "ledger")!.scan { _, value in
                            total += Self.balance(value)
                            return true
                        }
                        #expect(total == expected, "snapshot \(snapshot.version) sums to \(total)")
                        snapshots += 1
                        await Task.yield()
                    } while !finished.isSet
                    return snapshots
                }
            }
            var snapshots = 0
            for try await count in group { snapshots += count }
            #expect(snapshots > 8 * 10, "readers took only \(snapshots) snapshots")
        }
        #expect(try store.verify().isValid)
    }

    /// Many tasks write at once through `asyncWrite`. Waiting for the lock suspends, so they all finish even on
    /// a pool of two threads while one task holds the lock across suspension points.
    @Test func asyncWritersSuspendAndLoseNothing() async throws {
        let store = try Store.inMemory(options: StoreOptions(pageSize: 1024))
        let tasks = 32
        let perTask = soak ? 500 : 50
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<tasks {
                group.addTask {
                    for _ in 0..<perTask {
                        try await store.asyncWrite { txn in
                            let counters = try txn.tree(named: "counters", create: .keyed)!
                            let key = Array("n".utf8)
                            let value = try txn.get(key, in: counters).map(Self.balance) ?? 0
                            try txn.put(key, bigEndian(value + 1), in: counters)
                        }
                    }
                }
            }
            // Meanwhile a task holds the write lock across suspension points; everyone else must wait without
            // occupying a thread, or this would deadlock on a two-thread pool.
            group.addTask {
                let txn = try await store.beginWrite()
                for _ in 0..<10 { await Task.yield() }
                txn.abort()
            }
            try await group.waitForAll()
        }
        let value = try store.read().tree(named: "counters")?.get(Array("n".utf8)).map(Self.balance)
        #expect(value == UInt64(tasks * perTask))
    }

    /// Blocking writers on plain threads and async writers share one lock.
    @Test func threadAndTaskWritersShareTheLock() async throws {
        let store = try Store.inMemory(options: StoreOptions(pageSize: 1024))
        let perWriter = 200
        let threadsDone = Counter()
        for _ in 0..<2 {
            Thread.detachNewThread {
                for _ in 0..<perWriter {
                    try? store.write { txn in
                        let tree = try txn.tree(named: "t", create: .keyed)!
                        try txn.put(bigEndian(UInt64(txn.version)), [1], in: tree)
                    }
                }
                threadsDone.increment()
            }
        }
        for _ in 0..<perWriter {
            try await store.asyncWrite { txn in
                let tree = try txn.tree(named: "t", create: .keyed)!
                try txn.put(bigEndian(UInt64(txn.version)), [2], in: tree)
            }
        }
        while threadsDone.value < 2 { await Task.yield() }
        #expect(try store.read().tree(named: "t")?.count == 3 * perWriter)
    }

    /// A task waiting for the write lock can be cancelled; the lock keeps working afterwards.
    @Test func cancellingAWaitingWriter() async throws {
        let store = try Store.inMemory(options: StoreOptions(pageSize: 1024))
        let holder = try await store.beginWrite()
        let waiter = Task {
            let txn = try await store.beginWrite()
            txn.abort()
            return true
        }
        // The waiter cannot get the lock while it is held; cancel it.
        await Task.yield()
        waiter.cancel()
        await #expect(throws: StorageError.cancelled) { _ = try await waiter.value }
        holder.abort()
        let next = try await store.beginWrite()
        #expect(next.isActive)
        next.abort()
    }
}

/// A flag shared between tasks.
final class Flag: Sendable {
    private let storage = Atomic<Bool>(false)
    func set() { storage.store(true, ordering: .releasing) }
    var isSet: Bool { storage.load(ordering: .acquiring) }
}

/// A counter shared between threads.
final class Counter: Sendable {
    private let storage = Atomic<Int>(0)
    func increment() { storage.add(1, ordering: .releasing) }
    var value: Int { storage.load(ordering: .acquiring) }
}

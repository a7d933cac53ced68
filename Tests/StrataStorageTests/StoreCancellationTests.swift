import Foundation
import Testing

@testable import StrataStorage

/// A task cancelled before its write transaction starts writes nothing and does not keep the write lock.
@Suite("Store: cancellation of async writes")
struct StoreCancellationTests {
    /// `asyncWrite` in a task already cancelled throws `CancellationError` without running its body.
    @Test func anAlreadyCancelledTaskWritesNothing() async throws {
        let store = try Store.inMemory(options: testOptions())
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await store.asyncWrite { try incrementCounter(in: $0) }
        }
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(try readCounter(store) == 0)
        try await store.asyncWrite { try incrementCounter(in: $0) }
        #expect(try readCounter(store) == 1)
    }

    /// `beginWrite` in a task already cancelled throws ``StorageError/cancelled`` and takes no lock.
    @Test func beginWriteInACancelledTaskTakesNoLock() async throws {
        let store = try Store.inMemory(options: testOptions())
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            let transaction = try await store.beginWrite()
            transaction.abort()
        }
        await #expect(throws: StorageError.cancelled) { try await task.value }
        let transaction = try await store.beginWrite()
        transaction.abort()
    }

    /// A task cancelled while waiting for the lock that another writer holds gets `CancellationError` from
    /// `asyncWrite`; once the holder is done, the next writer gets the lock.
    @Test func aTaskCancelledWhileWaitingForTheLockWritesNothing() async throws {
        let store = try Store.inMemory(options: testOptions())
        let holder = try await store.beginWrite()
        let waiting = Task { try await store.asyncWrite { try incrementCounter(in: $0) } }
        while store.queuedWriterTasks == 0 { await Task.yield() }
        waiting.cancel()
        await #expect(throws: CancellationError.self) { try await waiting.value }
        holder.abort()
        try await store.asyncWrite { try incrementCounter(in: $0) }
        #expect(try readCounter(store) == 1)
    }

    /// Adds 1 to the counter of ``readCounter(_:name:)`` inside `transaction`.
    private func incrementCounter(in transaction: WriteTransaction) throws {
        guard let counters = try transaction.tree(named: "counters", create: .keyed) else { return }
        let key = Array("total".utf8)
        let current = try transaction.get(key, in: counters).map(decodeBigEndian) ?? 0
        try transaction.put(key, bigEndian(current + 1), in: counters)
    }
}

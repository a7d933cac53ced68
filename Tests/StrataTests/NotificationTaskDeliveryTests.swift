import Foundation
import Strata
import StrataStorage
import StrataTestSupport
import Synchronization
import Testing

final class TaskFed: Object {
    @Persisted var value = 0
}

/// Commits through its own actor-confined Realm.
private actor FeedWriter {
    let configuration: Realm.Configuration
    init(configuration: Realm.Configuration) { self.configuration = configuration }

    func add(_ value: Int) async throws {
        let realm = try await Realm(configuration: configuration, actor: self)
        try await realm.asyncWrite { realm.add(TaskFed(value: ["value": value])) }
    }
}

/// What a task-confined loop saw, and a weak reference to its Realm, carried out of the task.
private final class TaskLoopOutcome: Sendable {
    struct State {
        var counts: [Int] = []
        var callbackCounts: [Int] = []
    }

    let state = Mutex(State())
    /// Set by the task before it signals readiness, read by the test after the task ended.
    let realm = WeakTaskRealm()
}

/// A weak reference to a task's Realm, read once the task has ended (its completion orders the accesses).
private final class WeakTaskRealm: @unchecked Sendable {
    weak var realm: Realm?
}

/// Cancels `task` if it has not finished `seconds` after the test's commits returned: only a guard against a hang
/// when delivery is broken (the test then fails on what the loop saw), never part of what is asserted. Generous:
/// the whole suite runs at once on two cores, where a delivery can wait long for a thread.
private func hangGuard<T: Sendable>(_ task: Task<T, any Error>, seconds: Int = 120) -> Task<Void, Never> {
    Task.detached {
        try? await Task.sleep(for: .seconds(seconds))
        task.cancel()
    }
}

/// Opens a Realm in nonisolated code (so it is confined to the running task), follows its `TaskFed` objects'
/// changes with `for await` and a callback, and stops after an update showing `until` objects. Signals `ready`
/// once the loop has its initial state.
private func followInTask(
    _ configuration: Realm.Configuration, until: Int, outcome: TaskLoopOutcome,
    ready: AsyncStream<Void>.Continuation
) async throws {
    defer { ready.finish() }  // a failed open must not leave the test waiting for readiness
    let realm = try Realm(configuration: configuration)
    outcome.realm.realm = realm
    let items = realm.objects(TaskFed.self)
    let token = items.observe { change in
        if case .update(let items, _, _, _) = change {
            outcome.state.withLock { $0.callbackCounts.append(items.count) }
        }
    }
    defer { token.invalidate() }
    for await change in items.changes {
        switch change {
        case .initial: ready.yield()
        case .update(let items, _, _, _):
            outcome.state.withLock { $0.counts.append(items.count) }
            if items.count >= until { return }
        case .error(let error): throw error
        }
    }
}

@Suite("Notification: task-confined Realms deliver to their AsyncSequences")
struct NotificationTaskDeliveryTests {
    /// A file in `directory` (a file, not an in-memory Realm: it outlives the Realms of the test's tasks).
    private func configuration(in directory: TemporaryDirectory) -> Realm.Configuration {
        Realm.Configuration(fileURL: URL(fileURLWithPath: directory.file("feed.strata")), objectTypes: [TaskFed.self])
    }

    /// A `for await` over a task-confined Realm's results receives an actor-confined Realm's commits without any
    /// refresh call: the coordinator wakes the loop, whose `next()` refreshes the Realm in its own task.
    @Test func aTaskConfinedLoopReceivesAnActorsCommits() async throws {
        let directory = TemporaryDirectory()
        let configuration = configuration(in: directory)
        let outcome = TaskLoopOutcome()
        let (ready, signal) = AsyncStream<Void>.makeStream()
        let loop = Task.detached {
            try await followInTask(configuration, until: 2, outcome: outcome, ready: signal)
        }
        var readiness = ready.makeAsyncIterator()
        _ = await readiness.next()
        let writer = FeedWriter(configuration: configuration)
        try await writer.add(1)
        try await writer.add(2)
        let guardTask = hangGuard(loop)
        try await loop.value
        guardTask.cancel()
        let counts = outcome.state.withLock { $0.counts }
        #expect(counts.last == 2, "the loop saw \(counts)")
        #expect(counts == counts.sorted() && Set(counts).isSubset(of: [1, 2]))
        // The callback observer of the same Realm was delivered by the same refreshes (before the loop body).
        #expect(outcome.state.withLock { $0.callbackCounts }.last == 2)
    }

    /// Another Store handle on the same file (in this process, as another process would) commits: the loop over
    /// `realm.changes` of a task-confined Realm gets the new version, through the file watcher.
    @Test func aTaskConfinedLoopReceivesAnotherStoresCommit() async throws {
        let directory = TemporaryDirectory()
        let configuration = configuration(in: directory)
        let (ready, signal) = AsyncStream<Void>.makeStream()
        let loop = Task.detached { () async throws -> UInt64? in
            let realm = try Realm(configuration: configuration)
            let versions = realm.changes
            signal.yield()
            for await version in versions { return version }
            return nil
        }
        var readiness = ready.makeAsyncIterator()
        _ = await readiness.next()
        let store = try Store.open(path: directory.file("feed.strata"))
        try store.write { transaction in
            let side = try transaction.tree(named: "task-delivery-test", create: .keyed)!
            try transaction.put([UInt8(1)], [UInt8(2)], in: side)
        }
        let committed = try store.read().version
        let guardTask = hangGuard(loop)
        let seen = try await loop.value
        guardTask.cancel()
        #expect(seen == committed)
    }

    /// Cancelling the task ends its `for await` loop, also once the loop has been woken by commits before.
    @Test func cancellingTheTaskEndsTheLoop() async throws {
        let directory = TemporaryDirectory()
        let configuration = configuration(in: directory)
        let outcome = TaskLoopOutcome()
        let (ready, signal) = AsyncStream<Void>.makeStream()
        let loop = Task.detached {
            // Never reaches 100 objects: only the cancellation ends it.
            try await followInTask(configuration, until: 100, outcome: outcome, ready: signal)
        }
        var readiness = ready.makeAsyncIterator()
        _ = await readiness.next()
        let writer = FeedWriter(configuration: configuration)
        try await writer.add(1)
        loop.cancel()
        try await loop.value  // returns: the loop ended
        #expect(outcome.state.withLock { $0.counts }.allSatisfy { $0 == 1 })
    }

    /// The Realm of a task that followed changes is released with the task: neither the coordinator nor the
    /// wakeup keeps it.
    @Test func aTasksRealmIsReleasedAfterItsLoopEnds() async throws {
        let directory = TemporaryDirectory()
        let configuration = configuration(in: directory)
        let outcome = TaskLoopOutcome()
        let (ready, signal) = AsyncStream<Void>.makeStream()
        let loop = Task.detached {
            try await followInTask(configuration, until: 1, outcome: outcome, ready: signal)
        }
        var readiness = ready.makeAsyncIterator()
        _ = await readiness.next()
        try await FeedWriter(configuration: configuration).add(1)
        let guardTask = hangGuard(loop)
        try await loop.value
        guardTask.cancel()
        #expect(outcome.state.withLock { $0.counts } == [1])
        #expect(outcome.realm.realm == nil, "the task's Realm outlived its task")
        // Later commits find no task to wake and still work.
        try await FeedWriter(configuration: configuration).add(2)
        #expect(try Realm(configuration: configuration).objects(TaskFed.self).count == 2)
    }
}

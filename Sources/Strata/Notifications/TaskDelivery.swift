import StrataStorage

/// How a task-confined Realm learns of other Realms' and processes' commits.
///
/// A task has no executor the coordinator could schedule a refresh on (an actor has one, a plain thread has its
/// run loop), and only the task itself may touch its Realm. So the coordinator does the one thing it may do from
/// any thread: it records the newest committed version here and wakes the Realm's `AsyncSequence`s suspended in
/// `next()`. Each woken `next()` runs in the Realm's own task, refreshes the Realm there (which delivers every
/// observer of the Realm, callbacks included) and hands out its change.
final class TaskWakeup: Sendable {
    private struct WeakWaiter: Sendable {
        weak var waiter: Waiter?
    }

    private struct State {
        var newest: UInt64
        var waiters: [WeakWaiter] = []
    }

    private let state: Locked<State>

    /// A wakeup for a Realm of a file whose newest committed version is `newest`.
    init(newest: UInt64) { state = Locked(State(newest: newest)) }

    /// The newest version committed (as far as the coordinator has seen).
    var newest: UInt64 { state.withLock { $0.newest } }

    /// Wakes `waiter` on every later post (held weakly: a finished loop's waiter goes away with it).
    func register(_ waiter: Waiter) {
        state.withLock { state in
            state.waiters.removeAll { $0.waiter == nil }
            state.waiters.append(WeakWaiter(waiter: waiter))
        }
    }

    /// Version `version` was committed: wake every registered waiter.
    func post(version: UInt64) {
        let waiters = state.withLock { state -> [Waiter] in
            state.newest = max(state.newest, version)
            state.waiters.removeAll { $0.waiter == nil }
            return state.waiters.compactMap(\.waiter)
        }
        for waiter in waiters { waiter.signal() }
    }
}

/// What an `AsyncSequence` of a task-confined Realm needs to refresh that Realm from its `next()`.
struct TaskDelivery {
    /// Weak: a sequence does not keep its Realm alive (its collection or object does, while iterated).
    weak var realm: Realm?
    let wakeup: TaskWakeup
    /// The newest version this sequence last refreshed for: a version the Realm cannot reach (a damaged file)
    /// is tried once, not in a loop.
    private var tried: UInt64 = 0

    init(realm: Realm, wakeup: TaskWakeup) {
        self.realm = realm
        self.wakeup = wakeup
    }

    /// Called in the Realm's task: when a version newer than the one the Realm reads was committed, refreshes the
    /// Realm (delivering its observers' changes). Returns whether the Realm advanced. Leaves the Realm alone when
    /// `autorefresh` is off or a write transaction is open (its commit delivers).
    mutating func refreshIfBehind() -> Bool {
        guard let realm, realm.autorefresh, !realm.isInWriteTransaction else { return false }
        let newest = wakeup.newest
        guard newest > realm.currentSnapshot.version, newest > tried else { return false }
        tried = newest
        return realm.refresh()
    }
}

/// The outcome of one grouped commit, which its committer waits for after letting the next writer in (see
/// ``GroupCommit``): success once a sync of the commit log covered the commit's record and the version is
/// published, or the error that failed the sync.
///
/// A thread waits on a ``ThreadSignal``; a task suspends on a continuation, so waiting for durability never
/// occupies a cooperative-pool thread.
final class DurableWait: Sendable {
    private enum Waiter {
        case thread(ThreadSignal)
        case task(CheckedContinuation<Result<Void, StorageError>, Never>)
    }

    private struct State {
        var outcome: Result<Void, StorageError>?
        var waiters: [Waiter] = []
    }

    private let state = Locked(State())

    /// Records the outcome and wakes every waiter. Only the first outcome counts.
    func complete(_ outcome: Result<Void, StorageError>) {
        let waiters: [Waiter] = state.withLock { state in
            guard state.outcome == nil else { return [] }
            state.outcome = outcome
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters {
            switch waiter {
            case .thread(let signal): signal.signal()
            case .task(let continuation): continuation.resume(returning: outcome)
            }
        }
    }

    /// Blocks the calling thread until the commit is durable; rethrows the sync's error.
    func wait() throws(StorageError) {
        let signal: ThreadSignal? = state.withLock { state in
            guard state.outcome == nil else { return nil }
            let signal = ThreadSignal()
            state.waiters.append(.thread(signal))
            return signal
        }
        signal?.wait()
        try state.withLock { $0.outcome }!.get()
    }

    /// Suspends the calling task until the commit is durable; rethrows the sync's error. Cancellation does not
    /// end the wait: the commit is made, and the caller learns whether it is durable.
    func wait(isolation: isolated (any Actor)? = #isolation) async throws(StorageError) {
        if let outcome = state.withLock({ $0.outcome }) { return try outcome.get() }
        let outcome = await withCheckedContinuation {
            (continuation: CheckedContinuation<Result<Void, StorageError>, Never>) in
            let ready: Result<Void, StorageError>? = state.withLock { state in
                if let outcome = state.outcome { return outcome }
                state.waiters.append(.task(continuation))
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
        try outcome.get()
    }
}

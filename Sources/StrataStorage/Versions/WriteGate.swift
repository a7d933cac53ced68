/// The in-process half of the write lock: one holder at a time, first come first served.
///
/// Threads that call the blocking ``lock()`` wait on a ``ThreadSignal``; tasks that call ``lock()-async``
/// suspend on a continuation, so waiting for a writer never occupies a cooperative-pool thread. ``unlock()``
/// hands the gate directly to the next waiter.
final class WriteGate: Sendable {
    private enum Waiter {
        case thread(ThreadSignal)
        case task(id: UInt64, CheckedContinuation<Void, any Error>)
    }

    private struct State {
        var held = false
        var waiters: [Waiter] = []
        var head = 0
        var nextID: UInt64 = 0
        /// Tasks that asked for the gate and have neither got it nor given up.
        var pending: Set<UInt64> = []
        /// Pending tasks whose cancellation arrived: skipped if queued, refused if not queued yet.
        var cancelled: Set<UInt64> = []

        mutating func popWaiter() -> Waiter? {
            while head < waiters.count {
                let waiter = waiters[head]
                head += 1
                if head > 64 && head * 2 > waiters.count {
                    waiters.removeFirst(head)
                    head = 0
                }
                if case .task(let id, _) = waiter {
                    pending.remove(id)
                    if cancelled.remove(id) != nil { continue }
                }
                return waiter
            }
            return nil
        }
    }

    private let state = Locked(State())

    /// Blocks the calling thread until the gate is free.
    func lock() {
        let signal: ThreadSignal? = state.withLock { state in
            if !state.held {
                state.held = true
                return nil
            }
            let signal = ThreadSignal()
            state.waiters.append(.thread(signal))
            return signal
        }
        signal?.wait()
    }

    /// Takes the gate if nobody holds it.
    func tryLock() -> Bool {
        state.withLock { state in
            if state.held { return false }
            state.held = true
            return true
        }
    }

    /// Suspends the calling task until the gate is free. Throws ``StorageError/cancelled`` if the task is
    /// cancelled while waiting (the gate is then not held).
    ///
    /// Runs in the caller's isolation: a free gate is taken without leaving it, and a waiter resumes straight onto
    /// it. (A nonisolated async function would hop to the generic executor and back on every call: free between
    /// actors of the cooperative pool, but on Linux two thread switches for the main actor, whose executor is a
    /// Dispatch queue, so a main-actor `asyncWrite` cost ~20 % more than an actor's.)
    func lock(isolation: isolated (any Actor)? = #isolation) async throws(StorageError) {
        if tryLock() { return }
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            state.pending.insert(state.nextID)
            return state.nextID
        }
        do {
            try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                    let acquired = state.withLock { state -> Bool? in
                        if state.cancelled.remove(id) != nil {
                            state.pending.remove(id)
                            return nil
                        }
                        if !state.held {
                            state.held = true
                            state.pending.remove(id)
                            return true
                        }
                        state.waiters.append(.task(id: id, continuation))
                        return false
                    }
                    switch acquired {
                    case true?: continuation.resume()
                    case nil: continuation.resume(throwing: StorageError.cancelled)
                    case false?: break
                    }
                }
            } onCancel: {
                cancel(id)
            }
        } catch {
            throw .cancelled
        }
    }

    /// Cancels a waiting task: a queued waiter is resumed with an error (and skipped later); one that has not
    /// queued yet is refused when it tries.
    private func cancel(_ id: UInt64) {
        let continuation: CheckedContinuation<Void, any Error>? = state.withLock { state in
            guard state.pending.contains(id) else { return nil }
            state.cancelled.insert(id)
            for index in state.head..<state.waiters.count {
                if case .task(let waiterID, let continuation) = state.waiters[index], waiterID == id {
                    return continuation
                }
            }
            return nil
        }
        continuation?.resume(throwing: StorageError.cancelled)
    }

    /// Tasks queued for the gate and not cancelled (tests wait for a writer to be queued before cancelling it).
    var queuedTaskCount: Int {
        state.withLock { state in
            state.waiters[state.head...].reduce(0) { count, waiter in
                if case .task(let id, _) = waiter, !state.cancelled.contains(id) { return count + 1 }
                return count
            }
        }
    }

    /// Whether a thread or task waits for the gate (cancelled tasks not yet skipped may count): a committer then
    /// groups its commit (see ``GroupCommit``).
    var hasWaiters: Bool { state.withLock { $0.head < $0.waiters.count } }

    /// Releases the gate, handing it to the next waiter if there is one.
    func unlock() {
        let next: Waiter? = state.withLock { state in
            guard let waiter = state.popWaiter() else {
                state.held = false
                return nil
            }
            return waiter
        }
        switch next {
        case .thread(let signal): signal.signal()
        case .task(_, let continuation): continuation.resume()
        case nil: break
        }
    }
}

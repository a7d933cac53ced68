import StrataStorage

extension Realm {
    /// Opens a Realm confined to the calling actor (the main actor, say): the one the actor already has for the
    /// file, if any. Throws ``RealmError/wrongThread`` when called outside any actor, and `CancellationError` (opening
    /// nothing) when the task is already cancelled.
    public static func open(
        configuration: Configuration = .defaultConfiguration, _isolation: isolated (any Actor)? = #isolation
    ) async throws -> Realm {
        try Task.checkCancellation()
        guard let _isolation else { throw Realm.Error.wrongThread }
        return try Realm.cached(configuration, isolation: _isolation)
    }

    /// Runs `block` in a write transaction and commits it, like ``write(_:)``, but waits for the file's write
    /// lock by suspending: no thread is blocked while another writer (of any Realm or process) holds it. Call it
    /// where the Realm lives (its actor, or its task). Observers of this Realm are told of the commit before it
    /// returns.
    ///
    /// A task cancelled before `block` starts (already at the call, or while waiting for the lock) gets
    /// `CancellationError`: nothing is written and the lock is not kept. Once `block` runs, the write commits or
    /// rolls back whole, whatever happens to the task meanwhile.
    @discardableResult
    public func asyncWrite<Result>(
        _isolation: isolated (any Actor)? = #isolation, _ block: () throws -> Result
    ) async throws -> Result {
        try checkThreadThrowing()
        // An earlier asyncWrite of this Realm still waiting for its commit's sync is not a write in progress.
        await waitForCommitsInFlight()
        try checkWritable()
        let started: WriteTransaction
        do {
            started = try await store.beginWrite(isolation: _isolation)
        } catch .cancelled {
            throw CancellationError()
        } catch {
            throw Realm.Error.storage(error, path: path)
        }
        // An earlier asyncWrite of this Realm may still wait for its commit to be durable (it let this one have
        // the write lock meanwhile): it ends first.
        await waitForCommitsInFlight()
        // Another write may have started on this actor while this one waited.
        do {
            try checkWritable()
        } catch {
            started.abort()
            throw error
        }
        try adoptWrite(started)
        let result = try runInWrite(block)
        if isInWriteTransaction { try await commitWriteAwaitingDurability() }
        return result
    }

    /// ``commitWrite()`` that waits for a grouped commit's sync by suspending (see ``StrataStorage/GroupCommit``):
    /// the write lock is released as soon as the commit is appended, so other writers build their transactions
    /// while this one waits, and no thread is blocked meanwhile. The Realm stays in its write transaction until
    /// the commit is durable; another `asyncWrite` of it waits for that (``waitForCommitsInFlight()``).
    private func commitWriteAwaitingDurability(_isolation: isolated (any Actor)? = #isolation) async throws {
        let transaction = try transactionToCommit()
        commitWaiters = []
        defer {
            let waiting = commitWaiters ?? []
            commitWaiters = nil
            for waiter in waiting { waiter.resume() }
        }
        let committed: UInt64
        do {
            committed = try await transaction.commit(isolation: _isolation)
        } catch {
            throw commitFailed(error)
        }
        didCommit(committed)
        try refreshAfterCommit()
        observers.deliver()
    }

    /// Suspends while an `asyncWrite` of this Realm waits for its commit to be durable.
    private func waitForCommitsInFlight(_isolation: isolated (any Actor)? = #isolation) async {
        while commitWaiters != nil {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                commitWaiters?.append(continuation)
            }
        }
    }

    /// Advances to the newest version (delivering observers' changes), like ``refresh()``. Returns whether there
    /// was a newer version.
    ///
    /// It cannot throw (as in the SDK), so a cancelled task learns of its cancellation the SDK's way: when the
    /// task is already cancelled, nothing happens and it returns false (the Realm stays at its version).
    @discardableResult
    public func asyncRefresh(_isolation: isolated (any Actor)? = #isolation) async -> Bool {
        checkThread()
        if Task.isCancelled { return false }
        return refresh()
    }
}

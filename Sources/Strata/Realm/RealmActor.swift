import StrataStorage

extension Realm {
    /// Opens a Realm confined to `actor`: use it (and its objects and collections) only on that actor. It
    /// refreshes itself there after every commit (``autorefresh``), delivering its observers' changes.
    ///
    /// ```swift
    /// actor Ingest {
    ///     var realm: Realm!
    ///     func start() async throws { realm = try await Realm(actor: self) }
    /// }
    /// ```
    ///
    /// A task cancelled before the call gets `CancellationError` and opens nothing (no file is created, no
    /// migration runs).
    public convenience init<A: Actor>(
        configuration: Configuration = .defaultConfiguration, actor: isolated A
    ) async throws {
        try Task.checkCancellation()
        try self.init(configuration: configuration, confinedTo: actor)
    }

    /// Opens a Realm confined to the calling actor (the main actor, say). Throws ``Error/wrongThread`` when
    /// called outside any actor, and `CancellationError` (opening nothing) when the task is already cancelled.
    public static func open(
        configuration: Configuration = .defaultConfiguration, _isolation: isolated (any Actor)? = #isolation
    ) async throws -> Realm {
        try Task.checkCancellation()
        guard let _isolation else { throw Realm.Error.wrongThread }
        return try Realm(configuration: configuration, confinedTo: _isolation)
    }

    /// Runs `block` in a write transaction and commits it, like ``write(_:)``, but waits for the file's write
    /// lock by suspending: no thread is blocked while another writer (of any Realm or process) holds it. Call it
    /// from the Realm's actor. Observers of this Realm are told of the commit before it returns.
    ///
    /// A task cancelled before `block` starts (already at the call, or while waiting for the lock) gets
    /// `CancellationError`: nothing is written and the lock is not kept. Once `block` runs, the write commits or
    /// rolls back whole, whatever happens to the task meanwhile.
    @discardableResult
    public func asyncWrite<Result>(
        _isolation: isolated (any Actor)? = #isolation, _ block: () throws -> Result
    ) async throws -> Result {
        try checkThreadThrowing()
        try checkWritable()
        let started: WriteTransaction
        do {
            started = try await store.beginWrite(isolation: _isolation)
        } catch .cancelled {
            throw CancellationError()
        } catch {
            throw Realm.Error.storage(error, path: path)
        }
        // Another write may have started on this actor while this one waited.
        do {
            try checkWritable()
        } catch {
            started.abort()
            throw error
        }
        try adoptWrite(started)
        return try finishWrite(block)
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

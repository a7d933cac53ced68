import StrataStorage

extension Realm {
    /// Opens a Realm confined to the calling actor (the main actor, say): the one the actor already has for the
    /// file, if any. Throws ``Error/wrongThread`` when called outside any actor.
    public static func open(
        configuration: Configuration = .defaultConfiguration, _isolation: isolated (any Actor)? = #isolation
    ) async throws -> Realm {
        guard let _isolation else { throw Realm.Error.wrongThread }
        return try Realm.cached(configuration, isolation: _isolation)
    }

    /// Runs `block` in a write transaction and commits it, like ``write(_:)``, but waits for the file's write
    /// lock by suspending: no thread is blocked while another writer (of any Realm or process) holds it. Call it
    /// where the Realm lives (its actor, or its task). Observers of this Realm are told of the commit before it
    /// returns.
    @discardableResult
    public func asyncWrite<Result>(
        _isolation: isolated (any Actor)? = #isolation, _ block: () throws -> Result
    ) async throws -> Result {
        try checkThreadThrowing()
        try checkWritable()
        let started: WriteTransaction
        do {
            started = try await store.beginWrite(isolation: _isolation)
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
    @discardableResult
    public func asyncRefresh(_isolation: isolated (any Actor)? = #isolation) async -> Bool {
        refresh()
    }
}

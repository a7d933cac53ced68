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
    public convenience init<A: Actor>(
        configuration: Configuration = .defaultConfiguration, actor: isolated A
    ) async throws {
        try self.init(configuration: configuration, confinedTo: actor)
    }

    /// Opens a Realm confined to the calling actor (the main actor, say). Throws ``Error/wrongThread`` when
    /// called outside any actor.
    public static func open(
        configuration: Configuration = .defaultConfiguration, _isolation: isolated (any Actor)? = #isolation
    ) async throws -> Realm {
        guard let _isolation else { throw Realm.Error.wrongThread }
        return try Realm(configuration: configuration, confinedTo: _isolation)
    }

    /// Runs `block` in a write transaction and commits it, like ``write(_:)``, but waits for the file's write
    /// lock by suspending: no thread is blocked while another writer (of any Realm or process) holds it. Call it
    /// from the Realm's actor. Observers of this Realm are told of the commit before it returns.
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

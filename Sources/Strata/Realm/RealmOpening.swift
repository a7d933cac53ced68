public import Foundation
import StrataStorage

/// Where ``Realm``'s opening initialisers live. An initialiser of a class cannot hand back an instance that
/// already exists, but one of a protocol extension can: that is how `try Realm()` returns the Realm the calling
/// thread, actor or task already has open for the file, as in the Realm SDK. Realm is its only conforming type;
/// use the initialisers, not the protocol.
public protocol _RealmInitializers {}

extension Realm: _RealmInitializers {}

extension _RealmInitializers where Self: Realm {
    /// Opens the default configuration's Realm (see `init(configuration:)`).
    ///
    /// ```swift
    /// let realm = try Realm()
    /// ```
    public init(_isolation: (any Actor)? = #isolation) throws {
        try self.init(configuration: .defaultConfiguration, _isolation: _isolation)
    }

    /// Opens the Realm in the file at `fileURL` (see `init(configuration:)`).
    public init(fileURL: URL, _isolation: (any Actor)? = #isolation) throws {
        try self.init(configuration: Realm.Configuration(fileURL: fileURL), _isolation: _isolation)
    }

    /// Opens a Realm confined to the caller's isolation: its actor (the main actor included, so `@MainActor` code
    /// and `static func main() async` get a main-actor Realm that keeps working after any `await`), else its task
    /// (nonisolated async code: usable across the task's `await`s), else its thread. `_isolation` is filled in by
    /// the compiler: do not pass it.
    ///
    /// Opening a file that the same isolation already has open returns that instance (in its write transaction,
    /// if one is in progress), as the Realm SDK does; the cache holds Realms weakly. Opening it with settings that
    /// differ from that instance's (read-only, schema version, object types) throws
    /// ``RealmError/invalidValue(type:property:reason:)``.
    ///
    /// Throws ``RealmError/schemaMismatch(differences:)`` when the file's stored schema differs from the models,
    /// ``RealmError/invalidSchemaVersion(fileVersion:configuredVersion:)`` when the file is newer than the
    /// configuration, and file errors for a missing, locked or damaged file.
    public init(configuration: Realm.Configuration, _isolation: (any Actor)? = #isolation) throws {
        self = try Realm.cached(configuration, isolation: _isolation) as! Self
    }

    /// Opens a Realm confined to `actor`: use it (and its objects and collections) only on that actor. It
    /// refreshes itself there after every commit (``autorefresh``), delivering its observers' changes. The actor
    /// gets the instance it already has for the file, if any.
    ///
    /// A task cancelled before the call gets `CancellationError` and opens nothing (no file is created, no
    /// migration runs).
    ///
    /// ```swift
    /// actor Ingest {
    ///     var realm: Realm!
    ///     func start() async throws { realm = try await Realm(actor: self) }
    /// }
    /// ```
    public init<A: Actor>(configuration: Realm.Configuration = .defaultConfiguration, actor: isolated A)
        async throws
    {
        try Task.checkCancellation()
        self = try Realm.cached(configuration, isolation: actor) as! Self
    }
}

extension Realm {
    /// The Realm of `configuration`'s file for `isolation` (an actor), or else the calling task or thread: the
    /// instance already open there, or a new one (kept, weakly, for the next open there).
    /// With `queue`, the Realm is confined to that queue instead (see ``RealmQueue``).
    static func cached(_ configuration: Configuration, isolation: (any Actor)?, queue: RealmQueue? = nil) throws
        -> Realm
    {
        let confinement = queue.map(Confinement.queue) ?? Confinement.current(isolation: isolation)
        guard let isolationKey = confinement.cacheKey(actor: isolation) else {
            return try Realm(configuration: configuration, confinedTo: isolation)
        }
        let key = RealmCache.Key(path: configuration.path, isolation: isolationKey)
        if let realm = RealmCache.shared.realm(for: key), realm.belongs(to: isolation) {
            try realm.checkReopened(with: configuration)
            return realm
        }
        guard RealmCache.shared.beginOpening(key) else {
            throw Realm.Error.invalidValue(
                type: "Realm", property: "",
                reason: "\(configuration.path) is being opened here already (a migration block opening its own "
                    + "Realm?): use the Realm the migration gives, not a new one")
        }
        var opened: Realm?
        defer { RealmCache.shared.endOpening(key, keeping: opened) }
        opened = try Realm(configuration: configuration, confinedTo: isolation, queue: queue)
        return opened!
    }

    /// Whether this cached Realm belongs to `isolation` (a dead actor's address may be reused by a new one).
    private func belongs(to isolation: (any Actor)?) -> Bool {
        guard let isolation else { return true }
        return ownerActor.map(ObjectIdentifier.init) == ObjectIdentifier(isolation)
    }

    /// Throws when `configuration` opens this Realm's file with settings that this instance cannot honour (the
    /// Realm SDK refuses the same on one thread).
    private func checkReopened(with configuration: Configuration) throws(Realm.Error) {
        func differs(_ property: String, _ mine: String, _ theirs: String) -> Realm.Error {
            .invalidValue(
                type: "Realm.Configuration", property: property,
                reason: "\(path) is already open on this thread, actor or task with \(property) \(mine), not "
                    + "\(theirs); open it with the same configuration (one instance per isolation is shared), or "
                    + "release the open one first")
        }
        if configuration.readOnly != self.configuration.readOnly {
            throw differs("readOnly", "\(self.configuration.readOnly)", "\(configuration.readOnly)")
        }
        if configuration.schemaVersion != self.configuration.schemaVersion {
            throw differs("schemaVersion", "\(self.configuration.schemaVersion)", "\(configuration.schemaVersion)")
        }
        let mine = self.configuration.objectTypes.map { Set($0.map(ObjectIdentifier.init)) }
        let theirs = configuration.objectTypes.map { Set($0.map(ObjectIdentifier.init)) }
        if let mine, let theirs, mine != theirs {
            let names = { (types: [ObjectBase.Type]?) in
                types.map { "[" + $0.map { "\($0)" }.sorted().joined(separator: ", ") + "]" } ?? "nil"
            }
            throw differs("objectTypes", names(self.configuration.objectTypes), names(configuration.objectTypes))
        }
    }
}

extension Realm {
    /// The store of `configuration`: in memory, or its file (compacted first when the configuration asks).
    static func openStore(_ configuration: Configuration) throws(StorageError) -> Store {
        let events = storeEvents(configuration)
        if let identifier = configuration.inMemoryIdentifier {
            return try Store.inMemory(
                identifier: identifier,
                options: StoreOptions(events: events, encryptionKey: configuration.encryptionKey.map { Array($0) }))
        }
        let path = (configuration.fileURL ?? Configuration.defaultFileURL).path
        let options = StoreOptions(
            readOnly: configuration.readOnly, createIfMissing: !configuration.readOnly, events: events,
            encryptionKey: configuration.encryptionKey.map { Array($0) })
        if let shouldCompact = configuration.shouldCompactOnLaunch, !configuration.readOnly {
            try Store.compactOnLaunch(path: path, options: options, shouldCompact: shouldCompact)
        }
        return try Store.open(path: path, options: options)
    }
}

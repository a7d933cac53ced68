import StrataStorage

/// One committed version, pinned while any frozen Realm, object or collection reads it, with its schema read
/// once. Immutable, so any thread may hold it; each frozen `Realm` instance over it keeps its own caches.
final class PinnedVersion: Sendable {
    let configuration: Realm.Configuration
    let store: Store
    let snapshot: ReadTransaction
    let schema: StoredSchema

    init(configuration: Realm.Configuration, store: Store, snapshot: ReadTransaction) throws(Realm.Error) {
        self.configuration = configuration
        self.store = store
        self.snapshot = snapshot
        schema = try Realm.readSchema(transaction: nil, snapshot: snapshot, path: configuration.path)
    }

    /// A version whose schema was already read (by the Realm reading `snapshot`).
    init(configuration: Realm.Configuration, store: Store, snapshot: ReadTransaction, schema: StoredSchema) {
        self.configuration = configuration
        self.store = store
        self.snapshot = snapshot
        self.schema = schema
    }

    /// The version number.
    var version: UInt64 { snapshot.version }
}

extension Realm {
    /// The version this Realm reads, pinned for frozen views (one per version, reused while it lives).
    func pinnedVersion() throws(Realm.Error) -> PinnedVersion {
        if let pinned, pinned.snapshot === currentSnapshot { return pinned }
        let version = try PinnedVersion(configuration: configuration, store: store, snapshot: currentSnapshot)
        pinned = version
        return version
    }

    /// A new frozen Realm over the same version as this one (frozen or live): a private set of caches, so that
    /// each holder may read it on its own thread.
    /// If the file is too damaged to read the version's schema again, the frozen Realm takes the schema this
    /// Realm read (and the damage is recorded, see ``damage``).
    func frozenCopy() -> Realm {
        do {
            return Realm(frozen: try pinnedVersion())
        } catch {
            survive(error, "freeze(): \(error)", returning: ())
            let version = PinnedVersion(
                configuration: configuration, store: store, snapshot: currentSnapshot, schema: loadedSchema)
            pinned = version
            return Realm(frozen: version)
        }
    }
}

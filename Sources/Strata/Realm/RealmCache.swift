import StrataStorage

/// The live Realms of this process, one per file and isolation (thread, actor or task), held weakly: opening a
/// Realm where one of the same file is already open returns that instance, as the Realm SDK does. So
/// `try Realm()` wherever a Realm is needed sees the same objects and the same write transaction, and a second
/// `write` on one isolation is a nested-write error instead of a wait for the first's write lock that never
/// ends. The cache never keeps a Realm alive: it goes when its last user (or its task) lets go of it.
///
/// Unchecked `Sendable`: the entries are behind the lock, and a Realm is only handed to its own isolation.
final class RealmCache: @unchecked Sendable {
    /// Where a cached Realm lives.
    enum Isolation: Hashable {
        case thread(UInt)
        case actor(ObjectIdentifier)
        case task(TaskIdentity)
        /// A serial queue, by its marker (``RealmQueue``).
        case queue(ObjectIdentifier)
    }

    struct Key: Hashable {
        /// The file's path, or the in-memory identifier (see `Configuration.path`).
        let path: String
        let isolation: Isolation
    }

    private struct Entry {
        weak var realm: Realm?
    }

    private struct State {
        var entries: [Key: Entry] = [:]
        /// Keys whose Realm is being opened (a migration block opening the same Realm again must not start a
        /// second migration that waits for the first one's write lock).
        var opening: Set<Key> = []
        /// The entry count after the last sweep of released Realms: the next sweep waits until it doubles.
        var swept = 0
    }

    static let shared = RealmCache()
    private let state = Locked(State())

    /// The Realm kept for `key` if it is still in use. Only its owner (the isolation in `key`) asks for it, so
    /// handing it out is safe.
    func realm(for key: Key) -> Realm? { state.withLock { $0.entries[key]?.realm } }

    /// Marks `key` as being opened; false when it already is (a re-entrant open from the same isolation).
    func beginOpening(_ key: Key) -> Bool { state.withLock { $0.opening.insert(key).inserted } }

    /// Ends ``beginOpening(_:)``, keeping `realm` (when the open succeeded) for later opens.
    func endOpening(_ key: Key, keeping realm: Realm?) {
        state.withLock { state in
            state.opening.remove(key)
            guard let realm else { return }
            state.entries[key] = Entry(realm: realm)
            if state.entries.count >= max(64, 2 * state.swept) {
                state.entries = state.entries.filter { $0.value.realm != nil }
                state.swept = state.entries.count
            }
        }
    }

    /// The actors that `path`'s live actor-confined Realms are confined to (for ``RunningActor``: only their
    /// `ownerActor`, set once when opened, is read here).
    func actorOwners(ofRealmsAt path: String) -> [any Actor] {
        state.withLock { state in
            state.entries.compactMap { key, entry in
                guard key.path == path, case .actor = key.isolation else { return nil }
                return entry.realm?.ownerActor
            }
        }
    }

    /// Keeps `realm` for `key` (a Realm opened outside ``beginOpening(_:)``).
    func keep(_ realm: Realm, for key: Key) { endOpening(key, keeping: realm) }
}

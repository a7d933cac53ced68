import StrataStorage

/// What a keyed collection is, as the SDK's protocol of that name: ``Map`` conforms. Generic code over
/// `some RealmKeyedCollection` reads and writes entries, freezes and thaws (``ThreadConfined``; `thaw()` comes with
/// the protocol), and observes.
public protocol RealmKeyedCollection: ThreadConfined {
    /// The key type.
    associatedtype Key: _MapKey
    /// The value type.
    associatedtype Value: RealmCollectionValue
    /// The number of entries.
    var count: Int { get }
    /// The keys, in key order for a managed collection.
    var keys: [Key] { get }
    /// The values, in the order of ``keys``.
    var values: [Value] { get }
    /// The value for `key` (nil when absent); setting nil removes the key.
    subscript(key: Key) -> Value? { get set }
    /// Sets the value for `key`.
    func updateValue(_ value: Value, forKey key: Key)
    /// Removes `key` and its value.
    func removeObject(for key: Key)
    /// Removes every entry.
    func removeAll()
    /// Calls `block` with the initial state, then after each change, by key (see ``Map/observe(keyPaths:_:)``).
    func observe(keyPaths: [String]?, _ block: @escaping (RealmMapChange<Self>) -> Void) -> NotificationToken
}

extension RealmKeyedCollection {
    /// The same collection, live in a Realm of the calling isolation; nil if its owning object was deleted since.
    /// A live collection is returned as it is.
    public func thaw(_isolation: isolated (any Actor)? = #isolation) -> Self? {
        thawed(self, from: realm, isolation: _isolation)
    }

    /// ``observe(keyPaths:_:)`` for every change.
    public func observe(_ block: @escaping (RealmMapChange<Self>) -> Void) -> NotificationToken {
        observe(keyPaths: nil, block)
    }
}

extension Map: RealmKeyedCollection {}

/// A change to an observed ``Map``: keys rather than positions.
///
/// `deletions` are keys that were removed, `insertions` keys that were added, `modifications` keys whose value
/// changed (or, for maps of objects, whose object changed; with key paths, only those properties count).
public enum RealmMapChange<Collection: RealmKeyedCollection> {
    /// The map as it was when observation started.
    case initial(Collection)
    /// The map changed: the map itself (as of the new version) and the keys involved, each in key order.
    case update(
        Collection, deletions: [Collection.Key], insertions: [Collection.Key], modifications: [Collection.Key])
    /// Observation failed; nothing more will be delivered.
    case error(any Error)
}

/// Follows one map: its entries as last delivered (values by identity; links by object key) and which objects
/// changed since.
final class MapObserver<Key: _MapKey, Value: RealmCollectionValue>: ChangeObserver<RealmMapChange<Map<Key, Value>>> {
    let map: Map<Key, Value>
    private let realm: Realm
    private let owner: ManagedObject
    private let property: Int
    /// The linked class for maps of objects (their modifications count); nil for maps of values.
    private let elementBinding: TableBinding?
    private let paths: [[String]]?
    private var last: [String: QueryHashKey]
    private var pending = VersionChanges()
    private var dirty = false

    init(map: Map<Key, Value>, owner: ManagedObject, property: Int, paths: [[String]]?) {
        self.map = map
        self.owner = owner
        self.property = property
        self.paths = paths
        realm = owner.realm
        let info = owner.binding.table.infos[property]
        elementBinding =
            info.type == .object
            ? (info.objectType.flatMap { [realm] in try? realm.binding(for: $0) }
                ?? owner.binding.table.schema.properties[property].objectClassName.flatMap { [realm] in
                    try? realm.dynamicBinding($0)
                }) : nil
        last = [:]
        super.init()
        last = entries()
        if let paths, let elementBinding { ModificationChecker.validate(paths, from: elementBinding, realm: realm) }
    }

    /// The entries now (none once the owner was deleted).
    private func entries() -> [String: QueryHashKey] {
        if map.nested != 0 {
            // A dictionary nested in a mixed value.
            let entries = realm.nestedEntries(
                owner, property: property, nested: map.nested, level: map.level, keys: true)
            return Dictionary(entries, uniquingKeysWith: { $1 })
        }
        let entries = (try? realm.queryMapEntries(owner.binding, property: property, key: owner.key)) ?? []
        var result: [String: QueryHashKey] = [:]
        for entry in entries { result[entry.key] = QueryHashKey(entry.value) }
        return result
    }

    override func advanced(_ step: VersionStep) {
        if elementBinding != nil { pending.merge(step.changes) }
        dirty = true
    }

    override func nextChange() -> RealmMapChange<Map<Key, Value>>? {
        guard dirty else { return nil }
        dirty = false
        let now = entries()
        var deletions: [String] = []
        var insertions: [String] = []
        var modifications: [String] = []
        for key in last.keys where now[key] == nil { deletions.append(key) }
        let checker =
            elementBinding.map { ModificationChecker(realm: realm, changes: pending, paths: paths, root: $0.className) }
        for (key, value) in now {
            guard let old = last[key] else {
                insertions.append(key)
                continue
            }
            if old != value {
                modifications.append(key)
            } else if let checker, let elementBinding, !pending.isEmpty, let object = value.value.base as? Int64,
                checker.isModified(elementBinding, object)
            {
                modifications.append(key)
            }
        }
        pending = VersionChanges()
        last = now
        guard !deletions.isEmpty || !insertions.isEmpty || !modifications.isEmpty else { return nil }
        let keys = { (raw: [String]) in raw.sorted().compactMap { Key(_rawKey: $0) } }
        return .update(
            map, deletions: keys(deletions), insertions: keys(insertions), modifications: keys(modifications))
    }
}

extension Map {
    /// The observer of this managed map, registered with its Realm.
    private func registeredObserver(paths: [[String]]?) -> MapObserver<Key, Value> {
        guard let (owner, property) = managedSource else {
            fatalError("observe: only the maps of managed objects can be observed (not unmanaged ones)")
        }
        let observer = MapObserver(map: self, owner: owner, property: property, paths: paths)
        owner.realm.addObserver(observer)
        return observer
    }

    /// Calls `block` with the map's initial state, then after each change to it, by key: removed, added and
    /// changed entries (for maps of objects, also entries whose object changed; with `keyPaths`, only changes to
    /// those properties count). Delivered like collection notifications (see ``RealmCollection``'s `observe`).
    ///
    /// ```swift
    /// let token = dog.scores.observe { change in
    ///     if case .update(_, let deletions, let insertions, let modifications) = change { … }
    /// }
    /// ```
    public func observe(keyPaths: [String]? = nil, _ block: @escaping (RealmMapChange<Map>) -> Void)
        -> NotificationToken
    {
        let observer = registeredObserver(paths: keyPaths.map(splitKeyPaths))
        observer.handler = block
        block(.initial(self))
        return observer.token()
    }

    /// The map's changes as an `AsyncSequence`: `.initial` first, then one `.update` per change (coalesced when
    /// the consumer is slower than the writers). Iterate it where the Realm lives.
    public var changes: RealmMapChanges<Key, Value> { RealmMapChanges(map: self, paths: nil) }

    /// ``changes`` counting only changes to the properties at `keyPaths` of the map's objects as modifications.
    public func changes(keyPaths: [String]) -> RealmMapChanges<Key, Value> {
        RealmMapChanges(map: self, paths: splitKeyPaths(keyPaths))
    }

    fileprivate func makeObserver(paths: [[String]]?) -> MapObserver<Key, Value> { registeredObserver(paths: paths) }
}

/// The changes of a ``Map`` as an `AsyncSequence` (see ``Map/changes``).
public struct RealmMapChanges<Key: _MapKey, Value: RealmCollectionValue>: AsyncSequence {
    /// A change.
    public typealias Element = RealmMapChange<Map<Key, Value>>
    /// Never fails: errors arrive as `.error`, which ends the sequence.
    public typealias Failure = Never

    let map: Map<Key, Value>
    let paths: [[String]]?

    /// Starts observing.
    public func makeAsyncIterator() -> Iterator { Iterator(observer: map.makeObserver(paths: paths), map: map) }

    /// Hands out changes.
    public struct Iterator: AsyncIteratorProtocol {
        let observer: MapObserver<Key, Value>
        let map: Map<Key, Value>
        var started = false

        /// The next change, waiting for one; nil once the sequence ended (task cancelled, Realm invalidated).
        public mutating func next(isolation actor: isolated (any Actor)?) async -> RealmMapChange<Map<Key, Value>>? {
            if !started {
                started = true
                return .initial(map)
            }
            while !observer.waiter.isEnded && !Task.isCancelled {
                if let change = observer.nextChange() { return change }
                await observer.waitForChange()
            }
            return nil
        }

        /// The next change (from the Realm's isolation).
        public mutating func next() async -> RealmMapChange<Map<Key, Value>>? { await next(isolation: nil) }
    }
}

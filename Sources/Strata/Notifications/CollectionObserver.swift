import StrataStorage

/// Follows one collection: its elements' identities as last delivered, and which objects changed since.
class CollectionObserver<C>: ChangeObserver<RealmCollectionChange<C>> {
    let realm: Realm
    let collection: C

    init(realm: Realm, collection: C) {
        self.realm = realm
        self.collection = collection
    }
}

/// A ``CollectionObserver`` for a collection whose elements have identities of type `Identity`.
final class IdentityObserver<C, Identity: Hashable>: CollectionObserver<C> {
    private let identities: () -> [Identity]
    /// The stored object an identity stands for; nil for collections of plain values (no modifications).
    private let objectKey: ((Identity) -> Int64?)?
    private let elementBinding: TableBinding?
    private let paths: [[String]]?
    private var last: [Identity]
    private var pending = VersionChanges()
    private var dirty = false
    /// For results: the identities computed off the actor by the coordinator, and how to hand them to the live
    /// results so that reading them does not run the query again.
    let prepared: PreparedIdentities<Identity>?
    private let prime: (([Identity]) -> Void)?

    init(
        realm: Realm, collection: C, elementBinding: TableBinding?, paths: [[String]]?,
        identities: @escaping () -> [Identity], objectKey: ((Identity) -> Int64?)?,
        prepared: PreparedIdentities<Identity>? = nil, prime: (([Identity]) -> Void)? = nil
    ) {
        self.identities = identities
        self.objectKey = objectKey
        self.prepared = prepared
        self.prime = prime
        self.elementBinding = elementBinding
        self.paths = paths
        last = identities()
        super.init(realm: realm, collection: collection)
        if let paths, let elementBinding { ModificationChecker.validate(paths, from: elementBinding, realm: realm) }
    }

    override func advanced(_ step: VersionStep) {
        // Collections of plain values have no modifications: the object changes need not be computed.
        if elementBinding != nil { pending.merge(step.changes) }
        dirty = true
    }

    override func nextChange() -> RealmCollectionChange<C>? {
        guard dirty else { return nil }
        dirty = false
        let now: [Identity]
        if let ready = prepared?.take(at: realm) {
            now = ready
            prime?(ready)
        } else if let prepared {
            let start = ContinuousClock.now
            now = identities()
            prepared.measured(ContinuousClock.now - start)
        } else {
            now = identities()
        }
        let diff = CollectionDiff.between(last, now)
        var modifications: [Int] = []
        if let elementBinding, let objectKey, !pending.isEmpty {
            let checker = ModificationChecker(
                realm: realm, changes: pending, paths: paths, root: elementBinding.className)
            for (_, position) in diff.kept {
                if let key = objectKey(now[position]), checker.isModified(elementBinding, key) {
                    modifications.append(position)
                }
            }
        }
        pending = VersionChanges()
        last = now
        guard !diff.isEmpty || !modifications.isEmpty else { return nil }
        return .update(
            collection, deletions: diff.deletions, insertions: diff.insertions, modifications: modifications)
    }
}

/// A collection that can be observed: it makes the observer that follows it.
protocol ObservableRealmCollection {
    /// An observer of `self` (as `C`, the caller's static type) reporting modifications along `paths`.
    func makeObserver<C>(as collection: C, paths: [[String]]?) -> CollectionObserver<C>
}

/// Identities of a collection's elements computed off its Realm's actor (by the coordinator, on a frozen view of
/// the version the Realm is about to advance to), handed to the observer on the actor.
///
/// Only queries that cost enough run there: handing the work over costs a frozen view and a rebound query (tens of
/// microseconds), so a query that took longer than ``offActorThreshold`` on the actor moves off it, and moves
/// back when it gets cheaper than half that.
final class PreparedIdentities<Identity>: AnyPreparedIdentities, @unchecked Sendable {
    /// Computes the identities on a frozen Realm (reads only immutable state of the live collection).
    private let compute: (Realm) -> [Identity]?
    private let slot = Locked<(version: UInt64, identities: [Identity])?>(nil)
    private let worthwhile = Locked(false)

    init(compute: @escaping (Realm) -> [Identity]?) { self.compute = compute }

    var isWorthwhile: Bool { worthwhile.withLock { $0 } || alwaysOffActor.withLock { $0 > 0 } }

    /// Records what computing the identities cost (on the actor or off it).
    func measured(_ cost: Duration) {
        if cost >= offActorThreshold {
            worthwhile.withLock { $0 = true }
        } else if cost < offActorThreshold / 2 {
            worthwhile.withLock { $0 = false }
        }
    }

    func prepare(on frozen: Realm) {
        let start = ContinuousClock.now
        guard let identities = compute(frozen) else { return }
        measured(ContinuousClock.now - start)
        let version = frozen.currentSnapshot.version
        slot.withLock { $0 = (version, identities) }
    }

    /// The identities prepared for the version `realm` reads now (outside a write transaction), once.
    func take(at realm: Realm) -> [Identity]? {
        guard !realm.isInWriteTransaction else { return nil }
        let version = realm.currentSnapshot.version
        let identities = slot.withLock { slot -> [Identity]? in
            defer { slot = nil }
            guard let slot, slot.version == version else { return nil }
            return slot.identities
        }
        if identities != nil { preparedIdentitiesUsed.withLock { $0 += 1 } }
        return identities
    }
}

/// How many times an observer used identities computed off its actor (diagnostics and tests).
let preparedIdentitiesUsed = Locked(0)

/// A query that took at least this long on its Realm's actor is re-evaluated off it after later commits.
let offActorThreshold = Duration.microseconds(200)

/// While above zero, every observed query is re-evaluated off its actor whatever it costs (tests).
let alwaysOffActor = Locked(0)

/// ``PreparedIdentities`` of any identity type, as the coordinator holds them.
protocol AnyPreparedIdentities: AnyObject, Sendable {
    /// Whether the query costs enough to run off the actor.
    var isWorthwhile: Bool { get }
    /// Computes the identities as of `frozen`'s version.
    func prepare(on frozen: Realm)
}

extension Results: ObservableRealmCollection {
    func makeObserver<C>(as collection: C, paths: [[String]]?) -> CollectionObserver<C> {
        if let values { return values.makeObserver(as: collection, paths: paths) }
        let results = self
        // Off the actor, the same query runs on a frozen view (rebinding reads only the query's immutable parts).
        let template = UncheckedBox(self)
        let prepared = PreparedIdentities<Int64> { frozen in
            guard let moved = template.value.rebound(to: frozen) else { return nil }
            if let keys = moved.queryKeys() { return keys }
            do {
                return try frozen.objectKeys(tree: moved.binding.rowsTree)
            } catch {
                frozen.noteDamage(error)
                return nil
            }
        }
        var paths = paths
        if let projection = Element.self as? any ProjectionObservable.Type {
            // Only projected properties count as modifications, by projected or root names.
            paths = owner.projectionPaths(projection, paths)
        }
        let isObjects = Element.self is ObjectBase.Type || Element.self is any ProjectionObservable.Type
        return IdentityObserver(
            realm: owner, collection: collection, elementBinding: isObjects ? binding : nil, paths: paths,
            identities: { results.observedKeys() },
            objectKey: isObjects ? { $0 } : nil, prepared: prepared,
            prime: { keys in results.query?.prime(keys: keys, realm: results.owner) })
    }
}

/// Observers of a list or set: identities are the stored elements (object keys for links).
private func elementObserver<C>(
    realm: Realm, collection: C, owner: ManagedObject, property: Int, paths: [[String]]?
) -> CollectionObserver<C> {
    let info = owner.binding.table.infos[property]
    let target: TableBinding? =
        info.type == .object
        ? (info.objectType.flatMap { try? realm.binding(for: $0) }
            ?? owner.binding.table.schema.properties[property].objectClassName.flatMap {
                try? realm.dynamicBinding($0)
            }) : nil
    return IdentityObserver(
        realm: realm, collection: collection, elementBinding: target, paths: paths,
        identities: {
            let values: [_StoredValue]
            do {
                values = try realm.queryCollectionValues(owner.binding, property: property, key: owner.key)
            } catch {
                realm.noteDamage(error)
                values = []
            }
            return values.map(QueryHashKey.init)
        },
        objectKey: target == nil ? nil : { $0.value.base as? Int64 })
}

extension List: ObservableRealmCollection {
    func makeObserver<C>(as collection: C, paths: [[String]]?) -> CollectionObserver<C> {
        guard let (owner, property) = managedSource else {
            fatalError("observe: only the lists of managed objects can be observed (not unmanaged ones)")
        }
        if nested != 0 {
            return nestedListObserver(
                realm: owner.realm, collection: collection, owner: owner, property: property, nested: nested,
                level: level)
        }
        return elementObserver(
            realm: owner.realm, collection: collection, owner: owner, property: property, paths: paths)
    }
}

extension MutableSet: ObservableRealmCollection {
    func makeObserver<C>(as collection: C, paths: [[String]]?) -> CollectionObserver<C> {
        guard let (owner, property) = managedSource else {
            fatalError("observe: only the sets of managed objects can be observed")
        }
        return elementObserver(
            realm: owner.realm, collection: collection, owner: owner, property: property, paths: paths)
    }
}

extension LinkingObjects: ObservableRealmCollection {
    func makeObserver<C>(as collection: C, paths: [[String]]?) -> CollectionObserver<C> {
        guard let owner = source.owner else { fatalError("observe: unmanaged LinkingObjects cannot be observed") }
        let property = source.property
        let realm = owner.realm
        let origin = try? realm.linkingOrigin(owner.binding, property: property)
        return IdentityObserver(
            realm: realm, collection: collection, elementBinding: origin, paths: paths,
            identities: { realm.backlinkKeys(owner, property: property) }, objectKey: { $0 })
    }
}

extension AnyRealmCollection: ObservableRealmCollection {
    func makeObserver<C>(as collection: C, paths: [[String]]?) -> CollectionObserver<C> {
        guard let observable = base as? any ObservableRealmCollection else {
            fatalError("observe: \(type(of: base)) cannot be observed")
        }
        return observable.makeObserver(as: collection, paths: paths)
    }
}

extension RealmCollection {
    /// The observer of `self`, registered with its Realm.
    func registeredObserver(paths: [[String]]?) -> CollectionObserver<Self> {
        guard let observable = self as? any ObservableRealmCollection else {
            fatalError("observe: \(Self.self) cannot be observed")
        }
        guard let realm else { fatalError("observe: unmanaged collections cannot be observed") }
        let observer = observable.makeObserver(as: self, paths: paths)
        realm.addObserver(observer)
        return observer
    }

    /// Calls `block` with the collection's initial state, then after each change to it: objects inserted,
    /// deleted, moved or modified (with `keyPaths`, only changes to those properties count as modifications;
    /// without, changes to the objects and the objects they link to, up to four links away).
    ///
    /// ```swift
    /// let token = realm.objects(Dog.self).where { $0.age > 2 }.observe(keyPaths: ["name"]) { change in
    ///     switch change {
    ///     case .initial(let dogs): show(dogs)
    ///     case .update(let dogs, let deletions, let insertions, let modifications): animate(…)
    ///     case .error(let error): report(error)
    ///     }
    /// }
    /// ```
    ///
    /// The initial call happens before `observe` returns. Later calls happen where the Realm lives, with the
    /// Realm advanced to the version they describe: on its actor (automatically after any commit), or, for a
    /// Realm confined to a plain thread, when that thread calls `refresh()`, writes, or commits. Keep the token:
    /// observation ends when it is invalidated or released.
    public func observe(
        keyPaths: [String]? = nil, _ block: @escaping (RealmCollectionChange<Self>) -> Void
    ) -> NotificationToken {
        let observer = registeredObserver(paths: keyPaths.map(splitKeyPaths))
        observer.handler = block
        block(.initial(self))
        return observer.token()
    }

    /// ``observe(keyPaths:_:)`` calling `block` on `actor` with the collection as a Realm confined to that actor
    /// reads it (opened for it if needed).
    public func observe<A: Actor>(
        keyPaths: [String]? = nil, on actor: A, _isolation: isolated (any Actor)? = #isolation,
        _ block: @Sendable @escaping (isolated A, RealmCollectionChange<Self>) -> Void
    ) async -> NotificationToken where Self: ThreadConfined {
        let reference = ThreadSafeReference(to: self)
        let box = TokenBox()
        // Built here (where `Self` is known) and run on `actor`, which is the only place it touches.
        let start = UncheckedBox { (actor: A) in
            guard let configuration = reference.frozen.realm?.configuration,
                let realm = try? Realm.live(for: configuration, isolation: actor),
                let collection = realm.resolve(reference)
            else {
                actor.assumeIsolated { block($0, .error(Realm.Error.invalidatedObject)) }
                return
            }
            box.token = collection.observe(keyPaths: keyPaths) { change in
                let boxed = UncheckedBox(change)
                actor.assumeIsolated { block($0, boxed.value) }
            }
        }
        await Coordinator.run(on: actor) { actor in start.value(actor) }
        return box.token ?? NotificationToken(box) {}
    }
}

/// Carries a value the compiler cannot prove `Sendable` to the one isolation domain that uses it.
struct UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

/// Carries a token out of an actor's closure.
final class TokenBox: @unchecked Sendable {
    var token: NotificationToken?
}

/// Key paths as strings (`"owner.name"`) split into property names.
func splitKeyPaths(_ paths: [String]) -> [[String]] { paths.map { $0.split(separator: ".").map(String.init) } }

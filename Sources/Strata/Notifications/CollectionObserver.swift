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

    init(
        realm: Realm, collection: C, elementBinding: TableBinding?, paths: [[String]]?,
        identities: @escaping () -> [Identity], objectKey: ((Identity) -> Int64?)?
    ) {
        self.identities = identities
        self.objectKey = objectKey
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
        let now = identities()
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

extension Results: ObservableRealmCollection {
    func makeObserver<C>(as collection: C, paths: [[String]]?) -> CollectionObserver<C> {
        let results = self
        var paths = paths
        if let projection = Element.self as? any ProjectionObservable.Type {
            // Only projected properties count as modifications, by projected or root names.
            paths = owner.projectionPaths(projection, paths)
        }
        let isObjects = Element.self is ObjectBase.Type || Element.self is any ProjectionObservable.Type
        return IdentityObserver(
            realm: owner, collection: collection, elementBinding: isObjects ? binding : nil, paths: paths,
            identities: {
                if let keys = results.queryKeys() { return keys }
                return (try? results.owner.objectKeys(tree: results.binding.rowsTree)) ?? []
            },
            objectKey: isObjects ? { $0 } : nil)
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
            ((try? realm.queryCollectionValues(owner.binding, property: property, key: owner.key)) ?? []).map(
                QueryHashKey.init)
        },
        objectKey: target == nil ? nil : { $0.value.base as? Int64 })
}

extension List: ObservableRealmCollection {
    func makeObserver<C>(as collection: C, paths: [[String]]?) -> CollectionObserver<C> {
        guard let (owner, property) = managedSource, nested == 0 else {
            fatalError("observe: only the lists of managed objects can be observed (not unmanaged or nested ones)")
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

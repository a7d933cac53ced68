/// `freeze()`, `thaw()` and moving between Realms for objects and collections (see `Frozen.swift`).

/// The frozen form of a managed value; traps when `value` is unmanaged or does not exist in the version its
/// Realm reads (an object created in the current write transaction).
private func frozen<Value: RealmRebindable>(_ value: Value, realm: Realm?, what: String) -> Value {
    guard let realm else { fatalError("freeze(): \(what) is unmanaged; only managed values can be frozen") }
    if realm.frozen { return value }
    realm.checkThread()
    guard let result = value.rebound(to: realm.frozenCopy()) else {
        fatalError(
            "freeze(): \(what) does not exist in the version the Realm read (deleted, or created in the current write transaction)"
        )
    }
    return result
}

/// The live form of `value` for the calling isolation; nil when it was deleted since.
private func thawed<Value: RealmRebindable>(_ value: Value, realm: Realm?, isolation: (any Actor)?) -> Value? {
    guard let realm, realm.frozen else { return value }
    do {
        return value.rebound(to: try Realm.live(for: realm.configuration, isolation: isolation))
    } catch {
        // A file found damaged (see `Realm.damage`) has nothing to thaw into: nil, as for a deleted value.
        return realm.survive(error, "thaw(): \(error)", returning: nil)
    }
}

extension ObjectBase: ThreadConfined, RealmRebindable {
    /// An immutable snapshot of the object as its Realm reads it now, readable from any thread. A frozen object
    /// is returned as it is. Traps for an unmanaged object or one created in the current write transaction.
    public func freeze() -> Self { frozen(self, realm: realm, what: "this \(Self.className())") }

    /// The live object in a Realm of the calling isolation (actor or thread); nil if it was deleted. A live
    /// object is returned as it is.
    public func thaw(_isolation: isolated (any Actor)? = #isolation) -> Self? {
        thawed(self, realm: realm, isolation: _isolation)
    }

    func rebound(to realm: Realm) -> Self? {
        guard let managed, let moved = managed.rebound(to: realm) else { return nil }
        if moved === managed { return self }
        return realm.accessor(for: moved) as? Self
    }
}

extension Results: ThreadConfined, RealmRebindable {
    /// Whether the results are a frozen snapshot.
    public var isFrozen: Bool { realm?.frozen ?? false }

    /// The results as their Realm reads them now, frozen: readable from any thread, never changing.
    public func freeze() -> Results {
        frozen(self, realm: realm, what: values == nil ? "Results<\(binding.className)>" : "Results<\(Element.self)>")
    }

    /// The same query, live in a Realm of the calling isolation. Live results are returned as they are.
    public func thaw(_isolation: isolated (any Actor)? = #isolation) -> Results? {
        thawed(self, realm: realm, isolation: _isolation)
    }

    func rebound(to realm: Realm) -> Results? {
        if let values {
            guard let moved = values.rebound(to: realm) else { return nil }
            return Results(values: moved)
        }
        if realm === owner { return self }
        guard let moved = try? realm.matchingBinding(binding) else { return nil }
        guard let query else { return Results(realm: realm, binding: moved) }
        guard let movedQuery = query.rebound(to: realm) else { return nil }
        return Results(realm: realm, binding: moved, query: movedQuery)
    }
}

extension List: ThreadConfined, RealmRebindable {
    /// Whether the list is a frozen snapshot.
    public var isFrozen: Bool { realm?.frozen ?? false }

    /// The list as its Realm reads it now, frozen. Traps for an unmanaged list.
    public func freeze() -> List { frozen(self, realm: realm, what: "this List") }

    /// The live list in a Realm of the calling isolation; nil if its object was deleted.
    public func thaw(_isolation: isolated (any Actor)? = #isolation) -> List? {
        thawed(self, realm: realm, isolation: _isolation)
    }

    func rebound(to realm: Realm) -> List? {
        guard let (owner, property) = managedSource, let moved = owner.rebound(to: realm) else { return nil }
        if moved === owner { return self }
        return List(owner: moved, property: property, nested: nested, level: level)
    }
}

extension MutableSet: ThreadConfined, RealmRebindable {
    /// Whether the set is a frozen snapshot.
    public var isFrozen: Bool { realm?.frozen ?? false }

    /// The set as its Realm reads it now, frozen. Traps for an unmanaged set.
    public func freeze() -> MutableSet { frozen(self, realm: realm, what: "this MutableSet") }

    /// The live set in a Realm of the calling isolation; nil if its object was deleted.
    public func thaw(_isolation: isolated (any Actor)? = #isolation) -> MutableSet? {
        thawed(self, realm: realm, isolation: _isolation)
    }

    func rebound(to realm: Realm) -> MutableSet? {
        guard let (owner, property) = managedSource, let moved = owner.rebound(to: realm) else { return nil }
        if moved === owner { return self }
        return MutableSet(owner: moved, property: property)
    }
}

extension Map: ThreadConfined, RealmRebindable {
    /// Whether the map is a frozen snapshot.
    public var isFrozen: Bool { realm?.frozen ?? false }

    /// The map as its Realm reads it now, frozen. Traps for an unmanaged map.
    public func freeze() -> Map { frozen(self, realm: realm, what: "this Map") }

    /// The live map in a Realm of the calling isolation; nil if its object was deleted.
    public func thaw(_isolation: isolated (any Actor)? = #isolation) -> Map? {
        thawed(self, realm: realm, isolation: _isolation)
    }

    func rebound(to realm: Realm) -> Map? {
        guard let (owner, property) = managedSource, let moved = owner.rebound(to: realm) else { return nil }
        if moved === owner { return self }
        return Map(owner: moved, property: property, nested: nested, level: level)
    }
}

extension LinkingObjects: ThreadConfined, RealmRebindable {
    /// Whether the linking objects are a frozen snapshot.
    public var isFrozen: Bool { realm?.frozen ?? false }

    /// The linking objects as their Realm reads them now, frozen. Traps while unmanaged.
    public func freeze() -> LinkingObjects { frozen(self, realm: realm, what: "these LinkingObjects") }

    /// The live linking objects in a Realm of the calling isolation; nil if their object was deleted.
    public func thaw(_isolation: isolated (any Actor)? = #isolation) -> LinkingObjects? {
        thawed(self, realm: realm, isolation: _isolation)
    }

    func rebound(to realm: Realm) -> LinkingObjects? {
        guard let owner = source.owner, let moved = owner.rebound(to: realm) else { return nil }
        if moved === owner { return self }
        return LinkingObjects(source: LinkingSource(owner: moved, property: source.property))
    }
}

extension AnyRealmCollection: ThreadConfined, RealmRebindable {
    /// Whether the wrapped collection is a frozen snapshot.
    public var isFrozen: Bool { realm?.frozen ?? false }

    /// The wrapped collection, frozen.
    public func freeze() -> AnyRealmCollection { frozen(self, realm: realm, what: "this collection") }

    /// The wrapped collection, live in a Realm of the calling isolation; nil if its owner was deleted.
    public func thaw(_isolation: isolated (any Actor)? = #isolation) -> AnyRealmCollection? {
        thawed(self, realm: realm, isolation: _isolation)
    }

    func rebound(to realm: Realm) -> AnyRealmCollection? {
        guard let rebindable = base as? any RealmRebindable,
            let moved = rebindable.rebound(into: realm) as? any RealmCollection<Element>
        else { return nil }
        return AnyRealmCollection(moved)
    }
}

public import Foundation

/// What the SDK's `RealmCollection` protocol promises beyond being a collection, available in generic code
/// (`func f(_ dogs: some RealmCollection<Dog>)`): freezing and thawing, positions of elements, and elements at
/// positions. The concrete collections implement these themselves; these forms serve generic code and collections
/// that have no form of their own.
extension RealmCollection {
    /// Whether the collection reads a frozen snapshot.
    public var isFrozen: Bool { realm?.frozen ?? false }

    /// The collection as its Realm reads it now, frozen: readable from any thread, never changing. Traps for an
    /// unmanaged collection, and for a kind of collection that cannot be frozen (the message names it).
    public func freeze() -> Self {
        guard let realm else {
            fatalError("freeze(): this \(Self.self) is unmanaged; only managed values can be frozen")
        }
        if realm.frozen { return self }
        realm.checkThread()
        guard let rebindable = self as? any RealmRebindable,
            let frozen = rebindable.rebound(into: realm.frozenCopy()) as? Self
        else {
            fatalError("freeze(): \(Self.self) cannot be frozen, or no longer exists in the version its Realm read")
        }
        return frozen
    }

    /// The same collection, live in a Realm of the calling isolation (actor, task or thread); nil if its owning
    /// object was deleted since. A live collection is returned as it is.
    public func thaw(_isolation: isolated (any Actor)? = #isolation) -> Self? {
        thawed(self, from: realm, isolation: _isolation)
    }

    /// The position of the first element equal to `element` (for objects: the same stored object), or nil.
    public func index(of element: Element) -> Int? {
        let target = element._stored
        return firstIndex { ListElements.equal($0._stored, target) }
    }

    /// The elements at `indexes`, in order. An index out of range traps naming the collection, the index and the
    /// count.
    public func objects(at indexes: IndexSet) -> [Element] { indexes.map { self[$0] } }
}

/// `collection` (read from `realm`) live in a Realm of `isolation`: itself when already live; nil if it cannot be
/// rebound or its owning object was deleted since. Shared by every collection's and map's `thaw()`.
func thawed<C>(_ collection: C, from realm: Realm?, isolation: (any Actor)?) -> C? {
    guard let realm, realm.frozen else { return collection }
    guard let rebindable = collection as? any RealmRebindable else { return nil }
    do {
        return rebindable.rebound(into: try Realm.live(for: realm.configuration, isolation: isolation)) as? C
    } catch {
        // A file found damaged (see `Realm.damage`) has nothing to thaw into: nil, as for a deleted owner.
        return realm.survive(error, "thaw(): \(error)", returning: nil)
    }
}

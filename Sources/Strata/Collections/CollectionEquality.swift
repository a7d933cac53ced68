/// Equality of collections and Realms as the SDK defines it: two values are equal when they are views of the same
/// stored collection in the same Realm (an unmanaged collection is equal only to itself). Equal collections hold
/// the same elements; collections with the same elements are not necessarily equal.
extension Results: Equatable {
    /// Whether both read the same query over the same class in the same Realm (the same `Results`, or copies of it).
    public static func == (lhs: Results, rhs: Results) -> Bool {
        if lhs.values != nil || rhs.values != nil { return lhs.values?.identity === rhs.values?.identity }
        return lhs.owner === rhs.owner && lhs.binding.className == rhs.binding.className && lhs.query === rhs.query
    }
}

extension List: Equatable {
    /// Whether both are views of the same stored list (managed), or the same instance (unmanaged).
    public static func == (lhs: List, rhs: List) -> Bool { lhs === rhs || lhs.isSameStoredCollection(as: rhs) }
}

extension MutableSet: Equatable {
    /// Whether both are views of the same stored set (managed), or the same instance (unmanaged).
    public static func == (lhs: MutableSet, rhs: MutableSet) -> Bool {
        lhs === rhs || ManagedObject.sameCollection(lhs.managedSource, 0, rhs.managedSource, 0)
    }
}

extension Map: Equatable {
    /// Whether both are views of the same stored map (managed), or the same instance (unmanaged).
    public static func == (lhs: Map, rhs: Map) -> Bool { lhs === rhs || lhs.isSameStoredCollection(as: rhs) }
}

extension LinkingObjects: Equatable {
    /// Whether both are the backlinks of the same object through the same property.
    public static func == (lhs: LinkingObjects, rhs: LinkingObjects) -> Bool {
        if lhs.source === rhs.source { return true }
        guard let left = lhs.source.owner, let right = rhs.source.owner else { return false }
        return left.realm === right.realm && left.binding === right.binding && left.key == right.key
            && lhs.source.property == rhs.source.property
    }
}

extension AnyRealmCollection: Equatable {
    /// Whether both wrap equal collections of the same kind.
    public static func == (lhs: AnyRealmCollection, rhs: AnyRealmCollection) -> Bool {
        func equal<C: RealmCollection>(_ left: C, _ right: any RealmCollection<Element>) -> Bool {
            guard let right = right as? C else { return false }
            return left == right
        }
        return equal(lhs.base, rhs.base)
    }
}

extension RealmCollection {
    /// For collections without an equality of their own (sections, projected collections): the same elements, in
    /// the same order, read by the same Realm.
    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.realm === rhs.realm && lhs.count == rhs.count
            && zip(lhs, rhs).allSatisfy { ListElements.equal($0._stored, $1._stored) }
    }
}

extension Realm: Equatable {
    /// Whether both are the same Realm: the same instance (a live Realm is one instance per file and isolation),
    /// or frozen Realms of the same file at the same version.
    public static func == (lhs: Realm, rhs: Realm) -> Bool {
        if lhs === rhs { return true }
        return lhs.frozen && rhs.frozen && lhs.path == rhs.path
            && lhs.currentSnapshot.version == rhs.currentSnapshot.version
    }
}

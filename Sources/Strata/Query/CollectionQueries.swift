import Foundation

/// Queries on lists, sets and linking objects of objects: they run over the collection's objects, in the
/// collection's order, and return live `Results`.
protocol QueryableObjectCollection {
    associatedtype Element: ObjectBase
    /// The Realm and the keys of the collection's objects, in order; nil while unmanaged.
    var queryBase: (realm: Realm, keys: () throws(Realm.Error) -> [Int64])? { get }
}

extension QueryableObjectCollection {
    /// The collection's objects as `Results` (traps while unmanaged: only stored collections can be queried).
    func queryResults() -> Results<Element> {
        guard let base = queryBase else {
            fatalError("\(Self.self) is unmanaged: only collections of stored objects can be queried")
        }
        base.realm.checkThread()
        do {
            let binding = try base.realm.binding(for: Element.self)
            return Results(realm: base.realm, binding: binding, query: ResultsQuery(stages: [], base: base.keys))
        } catch {
            fatalError("\(error)")
        }
    }

    func filtered(_ predicate: String, _ args: [Any]) -> Results<Element> {
        do {
            return try queryResults().narrowed(predicate, args)
        } catch {
            fatalError("\(error)")
        }
    }
}

extension List: QueryableObjectCollection where Element: ObjectBase {
    var queryBase: (realm: Realm, keys: () throws(Realm.Error) -> [Int64])? {
        guard let (owner, property) = managedSource else { return nil }
        return (
            owner.realm,
            { () throws(Realm.Error) in try owner.realm.objectKeys(inCollection: owner, property: property) }
        )
    }
}

extension MutableSet: QueryableObjectCollection where Element: ObjectBase {
    var queryBase: (realm: Realm, keys: () throws(Realm.Error) -> [Int64])? {
        guard let (owner, property) = managedSource else { return nil }
        return (
            owner.realm,
            { () throws(Realm.Error) in try owner.realm.objectKeys(inCollection: owner, property: property) }
        )
    }
}

extension LinkingObjects: QueryableObjectCollection {
    var queryBase: (realm: Realm, keys: () throws(Realm.Error) -> [Int64])? {
        guard let owner = source.owner else { return nil }
        let property = source.property
        return (owner.realm, { () throws(Realm.Error) in owner.realm.backlinkKeys(owner, property: property) })
    }
}

extension Realm {
    /// The keys of the objects a list or set of objects holds, in its order.
    func objectKeys(inCollection owner: ManagedObject, property: Int) throws(Realm.Error) -> [Int64] {
        try queryCollectionValues(owner.binding, property: property, key: owner.key).compactMap {
            if case .int(let key) = $0 { key } else { nil }
        }
    }
}

// The query methods, spelled out per collection type so that each has its own documentation.

extension List where Element: ObjectBase {
    /// The list's objects matching `predicate` (Realm Query Language), in list order; traps on a bad query.
    public func filter(_ predicate: String, _ args: Any...) -> Results<Element> { filtered(predicate, args) }
    /// ``filter(_:_:)``, throwing ``Realm/Error/invalidQuery(query:position:reason:)``.
    public func checkedFilter(_ predicate: String, _ args: Any...) throws -> Results<Element> {
        try queryResults().narrowed(predicate, args)
    }
    /// The list's objects matching a type-safe query, in list order.
    public func `where`(_ query: (Query<Element>) -> Query<Bool>) -> Results<Element> { queryResults().where(query) }
    /// The list's objects ordered by `keyPath`.
    public func sorted(byKeyPath keyPath: String, ascending: Bool = true) -> Results<Element> {
        queryResults().sorted(byKeyPath: keyPath, ascending: ascending)
    }
    /// The list's objects ordered by each descriptor in turn.
    public func sorted<S: Sequence>(by descriptors: S) -> Results<Element> where S.Element == SortDescriptor {
        queryResults().sorted(by: descriptors)
    }
    /// The first of the list's objects for each distinct combination of values at `keyPaths`.
    public func distinct<S: Sequence>(by keyPaths: S) -> Results<Element> where S.Element == String {
        queryResults().distinct(by: keyPaths)
    }
}

extension MutableSet where Element: ObjectBase {
    /// The set's objects matching `predicate` (Realm Query Language); traps on a bad query.
    public func filter(_ predicate: String, _ args: Any...) -> Results<Element> { filtered(predicate, args) }
    /// ``filter(_:_:)``, throwing ``Realm/Error/invalidQuery(query:position:reason:)``.
    public func checkedFilter(_ predicate: String, _ args: Any...) throws -> Results<Element> {
        try queryResults().narrowed(predicate, args)
    }
    /// The set's objects matching a type-safe query.
    public func `where`(_ query: (Query<Element>) -> Query<Bool>) -> Results<Element> { queryResults().where(query) }
    /// The set's objects ordered by `keyPath`.
    public func sorted(byKeyPath keyPath: String, ascending: Bool = true) -> Results<Element> {
        queryResults().sorted(byKeyPath: keyPath, ascending: ascending)
    }
    /// The set's objects ordered by each descriptor in turn.
    public func sorted<S: Sequence>(by descriptors: S) -> Results<Element> where S.Element == SortDescriptor {
        queryResults().sorted(by: descriptors)
    }
    /// The first of the set's objects for each distinct combination of values at `keyPaths`.
    public func distinct<S: Sequence>(by keyPaths: S) -> Results<Element> where S.Element == String {
        queryResults().distinct(by: keyPaths)
    }
}

extension LinkingObjects {
    /// The linking objects matching `predicate` (Realm Query Language); traps on a bad query.
    public func filter(_ predicate: String, _ args: Any...) -> Results<Element> { filtered(predicate, args) }
    /// ``filter(_:_:)``, throwing ``Realm/Error/invalidQuery(query:position:reason:)``.
    public func checkedFilter(_ predicate: String, _ args: Any...) throws -> Results<Element> {
        try queryResults().narrowed(predicate, args)
    }
    /// The linking objects matching a type-safe query.
    public func `where`(_ query: (Query<Element>) -> Query<Bool>) -> Results<Element> { queryResults().where(query) }
    /// The linking objects ordered by `keyPath`.
    public func sorted(byKeyPath keyPath: String, ascending: Bool = true) -> Results<Element> {
        queryResults().sorted(byKeyPath: keyPath, ascending: ascending)
    }
    /// The linking objects ordered by each descriptor in turn.
    public func sorted<S: Sequence>(by descriptors: S) -> Results<Element> where S.Element == SortDescriptor {
        queryResults().sorted(by: descriptors)
    }
    /// The first linking object for each distinct combination of values at `keyPaths`.
    public func distinct<S: Sequence>(by keyPaths: S) -> Results<Element> where S.Element == String {
        queryResults().distinct(by: keyPaths)
    }
}

// MARK: Key-path forms

extension Results where Element: ObjectBase {
    /// The persisted name of the property `keyPath` reads (a single property of `Element`); traps otherwise.
    private func name<V>(of keyPath: KeyPath<Element, V>, _ what: String) -> String {
        owner.checkThread()
        do {
            return try owner.propertyName(of: keyPath, query: "\(what) on \(binding.className)")
        } catch {
            fatalError("\(error)")
        }
    }

    /// The objects ordered by the property at `keyPath`.
    public func sorted<V: Comparable>(by keyPath: KeyPath<Element, V>, ascending: Bool = true) -> Results<Element> {
        sorted(byKeyPath: name(of: keyPath, "sorted(by:)"), ascending: ascending)
    }

    /// The smallest value of the property at `keyPath`.
    public func min<V: _Persistable>(of keyPath: KeyPath<Element, V>) -> V? {
        min(ofProperty: name(of: keyPath, "min"))
    }
    /// The largest value of the property at `keyPath`.
    public func max<V: _Persistable>(of keyPath: KeyPath<Element, V>) -> V? {
        max(ofProperty: name(of: keyPath, "max"))
    }
    /// The sum of the property at `keyPath`.
    public func sum<V: _Persistable>(of keyPath: KeyPath<Element, V>) -> V { sum(ofProperty: name(of: keyPath, "sum")) }
    /// The mean of the property at `keyPath`.
    public func average<V: _Persistable>(of keyPath: KeyPath<Element, V>) -> Double? {
        average(ofProperty: name(of: keyPath, "average"))
    }
}

extension List where Element: ObjectBase {
    /// The list's objects ordered by the property at `keyPath`.
    public func sorted<V: Comparable>(by keyPath: KeyPath<Element, V>, ascending: Bool = true) -> Results<Element> {
        queryResults().sorted(by: keyPath, ascending: ascending)
    }
}

extension MutableSet where Element: ObjectBase {
    /// The set's objects ordered by the property at `keyPath`.
    public func sorted<V: Comparable>(by keyPath: KeyPath<Element, V>, ascending: Bool = true) -> Results<Element> {
        queryResults().sorted(by: keyPath, ascending: ascending)
    }
}

extension LinkingObjects {
    /// The linking objects ordered by the property at `keyPath`.
    public func sorted<V: Comparable>(by keyPath: KeyPath<Element, V>, ascending: Bool = true) -> Results<Element> {
        queryResults().sorted(by: keyPath, ascending: ascending)
    }
}

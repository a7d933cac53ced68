import Foundation

/// Lists, sets and linking objects of objects: queries on them run over the collection's objects, in the
/// collection's order, and return live `Results`. Conformance comes with the collection types; do not conform
/// other types.
public protocol _ObjectCollectionQueries {
    /// The objects' type.
    associatedtype Element: ObjectBase
    /// The collection's objects as `Results` (traps while unmanaged: only stored collections can be queried).
    func _queryResults() -> Results<Element>
}

/// The query operations of every collection of objects, so that generic code over `some RealmCollection<Dog>` (or
/// `C: RealmCollection where C.Element == Dog`) can call them as the SDK's protocol allows. `Results` has its own
/// (for projections too); the others run over ``_queryResults()``.
extension RealmCollection where Element: ObjectBase {
    /// The collection's objects as `Results`: the collection itself when it is `Results`, else the collection's
    /// ``_ObjectCollectionQueries/_queryResults()``. Traps for a collection that cannot be queried (unmanaged).
    public func _queryResults() -> Results<Element> {
        if let results = self as? Results<Element> { return results }
        func results<Q: _ObjectCollectionQueries>(_ collection: Q) -> Any { collection._queryResults() }
        guard let queryable = self as? any _ObjectCollectionQueries, let found = results(queryable) as? Results<Element>
        else { fatalError("\(Self.self) cannot be queried: only collections of stored objects can") }
        return found
    }

    /// The objects matching `predicate` (Realm Query Language), in the collection's order; traps on a bad query.
    public func filter(_ predicate: String, _ args: Any...) -> Results<Element> {
        do {
            return try _queryResults().narrowed(predicate, args)
        } catch {
            fatalError("\(error)")
        }
    }

    /// `filter(_:_:)`, throwing ``RealmError/invalidQuery(query:position:reason:)``.
    public func checkedFilter(_ predicate: String, _ args: Any...) throws -> Results<Element> {
        let results = _queryResults()
        try results.owner.throwIfDamaged()
        return try results.narrowed(predicate, args)
    }

    /// The objects matching a type-safe query, in the collection's order.
    public func `where`(_ query: (Query<Element>) -> Query<Bool>) -> Results<Element> { _queryResults().where(query) }

    /// `where(_:)`, throwing ``RealmError/invalidQuery(query:position:reason:)`` for a query the engine cannot
    /// run instead of trapping.
    public func checkedWhere(_ query: (Query<Element>) -> Query<Bool>) throws(Realm.Error) -> Results<Element> {
        try _queryResults().checkedWhere(query)
    }

    /// The objects ordered by `keyPath` (a property, or a path through to-one links).
    public func sorted(byKeyPath keyPath: String, ascending: Bool = true) -> Results<Element> {
        _queryResults().sorted(byKeyPath: keyPath, ascending: ascending)
    }

    /// The objects ordered by each descriptor in turn.
    public func sorted<S: Sequence>(by descriptors: S) -> Results<Element> where S.Element == SortDescriptor {
        _queryResults().sorted(by: descriptors)
    }

    /// The objects ordered by the property at `keyPath`, of any ``SortableType`` as in the SDK: numbers, strings,
    /// dates, ObjectIds, UUIDs, their optionals (nil first when ascending), and `AnyRealmValue` (in the mixed order).
    public func sorted<V: SortableType>(by keyPath: KeyPath<Element, V>, ascending: Bool = true) -> Results<Element> {
        _queryResults().sorted(by: keyPath, ascending: ascending)
    }

    /// The first object for each distinct combination of values at `keyPaths`.
    public func distinct<S: Sequence>(by keyPaths: S) -> Results<Element> where S.Element == String {
        _queryResults().distinct(by: keyPaths)
    }

    /// The smallest value of `property` over the objects (nil when there are none).
    public func min<T: _Persistable>(ofProperty property: String) -> T? { _queryResults().min(ofProperty: property) }
    /// The largest value of `property` over the objects.
    public func max<T: _Persistable>(ofProperty property: String) -> T? { _queryResults().max(ofProperty: property) }
    /// The sum of `property` over the objects (0 when there are none).
    public func sum<T: _Persistable>(ofProperty property: String) -> T { _queryResults().sum(ofProperty: property) }
    /// The mean of `property` over the objects (nil when there are none).
    public func average<T: _Persistable>(ofProperty property: String) -> T? {
        _queryResults().average(ofProperty: property)
    }
    /// The smallest value of the property at `keyPath`.
    public func min<V: _Persistable>(of keyPath: KeyPath<Element, V>) -> V? { _queryResults().min(of: keyPath) }
    /// The largest value of the property at `keyPath`.
    public func max<V: _Persistable>(of keyPath: KeyPath<Element, V>) -> V? { _queryResults().max(of: keyPath) }
    /// The sum of the property at `keyPath`.
    public func sum<V: _Persistable>(of keyPath: KeyPath<Element, V>) -> V { _queryResults().sum(of: keyPath) }
    /// The mean of the property at `keyPath`.
    public func average<V: _Persistable>(of keyPath: KeyPath<Element, V>) -> Double? {
        _queryResults().average(of: keyPath)
    }
    /// The position of the first object matching `predicate` (Realm Query Language).
    public func index(matching predicate: String, _ args: Any...) -> Int? {
        _queryResults().firstIndex(matching: predicate, args)
    }
    /// The position of the first object matching a type-safe query.
    public func index(matching query: (Query<Element>) -> Query<Bool>) -> Int? {
        _queryResults().index(matching: query)
    }
}

extension Realm {
    /// `Results` over the objects whose keys `keys` gives, in that order.
    func results<Element: ObjectBase>(
        of type: Element.Type, rebase: BaseSource? = nil, keys: @escaping () throws(Realm.Error) -> [Int64]
    ) -> Results<Element> {
        checkThread()
        do {
            return Results(
                realm: self, binding: try binding(for: type),
                query: ResultsQuery(stages: [], base: keys, rebase: rebase))
        } catch {
            fatalError("\(error)")
        }
    }

    /// The keys of the objects a list or set of objects holds, in its order.
    func objectKeys(inCollection owner: ManagedObject, property: Int) throws(Realm.Error) -> [Int64] {
        try queryCollectionValues(owner.binding, property: property, key: owner.key).compactMap {
            if case .int(let key) = $0 { key } else { nil }
        }
    }
}

/// The message of a query on an unmanaged collection.
private func unmanagedQuery(_ type: Any.Type) -> Never {
    fatalError("\(type) is unmanaged: only collections of stored objects can be queried")
}

extension List: _ObjectCollectionQueries where Element: ObjectBase {
    /// See ``_ObjectCollectionQueries``.
    public func _queryResults() -> Results<Element> {
        guard let (owner, property) = managedSource else { unmanagedQuery(Self.self) }
        return owner.realm.results(of: Element.self, rebase: .collection(owner, property: property)) {
            () throws(Realm.Error) in
            try owner.realm.objectKeys(inCollection: owner, property: property)
        }
    }
}

extension MutableSet: _ObjectCollectionQueries where Element: ObjectBase {
    /// See ``_ObjectCollectionQueries``.
    public func _queryResults() -> Results<Element> {
        guard let (owner, property) = managedSource else { unmanagedQuery(Self.self) }
        return owner.realm.results(of: Element.self, rebase: .collection(owner, property: property)) {
            () throws(Realm.Error) in
            try owner.realm.objectKeys(inCollection: owner, property: property)
        }
    }
}

extension LinkingObjects: _ObjectCollectionQueries {
    /// See ``_ObjectCollectionQueries``.
    public func _queryResults() -> Results<Element> {
        guard let owner = source.owner else { unmanagedQuery(Self.self) }
        let property = source.property
        return owner.realm.results(of: Element.self, rebase: .backlinks(owner, property: property)) {
            () throws(Realm.Error) in
            owner.realm.backlinkKeys(owner, property: property)
        }
    }
}

// MARK: Key-path forms

extension Results where Element: ObjectBase {
    /// The persisted name of the property `keyPath` reads (a single property of `Element`); traps otherwise.
    func name<V>(of keyPath: KeyPath<Element, V>, _ what: String) -> String {
        owner.checkThread()
        do {
            return try owner.propertyName(of: keyPath, query: "\(what) on \(binding.className)")
        } catch {
            fatalError("\(error)")
        }
    }

    /// The objects ordered by the property at `keyPath`, of any ``SortableType`` as in the SDK: numbers, strings,
    /// dates, ObjectIds, UUIDs, their optionals (nil first when ascending), and `AnyRealmValue` (in the mixed order).
    public func sorted<V: SortableType>(by keyPath: KeyPath<Element, V>, ascending: Bool = true) -> Results<Element> {
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

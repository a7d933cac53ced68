/// Queries on a `Map` of objects (`Map<String, Dog?>`), as the SDK has them: `filter`, `where`, sorts and
/// aggregates run over the map's objects and return `Results<Value>` (`Results<Dog?>`) or aggregate values. Keys
/// holding nil are skipped: a query needs an object. The results are live, in key order until sorted, and follow
/// later writes to the map like results over a list.
extension Map where Value: _QueryOptional, Value.Wrapped: ObjectBase {
    /// The map's objects as `Results` (keys holding nil skipped), in the map's order.
    func objectResults() -> Results<Value> { mapObjectResults(self, of: Value.Wrapped.self) }

    /// The objects matching `predicate` (Realm Query Language over the objects' properties), as in the SDK:
    ///
    /// ```swift
    /// let grownUps = person.dogsByName.filter("age >= 2")   // Results<Dog?>
    /// ```
    public func filter(_ predicate: String, _ args: Any...) -> Results<Value> {
        do {
            return try objectResults().narrowed(predicate, args)
        } catch {
            fatalError("\(error)")
        }
    }

    /// The objects matching a type-safe query (`dogsByName.where { $0.age >= 2 }`).
    public func `where`(_ query: (Query<Value>) -> Query<Bool>) -> Results<Value> {
        objectResults().narrowedOrTrap(where: query)
    }

    /// The objects ordered by `keyPath` (a property of theirs, or a path through to-one links).
    public func sorted(byKeyPath keyPath: String, ascending: Bool = true) -> Results<Value> {
        objectResults().sorted(byKeyPath: keyPath, ascending: ascending)
    }

    /// The objects ordered by each descriptor in turn.
    public func sorted<S: Sequence>(by descriptors: S) -> Results<Value> where S.Element == SortDescriptor {
        objectResults().sorted(by: descriptors)
    }

    /// The objects ordered by the property at `keyPath` (`dogsByName.sorted(by: \.age)`).
    public func sorted<V: SortableType>(by keyPath: KeyPath<Value.Wrapped, V>, ascending: Bool = true)
        -> Results<Value>
    {
        sorted(byKeyPath: propertyName(keyPath, "sorted(by:)"), ascending: ascending)
    }

    /// The smallest value of `property` over the objects (nil when there are none).
    public func min<T: _Persistable>(ofProperty property: String) -> T? { objectResults().min(ofProperty: property) }
    /// The largest value of `property` over the objects (nil when there are none).
    public func max<T: _Persistable>(ofProperty property: String) -> T? { objectResults().max(ofProperty: property) }
    /// The sum of `property` over the objects (0 when there are none).
    public func sum<T: _Persistable>(ofProperty property: String) -> T { objectResults().sum(ofProperty: property) }
    /// The mean of `property` over the objects (nil when there are none).
    public func average<T: _Persistable>(ofProperty property: String) -> T? {
        objectResults().average(ofProperty: property)
    }

    /// The smallest value of the property at `keyPath` over the objects.
    public func min<V: _Persistable>(of keyPath: KeyPath<Value.Wrapped, V>) -> V? {
        min(ofProperty: propertyName(keyPath, "min"))
    }
    /// The largest value of the property at `keyPath` over the objects.
    public func max<V: _Persistable>(of keyPath: KeyPath<Value.Wrapped, V>) -> V? {
        max(ofProperty: propertyName(keyPath, "max"))
    }
    /// The sum of the property at `keyPath` over the objects.
    public func sum<V: _Persistable>(of keyPath: KeyPath<Value.Wrapped, V>) -> V {
        sum(ofProperty: propertyName(keyPath, "sum"))
    }
    /// The mean of the property at `keyPath` over the objects (nil when there are none).
    public func average<V: _Persistable>(of keyPath: KeyPath<Value.Wrapped, V>) -> Double? {
        average(ofProperty: propertyName(keyPath, "average"))
    }

    /// The persisted name of the property `keyPath` reads; traps naming the call for anything else.
    private func propertyName(_ keyPath: AnyKeyPath, _ what: String) -> String {
        let results = objectResults()
        do {
            return try results.owner.propertyName(of: keyPath, query: "\(what) on \(Self.self)")
        } catch {
            fatalError("\(error)")
        }
    }
}

/// `Results` over the objects of `map` (a map of `type`), nil values skipped. Traps for an unmanaged map: only
/// stored collections can be queried, as in the SDK.
private func mapObjectResults<Key, Value>(_ map: Map<Key, Value>, of type: ObjectBase.Type) -> Results<Value> {
    guard let (owner, property) = map.managedSource, map.nested == 0 else {
        fatalError("\(Map<Key, Value>.self) is unmanaged: only the maps of stored objects can be queried")
    }
    let realm = owner.realm
    realm.checkThread()
    do {
        let query = ResultsQuery(
            stages: [],
            base: { () throws(Realm.Error) in try realm.objectKeys(inCollection: owner, property: property) },
            rebase: .collection(owner, property: property))
        return Results(realm: realm, binding: try realm.binding(for: type), query: query)
    } catch {
        fatalError("\(error)")
    }
}

extension Optional where Wrapped: RealmCollectionValue {
    /// See ``RealmCollectionValue``: the object as an element of a `Results<Dog?>` (a map of objects' results).
    public static func _fromObject(_ object: consuming ObjectBase) -> Self? {
        guard let wrapped = Wrapped._fromObject(object) else { return nil }
        return .some(wrapped)
    }
}

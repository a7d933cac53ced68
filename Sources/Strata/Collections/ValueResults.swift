import Foundation

/// `Results` of values, as the SDK returns them from a collection of values: `list.sorted(ascending: false)`,
/// `set.distinct()`, `map.sorted()`, `list.filter("self > 1")`, `list.where { $0 > 1 }`.
///
/// They are not a copy: each read (`count`, a subscript, iteration) reads the owning `List`, `MutableSet` or
/// `Map` as it is now — for a managed one, the Realm's current version — and applies the stages (filters,
/// sorts, distinct, limit) in order. So a write to the list shows in the results, as in results of objects.
/// A read after a write or a refresh costs a pass over the collection; reads in between reuse it.
struct ValueResultsSource<Element: RealmCollectionValue> {
    /// What one stage does to the values before it.
    enum Stage {
        /// Keeps the values the predicate (bound with `self` standing for the value) holds for.
        case filter(BoundPredicate)
        case sort(ascending: Bool)
        case distinct
        case limit(Int)
    }

    /// The owning collection's values as it reads them now, in its order.
    let read: () -> [Element]
    /// The owning collection's Realm; nil while it is unmanaged.
    let realm: Realm?
    /// The object that owns the collection while managed: queries bind from its class.
    let owner: ManagedObject?
    /// The collection for messages and descriptions: `List<Int>`.
    let name: String
    /// The same collection read by another Realm of the file (freezing, thawing); nil where it does not exist.
    let rebind: (Realm) -> ValueResultsSource?
    /// What applies to the values, in order.
    var stages: [Stage] = []
    /// Names these results for equality: copies share it; results derived from them (another stage, another
    /// Realm) get their own, as results of objects compare by their query.
    var identity = Identity()

    /// Shared by copies of the same results. Also keeps their values as last read, so that reading positions one
    /// by one (`for i in 0..<results.count { results[i] }`) reads the collection once, not once per position.
    final class Identity {
        /// The values after every stage and the Realm generation they were read at (live managed results only:
        /// every write and every refresh changes the generation; frozen results may be read from many threads).
        var cached: (generation: UInt64, elements: [Element])?
        /// How many times the collection was read and the stages applied (for tests).
        var evaluations = 0
    }

    /// The values after every stage, as of the Realm's current version.
    func elements() -> [Element] {
        guard let realm, !realm.frozen else { return evaluated() }
        realm.checkThread()
        if let cached = identity.cached, cached.generation == realm.generation { return cached.elements }
        let elements = evaluated()
        identity.cached = (realm.generation, elements)
        return elements
    }

    /// The values after every stage, read now.
    private func evaluated() -> [Element] {
        identity.evaluations += 1
        var elements = read()
        for stage in stages {
            switch stage {
            case .filter(let predicate): elements = matching(predicate, in: elements)
            case .sort(let ascending): elements = ValueAggregates.sorted(elements, ascending: ascending)
            case .distinct: elements = ValueAggregates.distinct(elements)
            case .limit(let limit): elements = Array(elements.prefix(limit))
            }
        }
        return elements
    }

    /// The value at `position` (read as ``elements()`` reads them); traps naming the collection when out of range.
    func element(at position: Int) -> Element {
        let elements = elements()
        CollectionIndex.check(position, count: elements.count, in: "Results<\(Element.self)> of \(name)")
        return elements[position]
    }

    /// The values `predicate` holds for. A damaged file matches nothing (recorded on the Realm, as for objects).
    private func matching(_ predicate: BoundPredicate, in elements: [Element]) -> [Element] {
        guard let realm else { return elements }
        do {
            var kept: [Element] = []
            for element in elements where try realm.queryMatches(predicate.atElement(element._stored), key: 0, row: nil)
            {
                kept.append(element)
            }
            return kept
        } catch {
            return realm.survive(error, "Results<\(Element.self)> of \(name): \(error)", returning: [])
        }
    }

    /// These results with `stage` applied after the others.
    func appending(_ stage: Stage) -> ValueResultsSource {
        var next = self
        next.stages.append(stage)
        next.identity = Identity()
        return next
    }

    /// The same results read by `realm` (a Realm of the same file), or nil where the collection does not exist.
    func rebound(to realm: Realm) -> ValueResultsSource? {
        if realm === self.realm { return self }
        guard var moved = rebind(realm) else { return nil }
        moved.stages = stages
        return moved
    }
}

extension ValueResultsSource {
    /// The values of `list`.
    static func of(_ list: List<Element>) -> ValueResultsSource {
        ValueResultsSource(
            read: { Array(list) }, realm: list.realm, owner: list.managedSource?.owner, name: "List<\(Element.self)>",
            rebind: { realm in list.rebound(to: realm).map { of($0) } })
    }

    /// The values of `set`.
    static func of(_ set: MutableSet<Element>) -> ValueResultsSource {
        ValueResultsSource(
            read: { Array(set) }, realm: set.realm, owner: set.managedSource?.owner,
            name: "MutableSet<\(Element.self)>", rebind: { realm in set.rebound(to: realm).map { of($0) } })
    }

    /// The values of `map`, in the map's order.
    static func of<Key>(_ map: Map<Key, Element>) -> ValueResultsSource {
        ValueResultsSource(
            read: { map.values }, realm: map.realm, owner: map.managedSource?.owner,
            name: "Map<\(Key.self), \(Element.self)>", rebind: { realm in map.rebound(to: realm).map { of($0) } })
    }
}

extension ValueResultsSource {
    /// An observer of these results: they change when the values they hold, or their order, change.
    func makeObserver<C>(as collection: C, paths: [[String]]?) -> CollectionObserver<C> {
        guard let realm else {
            fatalError("observe: Results of the values of an unmanaged \(name) cannot be observed (only managed ones)")
        }
        let source = self
        return IdentityObserver(
            realm: realm, collection: collection, elementBinding: nil, paths: paths,
            identities: { source.elements().map { QueryHashKey($0._stored) } }, objectKey: nil)
    }
}

// MARK: Queries over the values

extension ValueResultsSource {
    /// The name that stands for the value itself in a query, as in the SDK (`"self > 1"`).
    static var selfName: String { "self" }

    /// A binder for `text` in which `self` is the value: the path `self` reads it, and nothing else can be read.
    func binder(_ text: String, _ arguments: [Any?]) throws(Realm.Error) -> QueryBinder {
        guard let realm, let owner else {
            // The SDK's rule: only a managed collection can be queried.
            fatalError("\(name) is unmanaged: only the collections of stored objects can be queried")
        }
        var element = Element._propertyInfo
        element.collection = nil
        var binder = QueryBinder(realm: realm, root: owner.binding, query: text, arguments: arguments)
        binder.variable = Self.selfName
        binder.valueElements = (element, "\(name) (compare \(Self.selfName), the value itself)")
        return binder
    }

    /// The values matching `text` (Realm Query Language over `self`), then its trailing `SORT(self …)`,
    /// `DISTINCT(self)` and `LIMIT(n)` in order.
    func narrowed(_ text: String, _ args: [Any]) throws(Realm.Error) -> ValueResultsSource {
        realm?.checkThread()
        let parsed = try RQLParser.parse(text, arguments: args)
        let binder = try binder(text, args)
        var result = appending(.filter(try binder.bind(parsed.predicate)))
        for clause in parsed.ordering {
            switch clause {
            case .sort(let keys):
                for key in keys.reversed() {
                    try Self.checkSelf(key.keyPath, in: text)
                    result = result.appending(.sort(ascending: key.ascending))
                }
            case .distinct(let paths):
                for path in paths { try Self.checkSelf(path, in: text) }
                result = result.appending(.distinct)
            case .limit(let limit):
                result = result.appending(.limit(limit))
            }
        }
        return result
    }

    /// The values matching the type-safe query `query`, in which `$0` is the value.
    func narrowed(where query: (Query<Element>) -> Query<Bool>) throws(Realm.Error) -> ValueResultsSource {
        let text = "where { … } on \(name)"
        guard let realm else {
            _ = try binder(text, [])  // traps: an unmanaged collection cannot be queried, as in the SDK
            return self
        }
        realm.checkThread()
        let node = query(Query<Element>(.path([.operation(Self.selfName)]))).node
        var arguments: [Any?] = []
        let predicate = try realm.resolve(node, arguments: &arguments, text: text)
        return appending(.filter(try binder(text, arguments).bind(predicate)))
    }

    /// These results sorted by `keyPaths`, each of which must be `self` (values have no properties), as in the SDK.
    func sorted(by descriptors: [SortDescriptor]) throws(Realm.Error) -> ValueResultsSource {
        var result = self
        // A stable sort by the last key first leaves the first key deciding: with one key path, `self`, the first
        // descriptor's direction is what counts.
        for descriptor in descriptors.reversed() {
            try Self.checkSelf(descriptor.keyPath, in: "sorted(byKeyPath: \(descriptor.keyPath))")
            result = result.appending(.sort(ascending: descriptor.ascending))
        }
        return result
    }

    /// Throws unless `keyPath` is `self`.
    static func checkSelf(_ keyPath: String, in text: String) throws(Realm.Error) {
        guard keyPath == selfName else {
            throw .invalidQuery(
                query: text, position: 0,
                reason: "a collection of \(Element.self) values can only be sorted or made distinct on 'self'")
        }
    }
}

// MARK: The collections' forms

extension RealmCollection {
    /// The collection's values as `Results` (results of values are themselves).
    func valueResults() -> Results<Element> {
        if let results = self as? Results<Element> { return results }
        if let list = self as? List<Element> { return Results(values: .of(list)) }
        if let set = self as? MutableSet<Element> { return Results(values: .of(set)) }
        if let erased = self as? AnyRealmCollection<Element> {
            func values<C: RealmCollection<Element>>(_ base: C) -> Results<Element> { base.valueResults() }
            return values(erased.base)
        }
        fatalError("\(Self.self) has no values to query")
    }

    /// The values matching `predicate`, Realm Query Language in which `self` is the value, as in the SDK:
    ///
    /// ```swift
    /// let big = person.scores.filter("self > $0", 10)   // Results<Int>
    /// ```
    ///
    /// Traps with the query and the reason on a malformed query, and for an unmanaged collection (only managed
    /// collections can be queried, as in the SDK).
    public func filter(_ predicate: String, _ args: Any...) -> Results<Element> {
        do {
            return try valueResults().narrowed(predicate, args)
        } catch {
            fatalError("\(error)")
        }
    }

    /// The values matching a type-safe query in which `$0` is the value, as in the SDK:
    ///
    /// ```swift
    /// let big = person.scores.where { $0 > 10 }   // Results<Int>
    /// ```
    public func `where`(_ query: (Query<Element>) -> Query<Bool>) -> Results<Element> {
        valueResults().valuesWhere(query)
    }
}

extension Results {
    /// `where` for results of values (see `RealmCollection.where`).
    func valuesWhere(_ query: (Query<Element>) -> Query<Bool>) -> Results<Element> {
        guard let values else { return narrowedOrTrap(where: query) }
        do {
            return Results(values: try values.narrowed(where: query))
        } catch {
            fatalError("\(error)")
        }
    }
}

extension RealmCollection where Element: SortableType {
    /// The values in ascending (or descending) order, as live `Results`: nil first, then by value.
    ///
    /// ```swift
    /// let highest = person.scores.sorted(ascending: false).first
    /// ```
    public func sorted(ascending: Bool = true) -> Results<Element> {
        let results = valueResults()
        guard let values = results.values else { return results.sorted(byKeyPath: "self", ascending: ascending) }
        return Results(values: values.appending(.sort(ascending: ascending)))
    }
}

extension RealmCollection where Element: SortableType {
    /// The values without repeats, each where it first occurs, as live `Results`. As in the SDK, only collections of
    /// values offer it (objects: `distinct(by:)`).
    ///
    /// ```swift
    /// let tags = post.tags.distinct()   // Results<String>
    /// ```
    public func distinct() -> Results<Element> {
        let results = valueResults()
        guard let values = results.values else { fatalError("distinct(): \(Self.self) holds objects, not values") }
        return Results(values: values.appending(.distinct))
    }
}

extension Results where Element: MinMaxType {
    /// The smallest value (nil values skipped); nil when there is none.
    public func min() -> Element? { ValueAggregates.extreme(self, largest: false) }
    /// The largest value (nil values skipped); nil when there is none.
    public func max() -> Element? { ValueAggregates.extreme(self, largest: true) }
}

extension Results where Element: AddableType {
    /// The sum of the values (nil values skipped; 0 when empty).
    public func sum() -> Element { ValueAggregates.sum(self) }
    /// The mean of the values as a `T`; nil when empty.
    public func average<T: AddableType>() -> T? { ValueAggregates.average(self, as: T.self) }
}

extension Map {
    /// The map's values as `Results`, in the map's order.
    func valueResults() -> Results<Value> { Results(values: .of(self)) }

    /// The values in ascending (or descending) order, as live `Results`, as in the SDK.
    ///
    /// ```swift
    /// let cheapest = prices.sorted().first   // Map<String, Int>
    /// ```
    public func sorted(ascending: Bool = true) -> Results<Value> where Value: SortableType {
        valueResults().sorted(ascending: ascending)
    }

    /// The values without repeats, as live `Results`.
    public func distinct() -> Results<Value> where Value: SortableType { valueResults().distinct() }
}

extension Map {
    /// The values matching `predicate`, Realm Query Language in which `self` is the value, as in the SDK
    /// (`prices.filter("self < 10")`). Traps on a malformed query and for an unmanaged map.
    public func filter(_ predicate: String, _ args: Any...) -> Results<Value> {
        do {
            return try valueResults().narrowed(predicate, args)
        } catch {
            fatalError("\(error)")
        }
    }

    /// The values matching a type-safe query in which `$0` is the value (`prices.where { $0 < 10 }`).
    public func `where`(_ query: (Query<Value>) -> Query<Bool>) -> Results<Value> {
        valueResults().valuesWhere(query)
    }
}

/// `min()`, `max()`, `sum()`, `average()`, `sorted(ascending:)` and `distinct()` over the values of a collection of
/// values (a `List<Int>`, a `MutableSet<Double?>`, a `Map`'s values), as the SDK's collections of primitives have
/// them. nil elements are skipped by the aggregates, as in queries (`@min`, `@sum`…). `sorted(ascending:)` and
/// `distinct()` return live `Results` of the values (see `ValueResults.swift`); these are the orders they use.
enum ValueAggregates {
    /// The smallest (or, with `largest`, the largest) value in the order of ``sorted(_:ascending:)`` (so for mixed
    /// values a string is larger than any number); nil and NaN values are skipped; nil when none is left.
    static func extreme<S: Sequence>(_ values: S, largest: Bool) -> S.Element? where S.Element: _Persistable {
        var best: (element: S.Element, stored: _StoredValue)?
        for element in values {
            let stored = element._stored
            if case .null = stored { continue }
            if QueryValues.number(stored)?.isNaN == true { continue }
            guard let current = best else {
                best = (element, stored)
                continue
            }
            if largest ? precedes(current.stored, stored) : precedes(stored, current.stored) {
                best = (element, stored)
            }
        }
        return best?.element
    }

    /// The sum of the values (0 when there are none).
    static func sum<S: Sequence>(_ values: S) -> S.Element where S.Element: _Persistable {
        converted(QueryValues.aggregate("@sum", values.map(\._stored)), as: S.Element.self)
            ?? S.Element._defaultValue()
    }

    /// The mean of the values as a `T`; nil when there are none.
    static func average<S: Sequence, T>(_ values: S, as type: T.Type) -> T? where S.Element: _Persistable {
        let mean = QueryValues.aggregate("@avg", values.map(\._stored))
        if case .null = mean { return nil }
        guard let persistable = type as? any _Persistable.Type else { return nil }
        return converted(mean, as: persistable) as? T
    }

    /// `value` as a `T`: as it is, or as a number of another width (a sum of `Float`s is computed as a `Double`).
    private static func converted<T: _Persistable>(_ value: _StoredValue, as type: T.Type) -> T? {
        if let typed = T._fromStored(value) { return typed }
        guard let number = QueryValues.number(value) else { return nil }
        return T._fromStored(.double(number)) ?? T._fromStored(.float(Float(number)))
            ?? (number.rounded() == number && abs(number) < 9.2e18 ? T._fromStored(.int(Int64(number))) : nil)
            ?? T._fromStored(.decimal128(Decimal128(number)))
    }

    /// The values in ascending (or descending) order: nil first, then by type (booleans, numbers, strings, data,
    /// dates, object ids, UUIDs) for mixed values, then by value.
    static func sorted<S: Sequence>(_ values: S, ascending: Bool) -> [S.Element] where S.Element: _Persistable {
        let keyed = values.map { ($0, $0._stored) }
        let ordered = keyed.sorted { precedes($0.1, $1.1) }.map(\.0)
        return ascending ? ordered : ordered.reversed()
    }

    /// The engine's order for mixed values (one order for queries' sorts and collections of values).
    private static func precedes(_ a: _StoredValue, _ b: _StoredValue) -> Bool { MixedSortOrder.compare(a, b) < 0 }

    /// The values without repeats, each where it first occurs.
    static func distinct<S: Sequence>(_ values: S) -> [S.Element] where S.Element: Hashable {
        var seen = Set<S.Element>()
        return values.filter { seen.insert($0).inserted }
    }
}

extension List where Element: MinMaxType {
    /// The smallest value (nil values skipped); nil when there is none.
    public func min() -> Element? { ValueAggregates.extreme(self, largest: false) }
    /// The largest value (nil values skipped); nil when there is none.
    public func max() -> Element? { ValueAggregates.extreme(self, largest: true) }
}

extension List where Element: AddableType {
    /// The sum of the values (nil values skipped; 0 when empty).
    public func sum() -> Element { ValueAggregates.sum(self) }
    /// The mean of the values as a `T` (`let mean: Double? = list.average()`); nil when empty.
    public func average<T: AddableType>() -> T? { ValueAggregates.average(self, as: T.self) }
}

extension MutableSet where Element: MinMaxType {
    /// The smallest value (nil values skipped); nil when there is none.
    public func min() -> Element? { ValueAggregates.extreme(self, largest: false) }
    /// The largest value (nil values skipped); nil when there is none.
    public func max() -> Element? { ValueAggregates.extreme(self, largest: true) }
}

extension MutableSet where Element: AddableType {
    /// The sum of the values (nil values skipped; 0 when empty).
    public func sum() -> Element { ValueAggregates.sum(self) }
    /// The mean of the values as a `T`; nil when empty.
    public func average<T: AddableType>() -> T? { ValueAggregates.average(self, as: T.self) }
}

extension AnyRealmCollection where Element: MinMaxType {
    /// The smallest value (nil values skipped); nil when there is none.
    public func min() -> Element? { ValueAggregates.extreme(self, largest: false) }
    /// The largest value (nil values skipped); nil when there is none.
    public func max() -> Element? { ValueAggregates.extreme(self, largest: true) }
}

extension AnyRealmCollection where Element: AddableType {
    /// The sum of the values (nil values skipped; 0 when empty).
    public func sum() -> Element { ValueAggregates.sum(self) }
    /// The mean of the values as a `T`; nil when empty.
    public func average<T: AddableType>() -> T? { ValueAggregates.average(self, as: T.self) }
}

extension Map where Value: MinMaxType {
    /// The smallest value (nil values skipped); nil when there is none.
    public func min() -> Value? { ValueAggregates.extreme(values, largest: false) }
    /// The largest value (nil values skipped); nil when there is none.
    public func max() -> Value? { ValueAggregates.extreme(values, largest: true) }
}

extension Map where Value: AddableType {
    /// The sum of the values (nil values skipped; 0 when empty).
    public func sum() -> Value { ValueAggregates.sum(values) }
    /// The mean of the values as a `T`; nil when empty.
    public func average<T: AddableType>() -> T? { ValueAggregates.average(values, as: T.self) }
}

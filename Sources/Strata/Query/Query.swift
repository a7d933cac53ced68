import Foundation

/// Options of string comparisons in type-safe queries.
public struct StringOptions: OptionSet, Sendable {
    /// The raw bits.
    public let rawValue: Int
    /// Creates options from raw bits.
    public init(rawValue: Int) { self.rawValue = rawValue }
    /// `A` matches `a`.
    public static let caseInsensitive = StringOptions(rawValue: 1)
    /// `é` matches `e`.
    public static let diacriticInsensitive = StringOptions(rawValue: 2)
}

/// A type-safe query over objects of type `T`, built with key paths and operators and handed to
/// `Results.where(_:)`:
///
/// ```swift
/// let puppies = realm.objects(Dog.self).where {
///     $0.age < 2 && $0.name.starts(with: "R", options: .caseInsensitive) && $0.owner.city == "Oslo"
/// }
/// ```
///
/// Member access follows properties (through optional links and into collections of objects, where a condition
/// holds when it holds for any element); `==`, `!=`, `<`, `<=`, `>`, `>=` compare with values; `&&`, `||` and `!`
/// combine conditions. Every query has an equivalent in the Realm Query Language and runs through the same
/// engine.
@dynamicMemberLookup
public struct Query<T> {
    let node: QueryNode

    init(_ node: QueryNode) { self.node = node }

    /// The property at `keyPath`.
    public subscript<V>(dynamicMember keyPath: KeyPath<T, V>) -> Query<V> {
        Query<V>(node.appending(.keyPath(keyPath)))
    }
}

/// A query expression before its key paths are resolved to property names.
indirect enum QueryNode {
    enum Component {
        case keyPath(AnyKeyPath)
        case operation(String)
        /// Where a path steps from a collection of objects into its elements (`$0.dogs` then `.age`): where a
        /// subquery count splits the path and a key-path aggregate goes (`dogs.@avg.age`); ignored otherwise.
        case elements
    }
    case path([Component])
    case value(Any?)
    case values([Any?])
    case compare(QueryNode, RQLOperator, QueryNode, StringOptions)
    case between(QueryNode, Any, Any)
    case text(QueryNode, String)
    case geoWithin(QueryNode, any GeoShape)
    /// `(condition).count`: how many elements of the one collection the condition is about satisfy it (RQL
    /// `SUBQUERY(collection, $x, condition).@count`).
    case subqueryCount(QueryNode)
    /// `&&`, `||` or `!` over conditions.
    case logic(QueryLogic)

    func appending(_ component: Component) -> QueryNode {
        guard case .path(let components) = self else { return self }
        return .path(components + [component])
    }

    /// A Bool-valued path used as a condition means `path == true`.
    var predicate: QueryNode {
        if case .path = self { return .compare(self, .equal, .value(true), []) }
        return self
    }
}

/// `a && b`, `a || b` or `!a` in a type-safe query, as built by the operators: each operator makes one node in
/// O(1), so a chain of 10,000 `||` built in a loop is 10,000 nested nodes. Everything that reads the tree walks it
/// with an explicit stack (``Realm/resolve(_:arguments:text:)`` flattens chains of one operator into one level),
/// and releasing it does too: the nodes are objects whose `deinit` takes their operands apart one by one, where
/// an `indirect enum` would be released by a recursion as deep as the chain.
final class QueryLogic {
    let op: ConditionShape
    /// Two operands for `and` and `or`, one for `not`.
    private(set) var operands: [QueryNode]

    init(_ op: ConditionShape, _ operands: [QueryNode]) {
        self.op = op
        self.operands = operands
    }

    deinit {
        // Take the operands of every logic node only this one holds, and release each once it is empty.
        var pending = operands
        operands = []
        while var node = pending.popLast() {
            guard case .logic(var logic) = node else { continue }
            node = .value(nil)
            if isKnownUniquelyReferenced(&logic) {
                pending += logic.operands
                logic.operands = []
            }
        }
    }
}

// MARK: Following links and collections

/// Optionals, for queries that follow optional links.
public protocol _QueryOptional {
    /// The wrapped type.
    associatedtype Wrapped
}

extension Optional: _QueryOptional {}

/// Collections a query can look into (their elements, their count).
public protocol _QueryCollection {
    /// The element type.
    associatedtype Element
}

extension List: _QueryCollection {}
extension MutableSet: _QueryCollection {}
extension LinkingObjects: _QueryCollection {}

extension Query where T: _QueryOptional {
    /// The property at `keyPath` of the linked object.
    public subscript<V>(dynamicMember keyPath: KeyPath<T.Wrapped, V>) -> Query<V> {
        Query<V>(node.appending(.keyPath(keyPath)))
    }
}

extension Query where T: _QueryCollection {
    /// The property at `keyPath` of the elements: a condition on it holds when it holds for any element.
    public subscript<V>(dynamicMember keyPath: KeyPath<T.Element, V>) -> Query<V> {
        Query<V>(node.appending(.elements).appending(.keyPath(keyPath)))
    }

    /// The number of elements.
    public var count: Query<Int> { Query<Int>(node.appending(.operation("@count"))) }

    /// Whether any element equals `element`.
    public func contains(_ element: T.Element) -> Query<Bool> {
        Query<Bool>(.compare(node, .equal, .value(element), []))
    }

    /// Whether any element is one of `elements`.
    public func containsAny<S: Sequence>(in elements: S) -> Query<Bool> where S.Element == T.Element {
        Query<Bool>(.compare(node, .in, .values(elements.map { $0 }), []))
    }

    /// The smallest element.
    public var min: Query<T.Element> { Query<T.Element>(node.appending(.operation("@min"))) }
    /// The largest element.
    public var max: Query<T.Element> { Query<T.Element>(node.appending(.operation("@max"))) }
    /// The sum of the elements.
    public var sum: Query<T.Element> { Query<T.Element>(node.appending(.operation("@sum"))) }
    /// The mean of the elements, typed as the elements are (as in the SDK, so that it compares with a value of
    /// the element type); it is computed exactly and compared by value (the mean of 5 and 4 is 4.5, not 4).
    public var avg: Query<T.Element> { Query<T.Element>(node.appending(.operation("@avg"))) }
}

// MARK: Comparisons

extension Query where T: Equatable {
    /// Equal to `value`.
    public static func == (lhs: Query<T>, rhs: T) -> Query<Bool> {
        Query<Bool>(.compare(lhs.node, .equal, .value(rhs), []))
    }
    /// Not equal to `value`.
    public static func != (lhs: Query<T>, rhs: T) -> Query<Bool> {
        Query<Bool>(.compare(lhs.node, .notEqual, .value(rhs), []))
    }
    /// One of `values`.
    public func `in`<S: Sequence>(_ values: S) -> Query<Bool> where S.Element == T {
        Query<Bool>(.compare(node, .in, .values(values.map { $0 }), []))
    }
}

extension Query where T: Comparable {
    /// Less than `value`.
    public static func < (lhs: Query<T>, rhs: T) -> Query<Bool> {
        Query<Bool>(.compare(lhs.node, .less, .value(rhs), []))
    }
    /// Less than or equal to `value`.
    public static func <= (lhs: Query<T>, rhs: T) -> Query<Bool> {
        Query<Bool>(.compare(lhs.node, .lessOrEqual, .value(rhs), []))
    }
    /// Greater than `value`.
    public static func > (lhs: Query<T>, rhs: T) -> Query<Bool> {
        Query<Bool>(.compare(lhs.node, .greater, .value(rhs), []))
    }
    /// Greater than or equal to `value`.
    public static func >= (lhs: Query<T>, rhs: T) -> Query<Bool> {
        Query<Bool>(.compare(lhs.node, .greaterOrEqual, .value(rhs), []))
    }
    /// Within `range` (both ends included).
    public func contains(_ range: ClosedRange<T>) -> Query<Bool> {
        Query<Bool>(.between(node, range.lowerBound, range.upperBound))
    }
    /// Within `range` (upper end excluded).
    public func contains(_ range: Range<T>) -> Query<Bool> {
        Query<Bool>(
            .logic(
                QueryLogic(
                    .and,
                    [
                        .compare(node, .greaterOrEqual, .value(range.lowerBound), []),
                        .compare(node, .less, .value(range.upperBound), []),
                    ])))
    }
}

extension Query where T: _QueryOptional, T.Wrapped: Comparable {
    /// Less than `value` (nil never is).
    public static func < (lhs: Query<T>, rhs: T.Wrapped) -> Query<Bool> {
        Query<Bool>(.compare(lhs.node, .less, .value(rhs), []))
    }
    /// Less than or equal to `value`.
    public static func <= (lhs: Query<T>, rhs: T.Wrapped) -> Query<Bool> {
        Query<Bool>(.compare(lhs.node, .lessOrEqual, .value(rhs), []))
    }
    /// Greater than `value`.
    public static func > (lhs: Query<T>, rhs: T.Wrapped) -> Query<Bool> {
        Query<Bool>(.compare(lhs.node, .greater, .value(rhs), []))
    }
    /// Greater than or equal to `value`.
    public static func >= (lhs: Query<T>, rhs: T.Wrapped) -> Query<Bool> {
        Query<Bool>(.compare(lhs.node, .greaterOrEqual, .value(rhs), []))
    }
}

// MARK: Strings

/// `String` and `String?`, for the string operators of queries.
public protocol _QueryString {}
extension String: _QueryString {}
extension Optional: _QueryString where Wrapped == String {}

extension Query where T: _QueryString {
    /// Contains `value`.
    public func contains(_ value: String, options: StringOptions = []) -> Query<Bool> {
        Query<Bool>(.compare(node, .contains, .value(value), options))
    }
    /// Starts with `value`.
    public func starts(with value: String, options: StringOptions = []) -> Query<Bool> {
        Query<Bool>(.compare(node, .beginsWith, .value(value), options))
    }
    /// Ends with `value`.
    public func ends(with value: String, options: StringOptions = []) -> Query<Bool> {
        Query<Bool>(.compare(node, .endsWith, .value(value), options))
    }
    /// Equals `value` under `options`.
    public func equals(_ value: String, options: StringOptions = []) -> Query<Bool> {
        Query<Bool>(.compare(node, .equal, .value(value), options))
    }
    /// Matches `pattern`, where `*` stands for any run of characters and `?` for one.
    public func like(_ pattern: String, caseInsensitive: Bool = false) -> Query<Bool> {
        Query<Bool>(.compare(node, .like, .value(pattern), caseInsensitive ? .caseInsensitive : []))
    }
    /// Satisfies the full-text search `words` (RQL `TEXT`): every word occurs in the string, `word*` matches
    /// words by prefix and `-word` excludes; case and diacritics are ignored. Fast on a property declared
    /// `@Persisted(indexed: .fullText)`, correct on any string property.
    ///
    /// ```swift
    /// realm.objects(Review.self).where { $0.text.matches("cheese -blue") }
    /// ```
    public func matches(_ words: String) -> Query<Bool> {
        Query<Bool>(.text(node, words))
    }
}

// MARK: Enums, custom-persisted types and maps

extension Query where T: PersistableEnum {
    /// The enum's stored raw value, to compare with raw values.
    public var rawValue: Query<T.RawValue> { Query<T.RawValue>(node) }
}

extension Query where T: _QueryOptional, T.Wrapped: PersistableEnum {
    /// The enum's stored raw value (nil when the property is nil).
    public var rawValue: Query<T.Wrapped.RawValue?> { Query<T.Wrapped.RawValue?>(node) }
}

extension Query where T: CustomPersistable {
    /// The value as it is persisted, to compare with persisted values. For a type persisted as an embedded
    /// object, its properties: `$0.location.persistableValue.latitude > 50`.
    public var persistableValue: Query<T.PersistedType> { Query<T.PersistedType>(node) }
}

extension Query where T: FailableCustomPersistable {
    /// The value as it is persisted, to compare with persisted values (stored values the type rejects
    /// included).
    public var persistableValue: Query<T.PersistedType> { Query<T.PersistedType>(node) }
}

extension Query where T: _QueryOptional, T.Wrapped: CustomPersistable {
    /// The value as it is persisted (nil when the property is nil), to compare with persisted values:
    /// `$0.website.persistableValue.starts(with: "https:")`.
    public var persistableValue: Query<T.Wrapped.PersistedType?> { Query<T.Wrapped.PersistedType?>(node) }
}

extension Query where T: _QueryOptional, T.Wrapped: FailableCustomPersistable {
    /// The value as it is persisted (nil when the property is nil; stored values the type rejects included), to
    /// compare with persisted values: `$0.website.persistableValue.starts(with: "https:")`.
    public var persistableValue: Query<T.Wrapped.PersistedType?> { Query<T.Wrapped.PersistedType?>(node) }
}

// MARK: Geospatial

extension Query where T: _QueryOptional, T.Wrapped: EmbeddedObject {
    /// Whether the GeoJSON point (an embedded object with `type == "Point"` and `coordinates` [longitude,
    /// latitude]) lies in `shape`, its boundary included.
    ///
    /// ```swift
    /// realm.objects(Company.self).where { $0.location.geoWithin(GeoCircle(center: (47.36, 8.54), radius: .kilometers(5)!)!) }
    /// ```
    public func geoWithin(_ shape: some GeoShape) -> Query<Bool> { Query<Bool>(.geoWithin(node, shape)) }
}

extension Query where T: _QueryCollection, T.Element: EmbeddedObject {
    /// Whether any of the GeoJSON points lies in `shape`.
    public func geoWithin(_ shape: some GeoShape) -> Query<Bool> { Query<Bool>(.geoWithin(node, shape)) }
}

/// Maps, for queries over their keys and values.
public protocol _QueryMap {
    /// The key type.
    associatedtype Key
    /// The value type.
    associatedtype Value
}

extension Map: _QueryMap {}

extension Query where T: _QueryMap {
    /// The map's keys: a condition on them holds when it holds for any key.
    public var keys: Query<T.Key> { Query<T.Key>(node.appending(.operation("@keys"))) }
    /// The map's values: a condition on them holds when it holds for any value.
    public var values: Query<T.Value> { Query<T.Value>(node.appending(.operation("@values"))) }
    /// The number of entries.
    public var count: Query<Int> { Query<Int>(node.appending(.operation("@count"))) }
    /// Whether any value equals `value`.
    public func contains(_ value: T.Value) -> Query<Bool> {
        Query<Bool>(.compare(node.appending(.operation("@values")), .equal, .value(value), []))
    }

    /// Whether any value is one of `values`.
    ///
    /// ```swift
    /// realm.objects(Town.self).where { $0.parks.containsAny(in: ["Frogner", "Nygård"]) }
    /// ```
    public func containsAny<S: Sequence>(in values: S) -> Query<Bool> where S.Element == T.Value {
        Query<Bool>(.compare(node.appending(.operation("@values")), .in, .values(values.map { $0 }), []))
    }

    /// The value at `key` (nil when the map has no such key), as `parks['Oslo']` in the query language.
    ///
    /// ```swift
    /// realm.objects(Town.self).where { $0.parks["Oslo"] == "Frogner" }
    /// ```
    public subscript(member: T.Key) -> Query<T.Value> {
        Query<T.Value>(node.appending(.operation("[" + String(describing: member))))
    }

    /// The smallest value.
    public var min: Query<T.Value> { Query<T.Value>(node.appending(.operation("@min"))) }
    /// The largest value.
    public var max: Query<T.Value> { Query<T.Value>(node.appending(.operation("@max"))) }
    /// The sum of the values.
    public var sum: Query<T.Value> { Query<T.Value>(node.appending(.operation("@sum"))) }
    /// The mean of the values, typed as the values are (as in the SDK); computed exactly, compared by value.
    public var avg: Query<T.Value> { Query<T.Value>(node.appending(.operation("@avg"))) }
}

// MARK: Logic

extension Query where T == Bool {
    /// Both conditions.
    public static func && (lhs: Query<Bool>, rhs: Query<Bool>) -> Query<Bool> {
        Query<Bool>(.logic(QueryLogic(.and, [lhs.node.predicate, rhs.node.predicate])))
    }
    /// Either condition.
    public static func || (lhs: Query<Bool>, rhs: Query<Bool>) -> Query<Bool> {
        Query<Bool>(.logic(QueryLogic(.or, [lhs.node.predicate, rhs.node.predicate])))
    }
    /// Not the condition.
    public static prefix func ! (query: Query<Bool>) -> Query<Bool> {
        Query<Bool>(.logic(QueryLogic(.not, [query.node.predicate])))
    }
}

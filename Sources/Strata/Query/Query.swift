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

// MARK: Resolving

/// Notes which properties a key path reads, in order, by reading it on recording accessors.
@usableFromInline
final class KeyPathRecorder {
    @usableFromInline var steps: [(binding: TableBinding, property: Int)] = []
}

extension Realm {
    /// The persisted names along `keyPath`: one property (`\Dog.name`), or a path through to-one links,
    /// embedded objects and collections of objects (`\Person.address?.city`, `["address", "city"]`). A key path
    /// over a projection (`\PersonProjection.homeCity`) names the root object's path it projects.
    func propertyPath(of keyPath: AnyKeyPath, query: String) throws(Realm.Error) -> [String] {
        let rootType = type(of: keyPath).rootType
        let recorder = KeyPathRecorder()
        let className: String
        if let projection = rootType as? any ProjectionObservable.Type {
            className = try recordProjection(projection, keyPath: keyPath, recorder: recorder)
        } else if let root = rootType as? ObjectBase.Type {
            let binding = try binding(for: root)
            className = binding.className
            _ = recordingAccessor(binding, recorder: recorder)[keyPath: keyPath]
        } else {
            throw Realm.Error.invalidQuery(
                query: query, position: 0,
                reason:
                    "\(rootType) is not a model type or projection: only their persisted properties can be queried "
                    + "(query a custom-persisted value through .persistableValue)")
        }
        return try recordedPath(recorder, keyPath: keyPath, className: className, query: query)
    }

    /// ``propertyPath(of:query:)`` joined with dots (`"address.city"`).
    func propertyName(of keyPath: AnyKeyPath, query: String) throws(Realm.Error) -> String {
        try propertyPath(of: keyPath, query: query).joined(separator: ".")
    }

    /// An accessor of `binding`'s class whose reads only note, in `recorder`, which properties they read.
    func recordingAccessor(_ binding: TableBinding, recorder: KeyPathRecorder) -> ObjectBase {
        let managed = ManagedObject(realm: self, binding: binding, key: -1)
        managed.recorder = recorder
        return accessor(for: managed)
    }

    /// Reads `keyPath` on a projection of a recording accessor; the root class's name.
    private func recordProjection<P: ProjectionObservable>(
        _ type: P.Type, keyPath: AnyKeyPath, recorder: KeyPathRecorder
    ) throws(Realm.Error) -> String {
        let binding = try binding(for: P.Root.self)
        guard let root = recordingAccessor(binding, recorder: recorder) as? P.Root else {
            fatalError("\(binding.className) accessor is not a \(P.Root.self)")
        }
        _ = P(projecting: root)[keyPath: keyPath]
        return binding.className
    }

    /// The names `recorder` noted, checked to form one path: each step after the first is a property of the
    /// class the step before links to.
    private func recordedPath(_ recorder: KeyPathRecorder, keyPath: AnyKeyPath, className: String, query: String)
        throws(Realm.Error) -> [String]
    {
        let steps = recorder.steps
        var names: [String] = []
        var expected: String? = className
        for step in steps {
            let table = step.binding.table
            guard step.binding.className == expected else {
                throw Realm.Error.invalidQuery(
                    query: query, position: 0,
                    reason:
                        "\(keyPath) reads more than one property of \(className) (computed properties cannot be used; use a persisted property or a path through links)"
                )
            }
            names.append(table.schema.properties[step.property].columnName)
            let info = table.infos[step.property]
            expected = info.type == .object ? info.objectType.flatMap { try? binding(for: $0).className } : nil
        }
        guard !names.isEmpty else {
            throw Realm.Error.invalidQuery(
                query: query, position: 0,
                reason:
                    "\(keyPath) is not a persisted property of \(className) (computed and ignored properties cannot be queried)"
            )
        }
        return names
    }

    /// `node` as a parsed predicate with its values as arguments. Chains of one operator (`a || b || c`, however
    /// they were grouped) become one flat node; the tree is walked with an explicit stack, so a query built from
    /// any number of operators resolves without recursion, and one nesting deeper than
    /// `QueryLimits.maximumDepth` levels, or with more than `QueryLimits.maximumTerms` conditions, is an error.
    func resolve(_ node: QueryNode, arguments: inout [Any?], text: String, subquery: SubqueryScope? = nil)
        throws(Realm.Error) -> RQLPredicate
    {
        enum Step {
            /// Resolve this node, `depth` levels deep.
            case visit(QueryNode, depth: Int)
            /// Combine the last `count` resolved predicates.
            case combine(ConditionShape, count: Int)
        }
        var steps: [Step] = [.visit(node, depth: 0)]
        var resolved: [RQLPredicate] = []
        var conditions = 0
        while let step = steps.popLast() {
            switch step {
            case .combine(let op, let count):
                let operands = Array(resolved.suffix(count))
                resolved.removeLast(count)
                switch op {
                case .and: resolved.append(.all(operands))
                case .or: resolved.append(.any(operands))
                case .not: resolved.append(.not(operands[0]))
                }
            case .visit(let node, let depth):
                guard case .logic(let logic) = node.predicate else {
                    conditions += 1
                    guard conditions <= QueryLimits.maximumTerms else {
                        throw Realm.Error.invalidQuery(query: text, position: 0, reason: QueryLimits.termsReason)
                    }
                    resolved.append(try resolveCondition(node, arguments: &arguments, text: text, subquery: subquery))
                    continue
                }
                guard depth < QueryLimits.maximumDepth else {
                    throw Realm.Error.invalidQuery(query: text, position: 0, reason: QueryLimits.depthReason)
                }
                let operands = logic.op == .not ? logic.operands : Self.chain(logic)
                steps.append(.combine(logic.op, count: operands.count))
                // Pushed last to first, so that they resolve (and number their arguments) left to right.
                for operand in operands.reversed() { steps.append(.visit(operand, depth: depth + 1)) }
            }
        }
        return resolved[0]
    }

    /// The operands of a chain of `logic`'s operator, left to right: operands that are the same operator are
    /// opened up in turn (iteratively: a chain may be thousands of nodes deep).
    private static func chain(_ logic: QueryLogic) -> [QueryNode] {
        var operands: [QueryNode] = []
        var pending = logic.operands.reversed() as [QueryNode]
        while let node = pending.popLast() {
            if case .logic(let inner) = node.predicate, inner.op == logic.op {
                pending += inner.operands.reversed()
            } else {
                operands.append(node)
            }
        }
        return operands
    }

    /// A condition of a type-safe query (a comparison, `BETWEEN`, `TEXT`, `GEOWITHIN`), with its values as
    /// arguments.
    private func resolveCondition(
        _ node: QueryNode, arguments: inout [Any?], text: String, subquery: SubqueryScope?
    ) throws(Realm.Error) -> RQLPredicate {
        func names(_ components: ArraySlice<QueryNode.Component>) throws(Realm.Error) -> [String] {
            var names: [String] = []
            for component in components {
                switch component {
                case .keyPath(let keyPath): names.append(contentsOf: try propertyPath(of: keyPath, query: text))
                case .operation(let name): names.append(name)
                case .elements: break
                }
            }
            return names
        }
        func operand(_ node: QueryNode) throws(Realm.Error) -> RQLOperand {
            switch node {
            case .path(let components):
                guard let subquery else { return .keyPath(try names(components[...]), position: 0) }
                // Inside `(…).count`: the path up to the collection's elements names the collection, the rest is
                // read on each element.
                guard let split = components.firstIndex(where: { if case .elements = $0 { true } else { false } })
                else {
                    throw Realm.Error.invalidQuery(
                        query: text, position: 0, reason: SubqueryScope.notOnElementsReason(try names(components[...])))
                }
                let collection = try names(components[..<split])
                try subquery.enter(collection, query: text)
                return .keyPath([subquery.variable] + (try names(components[(split + 1)...])), position: 0)
            case .subqueryCount(let condition):
                guard subquery == nil else {
                    throw Realm.Error.invalidQuery(
                        query: text, position: 0, reason: "a (…).count subquery cannot be nested in another")
                }
                let scope = SubqueryScope()
                let predicate = try resolve(condition, arguments: &arguments, text: text, subquery: scope)
                guard let collection = scope.collection else {
                    throw Realm.Error.invalidQuery(
                        query: text, position: 0, reason: SubqueryScope.notOnElementsReason([]))
                }
                return .subquery(collection: collection, variable: scope.variable, predicate: predicate, position: 0)
            case .value(let value):
                arguments.append(value)
                return .argument(arguments.count - 1, position: 0)
            case .values(let values):
                arguments.append(values)
                return .argument(arguments.count - 1, position: 0)
            default:
                throw Realm.Error.invalidQuery(query: text, position: 0, reason: "a condition cannot be compared")
            }
        }
        switch node.predicate {
        case .text(let path, let words):
            return .text(try operand(path), try operand(.value(words)), position: 0)
        case .geoWithin(let path, let shape):
            return .geoWithin(try operand(path), try operand(.value(shape)), position: 0)
        case .between(let path, let low, let high):
            let left = try operand(path)
            return .between(
                left, low: try operand(.value(low)), high: try operand(.value(high)), quantifier: nil, position: 0)
        case .compare(let left, let op, let right, let options):
            return .compare(
                RQLComparison(
                    left: try operand(left), op: op, right: try operand(right),
                    caseInsensitive: options.contains(.caseInsensitive),
                    diacriticInsensitive: options.contains(.diacriticInsensitive), position: 0))
        default:
            throw Realm.Error.invalidQuery(query: text, position: 0, reason: "expected a condition")
        }
    }
}

/// The collection a type-safe subquery count (`($0.dogs.age > 5).count`) runs over: the one collection of objects
/// all its conditions are about.
final class SubqueryScope {
    /// The variable standing for each element in the resolved `SUBQUERY(collection, $element, …)`.
    let variable = "$element"
    /// The collection's path from the queried class, once a condition named it.
    private(set) var collection: [String]?

    /// Notes that a condition reads the elements of `path`; an error when another one read another collection.
    func enter(_ path: [String], query: String) throws(Realm.Error) {
        guard let collection else {
            collection = path
            return
        }
        guard collection == path else {
            throw Realm.Error.invalidQuery(
                query: query, position: 0,
                reason:
                    "the conditions of a (…).count subquery must all be on one collection; they read both "
                    + "\(collection.joined(separator: ".")) and \(path.joined(separator: "."))")
        }
    }

    /// Why a condition in `(…).count` that does not read a collection's elements (at `path`) is refused.
    static func notOnElementsReason(_ path: [String]) -> String {
        let subject = path.isEmpty ? "the condition" : path.joined(separator: ".")
        return
            "(…).count counts the objects of a collection that satisfy its condition: \(subject) is not a property "
            + "of the objects of a collection (write its conditions as $0.dogs.age > 5)"
    }
}

extension Results {
    /// The elements matching `query`, built over key paths of `Element` (a model class or a projection).
    func narrowed(where query: (Query<Element>) -> Query<Bool>) throws(Realm.Error) -> Results<Element> {
        owner.checkThread()
        let node = query(Query<Element>(.path([]))).node
        let text = "where { … } on \(binding.className)"
        var arguments: [Any?] = []
        let predicate = try owner.resolve(node, arguments: &arguments, text: text)
        return with([.filter(try queryBinder(text, arguments).bind(predicate))])
    }

    /// ``narrowed(where:)``, trapping with the error's description (for `where`, which cannot throw).
    func narrowedOrTrap(where query: (Query<Element>) -> Query<Bool>) -> Results<Element> {
        do {
            return try narrowed(where: query)
        } catch {
            fatalError("\(error)")
        }
    }
}

extension Results where Element: ObjectBase {
    /// The objects matching the type-safe query `query`.
    ///
    /// ```swift
    /// realm.objects(Person.self).where { $0.age >= 18 && $0.dogs.count > 0 }
    /// ```
    ///
    /// A query the engine cannot run (a computed property, a comparison with a value of a custom type persisted
    /// as an embedded object) traps with the reason; `checkedWhere(_:)` throws it instead.
    public func `where`(_ query: (Query<Element>) -> Query<Bool>) -> Results<Element> {
        narrowedOrTrap(where: query)
    }

    /// `where(_:)`, throwing ``RealmError/invalidQuery(query:position:reason:)`` for a query the engine cannot
    /// run instead of trapping.
    ///
    /// ```swift
    /// do {
    ///     let near = try realm.objects(Club.self).checkedWhere { $0.location.persistableValue.latitude > 50 }
    /// } catch {
    ///     print(error)  // e.g. a key path through a computed property
    /// }
    /// ```
    public func checkedWhere(_ query: (Query<Element>) -> Query<Bool>) throws(Realm.Error) -> Results<Element> {
        try owner.throwIfDamaged()
        return try narrowed(where: query)
    }
}

extension Results where Element: ProjectionObservable {
    /// The projections matching the type-safe query `query`, over the projection's properties (each stands for
    /// the root key path it projects).
    ///
    /// ```swift
    /// realm.objects(PersonProjection.self).where { $0.homeCity == "Lisbon" }
    /// ```
    public func `where`(_ query: (Query<Element>) -> Query<Bool>) -> Results<Element> {
        narrowedOrTrap(where: query)
    }

    /// `where(_:)`, throwing ``RealmError/invalidQuery(query:position:reason:)`` for a query the engine cannot
    /// run instead of trapping.
    public func checkedWhere(_ query: (Query<Element>) -> Query<Bool>) throws(Realm.Error) -> Results<Element> {
        try owner.throwIfDamaged()
        return try narrowed(where: query)
    }

    /// The projections ordered by the projected property at `keyPath`, of any ``SortableType`` as in the SDK.
    public func sorted<V: SortableType>(by keyPath: KeyPath<Element, V>, ascending: Bool = true) -> Results<Element> {
        owner.checkThread()
        do {
            let name = try owner.propertyName(of: keyPath, query: "sorted(by: \(keyPath))")
            return sorted(byKeyPath: name, ascending: ascending)
        } catch {
            fatalError("\(error)")
        }
    }
}

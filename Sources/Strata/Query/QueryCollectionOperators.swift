import Foundation

/// The Realm SDK's type-safe operators on collections: a comparison of a list or set with one element value holds
/// when it holds for any element (`$0.ratings == 5`, `$0.ratings > 4`), a range holds when every element lies in
/// it (`$0.ratings.contains(3...5)`), numbers reached through a collection of objects aggregate over it
/// (`$0.citizens.age.avg > 30`), and a condition on a collection's elements counts the elements that satisfy it
/// (`($0.citizens.age > 18).count >= 2`, `($0.scores > 5).count > 1`). A comparison of a list or set of values
/// reads its elements (the path ends in `.elements`), so that inside `(…).count` it is about each value.
extension Query where T: _QueryCollection {
    /// Whether any element equals `element` (RQL `ANY list == value`).
    public static func == (lhs: Query<T>, rhs: T.Element) -> Query<Bool> {
        Query<Bool>(.compare(lhs.node.appending(.elements), .equal, .value(rhs), []))
    }
    /// Whether any element differs from `element` (RQL `ANY list != value`).
    public static func != (lhs: Query<T>, rhs: T.Element) -> Query<Bool> {
        Query<Bool>(.compare(lhs.node.appending(.elements), .notEqual, .value(rhs), []))
    }
}

extension Query where T: _QueryCollection, T.Element: Comparable {
    /// Whether any element is less than `value`.
    public static func < (lhs: Query<T>, rhs: T.Element) -> Query<Bool> {
        Query<Bool>(.compare(lhs.node.appending(.elements), .less, .value(rhs), []))
    }
    /// Whether any element is less than or equal to `value`.
    public static func <= (lhs: Query<T>, rhs: T.Element) -> Query<Bool> {
        Query<Bool>(.compare(lhs.node.appending(.elements), .lessOrEqual, .value(rhs), []))
    }
    /// Whether any element is greater than `value`.
    public static func > (lhs: Query<T>, rhs: T.Element) -> Query<Bool> {
        Query<Bool>(.compare(lhs.node.appending(.elements), .greater, .value(rhs), []))
    }
    /// Whether any element is greater than or equal to `value`.
    public static func >= (lhs: Query<T>, rhs: T.Element) -> Query<Bool> {
        Query<Bool>(.compare(lhs.node.appending(.elements), .greaterOrEqual, .value(rhs), []))
    }
    /// Whether every element lies in `range` (both ends included); false for an empty collection, as in the SDK
    /// (`list.@min >= low && list.@max <= high`).
    public func contains(_ range: ClosedRange<T.Element>) -> Query<Bool> {
        Query<Bool>(node.everyElement(from: range.lowerBound, upTo: range.upperBound, including: true))
    }
    /// Whether every element lies in `range` (upper end excluded); false for an empty collection.
    public func contains(_ range: Range<T.Element>) -> Query<Bool> {
        Query<Bool>(node.everyElement(from: range.lowerBound, upTo: range.upperBound, including: false))
    }
}

extension Query where T: _QueryCollection, T.Element: _QueryOptional, T.Element.Wrapped: Comparable {
    /// Whether any element is less than `value` (nil elements never are).
    public static func < (lhs: Query<T>, rhs: T.Element.Wrapped) -> Query<Bool> {
        Query<Bool>(.compare(lhs.node.appending(.elements), .less, .value(rhs), []))
    }
    /// Whether any element is less than or equal to `value`.
    public static func <= (lhs: Query<T>, rhs: T.Element.Wrapped) -> Query<Bool> {
        Query<Bool>(.compare(lhs.node.appending(.elements), .lessOrEqual, .value(rhs), []))
    }
    /// Whether any element is greater than `value`.
    public static func > (lhs: Query<T>, rhs: T.Element.Wrapped) -> Query<Bool> {
        Query<Bool>(.compare(lhs.node.appending(.elements), .greater, .value(rhs), []))
    }
    /// Whether any element is greater than or equal to `value`.
    public static func >= (lhs: Query<T>, rhs: T.Element.Wrapped) -> Query<Bool> {
        Query<Bool>(.compare(lhs.node.appending(.elements), .greaterOrEqual, .value(rhs), []))
    }
    /// Whether every non-nil element lies in `range` (both ends included); false when there is none.
    public func contains(_ range: ClosedRange<T.Element.Wrapped>) -> Query<Bool> {
        Query<Bool>(node.everyElement(from: range.lowerBound, upTo: range.upperBound, including: true))
    }
    /// Whether every non-nil element lies in `range` (upper end excluded); false when there is none.
    public func contains(_ range: Range<T.Element.Wrapped>) -> Query<Bool> {
        Query<Bool>(node.everyElement(from: range.lowerBound, upTo: range.upperBound, including: false))
    }
}

extension Query where T: _QueryMap, T.Value: Comparable {
    /// Whether every value lies in `range` (both ends included); false for an empty map.
    public func contains(_ range: ClosedRange<T.Value>) -> Query<Bool> {
        Query<Bool>(node.everyElement(from: range.lowerBound, upTo: range.upperBound, including: true))
    }
    /// Whether every value lies in `range` (upper end excluded); false for an empty map.
    public func contains(_ range: Range<T.Value>) -> Query<Bool> {
        Query<Bool>(node.everyElement(from: range.lowerBound, upTo: range.upperBound, including: false))
    }
}

/// Numbers and dates, the values the SDK aggregates with `.min`, `.max`, `.sum` and `.avg`.
public protocol _QueryNumeric {}
extension Int: _QueryNumeric {}
extension Int8: _QueryNumeric {}
extension Int16: _QueryNumeric {}
extension Int32: _QueryNumeric {}
extension Int64: _QueryNumeric {}
extension Float: _QueryNumeric {}
extension Double: _QueryNumeric {}
extension Decimal128: _QueryNumeric {}
extension Date: _QueryNumeric {}
extension Optional: _QueryNumeric where Wrapped: _QueryNumeric {}

extension Query where T: _QueryNumeric {
    /// The smallest value of this property over the objects of the collection the path goes through
    /// (`$0.citizens.age.min`, RQL `citizens.@min.age`).
    public var min: Query<T> { Query<T>(node.aggregating("@min")) }
    /// The largest value of this property over the objects of the collection the path goes through.
    public var max: Query<T> { Query<T>(node.aggregating("@max")) }
    /// The sum of this property over the objects of the collection the path goes through.
    public var sum: Query<T> { Query<T>(node.aggregating("@sum")) }
    /// The mean of this property over the objects of the collection the path goes through.
    public var avg: Query<T> { Query<T>(node.aggregating("@avg")) }
}

extension Query where T == Bool {
    /// How many elements of a collection of objects or values satisfy this condition, which must be about the
    /// elements of that one collection: `($0.citizens.age > 18 && $0.citizens.name != "Bo").count >= 2` (RQL
    /// `SUBQUERY(citizens, $x, $x.age > 18 AND $x.name != 'Bo').@count >= 2`). Unlike `$0.citizens.age > 18 &&
    /// $0.citizens.name != "Bo"`, where each condition may hold for a different element, every condition must
    /// hold for the same one. Over a list or set of values the condition is about each value:
    /// `($0.scores > 5 && $0.scores < 9).count > 1` (RQL `SUBQUERY(scores, $x, $x > 5 AND $x < 9).@count > 1`).
    public var count: Query<Int> { Query<Int>(.subqueryCount(node.predicate)) }
}

extension QueryNode {
    /// `@min >= low && @max <= high` (or `< high`) on this collection: every element in the range.
    func everyElement(from low: Any, upTo high: Any, including: Bool) -> QueryNode {
        .logic(
            QueryLogic(
                .and,
                [
                    .compare(appending(.operation("@min")), .greaterOrEqual, .value(low), []),
                    .compare(appending(.operation("@max")), including ? .lessOrEqual : .less, .value(high), []),
                ]))
    }

    /// The path with `aggregate` where it first steps into a collection's elements (`dogs.@avg.age`); at its end
    /// when it does not, which the engine rejects with its reason (an aggregate needs a collection).
    func aggregating(_ aggregate: String) -> QueryNode {
        guard case .path(var components) = self else { return self }
        if let index = components.firstIndex(where: { if case .elements = $0 { true } else { false } }) {
            components[index] = .operation(aggregate)
        } else {
            components.append(.operation(aggregate))
        }
        return .path(components)
    }
}

import Foundation

// Type-safe queries on `AnyRealmValue` properties: ordering comparisons (a mixed value is not `Comparable` in
// Swift, but the query engine orders the values it can compare) and subscripts into the list or dictionary a
// mixed value holds, as `extra[0]` and `extra['key']` in the query language.

extension Query where T == AnyRealmValue {
    /// The element at `position` of the list the mixed value holds, as `extra[0]` in the query language (no value,
    /// so no comparison holds, when it holds no list or a shorter one).
    ///
    /// ```swift
    /// realm.objects(Person.self).where { $0.extra[0] == .int(1) }
    /// ```
    public subscript(position: Int) -> Query<AnyRealmValue> {
        Query<AnyRealmValue>(node.appending(.operation("]\(position)")))
    }

    /// The value at `key` of the dictionary the mixed value holds (nil when the dictionary has no such key), as
    /// `extra['key']` in the query language.
    ///
    /// ```swift
    /// realm.objects(Person.self).where { $0.extra["nickname"] == .string("Bo") }
    /// ```
    public subscript(key: String) -> Query<AnyRealmValue> {
        Query<AnyRealmValue>(node.appending(.operation("[" + key)))
    }

    /// Every element of the list or value of the dictionary the mixed value holds, as `extra[*]` in the query
    /// language: a comparison holds when it holds for one of them.
    ///
    /// ```swift
    /// realm.objects(Person.self).where { $0.extra.any == .string("x") }
    /// ```
    public var any: Query<AnyRealmValue> { Query<AnyRealmValue>(node.appending(.operation("]*"))) }

    /// Less than `value` (numbers of any kind by value, strings and data by their bytes, dates by time; false
    /// for values of types with no order between them).
    public static func < (lhs: Query<AnyRealmValue>, rhs: AnyRealmValue) -> Query<Bool> {
        Query<Bool>(.compare(lhs.node, .less, .value(rhs), []))
    }
    /// Less than or equal to `value` (as `<` compares).
    public static func <= (lhs: Query<AnyRealmValue>, rhs: AnyRealmValue) -> Query<Bool> {
        Query<Bool>(.compare(lhs.node, .lessOrEqual, .value(rhs), []))
    }
    /// Greater than `value` (as `<` compares).
    public static func > (lhs: Query<AnyRealmValue>, rhs: AnyRealmValue) -> Query<Bool> {
        Query<Bool>(.compare(lhs.node, .greater, .value(rhs), []))
    }
    /// Greater than or equal to `value` (as `<` compares).
    public static func >= (lhs: Query<AnyRealmValue>, rhs: AnyRealmValue) -> Query<Bool> {
        Query<Bool>(.compare(lhs.node, .greaterOrEqual, .value(rhs), []))
    }
}

/// Comparisons of one property with another of the same object or of a linked one (`$0.area > $0.population`,
/// `$0.mayor.age < $0.citizens.age`), as the Realm SDK's type-safe queries write them; RQL `area > population`.
extension Query where T: Equatable {
    /// Equal to the property `rhs`.
    public static func == (lhs: Query<T>, rhs: Query<T>) -> Query<Bool> {
        Query<Bool>(.compare(lhs.node, .equal, rhs.node, []))
    }
    /// Not equal to the property `rhs`.
    public static func != (lhs: Query<T>, rhs: Query<T>) -> Query<Bool> {
        Query<Bool>(.compare(lhs.node, .notEqual, rhs.node, []))
    }
}

extension Query where T: Comparable {
    /// Less than the property `rhs`.
    public static func < (lhs: Query<T>, rhs: Query<T>) -> Query<Bool> {
        Query<Bool>(.compare(lhs.node, .less, rhs.node, []))
    }
    /// Less than or equal to the property `rhs`.
    public static func <= (lhs: Query<T>, rhs: Query<T>) -> Query<Bool> {
        Query<Bool>(.compare(lhs.node, .lessOrEqual, rhs.node, []))
    }
    /// Greater than the property `rhs`.
    public static func > (lhs: Query<T>, rhs: Query<T>) -> Query<Bool> {
        Query<Bool>(.compare(lhs.node, .greater, rhs.node, []))
    }
    /// Greater than or equal to the property `rhs`.
    public static func >= (lhs: Query<T>, rhs: Query<T>) -> Query<Bool> {
        Query<Bool>(.compare(lhs.node, .greaterOrEqual, rhs.node, []))
    }
}

extension Query where T: _QueryOptional, T.Wrapped: Comparable {
    /// Less than the property `rhs` (nil on either side never is).
    public static func < (lhs: Query<T>, rhs: Query<T>) -> Query<Bool> {
        Query<Bool>(.compare(lhs.node, .less, rhs.node, []))
    }
    /// Less than or equal to the property `rhs`.
    public static func <= (lhs: Query<T>, rhs: Query<T>) -> Query<Bool> {
        Query<Bool>(.compare(lhs.node, .lessOrEqual, rhs.node, []))
    }
    /// Greater than the property `rhs`.
    public static func > (lhs: Query<T>, rhs: Query<T>) -> Query<Bool> {
        Query<Bool>(.compare(lhs.node, .greater, rhs.node, []))
    }
    /// Greater than or equal to the property `rhs`.
    public static func >= (lhs: Query<T>, rhs: Query<T>) -> Query<Bool> {
        Query<Bool>(.compare(lhs.node, .greaterOrEqual, rhs.node, []))
    }
}

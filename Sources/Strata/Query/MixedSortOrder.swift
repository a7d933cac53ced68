/// The order in which sorting puts values of different types, as the Realm SDK's engine sorts a mixed
/// (`AnyRealmValue`) property: nil, booleans, numbers (integers, floats, doubles and decimals together, by value),
/// strings, binary data, dates, ObjectIds, UUIDs, objects, then nested lists and dictionaries. Values of one rank
/// compare as queries compare them; a typed property holds one rank only, so this changes nothing for it.
enum MixedSortOrder {
    /// The rank of `value`'s type in the sort order.
    static func rank(_ value: _StoredValue) -> Int {
        switch value {
        case .null: 0
        case .bool: 1
        case .int, .float, .double, .decimal128: 2
        case .string: 3
        case .data: 4
        case .date: 5
        case .objectId: 6
        case .uuid: 7
        case .object: 8
        case .collection, .mixed: 9
        }
    }

    /// -1, 0 or 1: `a` sorts before, with or after `b`. Total over values of different types, so that a sort of
    /// mixed values is well defined; NaN sorts before the other numbers, and values with no order between them
    /// (two objects, two nested collections) tie and keep their places.
    static func compare(_ a: _StoredValue, _ b: _StoredValue) -> Int {
        let rankA = rank(a)
        let rankB = rank(b)
        if rankA != rankB { return rankA < rankB ? -1 : 1 }
        if rankA == 4 {
            // Data with data only (queries also compare data with strings, which rank apart here).
            if case .data(let x) = a, case .data(let y) = b {
                return x == y ? 0 : x.lexicographicallyPrecedes(y) ? -1 : 1
            }
        }
        if let order = QueryValues.order(a, b) { return order }
        if rankA == 2 {
            let aIsNaN = QueryValues.number(a)?.isNaN ?? false
            let bIsNaN = QueryValues.number(b)?.isNaN ?? false
            if aIsNaN != bIsNaN { return aIsNaN ? -1 : 1 }
        }
        return 0
    }
}

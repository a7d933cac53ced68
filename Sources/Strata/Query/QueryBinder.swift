import Foundation
import StrataStorage

/// Resolves parsed queries against a class's schema and arguments.
struct QueryBinder {
    let realm: Realm
    let root: TableBinding
    let query: String
    let arguments: [Any?]
    /// Inside `SUBQUERY(collection, $x, …)`: `$x`, which every key path must start with.
    var variable: String? = nil
    /// Inside a SUBQUERY over a list or set of values: how its elements are stored (`$x` is one of them, not an
    /// object), and the collection's path for messages.
    var valueElements: (info: _PropertyInfo, collection: String)? = nil
    /// Names that stand for a path on the root (a projection's property names: `homeCity` for
    /// `address.city`), applied to the first component of top-level key paths.
    var aliases: [String: [String]] = [:]

    func failure(_ reason: String, at position: Int) -> Realm.Error {
        RQLParser.failure(in: query, reason, at: position)
    }

    /// `predicate` bound to the schema and the arguments, walked without recursion (see `foldConditions`).
    func bind(_ predicate: RQLPredicate) throws(Realm.Error) -> BoundPredicate {
        try foldConditions(
            predicate, split: { $0.logicalOperands },
            leaf: { (condition) throws(Realm.Error) in try bindCondition(condition) },
            combine: { (shape, operands) throws(Realm.Error) in BoundPredicate(shape, operands) })
    }

    /// A condition: `TRUEPREDICATE`, a comparison, `BETWEEN`, `TEXT` or `GEOWITHIN`.
    private func bindCondition(_ predicate: RQLPredicate) throws(Realm.Error) -> BoundPredicate {
        switch predicate {
        case .constant(let value): return .constant(value)
        case .and, .or, .not: return try bind(predicate)
        case .between(let operand, let low, let high, let quantifier, let position):
            guard case .keyPath(let components, let at) = operand else {
                throw failure("BETWEEN needs a property on its left", at: position)
            }
            let path = try bindPath(components, at: at)
            if case .argument(let number, let position) = low, case .argument(number, position) = high {
                // `BETWEEN %@` / `BETWEEN $0`: one argument holding both bounds (see `RQLParser.comparison`).
                guard case .values(let bounds) = try bindOperand(low, for: path), bounds.count == 2 else {
                    throw failure("BETWEEN takes an array of two bounds, the low one first", at: position)
                }
                return .between(path, bounds[0], bounds[1], quantifier: quantifier)
            }
            let bounds = try [low, high].map { (bound) throws(Realm.Error) -> _StoredValue in
                guard case .value(let value) = try bindOperand(bound, for: path) else {
                    throw failure("BETWEEN bounds must be values", at: bound.position)
                }
                return value
            }
            return .between(path, bounds[0], bounds[1], quantifier: quantifier)
        case .text(let operand, let words, let position):
            return try bindText(operand, words, at: position)
        case .geoWithin(let operand, let shape, let position):
            return try bindGeoWithin(operand, shape, at: position)
        case .compare(var comparison):
            var elementOfCollection = false
            if comparison.left.isPath {
            } else if comparison.op == .in, comparison.right.isPath {
                // `'big' IN tags`: the value is one of the collection's elements, that is `ANY tags == 'big'`.
                swap(&comparison.left, &comparison.right)
                comparison.op = .equal
                elementOfCollection = true
            } else if comparison.right.isPath, let mirrored = Self.mirror(comparison.op) {
                swap(&comparison.left, &comparison.right)
                comparison.op = mirrored
            } else {
                throw failure("one side of the comparison must be a property", at: comparison.position)
            }
            guard let path = try bindPathOperand(comparison.left) else {
                throw failure("the left side of \(comparison.op.rawValue) must be a property", at: comparison.position)
            }
            if elementOfCollection, !path.isMultiple {
                throw failure(
                    "IN with a value on its left needs a collection on its right; \(path.text) is a single value",
                    at: comparison.left.position)
            }
            if case .type? = path.steps.last {
                return try bindTypeComparison(path, comparison)
            }
            let right = try bindOperand(comparison.right, for: path, op: comparison.op)
            if case .values(let values) = right, comparison.op != .in || comparison.listQuantifier != nil {
                return try bindListComparison(path, comparison, values)
            }
            try check(comparison.op, path: path, right: right, at: comparison.right.position)
            if comparison.quantifier != nil && !path.isMultiple {
                throw failure(
                    "\(comparison.quantifier!.rawValue) needs a key path through a collection; \(path.text) is a single value",
                    at: comparison.position)
            }
            return .compare(
                path, comparison.op, right,
                options: CompareOptions(
                    caseInsensitive: comparison.caseInsensitive, diacriticInsensitive: comparison.diacriticInsensitive),
                quantifier: comparison.quantifier)
        }
    }

    /// A comparison with a list on its right (`age == {18, 21}`, `age > ALL {1, 2}`, `age == NONE $0`): with `ANY`
    /// (the default) it holds when it holds for some value of the list, with `ALL` for every one and with `NONE` for
    /// none, as the Realm Query Language reference defines. `IN` is `== ANY`. A path through a collection takes the
    /// default `ANY` on both sides only: `ALL tags == NONE {…}` has no single meaning here and is an error.
    private func bindListComparison(_ path: BoundPath, _ comparison: RQLComparison, _ values: [_StoredValue])
        throws(Realm.Error) -> BoundPredicate
    {
        let listQuantifier = comparison.listQuantifier ?? .any
        let op = comparison.op == .in ? RQLOperator.equal : comparison.op
        if op == .equal, listQuantifier == .any {
            // `== {…}` and `== ANY {…}` are IN, whatever the quantifier on the left.
            try check(.in, path: path, right: .values(values), at: comparison.right.position)
            return .compare(
                path, .in, .values(values),
                options: CompareOptions(
                    caseInsensitive: comparison.caseInsensitive, diacriticInsensitive: comparison.diacriticInsensitive),
                quantifier: comparison.quantifier)
        }
        if path.isMultiple, (comparison.quantifier ?? .any) != .any || listQuantifier != .any {
            throw failure(
                "\(path.text) passes through a collection: compare it with ANY {…} (or IN), or use SUBQUERY",
                at: comparison.position)
        }
        let options = CompareOptions(
            caseInsensitive: comparison.caseInsensitive, diacriticInsensitive: comparison.diacriticInsensitive)
        let tests = try values.map { (value) throws(Realm.Error) -> BoundPredicate in
            try check(op, path: path, right: .value(value), at: comparison.right.position)
            return .compare(path, op, .value(value), options: options, quantifier: comparison.quantifier)
        }
        switch listQuantifier {
        case .any: return tests.isEmpty ? .constant(false) : .or(tests)
        case .all: return tests.isEmpty ? .constant(true) : .and(tests)
        case .none: return tests.isEmpty ? .constant(true) : .not(.or(tests))
        }
    }

    /// `property TEXT 'words'`.
    private func bindText(_ operand: RQLOperand, _ words: RQLOperand, at position: Int) throws(Realm.Error)
        -> BoundPredicate
    {
        guard let path = try bindPathOperand(operand), path.type == .string else {
            throw failure("TEXT needs a string property on its left", at: position)
        }
        guard case .value(.string(let text)) = try bindOperand(words, for: path) else {
            throw failure("TEXT needs a string of words on its right", at: words.position)
        }
        guard let search = FullText.Search(text) else {
            throw failure("TEXT needs at least one word; '\(text)' has none", at: words.position)
        }
        return .text(path, search)
    }

    static func mirror(_ op: RQLOperator) -> RQLOperator? {
        switch op {
        case .equal, .notEqual: op
        case .less: .greater
        case .lessOrEqual: .greaterOrEqual
        case .greater: .less
        case .greaterOrEqual: .lessOrEqual
        default: nil
        }
    }

    /// A key path or a `SUBQUERY(…).@count`, bound; nil for other operands.
    func bindPathOperand(_ operand: RQLOperand) throws(Realm.Error) -> BoundPath? {
        switch operand {
        case .arithmetic where operand.readsProperty:
            return try bindArithmeticPath(operand)
        case .keyPath(let components, let position):
            return try bindPath(components, at: position)
        case .subquery(let collection, let name, let predicate, let position):
            var path = try bindPath(collection, at: position)
            var inner: QueryBinder
            if path.type == .object, let className = path.objectClassName,
                path.steps.last?.isObjectCollection == true
            {
                inner = QueryBinder(
                    realm: realm, root: try realm.bindingForQuery(className), query: query, arguments: arguments)
            } else if case .property(let binding, let index)? = path.steps.last,
                let kind = binding.table.infos[index].collection, kind != .map
            {
                // A list or set of values (core's SUBQUERY(scores, $x, $x > 5)): $x is each value.
                var element = binding.table.infos[index]
                element.collection = nil
                inner = QueryBinder(realm: realm, root: root, query: query, arguments: arguments)
                inner.valueElements = (element, path.text)
            } else {
                throw failure(
                    "SUBQUERY needs a collection of objects or values (a list or a set); \(path.text) is not one",
                    at: position)
            }
            inner.variable = name
            path.steps.append(.subqueryCount(try inner.bind(predicate)))
            path.type = .int
            path.isOptional = false
            path.isMultiple = false
            path.objectClassName = nil
            path.directColumn = nil
            path.text = "SUBQUERY(\(path.text), \(name), …).@count"
            return path
        default:
            return nil
        }
    }

    /// `value.@type == 'name'`, `!=` or `IN {…}`: the names as canonical type names ('numeric' stands for every
    /// number type).
    private func bindTypeComparison(_ path: BoundPath, _ comparison: RQLComparison) throws(Realm.Error)
        -> BoundPredicate
    {
        guard [.equal, .notEqual, .in].contains(comparison.op) else {
            throw failure("@type can only be compared with ==, != or IN", at: comparison.position)
        }
        let names: [_StoredValue]
        switch try bindOperand(comparison.right, for: path, op: comparison.op) {
        case .value(let value): names = [value]
        case .values(let values): names = values
        case .path: throw failure("@type is compared with type names", at: comparison.right.position)
        }
        var canonical: [_StoredValue] = []
        for name in names {
            guard case .string(let text) = name, let types = QueryValues.typeNames[text.lowercased()] else {
                throw failure(
                    "\(Self.describe(name)) is not a type name (int, bool, float, double, decimal, numeric, string, "
                        + "binary, date, objectId, uuid, object, list, dictionary, null)", at: comparison.right.position
                )
            }
            canonical += types.map { .string($0) }
        }
        let test = BoundPredicate.compare(
            path, .in, .values(canonical), options: CompareOptions(), quantifier: comparison.quantifier)
        return comparison.op == .notEqual ? .not(test) : test
    }

}

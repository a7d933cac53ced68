import Foundation
import StrataStorage

// MARK: Compiled conditions

/// A condition on the object's own row, compiled to a closure that reads the row's bytes in place: no values,
/// strings or arrays are created per row.
typealias RowCondition = (RowView) -> Bool

extension BoundPredicate {
    /// The condition as a `RowCondition`, when it only compares the object's own plain columns with constants,
    /// or (given `realm`) follows a to-one link to such a condition; nil otherwise (the general evaluator then
    /// runs it). Both give the same answers.
    ///
    /// Conditions nested deeper than `conditionRecursionLimit` are not compiled: checking a row would recurse
    /// through that many closures.
    func compiled(realm: Realm? = nil, depth: Int = 0) -> RowCondition? {
        if depth >= conditionRecursionLimit, logicalOperands != nil { return nil }
        switch self {
        case .constant(let value): return { _ in value }
        case .and(let operands):
            guard let tests = Self.compiled(operands, realm: realm, depth: depth + 1) else { return nil }
            return Self.all(tests)
        case .or(let operands):
            if let (path, values) = equalityDisjunction(), let test = Self.membership(path, values) { return test }
            guard let tests = Self.compiled(operands, realm: realm, depth: depth + 1) else { return nil }
            if tests.count == 2 {
                let (x, y) = (tests[0], tests[1])
                return { x($0) || y($0) }
            }
            return { row in
                for test in tests where test(row) { return true }
                return false
            }
        case .not(let a):
            guard let x = a.compiled(realm: realm, depth: depth + 1) else { return nil }
            return { !x($0) }
        default:
            return compiledCondition(realm: realm)
        }
    }

    /// `compiled` for a condition that is not `AND`, `OR` or `NOT` (apart, so that its large frame is not part of
    /// the recursion over nested conditions).
    @inline(never)
    private func compiledCondition(realm: Realm?) -> RowCondition? {
        switch self {
        case .constant, .and, .or, .not:
            return compiled(realm: realm)
        case .between(let path, let low, let high, nil) where path.directColumn != nil:
            guard let lower = Self.compare(path, .greaterOrEqual, low, CompareOptions()),
                let upper = Self.compare(path, .lessOrEqual, high, CompareOptions())
            else { return nil }
            return { lower($0) && upper($0) }
        case .compare(let path, let op, .value(let value), let options, nil) where path.directColumn != nil:
            return Self.compare(path, op, value, options)
        case .compare(let path, .in, .values(let values), let options, nil) where path.directColumn != nil:
            if !options.caseInsensitive && !options.diacriticInsensitive, let test = Self.membership(path, values) {
                return test
            }
            let tests = values.compactMap { Self.compare(path, .equal, $0, options) }
            guard tests.count == values.count else { return nil }
            return { row in tests.contains { $0(row) } }
        default:
            return realm.flatMap { semiJoin($0) }
        }
    }

    /// Each of `operands` compiled; nil when one of them cannot be.
    static func compiled(_ operands: [BoundPredicate], realm: Realm?, depth: Int) -> [RowCondition]? {
        var tests: [RowCondition] = []
        tests.reserveCapacity(operands.count)
        for operand in operands {
            guard let test = operand.compiled(realm: realm, depth: depth) else { return nil }
            tests.append(test)
        }
        return tests
    }

    /// Whether a row passes every one of `tests`: one closure however many there are (nesting a closure per test
    /// would recurse once per test on every row).
    static func all(_ tests: [RowCondition]) -> RowCondition {
        switch tests.count {
        case 0: return { _ in true }
        case 1: return tests[0]
        case 2:
            let (x, y) = (tests[0], tests[1])
            return { x($0) && y($0) }
        default:
            return { row in
                for test in tests where !test(row) { return false }
                return true
            }
        }
    }

    /// A condition on `link.rest` (a to-one link, then anything) as "the link points at one of the targets
    /// satisfying the condition on `rest`": the targets are found once, with their own query, and each row only
    /// checks its link. A nil link counts as a null value at the end of the path, as in the general evaluator.
    private func semiJoin(_ realm: Realm) -> RowCondition? {
        guard let (column, targets, nilMatches) = semiJoinParts(realm) else { return nil }
        return { row in row.isNull(column) ? nilMatches : targets.contains(row.int(column)) }
    }

    /// The parts of a semi-join (see `semiJoin`): the link's column, the keys of the targets satisfying the
    /// condition on the rest of the path, and whether a nil link satisfies it; nil when the predicate is not a
    /// condition across a to-one link.
    func semiJoinParts(_ realm: Realm) -> (column: Int, targets: Set<Int64>, nilMatches: Bool)? {
        let path: BoundPath
        let inner: (BoundPath) -> BoundPredicate
        switch self {
        case .compare(let whole, let op, let right, let options, nil):
            if case .path = right { return nil }
            path = whole
            inner = { .compare($0, op, right, options: options, quantifier: nil) }
        case .between(let whole, let low, let high, nil):
            path = whole
            inner = { .between($0, low, high, quantifier: nil) }
        case .text(let whole, let search):
            path = whole
            inner = { .text($0, search) }
        default:
            return nil
        }
        // Each link of the path is one more nested query (the targets' own semi-join): a path through more links
        // than `semiJoinLinkLimit` runs in the general evaluator, which follows it without recursion.
        guard path.steps.count >= 2, path.steps.count <= Self.semiJoinLinkLimit + 1,
            case .property(let owner, let link) = path.steps[0],
            owner.table.infos[link].type == .object, owner.table.infos[link].collection == nil,
            case .property(let target, _) = path.steps[1]
        else { return nil }
        var rest = path
        rest.steps.removeFirst()
        rest.directColumn = nil
        if rest.steps.count == 1, case .property(let binding, let index) = rest.steps[0],
            binding.table.infos[index].collection == nil, binding.table.infos[index].type != .any
        {
            rest.directColumn = (binding.columns[index], binding.table.infos[index])
        }
        guard
            let matching = try? ResultsQuery(stages: [.filter(inner(rest))]).matches(
                realm: realm, binding: target, rows: false)
        else { return nil }
        let nilMatches = path.isMultiple ? false : inner(rest).holdsForNull
        return (owner.columns[link], Set(matching.keys), nilMatches)
    }

    /// How many to-one links a path may follow and still run as semi-joins (each link nests a query).
    static let semiJoinLinkLimit = 8

    /// Whether the condition holds when its path yields null (a nil link on the way).
    var holdsForNull: Bool {
        switch self {
        case .compare(_, let op, .value(let value), let options, nil):
            return QueryValues.compare(.null, op, value, options)
        case .compare(_, .in, .values(let values), let options, nil):
            return values.contains { QueryValues.compare(.null, .equal, $0, options) }
        default:
            return false
        }
    }

    /// `a == x OR a == y OR …` on one plain column (at any nesting of ORs): the column and the values.
    func equalityDisjunction() -> (BoundPath, [_StoredValue])? {
        switch self {
        case .or(let operands):
            guard let (first, _) = operands.first?.equalityDisjunction(), let column = first.directColumn?.column
            else { return nil }
            var values: [_StoredValue] = []
            for operand in operands {
                guard let (path, more) = operand.equalityDisjunction(), path.directColumn?.column == column else {
                    return nil
                }
                values += more
            }
            return (first, values)
        case .compare(let path, .equal, .value(let value), let options, nil)
        where path.directColumn != nil && !options.caseInsensitive && !options.diacriticInsensitive:
            return (path, [value])
        case .compare(let path, .in, .values(let values), let options, nil)
        where path.directColumn != nil && !options.caseInsensitive && !options.diacriticInsensitive:
            return (path, values)
        default:
            return nil
        }
    }

    /// `values` as the integers an integer column can equal (whole numbers of other types included, others
    /// dropped) and whether one of them is null; nil when a value is not a number.
    static func integerSet(_ values: [_StoredValue]) -> (set: Set<Int64>, matchesNull: Bool)? {
        var set = Set<Int64>()
        var matchesNull = false
        for value in values {
            switch value {
            case .null: matchesNull = true
            case .int(let int): set.insert(int)
            case .double, .float:
                // Only a whole number can equal an integer.
                guard let number = QueryValues.number(value), number == number.rounded(), abs(number) < 0x1p63
                else { continue }
                set.insert(Int64(number))
            default: return nil
            }
        }
        return (set, matchesNull)
    }

    /// Whether the column's value is one of `values`, with one hash lookup (integers) or one binary search
    /// (strings) per row instead of a test per value; nil for other types.
    static func membership(_ path: BoundPath, _ values: [_StoredValue]) -> RowCondition? {
        guard let (column, info) = path.directColumn else { return nil }
        let matchesNull = values.contains { if case .null = $0 { true } else { false } }
        let present = values.filter { if case .null = $0 { false } else { true } }
        switch info.type {
        case .int:
            guard let (set, _) = integerSet(present) else { return nil }
            return { row in row.isNull(column) ? matchesNull : set.contains(row.int(column)) }
        case .string:
            var sorted: [[UInt8]] = []
            for case .string(let text) in present { sorted.append(Array(text.utf8)) }
            guard sorted.count == present.count else { return nil }
            sorted.sort { QueryValues.compareBytes($0, $1) < 0 }
            return { row in
                if row.isNull(column) { return matchesNull }
                return row.withBytes(column) { bytes in
                    var low = 0
                    var high = sorted.count
                    while low < high {
                        let middle = (low + high) / 2
                        let order = QueryValues.compareBytes(sorted[middle], bytes)
                        if order == 0 { return true }
                        if order < 0 { low = middle + 1 } else { high = middle }
                    }
                    return false
                }
            }
        default:
            return nil
        }
    }

}

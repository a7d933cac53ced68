import StrataStorage

// Compiling a bound predicate to a column kernel, when it only tests fixed-width columns (or follows a to-one
// link to such a test).

extension BoundPredicate {
    /// The predicate as a column kernel, when it only tests fixed-width columns of the object's own row against
    /// constants (the cases `compiled` handles for those types, with the same answers) or, given `realm`, a
    /// condition across a to-one link (a semi-join: the link column's value is one of the matching targets' keys);
    /// nil otherwise.
    /// Conditions nested deeper than `conditionRecursionLimit` get no kernel (evaluating it recurses per level).
    func columnKernel(realm: Realm? = nil, depth: Int = 0) -> ColumnScan.Kernel? {
        if depth >= conditionRecursionLimit, logicalOperands != nil { return nil }
        switch self {
        case .constant(let value):
            return .constant(value)
        case .and(let operands):
            return Self.columnKernels(operands, realm: realm, depth: depth + 1).map { .and($0) }
        case .or(let operands):
            if let (path, values) = equalityDisjunction(), let set = Self.intMembership(path, values) { return set }
            return Self.columnKernels(operands, realm: realm, depth: depth + 1).map { .or($0) }
        case .not(let a):
            return a.columnKernel(realm: realm, depth: depth + 1).map { .not($0) }
        default:
            return columnKernelCondition(realm: realm)
        }
    }

    /// `columnKernel` for a condition that is not `AND`, `OR` or `NOT` (apart, so that its large frame is not part
    /// of the recursion over nested conditions).
    @inline(never)
    private func columnKernelCondition(realm: Realm?) -> ColumnScan.Kernel? {
        switch self {
        case .constant, .and, .or, .not:
            return columnKernel(realm: realm)
        case .between(let path, let low, let high, nil) where path.directColumn != nil:
            guard let lower = Self.columnCompare(path, .greaterOrEqual, low),
                let upper = Self.columnCompare(path, .lessOrEqual, high)
            else { return nil }
            return .and([lower, upper])
        case .compare(let path, let op, .value(.string(let text)), let options, nil) where path.directColumn != nil:
            return Self.stringCompare(path, op, text, options)
        case .compare(let path, let op, .value(let value), _, nil) where path.directColumn != nil:
            return Self.columnCompare(path, op, value)
        case .compare(let path, .in, .values(let values), let options, nil) where path.directColumn != nil:
            if !options.caseInsensitive, !options.diacriticInsensitive, let set = Self.intMembership(path, values) {
                return set
            }
            // One flat OR however long the list (an empty list matches nothing).
            var tests: [ColumnScan.Kernel] = []
            for value in values {
                guard let test = Self.columnCompare(path, .equal, value) else { return nil }
                tests.append(test)
            }
            return .or(tests)
        default:
            guard let realm, let join = semiJoinParts(realm) else { return nil }
            return .intSet(column: join.column, join.targets, matchesNull: join.nilMatches)
        }
    }

    /// Each of `operands` as a kernel; nil when one of them cannot be.
    private static func columnKernels(_ operands: [BoundPredicate], realm: Realm?, depth: Int)
        -> [ColumnScan.Kernel]?
    {
        var kernels: [ColumnScan.Kernel] = []
        kernels.reserveCapacity(operands.count)
        for operand in operands {
            guard let kernel = operand.columnKernel(realm: realm, depth: depth) else { return nil }
            kernels.append(kernel)
        }
        return kernels
    }

    /// Whether an integer column's value is one of `values`, as `membership` compiles it for rows: one hash
    /// lookup per row. Nil for other column types or values.
    private static func intMembership(_ path: BoundPath, _ values: [_StoredValue]) -> ColumnScan.Kernel? {
        guard let (column, info) = path.directColumn, info.type == .int,
            let (set, matchesNull) = integerSet(values)
        else { return nil }
        return .intSet(column: column, set, matchesNull: matchesNull)
    }

    /// `path op value` on a fixed-width column, as `compare` compiles it for rows.
    private static func columnCompare(_ path: BoundPath, _ op: RQLOperator, _ value: _StoredValue)
        -> ColumnScan.Kernel?
    {
        guard let (column, info) = path.directColumn, info.type != .any else { return nil }
        if case .null = value {
            switch op {
            case .equal: return .null(column: column, isNull: true)
            case .notEqual: return .null(column: column, isNull: false)
            default: return [.less, .lessOrEqual, .greater, .greaterOrEqual].contains(op) ? .constant(false) : nil
            }
        }
        guard let comparison = ColumnScan.Comparison(op) else { return nil }
        switch (info.type, value) {
        case (.int, .int(let constant)):
            return .int(column: column, comparison, constant)
        case (.double, .int), (.double, .double):
            guard let constant = QueryValues.number(value) else { return nil }
            return .double(column: column, comparison, constant)
        case (.int, _), (.float, _):
            guard let constant = QueryValues.number(value), !value.isDecimal else { return nil }
            return .ordered(
                column: column, info.type == .int ? .intAsDouble : .float, comparison, constant, nanUnordered: true)
        case (.double, _):
            guard let constant = QueryValues.number(value), !value.isDecimal else { return nil }
            return .ordered(column: column, .double, comparison, constant, nanUnordered: true)
        case (.date, .date(let date)):
            return .ordered(
                column: column, .double, comparison, date.timeIntervalSinceReferenceDate, nanUnordered: false)
        case (.bool, .bool(let constant)):
            return .int(column: column, comparison, constant ? 1 : 0)
        default:
            return nil
        }
    }

    /// A string condition on a string column, as `compare` compiles it for rows.
    private static func stringCompare(_ path: BoundPath, _ op: RQLOperator, _ text: String, _ options: CompareOptions)
        -> ColumnScan.Kernel?
    {
        guard let (column, info) = path.directColumn, info.type == .string,
            let test = BoundPredicate.stringTest(op, text, options)
        else { return nil }
        let needle = Array(text.utf8)
        if op == .contains, needle.allSatisfy({ $0 < 0x80 }) {
            // ASCII has no diacritics: over ASCII strings only [c] can change the answer.
            let folds = options.caseInsensitive
            let lowered = folds ? needle.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 } : needle
            return .contains(column: column, needle: lowered, folds: folds, test: test)
        }
        return .bytes(column: column, test, nullResult: op == .notEqual)
    }
}

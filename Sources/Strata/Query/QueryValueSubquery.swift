/// `SUBQUERY(scores, $x, $x > 5).@count` over a list or set of values (the typed `($0.scores > 5).count`): the
/// predicate is bound once with `$x` as a placeholder step and, for each element, run with the placeholder
/// replaced by that element's value, so that every condition of the predicate tests the same element.
extension Realm {
    /// How many of the values `elements` satisfy `predicate`, in which `$x` is `.element`.
    func queryCount(_ predicate: BoundPredicate, inValues elements: [_StoredValue]) throws(Realm.Error) -> Int64 {
        var count: Int64 = 0
        for element in elements where try queryMatches(predicate.atElement(element), key: 0, row: nil) {
            count += 1
        }
        return count
    }
}

extension BoundPredicate {
    /// The predicate with each `$x` placeholder standing for `value` (walked without recursion: see
    /// `foldConditions`).
    func atElement(_ value: _StoredValue) -> BoundPredicate {
        foldConditions(
            self, split: { $0.logicalOperands },
            leaf: { (condition) throws(Never) in condition.conditionAtElement(value) },
            combine: { (shape, operands) throws(Never) in BoundPredicate(shape, operands) })
    }

    /// `atElement` for a condition that is not `AND`, `OR` or `NOT`.
    private func conditionAtElement(_ value: _StoredValue) -> BoundPredicate {
        switch self {
        case .constant, .and, .or, .not: self
        case .compare(let path, let op, let operand, let options, let quantifier):
            .compare(
                path.atElement(value), op, operand.atElement(value), options: options, quantifier: quantifier)
        case .between(let path, let low, let high, let quantifier):
            .between(path.atElement(value), low, high, quantifier: quantifier)
        case .text(let path, let search): .text(path.atElement(value), search)
        case .geoWithin(let path, let columns, let region): .geoWithin(path.atElement(value), columns, region)
        }
    }
}

extension BoundOperand {
    func atElement(_ value: _StoredValue) -> BoundOperand {
        if case .path(let path) = self { return .path(path.atElement(value)) }
        return self
    }
}

extension BoundPath {
    /// The path with its `$x` placeholder (its first step, when it has one) standing for `value`.
    func atElement(_ value: _StoredValue) -> BoundPath {
        var path = self
        switch steps.first {
        case .element?: path.steps[0] = .element(value)
        case .arithmetic(let expression)?: path.steps[0] = .arithmetic(expression.atElement(value))
        default: break
        }
        return path
    }
}

extension BoundArithmetic {
    func atElement(_ value: _StoredValue) -> BoundArithmetic {
        switch self {
        case .value: self
        case .path(let path): .path(path.atElement(value))
        case .operation(let op, let left, let right): .operation(op, left.atElement(value), right.atElement(value))
        }
    }
}

import Foundation
import StrataStorage

// The general evaluator: whether one object satisfies a bound predicate (what compiled conditions cannot run).

extension Realm {
    /// Whether object `key` (whose row is `row`) satisfies `predicate`. Recurses into nested conditions up to
    /// `conditionRecursionLimit` levels, and walks deeper ones with an explicit stack.
    func queryMatches(_ predicate: BoundPredicate, key: Int64, row: RowView?, depth: Int = 0) throws(Realm.Error)
        -> Bool
    {
        switch predicate {
        case .and(let operands):
            guard depth < conditionRecursionLimit else { return try deepQueryMatches(predicate, key: key, row: row) }
            for operand in operands where try !queryMatches(operand, key: key, row: row, depth: depth + 1) {
                return false
            }
            return true
        case .or(let operands):
            guard depth < conditionRecursionLimit else { return try deepQueryMatches(predicate, key: key, row: row) }
            for operand in operands where try queryMatches(operand, key: key, row: row, depth: depth + 1) {
                return true
            }
            return false
        case .not(let operand):
            guard depth < conditionRecursionLimit else { return try deepQueryMatches(predicate, key: key, row: row) }
            return try !queryMatches(operand, key: key, row: row, depth: depth + 1)
        default: return try queryMatchesCondition(predicate, key: key, row: row)
        }
    }

    /// `queryMatches` with an explicit stack of the AND, OR and NOT nodes being evaluated (each with the index of
    /// its next operand), short-circuiting as the recursion does.
    private func deepQueryMatches(_ predicate: BoundPredicate, key: Int64, row: RowView?) throws(Realm.Error) -> Bool {
        var frames: [(shape: ConditionShape, operands: [BoundPredicate], next: Int)] = []
        var node = predicate
        while true {
            // Down to a condition (or an empty AND or OR), opening each AND, OR and NOT at its first operand.
            while let (shape, operands) = node.logicalOperands, let first = operands.first {
                frames.append((shape, operands, 1))
                node = first
            }
            var value: Bool
            if let (shape, _) = node.logicalOperands {
                // An empty AND holds, an empty OR does not.
                value = shape == .and
            } else {
                value = try queryMatchesCondition(node, key: key, row: row)
            }
            // Up while the value decides the node or the node has no operand left; else on to its next operand.
            var advanced = false
            while let frame = frames.last {
                let decided: Bool
                switch frame.shape {
                case .not:
                    value = !value
                    decided = true
                case .and: decided = !value || frame.next == frame.operands.count
                case .or: decided = value || frame.next == frame.operands.count
                }
                if decided {
                    frames.removeLast()
                    continue
                }
                node = frame.operands[frame.next]
                frames[frames.count - 1].next += 1
                advanced = true
                break
            }
            if !advanced { return value }
        }
    }

    /// Whether object `key` satisfies a condition that is not `AND`, `OR` or `NOT`.
    @inline(never)
    private func queryMatchesCondition(_ predicate: BoundPredicate, key: Int64, row: RowView?) throws(Realm.Error)
        -> Bool
    {
        switch predicate {
        case .constant(let value): return value
        case .and, .or, .not: return try queryMatches(predicate, key: key, row: row)
        case .text(let path, let search):
            return try queryValues(path, key: key, row: row).contains {
                if case .string(let text) = $0 { search.matches(text) } else { false }
            }
        case .geoWithin(let path, let columns, let region):
            for case .int(let point) in try queryValues(path, key: key, row: row) {
                let type = try withRow(columns.binding, key: point) { row in
                    RowCodec.get(
                        row, column: columns.binding.columns[columns.type],
                        info: columns.binding.table.infos[columns.type])
                }
                guard case .string(let name)? = type else { continue }
                let coordinates = try queryCollectionValues(columns.binding, property: columns.coordinates, key: point)
                    .compactMap(QueryValues.number)
                if let location = GeoPoint(geoJSONType: name, coordinates: coordinates), region.contains(location) {
                    return true
                }
            }
            return false
        case .between(let path, let low, let high, let quantifier):
            let values = try queryValues(path, key: key, row: row)
            return QueryValues.quantify(quantifier, values) { value in
                guard let lower = QueryValues.order(value, low), let upper = QueryValues.order(value, high) else {
                    return false
                }
                return lower >= 0 && upper <= 0
            }
        case .compare(let path, let op, let right, let options, let quantifier):
            let values = try queryValues(path, key: key, row: row)
            let targets: [_StoredValue]
            switch right {
            case .value(let value): targets = [value]
            case .values(let list): targets = list
            case .path(let other): targets = try queryValues(other, key: key, row: row)
            }
            return QueryValues.quantify(quantifier, values) { value in
                if op == .in { return targets.contains { QueryValues.compare(value, .equal, $0, options) } }
                if case .path = right {
                    return targets.contains { QueryValues.compare(value, op, $0, options) }
                }
                return QueryValues.compare(value, op, targets[0], options)
            }
        }
    }
}

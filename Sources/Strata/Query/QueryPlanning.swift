import Foundation
import StrataStorage

// Planning: which objects an index allows before any row is read (primary key, secondary index, full-text index).

extension ResultsQuery {
    /// The objects an equality or `IN` on a primary key or indexed property, or a `TEXT` search on a full-text
    /// indexed one (alone, within `AND`, or on both sides of `OR`) allows; nil when the condition cannot use an
    /// index.
    static func indexCandidates(_ predicate: BoundPredicate, realm: Realm, binding: TableBinding) throws(Realm.Error)
        -> Candidates?
    {
        // Walked without recursion (see `foldConditions`); NOT uses no index.
        try foldConditions(
            predicate,
            split: { (node) -> (ConditionShape, [BoundPredicate])? in
                guard let (shape, operands) = node.logicalOperands, shape != .not else { return nil }
                return (shape, operands)
            },
            leaf: { (condition) throws(Realm.Error) in
                try conditionCandidates(condition, realm: realm, binding: binding)
            },
            combine: { (shape, operands: [Candidates?]) throws(Realm.Error) -> Candidates? in
                switch shape {
                case .and:
                    // The operands an index answers narrow the objects down; exact only if it answers all of them.
                    let found = operands.compactMap { $0 }
                    guard !found.isEmpty else { return nil }
                    return Candidates(
                        keys: found.count == 1 ? found[0].keys : SortedKeys.intersection(found.map(\.keys)),
                        exact: found.count == operands.count && found.allSatisfy(\.exact))
                case .or:
                    var lists: [[Int64]] = []
                    var exact = true
                    for candidates in operands {
                        guard let candidates else { return nil }
                        lists.append(candidates.keys)
                        exact = exact && candidates.exact
                    }
                    let keys =
                        lists.count == 2
                        ? SortedKeys.union(lists[0], lists[1]) : SortedKeys.normalized(Array(lists.joined()))
                    return Candidates(keys: keys, exact: exact)
                case .not:
                    return nil
                }
            })
    }

    /// `indexCandidates` for a condition that is not `AND` or `OR`.
    private static func conditionCandidates(_ predicate: BoundPredicate, realm: Realm, binding: TableBinding)
        throws(Realm.Error) -> Candidates?
    {
        switch predicate {
        case .and, .or:
            return try indexCandidates(predicate, realm: realm, binding: binding)
        case .text(let path, let search):
            guard path.steps.count == 1, case .property(let owner, let property) = path.steps[0], owner === binding,
                binding.table.schema.properties[property].isFullTextIndexed,
                let keys = try realm.fullTextKeys(binding, property: property, search: search)
            else { return nil }
            // Words longer than the index keeps are cut: two such words could share an entry.
            let exact = (search.required + search.excluded).allSatisfy { $0.word.count < FullText.maximumWordLength }
            return Candidates(keys: keys, exact: exact)
        case .compare(let path, let op, let right, let options, let quantifier):
            guard op == .equal || op == .in, quantifier == nil, !options.caseInsensitive,
                !options.diacriticInsensitive, path.steps.count == 1,
                case .property(let owner, let property) = path.steps[0], owner === binding,
                binding.table.infos[property].collection == nil
            else { return nil }
            let schema = binding.table.schema.properties[property]
            guard schema.isPrimary || (schema.isIndexed && !schema.isFullTextIndexed) else { return nil }
            let values: [_StoredValue]
            switch right {
            case .value(let value): values = [value]
            case .values(let list): values = list
            case .path: return nil
            }
            guard values.allSatisfy({ storedLike($0, schema.type) }) else { return nil }
            var keys: [Int64] = []
            var exact = true
            for value in values {
                keys += try realm.indexedKeys(binding, property: property, value: value)
                // Secondary index entries cut long strings: such a value's candidates need checking.
                if !schema.isPrimary, case .string(let text) = value, text.utf8.count >= 200 { exact = false }
            }
            return Candidates(keys: values.count > 1 ? SortedKeys.normalized(keys) : keys, exact: exact)
        default:
            return nil
        }
    }

    /// Whether `value` is stored as it is for a property of `type` (so its index encoding matches).
    private static func storedLike(_ value: _StoredValue, _ type: PropertyType) -> Bool {
        switch (value, type) {
        case (.null, _), (.int, .int), (.string, .string), (.uuid, .uuid), (.objectId, .objectId), (.bool, .bool),
            (.date, .date):
            true
        default: false
        }
    }
}

/// Where the objects of results over a collection come from, so that the results can be made again in another
/// Realm of the same file (frozen, thawed, or resolved from a `ThreadSafeReference`).
enum BaseSource {
    /// The objects of a list or set of links.
    case collection(ManagedObject, property: Int)
    /// The objects linking to an object through a `LinkingObjects` property.
    case backlinks(ManagedObject, property: Int)

    /// The base keys and source in `realm`; nil when the owning object does not exist there.
    func rebound(to realm: Realm) -> (keys: () throws(Realm.Error) -> [Int64], source: BaseSource)? {
        switch self {
        case .collection(let owner, let property):
            guard let moved = owner.rebound(to: realm) else { return nil }
            return (
                { () throws(Realm.Error) in try realm.objectKeys(inCollection: moved, property: property) },
                .collection(moved, property: property)
            )
        case .backlinks(let owner, let property):
            guard let moved = owner.rebound(to: realm) else { return nil }
            return (
                { () throws(Realm.Error) in realm.backlinkKeys(moved, property: property) },
                .backlinks(moved, property: property)
            )
        }
    }
}

extension Realm {
    /// This Realm's binding of the class `binding` (another Realm's binding) describes.
    func matchingBinding(_ binding: TableBinding) throws(Realm.Error) -> TableBinding {
        if binding.table.type == DynamicObject.self { return try dynamicBinding(binding.className) }
        return try self.binding(for: binding.table.type)
    }
}

extension ManagedObject {
    /// The same stored object as read by `target`; nil when it does not exist in `target`'s version.
    func rebound(to target: Realm) -> ManagedObject? {
        if target === realm { return self }
        guard let binding = try? target.matchingBinding(binding) else { return nil }
        let moved = ManagedObject(realm: target, binding: binding, key: key)
        return moved.exists ? moved : nil
    }
}

extension ResultsQuery {
    /// The same query over `realm` (a Realm of the same file); nil when a collection it starts from does not
    /// exist there, or when it cannot be moved (results of a section).
    func rebound(to realm: Realm) -> ResultsQuery? {
        var newBase: (() throws(Realm.Error) -> [Int64])?
        var newSource: BaseSource?
        if base != nil {
            guard let rebase, let moved = rebase.rebound(to: realm) else { return nil }
            newBase = moved.keys
            newSource = moved.source
        }
        let map = { (binding: TableBinding) throws(Realm.Error) -> TableBinding in
            try realm.matchingBinding(binding)
        }
        do {
            let moved = try stages.map { (stage) throws(Realm.Error) -> Stage in
                switch stage {
                case .filter(let predicate): .filter(try predicate.rebound(map))
                case .sort(let paths):
                    .sort(
                        try paths.map { (entry) throws(Realm.Error) in (try entry.path.rebound(map), entry.ascending) })
                case .distinct(let paths):
                    .distinct(try paths.map { (path) throws(Realm.Error) in try path.rebound(map) })
                case .limit(let count): .limit(count)
                }
            }
            return ResultsQuery(stages: moved, base: newBase, rebase: newSource)
        } catch {
            return nil
        }
    }
}

/// Maps a binding of one Realm to the same class's binding in another.
typealias BindingMap = (TableBinding) throws(Realm.Error) -> TableBinding

extension BoundPredicate {
    /// The predicate with every class binding replaced by `map`'s (walked without recursion: see
    /// `foldConditions`).
    func rebound(_ map: BindingMap) throws(Realm.Error) -> BoundPredicate {
        try foldConditions(
            self, split: { $0.logicalOperands },
            leaf: { (condition) throws(Realm.Error) in try condition.reboundCondition(map) },
            combine: { (shape, operands) throws(Realm.Error) in BoundPredicate(shape, operands) })
    }

    /// `rebound` for a condition that is not `AND`, `OR` or `NOT`.
    private func reboundCondition(_ map: BindingMap) throws(Realm.Error) -> BoundPredicate {
        switch self {
        case .constant: self
        case .and, .or, .not: try rebound(map)
        case .compare(let path, let op, let operand, let options, let quantifier):
            .compare(
                try path.rebound(map), op, try operand.rebound(map), options: options, quantifier: quantifier)
        case .between(let path, let low, let high, let quantifier):
            .between(try path.rebound(map), low, high, quantifier: quantifier)
        case .text(let path, let search): .text(try path.rebound(map), search)
        case .geoWithin(let path, let columns, let region):
            .geoWithin(
                try path.rebound(map),
                GeoPointColumns(
                    binding: try map(columns.binding), type: columns.type, coordinates: columns.coordinates),
                region)
        }
    }
}

extension BoundOperand {
    func rebound(_ map: BindingMap) throws(Realm.Error) -> BoundOperand {
        if case .path(let path) = self { return .path(try path.rebound(map)) }
        return self
    }
}

extension BoundPath {
    /// The path with every class binding replaced by `map`'s.
    func rebound(_ map: BindingMap) throws(Realm.Error) -> BoundPath {
        var moved = self
        moved.steps = try steps.map { (step) throws(Realm.Error) -> Step in
            switch step {
            case .property(let binding, let index): .property(try map(binding), index)
            case .backlinks(let origins):
                .backlinks(
                    try origins.map { (origin) throws(Realm.Error) in
                        (try map(origin.origin), origin.property)
                    })
            case .subqueryCount(let predicate): .subqueryCount(try predicate.rebound(map))
            case .arithmetic(let expression): .arithmetic(try expression.rebound(map))
            case .count, .aggregate, .keys, .mapValue, .type, .mixedElement, .element: step
            }
        }
        return moved
    }
}

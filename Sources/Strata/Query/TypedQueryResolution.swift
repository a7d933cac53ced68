import Foundation

// Resolving a type-safe query (`where { $0.age > 3 }`): key paths recorded on accessors become property names,
// and the query tree becomes the `RQLPredicate` that RQL text parses to (bound from there on the same way).

/// Notes which properties a key path reads, in order, by reading it on recording accessors.
@usableFromInline
final class KeyPathRecorder {
    @usableFromInline var steps: [(binding: TableBinding, property: Int)] = []
}

extension Realm {
    /// The persisted names along `keyPath`: one property (`\Dog.name`), or a path through to-one links,
    /// embedded objects and collections of objects (`\Person.address?.city`, `["address", "city"]`). A key path
    /// over a projection (`\PersonProjection.homeCity`) names the root object's path it projects.
    func propertyPath(of keyPath: AnyKeyPath, query: String) throws(Realm.Error) -> [String] {
        let rootType = type(of: keyPath).rootType
        let recorder = KeyPathRecorder()
        let className: String
        if let projection = rootType as? any ProjectionObservable.Type {
            className = try recordProjection(projection, keyPath: keyPath, recorder: recorder)
        } else if let root = rootType as? ObjectBase.Type {
            let binding = try binding(for: root)
            className = binding.className
            _ = recordingAccessor(binding, recorder: recorder)[keyPath: keyPath]
        } else {
            throw Realm.Error.invalidQuery(
                query: query, position: 0,
                reason:
                    "\(rootType) is not a model type or projection: only their persisted properties can be queried "
                    + "(query a custom-persisted value through .persistableValue)")
        }
        return try recordedPath(recorder, keyPath: keyPath, className: className, query: query)
    }

    /// ``propertyPath(of:query:)`` joined with dots (`"address.city"`).
    func propertyName(of keyPath: AnyKeyPath, query: String) throws(Realm.Error) -> String {
        try propertyPath(of: keyPath, query: query).joined(separator: ".")
    }

    /// An accessor of `binding`'s class whose reads only note, in `recorder`, which properties they read.
    func recordingAccessor(_ binding: TableBinding, recorder: KeyPathRecorder) -> ObjectBase {
        let managed = ManagedObject(realm: self, binding: binding, key: -1)
        managed.recorder = recorder
        return accessor(for: managed)
    }

    /// Reads `keyPath` on a projection of a recording accessor; the root class's name.
    private func recordProjection<P: ProjectionObservable>(
        _ type: P.Type, keyPath: AnyKeyPath, recorder: KeyPathRecorder
    ) throws(Realm.Error) -> String {
        let binding = try binding(for: P.Root.self)
        guard let root = recordingAccessor(binding, recorder: recorder) as? P.Root else {
            fatalError("\(binding.className) accessor is not a \(P.Root.self)")
        }
        _ = P(projecting: root)[keyPath: keyPath]
        return binding.className
    }

    /// The names `recorder` noted, checked to form one path: each step after the first is a property of the
    /// class the step before links to.
    private func recordedPath(_ recorder: KeyPathRecorder, keyPath: AnyKeyPath, className: String, query: String)
        throws(Realm.Error) -> [String]
    {
        let steps = recorder.steps
        var names: [String] = []
        var expected: String? = className
        for step in steps {
            let table = step.binding.table
            guard step.binding.className == expected else {
                throw Realm.Error.invalidQuery(
                    query: query, position: 0,
                    reason:
                        "\(keyPath) reads more than one property of \(className) (computed properties cannot be used; use a persisted property or a path through links)"
                )
            }
            names.append(table.schema.properties[step.property].columnName)
            let info = table.infos[step.property]
            expected = info.type == .object ? info.objectType.flatMap { try? binding(for: $0).className } : nil
        }
        guard !names.isEmpty else {
            throw Realm.Error.invalidQuery(
                query: query, position: 0,
                reason:
                    "\(keyPath) is not a persisted property of \(className) (computed and ignored properties cannot be queried)"
            )
        }
        return names
    }

    /// `node` as a parsed predicate with its values as arguments. Chains of one operator (`a || b || c`, however
    /// they were grouped) become one flat node; the tree is walked with an explicit stack, so a query built from
    /// any number of operators resolves without recursion, and one nesting deeper than
    /// `QueryLimits.maximumDepth` levels, or with more than `QueryLimits.maximumTerms` conditions, is an error.
    func resolve(_ node: QueryNode, arguments: inout [Any?], text: String, subquery: SubqueryScope? = nil)
        throws(Realm.Error) -> RQLPredicate
    {
        enum Step {
            /// Resolve this node, `depth` levels deep.
            case visit(QueryNode, depth: Int)
            /// Combine the last `count` resolved predicates.
            case combine(ConditionShape, count: Int)
        }
        var steps: [Step] = [.visit(node, depth: 0)]
        var resolved: [RQLPredicate] = []
        var conditions = 0
        while let step = steps.popLast() {
            switch step {
            case .combine(let op, let count):
                let operands = Array(resolved.suffix(count))
                resolved.removeLast(count)
                switch op {
                case .and: resolved.append(.all(operands))
                case .or: resolved.append(.any(operands))
                case .not: resolved.append(.not(operands[0]))
                }
            case .visit(let node, let depth):
                guard case .logic(let logic) = node.predicate else {
                    conditions += 1
                    guard conditions <= QueryLimits.maximumTerms else {
                        throw Realm.Error.invalidQuery(query: text, position: 0, reason: QueryLimits.termsReason)
                    }
                    resolved.append(try resolveCondition(node, arguments: &arguments, text: text, subquery: subquery))
                    continue
                }
                guard depth < QueryLimits.maximumDepth else {
                    throw Realm.Error.invalidQuery(query: text, position: 0, reason: QueryLimits.depthReason)
                }
                let operands = logic.op == .not ? logic.operands : Self.chain(logic)
                steps.append(.combine(logic.op, count: operands.count))
                // Pushed last to first, so that they resolve (and number their arguments) left to right.
                for operand in operands.reversed() { steps.append(.visit(operand, depth: depth + 1)) }
            }
        }
        return resolved[0]
    }

    /// The operands of a chain of `logic`'s operator, left to right: operands that are the same operator are
    /// opened up in turn (iteratively: a chain may be thousands of nodes deep).
    static func chain(_ logic: QueryLogic) -> [QueryNode] {
        var operands: [QueryNode] = []
        var pending = logic.operands.reversed() as [QueryNode]
        while let node = pending.popLast() {
            if case .logic(let inner) = node.predicate, inner.op == logic.op {
                pending += inner.operands.reversed()
            } else {
                operands.append(node)
            }
        }
        return operands
    }

    /// A condition of a type-safe query (a comparison, `BETWEEN`, `TEXT`, `GEOWITHIN`), with its values as
    /// arguments.
    private func resolveCondition(
        _ node: QueryNode, arguments: inout [Any?], text: String, subquery: SubqueryScope?
    ) throws(Realm.Error) -> RQLPredicate {
        func names(_ components: ArraySlice<QueryNode.Component>) throws(Realm.Error) -> [String] {
            var names: [String] = []
            for component in components {
                switch component {
                case .keyPath(let keyPath): names.append(contentsOf: try propertyPath(of: keyPath, query: text))
                case .operation(let name): names.append(name)
                case .elements: break
                }
            }
            return names
        }
        func operand(_ node: QueryNode) throws(Realm.Error) -> RQLOperand {
            switch node {
            case .path(let components):
                guard let subquery else { return .keyPath(try names(components[...]), position: 0) }
                // Inside `(…).count`: the path up to the collection's elements names the collection, the rest is
                // read on each element.
                guard let split = components.firstIndex(where: { if case .elements = $0 { true } else { false } })
                else {
                    throw Realm.Error.invalidQuery(
                        query: text, position: 0, reason: SubqueryScope.notOnElementsReason(try names(components[...])))
                }
                let collection = try names(components[..<split])
                try subquery.enter(collection, query: text)
                return .keyPath([subquery.variable] + (try names(components[(split + 1)...])), position: 0)
            case .subqueryCount(let condition):
                guard subquery == nil else {
                    throw Realm.Error.invalidQuery(
                        query: text, position: 0, reason: "a (…).count subquery cannot be nested in another")
                }
                let scope = SubqueryScope()
                let predicate = try resolve(condition, arguments: &arguments, text: text, subquery: scope)
                guard let collection = scope.collection else {
                    throw Realm.Error.invalidQuery(
                        query: text, position: 0, reason: SubqueryScope.notOnElementsReason([]))
                }
                return .subquery(collection: collection, variable: scope.variable, predicate: predicate, position: 0)
            case .value(let value):
                arguments.append(value)
                return .argument(arguments.count - 1, position: 0)
            case .values(let values):
                arguments.append(values)
                return .argument(arguments.count - 1, position: 0)
            default:
                throw Realm.Error.invalidQuery(query: text, position: 0, reason: "a condition cannot be compared")
            }
        }
        switch node.predicate {
        case .text(let path, let words):
            return .text(try operand(path), try operand(.value(words)), position: 0)
        case .geoWithin(let path, let shape):
            return .geoWithin(try operand(path), try operand(.value(shape)), position: 0)
        case .between(let path, let low, let high):
            let left = try operand(path)
            return .between(
                left, low: try operand(.value(low)), high: try operand(.value(high)), quantifier: nil, position: 0)
        case .compare(let left, let op, let right, let options):
            return .compare(
                RQLComparison(
                    left: try operand(left), op: op, right: try operand(right),
                    caseInsensitive: options.contains(.caseInsensitive),
                    diacriticInsensitive: options.contains(.diacriticInsensitive), position: 0))
        default:
            throw Realm.Error.invalidQuery(query: text, position: 0, reason: "expected a condition")
        }
    }
}

/// The collection a type-safe subquery count (`($0.dogs.age > 5).count`) runs over: the one collection of objects
/// all its conditions are about.
final class SubqueryScope {
    /// The variable standing for each element in the resolved `SUBQUERY(collection, $element, …)`.
    let variable = "$element"
    /// The collection's path from the queried class, once a condition named it.
    private(set) var collection: [String]?

    /// Notes that a condition reads the elements of `path`; an error when another one read another collection.
    func enter(_ path: [String], query: String) throws(Realm.Error) {
        guard let collection else {
            collection = path
            return
        }
        guard collection == path else {
            throw Realm.Error.invalidQuery(
                query: query, position: 0,
                reason:
                    "the conditions of a (…).count subquery must all be on one collection; they read both "
                    + "\(collection.joined(separator: ".")) and \(path.joined(separator: "."))")
        }
    }

    /// Why a condition in `(…).count` that does not read a collection's elements (at `path`) is refused.
    static func notOnElementsReason(_ path: [String]) -> String {
        let subject = path.isEmpty ? "the condition" : path.joined(separator: ".")
        return
            "(…).count counts the objects of a collection that satisfy its condition: \(subject) is not a property "
            + "of the objects of a collection (write its conditions as $0.dogs.age > 5)"
    }
}

extension Results {
    /// The elements matching `query`, built over key paths of `Element` (a model class or a projection).
    func narrowed(where query: (Query<Element>) -> Query<Bool>) throws(Realm.Error) -> Results<Element> {
        owner.checkThread()
        let node = query(Query<Element>(.path([]))).node
        let text = "where { … } on \(binding.className)"
        var arguments: [Any?] = []
        let predicate = try owner.resolve(node, arguments: &arguments, text: text)
        return with([.filter(try queryBinder(text, arguments).bind(predicate))])
    }

    /// ``narrowed(where:)``, trapping with the error's description (for `where`, which cannot throw).
    func narrowedOrTrap(where query: (Query<Element>) -> Query<Bool>) -> Results<Element> {
        do {
            return try narrowed(where: query)
        } catch {
            fatalError("\(error)")
        }
    }
}

extension Results where Element: ObjectBase {
    /// The objects matching the type-safe query `query`.
    ///
    /// ```swift
    /// realm.objects(Person.self).where { $0.age >= 18 && $0.dogs.count > 0 }
    /// ```
    ///
    /// A query the engine cannot run (a computed property, a comparison with a value of a custom type persisted
    /// as an embedded object) traps with the reason; `checkedWhere(_:)` throws it instead.
    public func `where`(_ query: (Query<Element>) -> Query<Bool>) -> Results<Element> {
        narrowedOrTrap(where: query)
    }

    /// `where(_:)`, throwing ``RealmError/invalidQuery(query:position:reason:)`` for a query the engine cannot
    /// run instead of trapping.
    ///
    /// ```swift
    /// do {
    ///     let near = try realm.objects(Club.self).checkedWhere { $0.location.persistableValue.latitude > 50 }
    /// } catch {
    ///     print(error)  // e.g. a key path through a computed property
    /// }
    /// ```
    public func checkedWhere(_ query: (Query<Element>) -> Query<Bool>) throws(Realm.Error) -> Results<Element> {
        try owner.throwIfDamaged()
        return try narrowed(where: query)
    }
}

extension Results where Element: ProjectionObservable {
    /// The projections matching the type-safe query `query`, over the projection's properties (each stands for
    /// the root key path it projects).
    ///
    /// ```swift
    /// realm.objects(PersonProjection.self).where { $0.homeCity == "Lisbon" }
    /// ```
    public func `where`(_ query: (Query<Element>) -> Query<Bool>) -> Results<Element> {
        narrowedOrTrap(where: query)
    }

    /// `where(_:)`, throwing ``RealmError/invalidQuery(query:position:reason:)`` for a query the engine cannot
    /// run instead of trapping.
    public func checkedWhere(_ query: (Query<Element>) -> Query<Bool>) throws(Realm.Error) -> Results<Element> {
        try owner.throwIfDamaged()
        return try narrowed(where: query)
    }

    /// The projections ordered by the projected property at `keyPath`, of any ``SortableType`` as in the SDK.
    public func sorted<V: SortableType>(by keyPath: KeyPath<Element, V>, ascending: Bool = true) -> Results<Element> {
        owner.checkThread()
        do {
            let name = try owner.propertyName(of: keyPath, query: "sorted(by: \(keyPath))")
            return sorted(byKeyPath: name, ascending: ascending)
        } catch {
            fatalError("\(error)")
        }
    }
}

public import Foundation
import StrataStorage

// `Results`' query API: `filter`, `where`, `sorted`, `distinct`, and finding an object's position.

extension Results {
    /// The objects that match `predicate`, a Realm Query Language query (`"age > $0 AND name BEGINSWITH[c] 'a'"`),
    /// with `$0`, `$1`… taken from `args`. A trailing `SORT(…)`, `DISTINCT(…)` or `LIMIT(n)` applies too.
    /// Traps with the query and the offending position on a malformed query; use ``checkedFilter(_:_:)`` to
    /// handle the error instead.
    public func filter(_ predicate: String, _ args: Any...) -> Results<Element> {
        do {
            return try narrowed(predicate, args)
        } catch {
            fatalError("\(error)")
        }
    }

    /// ``filter(_:_:)``, throwing ``RealmError/invalidQuery(query:position:reason:)`` for a malformed query, an
    /// unknown property or a value of the wrong type.
    public func checkedFilter(_ predicate: String, _ args: Any...) throws -> Results<Element> {
        try owner.throwIfDamaged()
        return try narrowed(predicate, args)
    }

    func narrowed(_ text: String, _ args: [Any]) throws(Realm.Error) -> Results<Element> {
        if let values { return Results(values: try values.narrowed(text, args)) }
        owner.checkThread()
        let parsed = try RQLParser.parse(text, arguments: args)
        let binder = queryBinder(text, args)
        var stages: [ResultsQuery.Stage] = [.filter(try binder.bind(parsed.predicate))]
        // SORT, DISTINCT and LIMIT apply in the order they are written (the Realm SDK's rule): `LIMIT(5)
        // SORT(age ASC)` sorts the first five, `SORT(age DESC) LIMIT(5)` keeps the five oldest.
        for clause in parsed.ordering {
            switch clause {
            case .sort(let keys):
                stages.append(
                    .sort(
                        try keys.map { (entry) throws(Realm.Error) in
                            (try sortPath(entry.keyPath, binder: binder), entry.ascending)
                        }))
            case .distinct(let paths):
                stages.append(
                    .distinct(try paths.map { (path) throws(Realm.Error) in try sortPath(path, binder: binder) }))
            case .limit(let limit):
                stages.append(.limit(limit))
            }
        }
        return with(stages)
    }

    func with(_ stages: [ResultsQuery.Stage]) -> Results<Element> {
        Results(realm: owner, binding: binding, query: query?.appending(stages) ?? ResultsQuery(stages: stages))
    }

    /// A single-valued key path for sorting and distinct.
    func sortPath(_ text: String, binder: QueryBinder) throws(Realm.Error) -> BoundPath {
        let path = try binder.bindPath(text.split(separator: ".").map(String.init), at: 0)
        guard !path.isMultiple else {
            throw binder.failure("\(path.text) passes through a collection; sort and distinct need one value", at: 0)
        }
        return path
    }

    func binder(_ text: String) -> QueryBinder { queryBinder(text, []) }

    /// A binder for `text` over the elements' class; for results of projections, the projected names stand for
    /// the root paths they project.
    func queryBinder(_ text: String, _ arguments: [Any?]) -> QueryBinder {
        var binder = QueryBinder(realm: owner, root: binding, query: text, arguments: arguments)
        if let projection = Element.self as? any ProjectionObservable.Type {
            binder.aliases = owner.projectionAliases(projection)
        }
        return binder
    }

    /// The objects ordered by `keyPath` (a property, or a path through to-one links). Stable: objects with equal
    /// values keep their order. Nil sorts first ascending; strings compare by Unicode scalar values.
    public func sorted(byKeyPath keyPath: String, ascending: Bool = true) -> Results<Element> {
        sorted(by: [SortDescriptor(keyPath: keyPath, ascending: ascending)])
    }

    /// The objects ordered by each descriptor in turn.
    public func sorted<S: Sequence>(by descriptors: S) -> Results<Element> where S.Element == SortDescriptor {
        do {
            if let values { return Results(values: try values.sorted(by: Array(descriptors))) }
            owner.checkThread()
            let paths = try descriptors.map { (descriptor) throws(Realm.Error) in
                let name =
                    try descriptor.swiftKeyPath.map { (box) throws(Realm.Error) in
                        try owner.propertyName(of: box.keyPath, query: "sorted(by: \(descriptor.keyPath))")
                    } ?? descriptor.keyPath
                return (try sortPath(name, binder: binder(name)), descriptor.ascending)
            }
            return with([.sort(paths)])
        } catch {
            fatalError("\(error)")
        }
    }

    /// The first object for each distinct combination of values at `keyPaths`, in the current order.
    public func distinct<S: Sequence>(by keyPaths: S) -> Results<Element> where S.Element == String {
        owner.checkThread()
        do {
            let paths = try keyPaths.map { (path) throws(Realm.Error) in try sortPath(path, binder: binder(path)) }
            return with([.distinct(paths)])
        } catch {
            fatalError("\(error)")
        }
    }

    /// The objects' keys in order and, when they were read in one pass, their rows (every object of the class
    /// when there is no query: one walk over the rows).
    func everyMatch() throws(Realm.Error) -> (keys: [Int64], rows: [StableValue]?) {
        try (query ?? ResultsQuery(stages: [])).matches(realm: owner, binding: binding)
    }

    /// The position of the first object matching `predicate`, or nil.
    public func index(matching predicate: String, _ args: Any...) -> Int? { firstIndex(matching: predicate, args) }

    /// The position of the first object matching `predicate` with arguments `args`, or nil.
    func firstIndex(matching predicate: String, _ args: [Any]) -> Int? {
        owner.checkThread()
        do {
            let parsed = try RQLParser.parse(predicate, arguments: args)
            let bound = try queryBinder(predicate, args).bind(parsed.predicate)
            let (keys, rows) = try everyMatch()
            for (position, key) in keys.enumerated() {
                let matches: Bool?
                if let rows {
                    matches = try owner.storage {
                        try owner.queryMatches(bound, key: key, row: try RowView(rows[position].bytes))
                    }
                } else {
                    matches = try owner.withRow(binding, key: key) { row in
                        try owner.queryMatches(bound, key: key, row: row)
                    }
                }
                if matches == true { return position }
            }
            return nil
        } catch {
            return owner.survive(error, "\(error)", returning: nil)
        }
    }

    /// The objects at `indexes`, in order.
    public func objects(at indexes: IndexSet) -> [Element] { indexes.map { self[$0] } }
}

extension Results where Element: ObjectBase {
    /// The position of the first object matching a type-safe query, or nil.
    public func index(matching query: (Query<Element>) -> Query<Bool>) -> Int? {
        self.where(query).first.flatMap { index(of: $0) }
    }

    /// The position of `object`, or nil if it is not in the results.
    public func index(of object: Element) -> Int? {
        guard let managed = object.managed, managed.realm === owner, managed.table.className == binding.className
        else { return nil }
        do {
            return try everyMatch().keys.firstIndex(of: managed.key)
        } catch {
            return owner.survive(error, "\(error)", returning: nil)
        }
    }
}

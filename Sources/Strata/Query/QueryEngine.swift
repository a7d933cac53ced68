import Foundation
import StrataStorage

/// A key path resolved against the schema: each step a property of a known class, or an `@` operator.
struct BoundPath {
    enum Step {
        /// Property `index` of `binding`'s class (a value, a to-one link, or a collection).
        case property(TableBinding, Int)
        /// `@count` / `@size`: elements of the collection before it, or bytes of a string or data.
        case count
        /// `@sum`, `@avg`, `@min`, `@max` over the values before it.
        case aggregate(String)
        /// `@keys` of the map before it.
        case keys
        /// `map['key']`: the value at this key of the map before it (nil when the key is absent).
        case mapValue(String)
        /// The objects linking to the object before it through any of these (origin class, link property) pairs:
        /// a `LinkingObjects` property, `@links.Class.property`, or (all of them) `@links`.
        case backlinks([(origin: TableBinding, property: Int)])
        /// `SUBQUERY(…).@count`: how many objects (or values) of the collection before it satisfy the predicate.
        case subqueryCount(BoundPredicate)
        /// `$x` in `SUBQUERY(scores, $x, $x > 5)` over a list or set of values: the element being tested (the only
        /// step of its path); `.null` as bound, each element's value while it is counted (see `atElement`).
        case element(_StoredValue)
        /// `@type`: the name of each value's type.
        case type
        /// `extra[0]`, `extra['key']`, `extra[SIZE]`, …: into the nested collection of each mixed value.
        case mixedElement(MixedSubscript)
        /// `age * 2`: the value of an arithmetic expression over the object (the only step of its path).
        case arithmetic(BoundArithmetic)
    }

    var steps: [Step]
    /// The type the path produces and whether it produces several values (it passes through a collection).
    var type: PropertyType
    var isOptional: Bool
    var isMultiple: Bool
    var objectClassName: String?
    /// `Class.property.property`, for messages.
    var text: String
    /// The column of a one-step path over a plain value: read straight from the row.
    var directColumn: (column: Int, info: _PropertyInfo)?
}

extension BoundPath.Step {
    /// Whether the step produces the objects of a collection: a list, set or map of links, or backlinks.
    var isObjectCollection: Bool {
        switch self {
        case .property(let binding, let index):
            binding.table.infos[index].collection != nil && binding.table.infos[index].type == .object
        case .backlinks: true
        default: false
        }
    }
}

extension BoundPath.Step {
    /// Whether the step reads from objects (so a link before it is followed rather than produced as a value).
    var followsObjects: Bool {
        switch self {
        case .property, .backlinks: true
        default: false
        }
    }
}

extension RQLOperand {
    /// Whether the operand names a property (a key path, a SUBQUERY count, or an expression reading one) rather
    /// than a value.
    var isPath: Bool {
        readsProperty
    }
}

/// A predicate bound to a class, ready to run against rows.
indirect enum BoundPredicate {
    case constant(Bool)
    /// Every operand holds (a flat chain: see `RQLPredicate.and`).
    case and([BoundPredicate])
    /// At least one operand holds.
    case or([BoundPredicate])
    case not(BoundPredicate)
    case compare(BoundPath, RQLOperator, BoundOperand, options: CompareOptions, quantifier: RQLQuantifier?)
    case between(BoundPath, _StoredValue, _StoredValue, quantifier: RQLQuantifier?)
    /// `TEXT`: the string (any of them, through a collection) satisfies the full-text search.
    case text(BoundPath, FullText.Search)
    /// `GEOWITHIN`: the GeoJSON point (any of them, through a collection) lies in the region.
    case geoWithin(BoundPath, GeoPointColumns, GeoRegion)
}

/// Where a GeoJSON-style embedded point keeps its `type` and `coordinates` ([longitude, latitude]).
struct GeoPointColumns {
    let binding: TableBinding
    let type: Int
    let coordinates: Int
}

enum BoundOperand {
    case value(_StoredValue)
    case values([_StoredValue])
    case path(BoundPath)
}

struct CompareOptions {
    var caseInsensitive = false
    var diacriticInsensitive = false
}

/// An `Optional` seen through `Any`: query arguments are taken as `Any`, where a nil `String?` is not `nil`.
protocol OptionalQueryArgument {
    /// The wrapped value, or nil.
    var wrappedQueryArgument: Any? { get }
}

extension Optional: OptionalQueryArgument {
    var wrappedQueryArgument: Any? { map { $0 as Any } }
}

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

    /// `location GEOWITHIN shape`.
    private func bindGeoWithin(_ operand: RQLOperand, _ shapeOperand: RQLOperand, at position: Int) throws(Realm.Error)
        -> BoundPredicate
    {
        guard let path = try bindPathOperand(operand), path.type == .object, let className = path.objectClassName
        else {
            throw failure("GEOWITHIN needs an embedded point (type and coordinates) on its left", at: position)
        }
        let binding = try realm.bindingForQuery(className)
        let properties = binding.table.schema.properties
        guard let type = binding.table.propertyIndex(named: "type"), properties[type].type == .string,
            binding.table.infos[type].collection == nil,
            let coordinates = binding.table.propertyIndex(named: "coordinates"),
            properties[coordinates].type == .double,
            binding.table.infos[coordinates].collection == .list
        else {
            throw failure(
                "GEOWITHIN needs a GeoJSON point: \(className) must have type: String and coordinates: List<Double>",
                at: position)
        }
        let shape: any GeoShape
        switch shapeOperand {
        case .argument(let number, let at):
            guard number < arguments.count else {
                throw failure("$\(number) has no argument (\(arguments.count) given)", at: at)
            }
            guard let argument = arguments[number] as? any GeoShape else {
                throw failure("GEOWITHIN needs a GeoBox, GeoCircle or GeoPolygon argument", at: at)
            }
            shape = argument
        case .shape(let literal, let at):
            guard let written = Self.shape(literal) else {
                throw failure("the shape's coordinates are out of range or its rings are not closed", at: at)
            }
            shape = written
        default:
            throw failure(
                "GEOWITHIN needs a shape: geoBox, geoCircle, geoPolygon or an argument", at: shapeOperand.position)
        }
        let region: GeoRegion
        do {
            region = try shape.geoRegion()
        } catch {
            throw failure("invalid shape \(shape): \(error)", at: shapeOperand.position)
        }
        return .geoWithin(path, GeoPointColumns(binding: binding, type: type, coordinates: coordinates), region)
    }

    /// A shape written in the query (coordinates as [longitude, latitude]).
    private static func shape(_ literal: GeoShapeLiteral) -> (any GeoShape)? {
        func point(_ coordinate: GeoShapeLiteral.Coordinate) -> GeoPoint? {
            GeoPoint(latitude: coordinate.latitude, longitude: coordinate.longitude)
        }
        switch literal {
        case .box(let bottomLeft, let topRight):
            guard let low = point(bottomLeft), let high = point(topRight) else { return nil }
            return GeoBox(bottomLeft: low, topRight: high)
        case .circle(let center, let radians):
            return point(center).flatMap { GeoCircle(center: $0, radiusInRadians: radians) }
        case .polygon(let rings):
            var points: [[GeoPoint]] = []
            for ring in rings {
                var converted: [GeoPoint] = []
                for coordinate in ring {
                    guard let point = point(coordinate) else { return nil }
                    converted.append(point)
                }
                points.append(converted)
            }
            guard let outer = points.first else { return nil }
            return GeoPolygon(outerRing: outer, holes: Array(points.dropFirst()))
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

    private static func mirror(_ op: RQLOperator) -> RQLOperator? {
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

    /// Resolves `components` from the root class (inside a SUBQUERY, after its variable).
    func bindPath(_ components: [String], at position: Int) throws(Realm.Error) -> BoundPath {
        guard let variable else {
            if let first = components.first, let alias = aliases[first] {
                return try resolvePath((alias + components.dropFirst())[...], at: position)
            }
            let key = Realm.ResolvedPathKey(root: ObjectIdentifier(root), components: components)
            // The cached path holds its root binding, so a match is this very binding (its address cannot have
            // been reused by another).
            if let known = realm.resolvedPaths.withLock({ $0[key] }) { return known }
            let path = try resolvePath(components[...], at: position)
            if isReusable(path) {
                realm.resolvedPaths.withLock { paths in
                    if paths.count >= 256 { paths.removeAll(keepingCapacity: true) }
                    paths[key] = path
                }
            }
            return path
        }
        guard components.first == variable else {
            throw failure(
                "key paths inside SUBQUERY start with \(variable); \(components.joined(separator: ".")) does not",
                at: position)
        }
        if let valueElements {
            guard components.count == 1 else {
                throw failure(
                    "\(variable) stands for a value of \(valueElements.collection), which has no property "
                        + components[1],
                    at: position)
            }
            return BoundPath(
                steps: [.element(.null)], type: valueElements.info.type, isOptional: valueElements.info.isOptional,
                isMultiple: false, objectClassName: nil, text: variable)
        }
        guard components.count > 1 else {
            throw failure("\(variable) stands for an object; compare one of its properties", at: position)
        }
        return try resolvePath(components.dropFirst(), at: position)
    }

    /// Whether a resolved path may be kept for reuse: it goes through model classes only (bindings of file-only
    /// classes are rebuilt when the stored schema changes) and holds no predicate.
    private func isReusable(_ path: BoundPath) -> Bool {
        path.steps.allSatisfy { step in
            switch step {
            case .property(let binding, _): binding.table.type != DynamicObject.self
            case .count, .aggregate, .keys, .mapValue, .type, .mixedElement: true
            case .backlinks, .subqueryCount, .arithmetic, .element: false
            }
        }
    }

    private func resolvePath(_ components: ArraySlice<String>, at position: Int) throws(Realm.Error) -> BoundPath {
        var binding = root
        var path = BoundPath(
            steps: [], type: .object, isOptional: false, isMultiple: false, objectClassName: root.className,
            text: root.className)
        var atCollection: _CollectionKind?
        var atObject = true
        /// Whether the path produced several values before the collection it is at (a map subscript takes one).
        var multipleBeforeCollection = false
        var offset = components.startIndex
        while offset < components.endIndex {
            let component = components[offset]
            offset += 1
            if component == "@links" {
                guard atObject, let className = path.objectClassName else {
                    throw failure("@links needs an object; \(path.text) is not one", at: position)
                }
                let origins: [(origin: TableBinding, property: Int)]
                if offset < components.endIndex, components[offset].hasPrefix("@") {
                    // `@links.@count`: every link to the object.
                    var all: [(origin: TableBinding, property: Int)] = []
                    for name in realm.schemaClasses().keys.sorted() {
                        let origin = try realm.bindingForQuery(name)
                        for (index, property) in origin.table.schema.properties.enumerated()
                        where property.type == .object && property.objectClassName == className {
                            all.append((origin, index))
                        }
                    }
                    origins = all
                    path.text += ".@links"
                } else {
                    guard offset + 1 < components.endIndex else {
                        throw failure("@links is followed by .Class.property or .@count", at: position)
                    }
                    let originName = components[offset]
                    let propertyName = components[offset + 1]
                    offset += 2
                    guard realm.schemaClasses()[originName] != nil else {
                        throw failure("@links: there is no class \(originName)", at: position)
                    }
                    let origin = try realm.bindingForQuery(originName)
                    guard let property = origin.table.propertyIndex(named: propertyName),
                        origin.table.schema.properties[property].type == .object,
                        origin.table.schema.properties[property].objectClassName == className
                    else {
                        throw failure(
                            "@links: \(originName).\(propertyName) is not a link to \(className)", at: position)
                    }
                    origins = [(origin, property)]
                    path.objectClassName = originName
                    path.text += ".@links.\(originName).\(propertyName)"
                }
                path.steps.append(.backlinks(origins))
                path.type = .object
                path.isMultiple = true
                atCollection = .list
                continue
            }
            if let element = MixedSubscript(component: component), path.type == .any, atCollection == nil,
                !path.steps.isEmpty
            {
                // Into the list or dictionary a mixed value holds.
                path.steps.append(.mixedElement(element))
                path.isOptional = true
                if case .size = element { path.type = .int }
                if case .all = element { path.isMultiple = true }
                path.text += element.text
                atObject = false
                continue
            }
            if let element = MixedSubscript(component: component), path.type == .any, atCollection == .list {
                // `anyList[0]`: a position in (or all of) a `List<AnyRealmValue>` property's own elements; what
                // it picks may be a nested collection, subscripted in turn (`anyList[0][1]`).
                path.steps.append(.mixedElement(element))
                path.isOptional = true
                path.isMultiple = multipleBeforeCollection
                if case .size = element { path.type = .int }
                if case .all = element { path.isMultiple = true }
                path.text += element.text
                atCollection = nil
                atObject = false
                continue
            }
            if component.hasPrefix("]") {
                throw failure(
                    "\(MixedSubscript(component: component)?.text ?? component) needs a mixed value holding a list or "
                        + "dictionary; \(path.text) is not one", at: position)
            }
            if component.hasPrefix("[") {
                let key = String(component.dropFirst())
                guard atCollection == .map else {
                    throw failure("['\(key)'] needs a map; \(path.text) is not one", at: position)
                }
                path.steps.append(.mapValue(key))
                path.isOptional = true
                path.isMultiple = multipleBeforeCollection
                path.text += "['\(key)']"
                atCollection = nil
                atObject = path.type == .object
                continue
            }
            if component.hasPrefix("@") {
                switch component {
                case "@count", "@size":
                    guard atCollection != nil || (!atObject && [.string, .data].contains(path.type)) else {
                        throw failure(
                            "\(component) needs a collection, string or data; \(path.text) is not one", at: position)
                    }
                    path.steps.append(.count)
                    path.type = .int
                    path.isOptional = false
                    path.isMultiple = false
                case "@sum", "@avg", "@min", "@max":
                    guard atCollection != nil else {
                        throw failure("\(component) needs a collection; \(path.text) is not one", at: position)
                    }
                    if offset < components.endIndex {
                        // `dogs.@sum.age`: aggregate a property of the linked objects.
                        let property = components[offset]
                        guard offset + 1 == components.endIndex, !atObject || path.objectClassName != nil else {
                            throw failure("\(component) must end the key path", at: position)
                        }
                        path = try resolvePath(components[..<(offset - 1)] + [property], at: position)
                    }
                    guard
                        [.int, .float, .double, .decimal128].contains(path.type) || component == "@min"
                            || component == "@max"
                    else {
                        throw failure("\(component) needs numbers; \(path.text) holds \(path.type)", at: position)
                    }
                    path.steps.append(.aggregate(component))
                    if component == "@avg" && path.type == .int { path.type = .double }
                    path.isOptional = true
                    path.isMultiple = false
                    path.text += "." + component
                    return finish(path)
                case "@keys":
                    guard atCollection == .map else {
                        throw failure("@keys needs a map; \(path.text) is not one", at: position)
                    }
                    path.steps.append(.keys)
                    path.type = .string
                    path.isOptional = false
                case "@values":
                    guard atCollection == .map else {
                        throw failure("@values needs a map; \(path.text) is not one", at: position)
                    }
                case "@type":
                    guard !path.steps.isEmpty else {
                        throw failure("@type needs a value; \(path.text) is not one", at: position)
                    }
                    path.steps.append(.type)
                    path.type = .string
                    path.isOptional = false
                    path.text += ".@type"
                    guard offset == components.endIndex else {
                        throw failure("@type must end the key path", at: position)
                    }
                    return path
                default:
                    throw failure("unknown operator \(component)", at: position)
                }
                path.text += "." + component
                atCollection = nil
                atObject = false
                continue
            }
            guard atObject, let className = path.objectClassName else {
                throw failure("\(path.text) is \(path.type), it has no property \(component)", at: position)
            }
            if path.steps.isEmpty == false { binding = try realm.bindingForQuery(className) }
            guard let index = binding.table.propertyIndex(named: component) else {
                throw failure("\(className) has no property \(component)", at: position)
            }
            let property = binding.table.schema.properties[index]
            if binding.table.infos[index].type == .linkingObjects {
                let origin = try realm.linkingOrigin(binding, property: index)
                guard let originName = property.linkOriginPropertyName,
                    let originProperty = origin.table.propertyIndex(named: originName)
                else {
                    throw failure("\(className).\(component) has no origin property", at: position)
                }
                path.steps.append(.backlinks([(origin, originProperty)]))
                path.text =
                    path.steps.count == 1
                    ? "\(className).\(property.columnName)" : path.text + "." + property.columnName
                path.type = .object
                path.objectClassName = origin.className
                path.isMultiple = true
                atCollection = .list
                atObject = true
                continue
            }
            let info = binding.table.infos[index]
            path.steps.append(.property(binding, index))
            path.text =
                path.steps.count == 1 ? "\(className).\(property.columnName)" : path.text + "." + property.columnName
            path.type = property.type
            path.isOptional = property.isOptional || path.isOptional
            path.objectClassName = property.objectClassName
            atCollection = info.collection
            multipleBeforeCollection = path.isMultiple
            if info.collection != nil { path.isMultiple = true }
            atObject = property.type == .object
        }
        return finish(path)
    }

    private func finish(_ path: BoundPath) -> BoundPath {
        var path = path
        if path.steps.count == 1, case .property(let binding, let index) = path.steps[0],
            binding.table.infos[index].collection == nil, binding.table.infos[index].type != .any
        {
            path.directColumn = (binding.columns[index], binding.table.infos[index])
        }
        return path
    }

    func bindOperand(_ operand: RQLOperand, for path: BoundPath, op: RQLOperator = .equal)
        throws(Realm.Error) -> BoundOperand
    {
        switch operand {
        case .literal(let value, _): return .value(value)
        case .arithmetic:
            return operand.readsProperty
                ? .path(try bindArithmeticPath(operand)) : .value(try arithmeticConstant(operand))
        case .argument(let number, let position):
            guard number < arguments.count else {
                throw failure(
                    "$\(number) has no argument (\(arguments.count) given)", at: position)
            }
            return try convert(arguments[number], for: path, at: position)
        case .subquery:
            return .path(try bindPathOperand(operand)!)
        case .shape(_, let position):
            throw failure("a shape can only follow GEOWITHIN", at: position)
        case .object(let className, let primaryKey, let position):
            return try bindObjectLiteral(className: className, primaryKey: primaryKey, for: path, at: position)
        case .list(let elements, _):
            var values: [_StoredValue] = []
            for element in elements {
                switch try bindOperand(element, for: path) {
                case .value(let value): values.append(value)
                case .values(let more): values += more
                case .path: throw failure("a list holds values, not properties", at: element.position)
                }
            }
            return .values(values)
        case .keyPath(let components, let position):
            return .path(try bindPath(components, at: position))
        }
    }

    /// An argument as a stored value (objects as their keys, sequences as lists).
    private func convert(_ argument: Any?, for path: BoundPath, at position: Int) throws(Realm.Error) -> BoundOperand {
        guard let argument else { return .value(.null) }
        // The common arguments first, by exact type: the casts below look up protocol conformances.
        switch ObjectIdentifier(type(of: argument)) {
        case ObjectIdentifier(Int.self): return .value(.int(Int64(argument as! Int)))
        case ObjectIdentifier(String.self): return .value(.string(argument as! String))
        case ObjectIdentifier(Double.self): return .value(.double(argument as! Double))
        case ObjectIdentifier(Bool.self): return .value(.bool(argument as! Bool))
        case ObjectIdentifier(Date.self): return .value(.date(argument as! Date))
        // Lists of values for IN: the casts below would first try to bridge the array to a class.
        case ObjectIdentifier([Int].self): return .values((argument as! [Int]).map { .int(Int64($0)) })
        case ObjectIdentifier([Int64].self): return .values((argument as! [Int64]).map { .int($0) })
        case ObjectIdentifier([String].self): return .values((argument as! [String]).map { .string($0) })
        case ObjectIdentifier([Double].self): return .values((argument as! [Double]).map { .double($0) })
        case ObjectIdentifier(Set<Int>.self): return .values((argument as! Set<Int>).map { .int(Int64($0)) })
        case ObjectIdentifier(Set<String>.self): return .values((argument as! Set<String>).map { .string($0) })
        default: break
        }
        // `String?` and other optionals arrive boxed in `Any` (`filter("email == %@", email)`), and NSPredicate
        // code passes `NSNull()` for nil: both stand for their value or nil.
        if let optional = argument as? any OptionalQueryArgument {
            return try convert(optional.wrappedQueryArgument, for: path, at: position)
        }
        if argument is NSNull { return .value(.null) }
        if let value = argument as? AnyRealmValue {
            switch value {
            case .none: return .value(.null)
            case .int(let int): return .value(.int(Int64(int)))
            case .bool(let bool): return .value(.bool(bool))
            case .float(let float): return .value(.float(float))
            case .double(let double): return .value(.double(double))
            case .string(let string): return .value(.string(string))
            case .data(let data): return .value(.data(data))
            case .date(let date): return .value(.date(date))
            case .objectId(let id): return .value(.objectId(id))
            case .decimal128(let decimal): return .value(.decimal128(decimal))
            case .uuid(let uuid): return .value(.uuid(uuid))
            case .object(let object): return try convert(object, for: path, at: position)
            case .list, .dictionary:
                throw failure(
                    "a nested list or dictionary cannot be a query argument; compare its elements instead "
                        + "(\(path.text)[0], \(path.text)['key'], \(path.text)[*])", at: position)
            }
        }
        if let object = argument as? ObjectBase {
            guard let managed = object.managed, managed.realm === realm else {
                throw failure("an object argument must be managed by this Realm", at: position)
            }
            // A mixed value holding a link is read as the object: compare with the object itself (its key alone
            // would not say which class it is in).
            if path.type == .any { return .value(.object(object)) }
            guard path.type == .object, managed.table.className == path.objectClassName else {
                throw failure(
                    "\(path.text) holds \(path.objectClassName ?? path.type.description), not \(managed.table.className)",
                    at: position)
            }
            return .value(.int(managed.key))
        }
        if argument is String { return .value(.string(argument as! String)) }
        if let sequence = argument as? any Sequence, !(argument is Data) {
            var values: [_StoredValue] = []
            for element in sequence {
                // One level only: a list of lists is no query value (and a nested argument could be deeper than
                // any stack).
                if element is any Sequence, !(element is String), !(element is Data) {
                    throw failure("a list argument holds values, not other lists (\(type(of: element)))", at: position)
                }
                switch try convert(element, for: path, at: position) {
                case .value(let value): values.append(value)
                case .values(let more): values += more
                case .path: break
                }
            }
            return .values(values)
        }
        switch argument {
        case let value as Bool: return .value(.bool(value))
        case let value as Int: return .value(.int(Int64(value)))
        case let value as Int8: return .value(.int(Int64(value)))
        case let value as Int16: return .value(.int(Int64(value)))
        case let value as Int32: return .value(.int(Int64(value)))
        case let value as Int64: return .value(.int(value))
        case let value as UInt8: return .value(.int(Int64(value)))
        case let value as UInt16: return .value(.int(Int64(value)))
        case let value as UInt32: return .value(.int(Int64(value)))
        case let value as Float: return .value(.float(value))
        case let value as Double: return .value(.double(value))
        case let value as Data: return .value(.data(value))
        case let value as Date: return .value(.date(value))
        case let value as UUID: return .value(.uuid(value))
        case let value as ObjectId: return .value(.objectId(value))
        case let value as Decimal128: return .value(.decimal128(value))
        case let value as any _Persistable:
            // Enums and custom-persisted types: their stored value.
            let stored = value._stored
            if case .object = stored {
                let property = path.text.split(separator: ".").dropFirst().joined(separator: ".")
                throw failure(
                    "\(type(of: argument)) is persisted as an embedded object and cannot be compared as a value; "
                        + "compare its properties instead ($0.\(property).persistableValue.<property> in where, "
                        + "\(property).<property> in the query language)", at: position)
            }
            return .value(stored)
        default:
            throw failure("\(type(of: argument)) is not a valid query argument", at: position)
        }
    }

    /// Checks that the operator and value fit the property.
    private func check(_ op: RQLOperator, path: BoundPath, right: BoundOperand, at position: Int) throws(Realm.Error) {
        switch op {
        case .beginsWith, .endsWith, .contains, .like:
            guard path.type == .string || path.type == .data || path.type == .any else {
                throw failure(
                    "\(op.rawValue) needs a string or data property; \(path.text) is \(path.type)", at: position)
            }
        default: break
        }
        let values: [_StoredValue]
        switch right {
        case .value(let value): values = [value]
        case .values(let list):
            guard op == .in else { throw failure("a list of values needs IN", at: position) }
            values = list
        case .path(let other):
            guard Self.comparable(path.type, other.type) else {
                throw failure(
                    "\(path.text) (\(path.type)) cannot be compared with \(other.text) (\(other.type))", at: position)
            }
            return
        }
        if op == .in, case .value = right {
            throw failure("IN needs a list: {…} or an array argument", at: position)
        }
        for value in values where !Self.fits(value, path.type) {
            let hint =
                path.type == .date && QueryValues.number(value) != nil
                ? " (a date is written 2024-01-01@10:00:00 or T1704103200:0)" : ""
            throw failure(
                "\(path.text) is \(path.type) and cannot be compared with \(Self.describe(value))\(hint)", at: position)
        }
        if case .object = path.type, [.less, .lessOrEqual, .greater, .greaterOrEqual].contains(op) {
            throw failure("links can only be compared with == and !=", at: position)
        }
    }

    static func describe(_ value: _StoredValue) -> String {
        switch value {
        case .null: "nil"
        case .int(let v): "the integer \(v)"
        case .bool(let v): "\(v)"
        case .float(let v): "the number \(v)"
        case .double(let v): "the number \(v)"
        case .string(let v): "the string '\(v)'"
        case .data: "data"
        case .date(let v): "the date \(v)"
        case .objectId(let v): "oid(\(v.stringValue))"
        case .uuid(let v): "uuid(\(v.uuidString))"
        case .decimal128(let v): "the decimal \(v)"
        case .object, .collection, .mixed: "an object"
        }
    }

    private static let numeric: Set<PropertyType> = [.int, .float, .double, .decimal128]

    private static func comparable(_ a: PropertyType, _ b: PropertyType) -> Bool {
        a == b || a == .any || b == .any || (numeric.contains(a) && numeric.contains(b))
    }

    private static func fits(_ value: _StoredValue, _ type: PropertyType) -> Bool {
        switch value {
        case .null: return true
        case .int, .float, .double, .decimal128: return numeric.contains(type) || type == .any || type == .object
        case .bool: return type == .bool || type == .any
        case .string: return type == .string || type == .any
        case .data: return type == .data || type == .any
        case .date: return type == .date || type == .any
        case .objectId: return type == .objectId || type == .any
        case .uuid: return type == .uuid || type == .any
        case .object, .collection, .mixed: return type == .any
        }
    }
}

// MARK: Running

extension Realm {
    /// The binding used to query class `name` (a model type's binding when this Realm has one).
    func bindingForQuery(_ name: String) throws(Realm.Error) -> TableBinding {
        if let binding = boundBinding(named: name) { return binding }
        return try dynamicBinding(name)
    }

    /// The objects whose primary key or indexed property `property` may equal `value` (index entries cut long
    /// values, so callers recheck the rows).
    func indexedKeys(_ binding: TableBinding, property: Int, value: _StoredValue) throws(Realm.Error) -> [Int64] {
        if property == binding.table.primaryKeyIndex {
            guard let encoded = KeyEncoding.primaryKey(value) else { return [] }
            return try lookupPrimaryKey(binding, encoded).map { [$0] } ?? []
        }
        guard var prefix = KeyEncoding.indexEntry(value, key: 0) else { return [] }
        prefix.removeLast(8)
        var keys: [Int64] = []
        try prefix.withStorageBytes { (prefix) throws(Realm.Error) in
            try forEachIndexEntry(tree: binding.indexTrees[property], from: prefix) { entry in
                // Entries of longer values may sort among the value's own: only exact ones count.
                guard entry.count >= prefix.count, memcmp(entry.baseAddress!, prefix.baseAddress!, prefix.count) == 0
                else { return false }
                if entry.count == prefix.count + 8 {
                    keys.append(KeyEncoding.decodeObjectKey(UnsafeRawBufferPointer(rebasing: entry[prefix.count...])))
                }
                return true
            }
        }
        return keys
    }

    /// The values `path` produces for object `key` (links as their keys).
    func queryValues(_ path: BoundPath, key: Int64, row: RowView?) throws(Realm.Error) -> [_StoredValue] {
        if let direct = path.directColumn, let row {
            return [RowCodec.get(row, column: direct.column, info: direct.info)]
        }
        var objects: [Int64] = [key]
        var values: [_StoredValue] = []
        var firstRow = row
        var index = 0
        while index < path.steps.count {
            let step = path.steps[index]
            let next = index + 1 < path.steps.count ? path.steps[index + 1] : nil
            switch step {
            case .property(let binding, let property):
                let info = binding.table.infos[property]
                var nextObjects: [Int64] = []
                values = []
                for object in objects {
                    if let kind = info.collection {
                        if case .count? = next {
                            values.append(
                                .int(Int64(try queryCollectionCount(binding, property: property, key: object))))
                            continue
                        }
                        if kind == .map, case .keys? = next {
                            values += try queryMapKeys(binding, property: property, key: object).map { .string($0) }
                            continue
                        }
                        if kind == .map, case .mapValue(let mapKey)? = next {
                            let value =
                                try queryMapEntries(binding, property: property, key: object)
                                .first { $0.key == mapKey }?.value ?? .null
                            let after = index + 2 < path.steps.count ? path.steps[index + 2] : nil
                            if info.type == .object, after?.followsObjects == true {
                                if case .int(let target) = value {
                                    nextObjects.append(target)
                                } else if !path.isMultiple {
                                    return [.null]
                                }
                            } else {
                                values.append(value)
                            }
                            continue
                        }
                        let elements = try queryCollectionValues(binding, property: property, key: object)
                        if case .mixedElement(let element)? = next {
                            values += element.values(ofListElements: elements)
                        } else if case .subqueryCount(let predicate)? = next {
                            values.append(
                                .int(
                                    info.type == .object
                                        ? try queryCount(predicate, in: elements)
                                        : try queryCount(predicate, inValues: elements)))
                        } else if info.type == .object, let next, next.followsObjects {
                            for case .int(let target) in elements { nextObjects.append(target) }
                        } else {
                            values += elements
                        }
                        continue
                    }
                    let value: _StoredValue
                    if let row = firstRow {
                        value = RowCodec.get(row, column: binding.columns[property], info: info)
                    } else {
                        value =
                            try withRow(tree: binding.rowsTree, key: object) {
                                RowCodec.get($0, column: binding.columns[property], info: info)
                            } ?? .null
                    }
                    if info.type == .object, let next, next.followsObjects {
                        if case .int(let target) = value {
                            nextObjects.append(target)
                        } else if !path.isMultiple {
                            // A nil to-one link makes the rest of a single-valued path null (`address.city ==
                            // nil` holds for a person without an address), as in the seeds' engine and in Swift's
                            // optional chaining.
                            return [.null]
                        }
                    } else if info.type == .any, case .type? = next {
                        values.append(.string(QueryValues.typeName(value)))
                    } else if info.type == .any, case .mixed(let bytes) = value {
                        values.append(try queryMixedValue(bytes, binding: binding, property: property, key: object))
                    } else {
                        values.append(value)
                    }
                }
                firstRow = nil
                objects = nextObjects
                if case .count? = next, info.collection != nil { index += 1 }
                if case .keys? = next, info.collection == .map { index += 1 }
                if case .mapValue? = next, info.collection == .map { index += 1 }
                if case .subqueryCount? = next { index += 1 }
                if case .type? = next, info.type == .any, info.collection == nil { index += 1 }
                if case .mixedElement? = next, info.collection != nil { index += 1 }
            case .backlinks(let origins):
                var nextObjects: [Int64] = []
                values = []
                for object in objects {
                    var origin: [Int64] = []
                    for (binding, property) in origins {
                        for entry in try backlinks(
                            originClass: binding.className,
                            originProperty: binding.table.schema.properties[property].columnName, target: object)
                        {
                            origin += repeatElement(entry.origin, count: entry.count)
                        }
                    }
                    switch next {
                    case .count?: values.append(.int(Int64(origin.count)))
                    case .subqueryCount(let predicate)?:
                        values.append(.int(try queryCount(predicate, in: origin.map { .int($0) })))
                    case let step? where step.followsObjects: nextObjects += origin
                    default: values += origin.map { .int($0) }
                    }
                }
                firstRow = nil
                objects = nextObjects
                switch next {
                case .count?, .subqueryCount?: index += 1
                default: break
                }
            case .subqueryCount:
                break
            case .element(let value):
                values = [value]
            case .type:
                values = values.map { .string(QueryValues.typeName($0)) }
            case .count:
                // @size of strings and data (collections were counted with their property).
                values = values.map { value in
                    switch value {
                    case .string(let string): .int(Int64(string.utf8.count))
                    case .data(let data): .int(Int64(data.count))
                    default: .null
                    }
                }
            case .aggregate(let name):
                values = [QueryValues.aggregate(name, values)]
            case .mixedElement(let element):
                values = values.flatMap { element.values(of: $0) }
            case .arithmetic(let expression):
                values = try arithmeticValue(expression, key: key, row: row).map { [$0] } ?? []
            case .keys, .mapValue:
                break
            }
            index += 1
        }
        return values
    }

    /// A stored mixed value of property `property` of object `key` as queries compare it: a nested list or
    /// dictionary as that collection of the object (not nil: `extra == nil` does not hold for it, and
    /// `extra[0]` reads it), a link as the object.
    private func queryMixedValue(_ bytes: [UInt8], binding: TableBinding, property: Int, key: Int64)
        throws(Realm.Error) -> _StoredValue
    {
        switch MixedCodec.decode(bytes) {
        case .list?, .dictionary?:
            return try decodeMixed(bytes, owner: object(binding, key: key).managed, property: property, level: 0)
        default:
            return try decodeMixed(bytes, owner: nil, property: property, level: 0)
        }
    }

    /// How many of the objects `elements` (links as keys) satisfy `predicate`.
    private func queryCount(_ predicate: BoundPredicate, in elements: [_StoredValue]) throws(Realm.Error) -> Int64 {
        var count: Int64 = 0
        for case .int(let key) in elements where try queryMatches(predicate, key: key, row: nil) { count += 1 }
        return count
    }

    private func queryCollectionCount(_ binding: TableBinding, property: Int, key: Int64) throws(Realm.Error) -> Int {
        if let transaction = writeTransactionIfAny {
            guard let tree = try collectionHandle(binding, property: property, key: key, create: false) else {
                return 0
            }
            return try storage { try transaction.count(in: tree) }
        }
        return try collectionView(binding, property: property, key: key)?.count ?? 0
    }

    /// The element values of a list or set, or the values of a map (links as keys). A mixed element holding a
    /// list or dictionary is that nested collection (of the owning object, found once it is needed), so that it
    /// is not nil and can be subscripted.
    func queryCollectionValues(_ binding: TableBinding, property: Int, key: Int64) throws(Realm.Error)
        -> [_StoredValue]
    {
        var element = binding.table.infos[property]
        element.collection = nil
        var values: [_StoredValue] = []
        var owner: ManagedObject?
        try forEachQueryElement(binding, property: property, key: key, keys: false) { _, bytes throws(Realm.Error) in
            var value = try storage { RowCodec.get(try RowView(bytes), column: 0, info: element) }
            if case .mixed(let mixed) = value {
                switch MixedCodec.decode(mixed) {
                case .list?, .dictionary?:
                    if owner == nil { owner = object(binding, key: key).managed }
                    value = try decodeMixed(mixed, owner: owner, property: property, level: 0)
                default:
                    value = try decodeMixed(mixed, owner: nil, property: property, level: 0)
                }
            }
            values.append(value)
        }
        return values
    }

    /// The entries of map property `property` of object `key`, in key order: keys and values as queries see
    /// them (links as object keys).
    func queryMapEntries(_ binding: TableBinding, property: Int, key: Int64) throws(Realm.Error)
        -> [(key: String, value: _StoredValue)]
    {
        Array(
            zip(
                try queryMapKeys(binding, property: property, key: key),
                try queryCollectionValues(binding, property: property, key: key))
        )
        .map { (key: $0.0, value: $0.1) }
    }

    private func queryMapKeys(_ binding: TableBinding, property: Int, key: Int64) throws(Realm.Error) -> [String] {
        var keys: [String] = []
        try forEachQueryElement(binding, property: property, key: key, keys: true) { key, _ in
            keys.append(String(decoding: key, as: UTF8.self))
        }
        return keys
    }

    private func forEachQueryElement(
        _ binding: TableBinding, property: Int, key: Int64, keys: Bool,
        _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws(Realm.Error) -> Void
    ) throws(Realm.Error) {
        try forEachCollectionEntry(
            keys: keys,
            handle: { () throws(Realm.Error) in
                try collectionHandle(binding, property: property, key: key, create: false)
            },
            view: { () throws(Realm.Error) in try collectionView(binding, property: property, key: key) }, body)
    }

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
                let type = try withRow(tree: columns.binding.rowsTree, key: point) { row in
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

/// Comparison and aggregation of stored values.
enum QueryValues {
    /// `@type` names as written in queries → the canonical names `typeName` produces.
    static let typeNames: [String: [String]] = [
        "null": ["null"], "nil": ["null"], "int": ["int"], "integer": ["int"], "bool": ["bool"], "boolean": ["bool"],
        "float": ["float"], "double": ["double"], "decimal": ["decimal"], "decimal128": ["decimal"],
        "numeric": ["int", "float", "double", "decimal"], "string": ["string"], "binary": ["binary"],
        "data": ["binary"], "date": ["date"], "timestamp": ["date"], "objectid": ["objectId"], "uuid": ["uuid"],
        "object": ["object"], "link": ["object"], "list": ["list"], "array": ["list"], "dictionary": ["dictionary"],
        "map": ["dictionary"],
    ]

    /// The canonical `@type` name of a value.
    static func typeName(_ value: _StoredValue) -> String {
        switch value {
        case .null: "null"
        case .int: "int"
        case .bool: "bool"
        case .float: "float"
        case .double: "double"
        case .string: "string"
        case .data: "binary"
        case .date: "date"
        case .objectId: "objectId"
        case .uuid: "uuid"
        case .decimal128: "decimal"
        case .object: "object"
        case .collection(let container): container is Map<String, AnyRealmValue> ? "dictionary" : "list"
        case .mixed(let bytes): mixedTypeName(bytes)
        }
    }

    /// The canonical `@type` name of a stored mixed value.
    static func mixedTypeName(_ bytes: [UInt8]) -> String {
        switch MixedCodec.decode(bytes) {
        case .value(let value)?: typeName(value)
        case .link?: "object"
        case .list?: "list"
        case .dictionary?: "dictionary"
        case nil: "null"
        }
    }

    /// `ANY` (the default), `ALL` or `NONE` of `values` satisfying `test`.
    static func quantify(_ quantifier: RQLQuantifier?, _ values: [_StoredValue], _ test: (_StoredValue) -> Bool)
        -> Bool
    {
        switch quantifier {
        case .all?: values.allSatisfy(test)
        case .none?: !values.contains(where: test)
        default: values.contains(where: test)
        }
    }

    static func compare(_ a: _StoredValue, _ op: RQLOperator, _ b: _StoredValue, _ options: CompareOptions) -> Bool {
        switch op {
        case .equal: return equal(a, b, options)
        case .notEqual: return !equal(a, b, options)
        case .less: return order(a, b, options).map { $0 < 0 } ?? false
        case .lessOrEqual: return order(a, b, options).map { $0 <= 0 } ?? false
        case .greater: return order(a, b, options).map { $0 > 0 } ?? false
        case .greaterOrEqual: return order(a, b, options).map { $0 >= 0 } ?? false
        case .beginsWith, .endsWith, .contains, .like:
            if case .data(let data) = a, case .data(let pattern) = b {
                switch op {
                case .beginsWith: return data.starts(with: pattern)
                case .endsWith: return data.reversed().starts(with: pattern.reversed())
                case .contains: return pattern.isEmpty || data.range(of: pattern) != nil
                default: return false
                }
            }
            guard case .string(let text) = a, case .string(let pattern) = b else { return false }
            let haystack = fold(text, options)
            let needle = fold(pattern, options)
            switch op {
            case .beginsWith: return haystack.utf8.starts(with: needle.utf8)
            case .endsWith: return haystack.utf8.reversed().starts(with: needle.utf8.reversed())
            case .contains: return Array(haystack.utf8).withUnsafeBytes { contains($0, Array(needle.utf8)) }
            default: return like(Array(haystack.unicodeScalars), Array(needle.unicodeScalars))
            }
        case .in: return equal(a, b, options)
        }
    }

    static func fold(_ string: String, _ options: CompareOptions) -> String {
        var fold: String.CompareOptions = []
        if options.caseInsensitive { fold.insert(.caseInsensitive) }
        if options.diacriticInsensitive { fold.insert(.diacriticInsensitive) }
        return fold.isEmpty ? string : string.folding(options: fold, locale: nil)
    }

    /// `*` matches any run of characters, `?` one character.
    static func like(_ text: [Unicode.Scalar], _ pattern: [Unicode.Scalar]) -> Bool {
        var t = 0
        var p = 0
        var star = -1
        var mark = 0
        while t < text.count {
            if p < pattern.count && (pattern[p] == "?" || pattern[p] == text[t]) {
                t += 1
                p += 1
            } else if p < pattern.count && pattern[p] == "*" {
                star = p
                mark = t
                p += 1
            } else if star >= 0 {
                p = star + 1
                mark += 1
                t = mark
            } else {
                return false
            }
        }
        while p < pattern.count && pattern[p] == "*" { p += 1 }
        return p == pattern.count
    }

    static func equal(_ a: _StoredValue, _ b: _StoredValue, _ options: CompareOptions = CompareOptions()) -> Bool {
        switch (a, b) {
        case (.null, .null): return true
        case (.null, _), (_, .null): return false
        case (.string(let x), .string(let y)):
            return fold(x, options).utf8.elementsEqual(fold(y, options).utf8)
        case (.bool(let x), .bool(let y)): return x == y
        case (.data(let x), .data(let y)): return x == y
        case (.string(let x), .data(let y)), (.data(let y), .string(let x)):
            // A mixed value's string and data compare by their bytes, as in the seed SDK.
            return Data(x.utf8) == y
        case (.uuid(let x), .uuid(let y)): return x == y
        case (.objectId(let x), .objectId(let y)): return x == y
        case (.object(let x), .object(let y)): return x.isSameObject(as: y)
        default: return order(a, b, options) == 0
        }
    }

    /// -1, 0 or 1; nil when the values have no order between them.
    static func order(_ a: _StoredValue, _ b: _StoredValue, _ options: CompareOptions = CompareOptions()) -> Int? {
        func sign<T: Comparable>(_ x: T, _ y: T) -> Int { x < y ? -1 : x > y ? 1 : 0 }
        switch (a, b) {
        case (.int(let x), .int(let y)): return sign(x, y)
        case (.string(let x), .string(let y)):
            return compareBytes(fold(x, options).utf8, fold(y, options).utf8)
        case (.date(let x), .date(let y)): return sign(x, y)
        case (.bool(let x), .bool(let y)): return sign(x ? 1 : 0, y ? 1 : 0)
        case (.uuid(let x), .uuid(let y)): return sign(x.uuidString, y.uuidString)
        case (.objectId(let x), .objectId(let y)):
            return x.bytes == y.bytes ? 0 : (x.bytes.lexicographicallyPrecedes(y.bytes) ? -1 : 1)
        case (.data(let x), .data(let y)): return x == y ? 0 : (x.lexicographicallyPrecedes(y) ? -1 : 1)
        case (.string(let x), .data(let y)): return compareBytes(x.utf8, y)
        case (.data(let x), .string(let y)): return compareBytes(x, y.utf8)
        case (.decimal128(let x), .decimal128(let y)): return sign(x, y)
        case (.decimal128(let x), _): return number(b).map { sign(x, Decimal128($0)) }
        case (_, .decimal128(let y)): return number(a).map { sign(Decimal128($0), y) }
        default:
            // NaN is unordered: no comparison with it holds but !=.
            guard let x = number(a), let y = number(b), !x.isNaN, !y.isNaN else { return nil }
            return sign(x, y)
        }
    }

    static func number(_ value: _StoredValue) -> Double? {
        switch value {
        case .int(let int): Double(int)
        case .float(let float): Double(float)
        case .double(let double): double
        case .decimal128(let decimal): decimal.doubleValue
        default: nil
        }
    }

    /// `@sum`, `@avg`, `@min` or `@max` of `values` (nils skipped; nil when nothing is left, except `@sum`: 0).
    static func aggregate(_ name: String, _ values: [_StoredValue]) -> _StoredValue {
        let present = values.filter { if case .null = $0 { false } else { true } }
        switch name {
        case "@min", "@max":
            var best: _StoredValue?
            // NaN is unordered: it is never the smallest or largest value.
            for value in present where !(number(value)?.isNaN ?? false) {
                guard let current = best else {
                    best = value
                    continue
                }
                if let order = order(value, current), name == "@min" ? order < 0 : order > 0 { best = value }
            }
            return best ?? .null
        case "@sum":
            if present.allSatisfy({ if case .int = $0 { true } else { false } }) {
                return .int(present.reduce(Int64(0)) { if case .int(let v) = $1 { $0 &+ v } else { $0 } })
            }
            if present.contains(where: { if case .decimal128 = $0 { true } else { false } }) {
                return .decimal128(
                    present.reduce(Decimal128(0)) { sum, value in
                        if case .decimal128(let d) = value { return sum + d }
                        return sum + Decimal128(number(value) ?? 0)
                    })
            }
            return .double(present.compactMap(number).reduce(0, +))
        default:
            guard !present.isEmpty else { return .null }
            if present.contains(where: { if case .decimal128 = $0 { true } else { false } }) {
                let sum = present.reduce(Decimal128(0)) { sum, value in
                    if case .decimal128(let d) = value { return sum + d }
                    return sum + Decimal128(number(value) ?? 0)
                }
                return .decimal128(sum / Decimal128(present.count))
            }
            return .double(present.compactMap(number).reduce(0, +) / Double(present.count))
        }
    }
}

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
    private static func compiled(_ operands: [BoundPredicate], realm: Realm?, depth: Int) -> [RowCondition]? {
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
    private static func membership(_ path: BoundPath, _ values: [_StoredValue]) -> RowCondition? {
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

    /// A string comparison with `[c]` and/or `[d]`: rows and needles that are ASCII are folded byte by byte (ASCII
    /// has no diacritics, so only case matters); other rows are folded as `String.folding` does.
    private static func foldedTest(_ op: RQLOperator, _ text: String, _ options: CompareOptions)
        -> ((UnsafeRawBufferPointer) -> Bool)?
    {
        guard [.equal, .notEqual, .beginsWith, .endsWith, .contains, .like].contains(op) else { return nil }
        let general: (UnsafeRawBufferPointer) -> Bool = { bytes in
            QueryValues.compare(.string(String(decoding: bytes, as: UTF8.self)), op, .string(text), options)
        }
        let needle = Array(text.utf8)
        guard needle.allSatisfy({ $0 < 0x80 }), op != .like else { return general }
        // ASCII has no diacritics: only case can matter, and only with [c].
        let folds = options.caseInsensitive
        let lowered = folds ? needle.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 } : needle
        let fast: (UnsafeRawBufferPointer) -> Bool
        @inline(__always) func lower(_ byte: UInt8) -> UInt8 {
            folds && byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte
        }
        switch op {
        case .equal, .notEqual:
            fast = { bytes in bytes.count == lowered.count && zip(bytes, lowered).allSatisfy { lower($0) == $1 } }
        case .beginsWith:
            fast = { bytes in bytes.count >= lowered.count && zip(bytes, lowered).allSatisfy { lower($0) == $1 } }
        case .endsWith:
            fast = { bytes in
                bytes.count >= lowered.count
                    && zip(bytes[(bytes.count - lowered.count)...], lowered).allSatisfy { lower($0) == $1 }
            }
        default:
            let first = lowered.first ?? 0
            // The first byte in either case, so that most positions cost two compares.
            let firstUpper = folds && first >= 0x61 && first <= 0x7A ? first & 0xDF : first
            fast = { bytes in
                let length = lowered.count
                guard length > 0 else { return true }
                guard bytes.count >= length, let base = bytes.baseAddress else { return false }
                let text = base.assumingMemoryBound(to: UInt8.self)
                return lowered.withUnsafeBufferPointer { needle in
                    var start = 0
                    let last = bytes.count - length
                    while start <= last {
                        let byte = text[start]
                        if byte == first || byte == firstUpper {
                            var offset = 1
                            while offset < length && lower(text[start + offset]) == needle[offset] { offset += 1 }
                            if offset == length { return true }
                        }
                        start += 1
                    }
                    return false
                }
            }
        }
        let negate = op == .notEqual
        return { bytes in
            QueryValues.isASCII(bytes) ? fast(bytes) != negate : general(bytes)
        }
    }

    /// A string condition on one non-null value's UTF-8 bytes (a null value satisfies only `!=`); nil for operators
    /// that do not apply to strings. Shared by the row conditions and the column scans.
    static func stringTest(_ op: RQLOperator, _ text: String, _ options: CompareOptions)
        -> ((UnsafeRawBufferPointer) -> Bool)?
    {
        if options.caseInsensitive || options.diacriticInsensitive { return foldedTest(op, text, options) }
        let needle = Array(text.utf8)
        func order(_ bytes: UnsafeRawBufferPointer) -> Int {
            needle.withUnsafeBytes { QueryValues.compareRaw(bytes, $0) }
        }
        switch op {
        case .beginsWith:
            return { $0.starts(with: needle) }
        case .endsWith:
            return { bytes in
                bytes.count >= needle.count && bytes[(bytes.count - needle.count)...].elementsEqual(needle)
            }
        case .contains:
            return { QueryValues.contains($0, needle) }
        case .like:
            let pattern = Array(text.unicodeScalars)
            return { bytes in
                QueryValues.like(Array(String(decoding: bytes, as: UTF8.self).unicodeScalars), pattern)
            }
        case .equal: return { order($0) == 0 }
        case .notEqual: return { order($0) != 0 }
        case .less: return { order($0) < 0 }
        case .lessOrEqual: return { order($0) <= 0 }
        case .greater: return { order($0) > 0 }
        case .greaterOrEqual: return { order($0) >= 0 }
        case .in: return nil
        }
    }

    private static func compare(_ path: BoundPath, _ op: RQLOperator, _ value: _StoredValue, _ options: CompareOptions)
        -> RowCondition?
    {
        guard let (column, info) = path.directColumn else { return nil }
        if case .null = value {
            switch op {
            case .equal: return { $0.isNull(column) }
            case .notEqual: return { !$0.isNull(column) }
            default: return { _ in false }
            }
        }
        /// Applies `op` to the row's value (absent when null) and the constant, by their order.
        func ordered(_ order: @escaping (RowView) -> Int?) -> RowCondition? {
            switch op {
            case .equal: return { order($0) == 0 }
            case .notEqual: return { order($0) != 0 }
            case .less: return { order($0).map { $0 < 0 } ?? false }
            case .lessOrEqual: return { order($0).map { $0 <= 0 } ?? false }
            case .greater: return { order($0).map { $0 > 0 } ?? false }
            case .greaterOrEqual: return { order($0).map { $0 >= 0 } ?? false }
            default: return nil
            }
        }
        func sign<T: Comparable>(_ x: T, _ y: T) -> Int { x < y ? -1 : x > y ? 1 : 0 }
        switch (info.type, value) {
        case (.int, .int(let k)):
            // The commonest condition: one closure, no intermediate order value.
            switch op {
            case .equal: return { !$0.isNull(column) && $0.int(column) == k }
            case .notEqual: return { $0.isNull(column) || $0.int(column) != k }
            case .less: return { !$0.isNull(column) && $0.int(column) < k }
            case .lessOrEqual: return { !$0.isNull(column) && $0.int(column) <= k }
            case .greater: return { !$0.isNull(column) && $0.int(column) > k }
            case .greaterOrEqual: return { !$0.isNull(column) && $0.int(column) >= k }
            default: return nil
            }
        case (.double, .int), (.double, .double):
            guard let k = QueryValues.number(value) else { return nil }
            switch op {
            case .equal: return { !$0.isNull(column) && $0.double(column) == k }
            case .notEqual: return { $0.isNull(column) || $0.double(column) != k }
            case .less: return { !$0.isNull(column) && $0.double(column) < k }
            case .lessOrEqual: return { !$0.isNull(column) && $0.double(column) <= k }
            case .greater: return { !$0.isNull(column) && $0.double(column) > k }
            case .greaterOrEqual: return { !$0.isNull(column) && $0.double(column) >= k }
            default: return nil
            }
        case (.int, _), (.double, _), (.float, _):
            guard let constant = QueryValues.number(value), !(value.isDecimal) else { return nil }
            // NaN is unordered, as in `QueryValues.order`: no comparison with it holds but !=.
            func numeric(_ x: Double) -> Int? { x.isNaN || constant.isNaN ? nil : sign(x, constant) }
            switch info.type {
            case .int: return ordered { $0.isNull(column) ? nil : numeric(Double($0.int(column))) }
            case .double: return ordered { $0.isNull(column) ? nil : numeric($0.double(column)) }
            default: return ordered { $0.isNull(column) ? nil : numeric(Double($0.float(column))) }
            }
        case (.date, .date(let date)):
            let constant = date.timeIntervalSinceReferenceDate
            return ordered { $0.isNull(column) ? nil : sign($0.double(column), constant) }
        case (.bool, .bool(let constant)):
            return ordered { $0.isNull(column) ? nil : sign($0.bool(column) ? 1 : 0, constant ? 1 : 0) }
        case (.string, .string(let text)):
            guard let test = stringTest(op, text, options) else { return nil }
            let nullResult = op == .notEqual
            return { row in row.isNull(column) ? nullResult : row.withBytes(column, test) }
        default:
            return nil
        }
    }
}

extension _StoredValue {
    var isDecimal: Bool { if case .decimal128 = self { true } else { false } }
}

extension QueryValues {
    /// Whether every byte is below 0x80, eight at a time.
    @inline(__always)
    static func isASCII(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var index = 0
        var any: UInt64 = 0
        while index + 8 <= bytes.count {
            any |= bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            index += 8
        }
        while index < bytes.count {
            any |= UInt64(bytes[index])
            index += 1
        }
        return any & 0x8080_8080_8080_8080 == 0
    }

    /// Byte order of two UTF-8 strings (that is, Unicode scalar order): -1, 0 or 1.
    static func compareBytes(_ a: some Collection<UInt8>, _ b: some Collection<UInt8>) -> Int {
        var x = a.makeIterator()
        var y = b.makeIterator()
        while true {
            switch (x.next(), y.next()) {
            case (nil, nil): return 0
            case (nil, _): return -1
            case (_, nil): return 1
            case (let p?, let q?): if p != q { return p < q ? -1 : 1 }
            }
        }
    }

    /// Byte order of two byte arrays: -1, 0 or 1.
    static func compareArrays(_ a: [UInt8], _ b: [UInt8]) -> Int {
        a.withUnsafeBytes { x in b.withUnsafeBytes { y in compareRaw(x, y) } }
    }

    /// Byte order of two buffers (`memcmp`, then the shorter first): -1, 0 or 1.
    static func compareRaw(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int {
        let common = Swift.min(a.count, b.count)
        let order = common == 0 ? 0 : memcmp(a.baseAddress!, b.baseAddress!, common)
        if order != 0 { return order < 0 ? -1 : 1 }
        return a.count == b.count ? 0 : (a.count < b.count ? -1 : 1)
    }

    /// Whether `needle` occurs in `haystack`.
    static func contains(_ haystack: UnsafeRawBufferPointer, _ needle: [UInt8]) -> Bool {
        guard let first = needle.first else { return true }
        guard haystack.count >= needle.count else { return false }
        var start = 0
        let last = haystack.count - needle.count
        while start <= last {
            if haystack[start] == first {
                var matched = true
                for offset in 1..<needle.count where haystack[start + offset] != needle[offset] {
                    matched = false
                    break
                }
                if matched { return true }
            }
            start += 1
        }
        return false
    }
}

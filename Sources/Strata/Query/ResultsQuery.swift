public import Foundation
import StrataStorage

/// How to order a collection: a key path (through to-one links) and a direction.
public struct SortDescriptor: Sendable, Hashable {
    /// The property, or a key path through to-one links (`"owner.name"`).
    public var keyPath: String
    /// Smallest first (nil first) when true.
    public var ascending: Bool

    /// A Swift key path (`\Dog.age`), turned into ``keyPath`` when the descriptor is used.
    let swiftKeyPath: ImmutableKeyPath?

    /// Orders by `keyPath`.
    public init(keyPath: String, ascending: Bool = true) {
        self.keyPath = keyPath
        self.ascending = ascending
        swiftKeyPath = nil
    }

    /// Orders by the persisted property at `keyPath` (``keyPath`` then reads as the Swift key path, such as
    /// `\Dog.age`, until a collection resolves it to the property's name):
    ///
    /// ```swift
    /// dogs.sorted(by: [SortDescriptor(keyPath: \Dog.age, ascending: false), SortDescriptor(keyPath: \Dog.name)])
    /// ```
    public init<Root: ObjectBase>(keyPath: PartialKeyPath<Root>, ascending: Bool = true) {
        self.keyPath = "\(keyPath)"
        self.ascending = ascending
        swiftKeyPath = ImmutableKeyPath(keyPath: keyPath)
    }

    private init(keyPath: String, ascending: Bool, swiftKeyPath: ImmutableKeyPath?) {
        self.keyPath = keyPath
        self.ascending = ascending
        self.swiftKeyPath = swiftKeyPath
    }

    /// The same key path in the opposite direction, as in the SDK:
    ///
    /// ```swift
    /// let newestFirst = SortDescriptor(keyPath: "created").reversed()   // ascending == false
    /// ```
    ///
    /// - Returns: A descriptor that orders by the same property, descending if this one ascends and vice versa.
    public func reversed() -> SortDescriptor {
        SortDescriptor(keyPath: keyPath, ascending: !ascending, swiftKeyPath: swiftKeyPath)
    }
}

extension SortDescriptor: CustomStringConvertible {
    /// The descriptor as the SDK prints it: `SortDescriptor(keyPath: name, direction: ascending)` (or
    /// `descending`).
    public var description: String {
        "SortDescriptor(keyPath: \(keyPath), direction: \(ascending ? "ascending" : "descending"))"
    }
}

extension SortDescriptor: ExpressibleByStringLiteral {
    /// An ascending descriptor for the key path in the literal, as in the SDK:
    /// `results.sorted(by: ["name", SortDescriptor(keyPath: "age", ascending: false)])`.
    ///
    /// - Parameter value: The property, or a key path through to-one links.
    public init(stringLiteral value: String) {
        self.init(keyPath: value)
    }
}

/// A key path held in a `Sendable` value: key paths are immutable once formed, so sharing one is safe.
struct ImmutableKeyPath: @unchecked Sendable, Hashable {
    let keyPath: AnyKeyPath
}

/// The filters, sorts, distinct and limit a `Results` applies to its class's objects, in the order they were
/// added, and the object keys they produced at the Realm's last generation.
final class ResultsQuery {
    enum Stage {
        case filter(BoundPredicate)
        case sort([(path: BoundPath, ascending: Bool)])
        case distinct([BoundPath])
        case limit(Int)
    }

    let stages: [Stage]
    /// The objects to start from, in order, for results over a list, set or linking objects; nil for every
    /// object of the class.
    let base: (() throws(Realm.Error) -> [Int64])?
    /// Makes `base` for another Realm of the same file (nil there when the collection's owner does not exist).
    let rebase: BaseSource?
    /// How the last run found its objects: from an index (how many candidates) or by scanning (nil).
    private(set) var indexCandidateCount: Int?
    private var cachedKeys: [Int64] = []
    /// The rows of `cachedKeys` in the snapshot they were read from (nil when they were not read in one pass).
    private var cachedRows: [StableValue]?
    /// Where the rows of `cachedKeys` are, when a column scan found them without reading them.
    private var cachedPending: ColumnScan.PendingRows?
    private var cachedGeneration = UInt64.max

    init(stages: [Stage], base: (() throws(Realm.Error) -> [Int64])? = nil, rebase: BaseSource? = nil) {
        self.stages = stages
        self.base = base
        self.rebase = rebase
    }

    /// Takes `keys` (computed elsewhere for the version `realm` reads now, at its current generation) as this
    /// query's matches, so that reading the results does not run the query again.
    func prime(keys: [Int64], realm: Realm) {
        cachedKeys = keys
        cachedRows = nil
        cachedPending = nil
        cachedGeneration = realm.generation
    }

    /// `self`'s stages followed by `more`.
    func appending(_ more: [Stage]) -> ResultsQuery {
        ResultsQuery(stages: stages + more, base: base, rebase: rebase)
    }

    /// The matching keys in order and, when a scan read them (and `rows`), their rows (valid while the Realm's
    /// generation stays the same); recomputed when the Realm's data may have changed. Without `rows`, rows a column
    /// scan did not read are left unread until asked for.
    func matches(realm: Realm, binding: TableBinding, rows: Bool = true) throws(Realm.Error) -> (
        keys: [Int64], rows: [StableValue]?
    ) {
        if cachedGeneration == realm.generation {
            if rows, let pending = cachedPending {
                cachedRows = try pending.rows(realm: realm, binding: binding)
                cachedPending = nil
            }
            return (cachedKeys, cachedRows)
        }
        var found: Found
        var index = 0
        if let base {
            // A collection's objects, in its order: every stage works on them.
            found = try run(stages[...], on: Found(keys: try base(), rows: nil, ascending: false), realm, binding)
            indexCandidateCount = nil
        } else {
            var filters: [BoundPredicate] = []
            while index < stages.count, case .filter(let predicate) = stages[index] {
                filters.append(predicate)
                index += 1
            }
            var indexed: Candidates?
            for filter in filters where indexed == nil {
                indexed = try Self.indexCandidates(filter, realm: realm, binding: binding)
            }
            indexCandidateCount = indexed?.keys.count
            if let indexed, indexed.exact, filters.count == 1 {
                // The index answered the whole condition: no row needs reading.
                found = Found(keys: indexed.keys, rows: nil, ascending: true)
            } else if let candidates = indexed?.keys {
                // An index narrowed the objects down: check the whole condition on those rows only, in key order.
                var keys: [Int64] = []
                for key in candidates {
                    let matches = try realm.withRow(tree: binding.rowsTree, key: key) {
                        (row) throws(Realm.Error) -> Bool in
                        for filter in filters where try !realm.queryMatches(filter, key: key, row: row) {
                            return false
                        }
                        return true
                    }
                    if matches == true { keys.append(key) }
                }
                found = Found(keys: keys, rows: nil, ascending: true)
            } else {
                found = try scan(realm: realm, binding: binding, filters: filters)
            }
            if let pending = found.pending, rows || index < stages.count {
                found.rows = try pending.rows(realm: realm, binding: binding)
                found.pending = nil
            }
            found = try run(stages[index...], on: found, realm, binding)
        }
        cachedKeys = found.keys
        cachedRows = found.rows
        cachedPending = found.pending
        cachedGeneration = realm.generation
        return (found.keys, found.rows)
    }

    /// Where the matches are in the rows tree's segments, when a column scan found them and their rows have not
    /// been read (nil otherwise). Runs the query at the Realm's current generation if it has not run yet.
    func pendingMatches(realm: Realm, binding: TableBinding) throws(Realm.Error) -> ColumnScan.PendingRows? {
        _ = try matches(realm: realm, binding: binding, rows: false)
        return cachedPending
    }

    /// Objects found so far: their keys, their rows when read in the same pass, and whether the keys are in key
    /// order (the rows can then be read with one walk).
    struct Found {
        var keys: [Int64]
        var rows: [StableValue]?
        var ascending: Bool
        /// Where the rows are, when a column scan found the keys without reading the rows (`rows` is nil).
        var pending: ColumnScan.PendingRows? = nil

        /// Keeps the entries at `positions`, in that order.
        mutating func select(_ positions: [Int]) {
            keys = positions.map { keys[$0] }
            if let all = rows { rows = positions.map { all[$0] } }
        }
    }

    /// `stages` applied in order to `found`.
    private func run(_ stages: ArraySlice<Stage>, on found: Found, _ realm: Realm, _ binding: TableBinding)
        throws(Realm.Error) -> Found
    {
        var found = found
        for stage in stages {
            switch stage {
            case .filter(let predicate):
                var kept: [Int] = []
                for (position, key) in found.keys.enumerated() {
                    let matches: Bool?
                    if let rows = found.rows {
                        matches = try realm.storage {
                            try realm.queryMatches(predicate, key: key, row: try RowView(rows[position].bytes))
                        }
                    } else {
                        matches = try realm.withRow(tree: binding.rowsTree, key: key) { row in
                            try realm.queryMatches(predicate, key: key, row: row)
                        }
                    }
                    if matches == true { kept.append(position) }
                }
                found.select(kept)
            case .sort(let descriptors):
                if descriptors.count == 1, let (column, info) = descriptors[0].path.directColumn, let rows = found.rows,
                    let order = try realm.storage({
                        try Self.numericOrder(rows, column: column, info: info, ascending: descriptors[0].ascending)
                    })
                {
                    // One numeric key with the rows at hand: sort unboxed (value, position) pairs.
                    found.select(order)
                    found.ascending = false
                    continue
                }
                if descriptors.count == 1, let (column, info) = descriptors[0].path.directColumn, info.type == .string,
                    let rows = found.rows,
                    let order = try realm.storage({
                        try Self.stringOrder(rows, column: column, ascending: descriptors[0].ascending)
                    })
                {
                    // One string key with the rows at hand: sort their UTF-8 bytes, never making Strings.
                    found.select(order)
                    found.ascending = false
                    continue
                }
                let values = try sortValues(descriptors.map(\.path), found: found, realm: realm, binding: binding)
                let ascending = descriptors.map(\.ascending)
                var order = Array(found.keys.indices)
                if descriptors.count == 1, let numbers = Self.numbers(values[0]) {
                    // One numeric key: compare unboxed numbers (nil first), position breaking ties.
                    let up = ascending[0]
                    order.sort { a, b in
                        let x = numbers[a]
                        let y = numbers[b]
                        if x != y {
                            guard let x else { return up }
                            guard let y else { return !up }
                            return up ? x < y : x > y
                        }
                        return a < b
                    }
                } else {
                    // Swift's sort is not stable: the position breaks ties.
                    order.sort { a, b in
                        for column in descriptors.indices {
                            let comparison = Self.order(values[column][a], values[column][b])
                            if comparison != 0 { return ascending[column] ? comparison < 0 : comparison > 0 }
                        }
                        return a < b
                    }
                }
                found.select(order)
                found.ascending = false
            case .distinct(let paths):
                let values = try sortValues(paths, found: found, realm: realm, binding: binding)
                var seen: Set<[QueryHashKey]> = []
                var kept: [Int] = []
                for position in found.keys.indices
                where seen.insert(values.map { QueryHashKey($0[position]) }).inserted {
                    kept.append(position)
                }
                found.select(kept)
            case .limit(let limit):
                if found.keys.count > limit { found.select(Array(0..<limit)) }
            }
        }
        return found
    }

    /// The value of each path for each object found (one array per path, in position order). Plain columns are
    /// read from the rows already read, or, for many keys in key order, with one walk over the rows instead of
    /// one lookup per key.
    private func sortValues(_ paths: [BoundPath], found: Found, realm: Realm, binding: TableBinding)
        throws(Realm.Error) -> [[_StoredValue]]
    {
        let keys = found.keys
        var values = paths.map { _ in [_StoredValue](repeating: .null, count: keys.count) }
        let direct = paths.compactMap(\.directColumn)
        if direct.count == paths.count, let rows = found.rows {
            try realm.storage {
                for position in keys.indices {
                    let row = try RowView(rows[position].bytes)
                    for (index, column) in direct.enumerated() {
                        values[index][position] = RowCodec.get(row, column: column.column, info: column.info)
                    }
                }
            }
            return values
        }
        if found.ascending, direct.count == paths.count, keys.count * 8 >= realm.rowCount(tree: binding.rowsTree),
            let rows = realm.treeView(binding.rowsTree)
        {
            try realm.storage {
                var position = 0
                try rows.forEachEntry { key, bytes in
                    guard position < keys.count else { return false }
                    guard KeyEncoding.decodeObjectKey(key) == keys[position] else { return true }
                    let row = try RowView(bytes)
                    for (index, column) in direct.enumerated() {
                        values[index][position] = RowCodec.get(row, column: column.column, info: column.info)
                    }
                    position += 1
                    return true
                }
            }
            return values
        }
        for (position, key) in keys.enumerated() {
            for (index, path) in paths.enumerated() {
                let row = found.rows.map { $0[position].bytes }
                values[index][position] =
                    try realm.storage {
                        try realm.queryValues(path, key: key, row: try row.map { try RowView($0) })
                    }.first ?? .null
            }
        }
        return values
    }

    /// The positions of `rows` ordered by the number in `column` (nil first when ascending, last when
    /// descending; equal values keep their order); nil when the column is not an integer, double, float or date
    /// column, holds NaN, or there are `Int32.max` rows or more (the general comparison handles those).
    private static func numericOrder(_ rows: [StableValue], column: Int, info: _PropertyInfo, ascending: Bool)
        throws(StorageError) -> [Int]?
    {
        guard !info.isCollection, rows.count < Int(Int32.max) else { return nil }
        switch info.type {
        case .int:
            // Flipping the sign bit orders signed values as unsigned.
            return try radixOrder(rows, column: column, ascending: ascending) {
                UInt64(bitPattern: $0.int(column)) ^ (1 << 63)
            }
        case .double, .date:
            return try radixOrder(rows, column: column, ascending: ascending) { orderedBits($0.double(column)) }
        case .float:
            // Widening to Double is exact, so it keeps the order.
            return try radixOrder(rows, column: column, ascending: ascending) { orderedBits(Double($0.float(column))) }
        default:
            return nil
        }
    }

    /// `value`'s bits as an unsigned number that orders as the value does (-0 as 0); nil for NaN.
    private static func orderedBits(_ value: Double) -> UInt64? {
        guard !value.isNaN else { return nil }
        let bits = (value == 0 ? 0 : value).bitPattern
        // Negative numbers: complementing reverses their order and puts them below the positive ones.
        return bits & (1 << 63) != 0 ? ~bits : bits | (1 << 63)
    }

    /// The positions of `rows` ordered by `key` of their value in `column` (nil values first when ascending, last
    /// when descending; equal keys keep their order), by a least-significant-digit radix sort: byte passes over
    /// a 256-entry histogram, skipping the bytes every key shares (values that fit in a few bytes take a few
    /// passes). Stable, so positions break ties without comparing them. Nil when `key` returns nil.
    private static func radixOrder(
        _ rows: [StableValue], column: Int, ascending: Bool, key: (RowView) -> UInt64?
    ) throws(StorageError) -> [Int]? {
        var keys: [UInt64] = []
        var positions: [Int32] = []
        keys.reserveCapacity(rows.count)
        positions.reserveCapacity(rows.count)
        var nils: [Int] = []
        for (position, stable) in rows.enumerated() {
            let row = try RowView(stable.bytes)
            if row.isNull(column) {
                nils.append(position)
                continue
            }
            guard let key = key(row) else { return nil }
            // Complementing reverses the order.
            keys.append(ascending ? key : ~key)
            positions.append(Int32(truncatingIfNeeded: position))
        }
        radixSort(&keys, carrying: &positions)
        let sorted = positions.map { Int($0) }
        return ascending ? nils + sorted : sorted + nils
    }

    /// Sorts `keys` ascending and moves `positions` with them, by a stable least-significant-digit radix sort:
    /// one pass per byte over a 256-entry histogram, skipping the bytes every key shares.
    private static func radixSort(_ keys: inout [UInt64], carrying positions: inout [Int32]) {
        let count = keys.count
        guard count > 1 else { return }
        var otherKeys = [UInt64](repeating: 0, count: count)
        var otherPositions = [Int32](repeating: 0, count: count)
        let differing = keys.reduce(0) { $0 | ($1 ^ keys[0]) }
        for shift in stride(from: 0, to: 64, by: 8) where (differing >> UInt64(shift)) & 0xFF != 0 {
            var counts = [Int](repeating: 0, count: 257)
            keys.withUnsafeBufferPointer { keys in
                for key in keys { counts[Int((key >> UInt64(shift)) & 0xFF) + 1] += 1 }
            }
            for digit in 1..<257 { counts[digit] += counts[digit - 1] }
            keys.withUnsafeBufferPointer { keys in
                positions.withUnsafeBufferPointer { positions in
                    otherKeys.withUnsafeMutableBufferPointer { outKeys in
                        otherPositions.withUnsafeMutableBufferPointer { outPositions in
                            for index in 0..<count {
                                let digit = Int((keys[index] >> UInt64(shift)) & 0xFF)
                                let target = counts[digit]
                                counts[digit] = target + 1
                                outKeys[target] = keys[index]
                                outPositions[target] = positions[index]
                            }
                        }
                    }
                }
            }
            swap(&keys, &otherKeys)
            swap(&positions, &otherPositions)
        }
    }

    /// The positions of `rows` ordered by the UTF-8 bytes of string column `column` (nil first when ascending,
    /// last when descending; position breaks ties); nil past `Int32.max` rows (the general sort handles those).
    /// Each string's first eight bytes, big-endian, are radix-sorted as a number; only strings sharing those
    /// eight bytes are compared further, over their bytes copied once into one buffer.
    private static func stringOrder(_ rows: [StableValue], column: Int, ascending: Bool) throws -> [Int]? {
        let count = rows.count
        guard count < Int(Int32.max) else { return nil }
        var starts = [Int](repeating: 0, count: count + 1)
        var prefixes: [UInt64] = []
        var positions: [Int32] = []
        prefixes.reserveCapacity(count)
        positions.reserveCapacity(count)
        var nulls: [Int] = []
        var bytes: [UInt8] = []
        for (position, stable) in rows.enumerated() {
            let row = try RowView(stable.bytes)
            if row.isNull(column) {
                nulls.append(position)
            } else {
                row.withBytes(column) { value in
                    let prefix = Self.prefix(value)
                    prefixes.append(ascending ? prefix : ~prefix)
                    positions.append(Int32(truncatingIfNeeded: position))
                    bytes.append(contentsOf: value)
                }
            }
            starts[position + 1] = bytes.count
        }
        // Ordered by the first eight bytes (stable, so equal prefixes keep position order); only runs of equal
        // prefixes need the rest of their bytes compared.
        radixSort(&prefixes, carrying: &positions)
        bytes.withUnsafeBytes { bytes in
            starts.withUnsafeBufferPointer { starts in
                func before(_ a: Int32, _ b: Int32) -> Bool {
                    let order = QueryValues.compareRaw(
                        UnsafeRawBufferPointer(rebasing: bytes[starts[Int(a)]..<starts[Int(a) + 1]]),
                        UnsafeRawBufferPointer(rebasing: bytes[starts[Int(b)]..<starts[Int(b) + 1]]))
                    return order == 0 ? a < b : (order < 0) == ascending
                }
                var start = 0
                while start < prefixes.count {
                    var end = start + 1
                    while end < prefixes.count && prefixes[end] == prefixes[start] { end += 1 }
                    if end - start > 1 { positions[start..<end].sort(by: before) }
                    start = end
                }
            }
        }
        let present = positions.map { Int($0) }
        return ascending ? nulls + present : present + nulls
    }

    /// The first eight bytes of `value` as a big-endian number (zeros past its end): numbers order as the bytes
    /// they start with.
    private static func prefix(_ value: UnsafeRawBufferPointer) -> UInt64 {
        if value.count >= 8 { return UInt64(bigEndian: value.loadUnaligned(as: UInt64.self)) }
        var prefix: UInt64 = 0
        for index in 0..<8 { prefix = prefix << 8 | UInt64(index < value.count ? value[index] : 0) }
        return prefix
    }

    /// `values` as numbers (nil for nil) when they are all numbers or nil, or all dates or nil.
    private static func numbers(_ values: [_StoredValue]) -> [Double?]? {
        var numbers: [Double?] = []
        numbers.reserveCapacity(values.count)
        // A mixed property may hold numbers and dates: those sort by type first, not as one number line.
        var dates = false
        var others = false
        for value in values {
            switch value {
            case .null: numbers.append(nil)
            case .int(let int) where abs(int) < 1 << 53:
                others = true
                numbers.append(Double(int))
            case .double(let double) where !double.isNaN:
                others = true
                numbers.append(double)
            case .float(let float) where !float.isNaN:
                others = true
                numbers.append(Double(float))
            case .date(let date):
                dates = true
                numbers.append(date.timeIntervalSinceReferenceDate)
            default: return nil
            }
        }
        return dates && others ? nil : numbers
    }

    /// Objects an index allows for a condition, and whether they are exactly the objects satisfying it (no
    /// index entry was cut, so no row needs checking).
    struct Candidates {
        /// Ascending, without duplicates.
        var keys: [Int64]
        var exact: Bool
    }

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

    /// Sort order: nil before every value, values of different types in `MixedSortOrder`'s order (which only a
    /// mixed property holds), values of one type by `QueryValues.order`.
    static func order(_ a: _StoredValue, _ b: _StoredValue) -> Int { MixedSortOrder.compare(a, b) }

    /// Every object key of the class whose row passes `filters`, in key order: one pass over the rows.
    private func scan(realm: Realm, binding: TableBinding, filters: [BoundPredicate]) throws(Realm.Error) -> Found {
        var keys: [Int64] = []
        if let tree = realm.treeView(binding.rowsTree) {
            if let kernel = ColumnScan.kernel(filters, realm: realm) {
                // Fixed-width column conditions only: test cached column extracts, not rows.
                return try realm.storage { try ColumnScan.scan(tree, kernel: kernel, cache: realm.store.segmentCache) }
            }
            // Outside a write transaction: keep each match's row for what follows (sorting, creating objects).
            var rows: [StableValue] = []
            var compiled: [RowCondition] = []
            var general: [BoundPredicate] = []
            for filter in filters {
                if let condition = filter.compiled(realm: realm) {
                    compiled.append(condition)
                } else {
                    general.append(filter)
                }
            }
            // The compiled conditions read the row in place, through one closure; the others run on what passes.
            let test = BoundPredicate.all(compiled)
            try realm.storage {
                if general.isEmpty {
                    try tree.forEachStableEntry { key, value in
                        if test(try RowView(value.bytes)) {
                            keys.append(KeyEncoding.decodeObjectKey(key))
                            rows.append(value)
                        }
                        return true
                    }
                    return
                }
                try tree.forEachStableEntry { keyBytes, value in
                    let row = try RowView(value.bytes)
                    guard test(row) else { return true }
                    let key = KeyEncoding.decodeObjectKey(keyBytes)
                    for filter in general where try !realm.queryMatches(filter, key: key, row: row) { return true }
                    keys.append(key)
                    rows.append(value)
                    return true
                }
            }
            return Found(keys: keys, rows: rows, ascending: true)
        }
        for key in try realm.objectKeys(tree: binding.rowsTree) {
            let matches =
                try realm.withRow(tree: binding.rowsTree, key: key) { (row) throws(Realm.Error) -> Bool in
                    for filter in filters where try !realm.queryMatches(filter, key: key, row: row) { return false }
                    return true
                } ?? false
            if matches { keys.append(key) }
        }
        return Found(keys: keys, rows: nil, ascending: true)
    }
}

/// A stored value as a hashable key (for `distinct`).
struct QueryHashKey: Hashable {
    let value: AnyHashable

    init(_ stored: _StoredValue) {
        switch stored {
        case .null: value = AnyHashable(0 as UInt8)
        case .int(let v): value = AnyHashable(v)
        case .bool(let v): value = AnyHashable(v)
        case .float(let v): value = AnyHashable(Double(v))
        case .double(let v): value = AnyHashable(v)
        case .string(let v): value = AnyHashable(v)
        case .data(let v): value = AnyHashable(v)
        case .date(let v): value = AnyHashable(v)
        case .objectId(let v): value = AnyHashable(v.bytes)
        case .uuid(let v): value = AnyHashable(v)
        case .decimal128(let v): value = AnyHashable(v.description)
        case .object(let v): value = AnyHashable(ObjectIdentifier(v))
        case .collection(let v): value = AnyHashable(ObjectIdentifier(v))
        case .mixed(let v): value = AnyHashable(v)
        }
    }
}

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
    private func sortPath(_ text: String, binder: QueryBinder) throws(Realm.Error) -> BoundPath {
        let path = try binder.bindPath(text.split(separator: ".").map(String.init), at: 0)
        guard !path.isMultiple else {
            throw binder.failure("\(path.text) passes through a collection; sort and distinct need one value", at: 0)
        }
        return path
    }

    private func binder(_ text: String) -> QueryBinder { queryBinder(text, []) }

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

    /// The values of `property` over the objects (nils included).
    private func propertyValues(_ property: String) -> [_StoredValue] {
        owner.checkThread()
        do {
            let path = try sortPath(property, binder: binder(property))
            let (keys, rows) = try everyMatch()
            var values: [_StoredValue] = []
            for (position, key) in keys.enumerated() {
                values += try owner.storage {
                    try owner.queryValues(path, key: key, row: try rows.map { try RowView($0[position].bytes) })
                }
            }
            return values
        } catch {
            return owner.survive(error, "\(error)", returning: [])
        }
    }

    /// `@sum`, `@avg`, `@min` or `@max` of a plain numeric column, read straight from the rows in one pass (no
    /// values are boxed); nil when the property is not such a column or the rows are not at hand.
    private func columnAggregate(_ name: String, _ property: String) -> _StoredValue? {
        owner.checkThread()
        guard let path = try? sortPath(property, binder: binder(property)), let (column, info) = path.directColumn,
            [.int, .double, .float].contains(info.type)
        else { return nil }
        var intSum: Int64 = 0
        var doubleSum = 0.0
        var count = 0
        var smallest: Double = .infinity
        var largest: Double = -.infinity
        var smallestInt = Int64.max
        var largestInt = Int64.min
        let isInt = info.type == .int
        func add(_ row: RowView) {
            guard !row.isNull(column) else { return }
            count += 1
            if isInt {
                let value = row.int(column)
                intSum &+= value
                smallestInt = Swift.min(smallestInt, value)
                largestInt = Swift.max(largestInt, value)
            } else {
                let value = info.type == .double ? row.double(column) : Double(row.float(column))
                doubleSum += value
                // NaN is unordered: it never becomes the smallest or largest.
                if value < smallest { smallest = value }
                if value > largest { largest = value }
            }
        }
        do {
            if let tree = owner.treeView(binding.rowsTree) {
                // Outside a write: add up the column's cached segment extracts, over every object or over the
                // positions a column scan found (no rows read); nil when the matches came another way.
                // (Results over a list, set or linking objects start from those objects: not from the class.)
                let everyObject = query == nil || (query?.base == nil && query?.stages.isEmpty == true)
                let pending =
                    try everyObject || query?.base != nil
                    ? nil : query?.pendingMatches(realm: owner, binding: binding)
                if everyObject || pending != nil {
                    let totals = try owner.storage {
                        try ColumnScan.totals(
                            tree, column: column, kind: isInt ? .int : info.type == .double ? .double : .float,
                            pending: pending, cache: owner.store.segmentCache)
                    }
                    count = totals.count
                    intSum = totals.intSum
                    smallestInt = totals.intMin
                    largestInt = totals.intMax
                    doubleSum = totals.doubleSum
                    smallest = totals.doubleMin
                    largest = totals.doubleMax
                    return result(name)
                }
            }
            try owner.storage {
                if query == nil, let tree = owner.treeView(binding.rowsTree) {
                    try tree.forEachEntry { _, bytes in
                        add(try RowView(bytes))
                        return true
                    }
                } else {
                    let (_, rows) = try everyMatch()
                    guard let rows else { throw StorageError.indexOutOfRange(index: 0, count: 0) }
                    for row in rows { add(try RowView(row.bytes)) }
                }
            }
        } catch {
            return nil
        }
        return result(name)
        func typed(_ value: Double) -> _StoredValue { info.type == .float ? .float(Float(value)) : .double(value) }
        func result(_ name: String) -> _StoredValue {
            switch name {
            case "@sum": return isInt ? .int(intSum) : typed(doubleSum)
            case "@avg":
                return count == 0 ? .null : .double(isInt ? Double(intSum) / Double(count) : doubleSum / Double(count))
            case "@min":
                if isInt { return count == 0 ? .null : .int(smallestInt) }
                return smallest > largest ? .null : typed(smallest)
            default:
                if isInt { return count == 0 ? .null : .int(largestInt) }
                return smallest > largest ? .null : typed(largest)
            }
        }
    }

    /// The aggregate `name` of `property` over the objects.
    private func aggregate(_ name: String, _ property: String) -> _StoredValue {
        columnAggregate(name, property) ?? QueryValues.aggregate(name, propertyValues(property))
    }

    /// The objects' keys in order and, when they were read in one pass, their rows (every object of the class
    /// when there is no query: one walk over the rows).
    func everyMatch() throws(Realm.Error) -> (keys: [Int64], rows: [StableValue]?) {
        try (query ?? ResultsQuery(stages: [])).matches(realm: owner, binding: binding)
    }

    /// The smallest value of `property` (nil when there are no objects or all values are nil).
    public func min<T: _Persistable>(ofProperty property: String) -> T? {
        Self.converted(aggregate("@min", property))
    }

    /// The largest value of `property`.
    public func max<T: _Persistable>(ofProperty property: String) -> T? {
        Self.converted(aggregate("@max", property))
    }

    /// `value` as a `T`: as stored, or as a number of another type (an `Int` property's minimum read as `Double`).
    private static func converted<T: _Persistable>(_ value: _StoredValue) -> T? {
        if let typed = T._fromStored(value) { return typed }
        guard let number = QueryValues.number(value) else { return nil }
        return T._fromStored(.double(number)) ?? T._fromStored(.float(Float(number)))
            ?? (number.rounded() == number && abs(number) < 9.2e18 ? T._fromStored(.int(Int64(number))) : nil)
    }

    /// The sum of `property` (0 when there are no objects).
    public func sum<T: _Persistable>(ofProperty property: String) -> T {
        let total = aggregate("@sum", property)
        if let value = T._fromStored(total) { return value }
        if let number = QueryValues.number(total) {
            if let value = T._fromStored(.double(number)) { return value }
            if let value = T._fromStored(.int(Int64(number))) { return value }
            if let value = T._fromStored(.float(Float(number))) { return value }
        }
        return T._defaultValue()
    }

    /// The mean of `property`; nil when there are no values.
    public func average<T: _Persistable>(ofProperty property: String) -> T? {
        let mean = aggregate("@avg", property)
        if let value = T._fromStored(mean) { return value }
        guard let number = QueryValues.number(mean) else { return nil }
        return T._fromStored(.double(number)) ?? T._fromStored(.float(Float(number)))
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
                    matches = try owner.withRow(tree: binding.rowsTree, key: key) { row in
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

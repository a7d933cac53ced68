import Foundation
import StrataStorage

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
                    let matches = try realm.withRow(binding, key: key) {
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
                        matches = try realm.withRow(binding, key: key) { row in
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
                try realm.withRow(binding, key: key) { (row) throws(Realm.Error) -> Bool in
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

import Foundation
import StrataStorage

// Sorting results: the sort values of each object, and fast orders for numeric columns (radix sort of the
// values' order-preserving bits) and string columns (prefix keys), falling back to `MixedSortOrder`.

extension ResultsQuery {
    /// The value of each path for each object found (one array per path, in position order). Plain columns are
    /// read from the rows already read, or, for many keys in key order, with one walk over the rows instead of
    /// one lookup per key.
    func sortValues(_ paths: [BoundPath], found: Found, realm: Realm, binding: TableBinding)
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
    static func numericOrder(_ rows: [StableValue], column: Int, info: _PropertyInfo, ascending: Bool)
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
    static func orderedBits(_ value: Double) -> UInt64? {
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
    static func stringOrder(_ rows: [StableValue], column: Int, ascending: Bool) throws -> [Int]? {
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
    static func prefix(_ value: UnsafeRawBufferPointer) -> UInt64 {
        if value.count >= 8 { return UInt64(bigEndian: value.loadUnaligned(as: UInt64.self)) }
        var prefix: UInt64 = 0
        for index in 0..<8 { prefix = prefix << 8 | UInt64(index < value.count ? value[index] : 0) }
        return prefix
    }

    /// `values` as numbers (nil for nil) when they are all numbers or nil, or all dates or nil.
    static func numbers(_ values: [_StoredValue]) -> [Double?]? {
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
}

extension ResultsQuery {
    /// Sort order: nil before every value, values of different types in `MixedSortOrder`'s order (which only a
    /// mixed property holds), values of one type by `QueryValues.order`.
    static func order(_ a: _StoredValue, _ b: _StoredValue) -> Int { MixedSortOrder.compare(a, b) }
}

import StrataStorage

/// Unindexed scans over fixed-width columns, run on column extracts of the rows tree's segments instead of on the
/// rows themselves.
///
/// A scan over rows touches every row (~80 bytes, one cache miss each); a condition on an integer, boolean,
/// floating-point or date column needs 8 of those bytes. The rows tree is cut into segments (the rows under one
/// bottom branch page, see ``TreeSegment``), each named for ever by its page and the version that wrote it. The
/// first scan of a segment extracts its object keys and the condition's columns into plain arrays, kept in the
/// file's ``SegmentCache``; later scans — in any Realm on the file, at any later version in which the segment is
/// unchanged — test the arrays in tight loops. A commit changes the identities of the segments it modified only,
/// so those alone are extracted again.
///
/// The extracts are memory, not file format: nothing is written, nothing needs maintaining by writes, and the
/// cache's budget (``StrataStorage/StoreOptions/segmentCacheBytes``) bounds them.
enum ColumnScan {
    /// A condition over column extracts. It gives exactly the answers of the `RowCondition` compiled from the
    /// same predicate (`BoundPredicate.compiled`), nulls and NaNs included.
    indirect enum Kernel {
        case constant(Bool)
        /// Every operand holds (flat, as `BoundPredicate.and` is).
        case and([Kernel])
        /// At least one operand holds.
        case or([Kernel])
        case not(Kernel)
        /// Whether the column is null (`isNull`) or not.
        case null(column: Int, isNull: Bool)
        /// An integer (or boolean, as 0/1) column against an integer; null rows are `nullResult`.
        case int(column: Int, Comparison, Int64)
        /// A double column against a double, by IEEE comparison (NaN is unequal to everything).
        case double(column: Int, Comparison, Double)
        /// A column read as a double (`kind`) ordered against a constant. Numbers treat NaN as unordered (only `!=`
        /// holds), as `QueryValues.order` does; dates order NaN as equal, as `Date` comparison does.
        case ordered(column: Int, ColumnKind, Comparison, Double, nanUnordered: Bool)
        /// An integer column's value is one of `values` (`matchesNull` for null rows).
        case intSet(column: Int, Set<Int64>, matchesNull: Bool)
        /// A string column's UTF-8 bytes satisfy `test` (`nullResult` for null rows).
        case bytes(column: Int, (UnsafeRawBufferPointer) -> Bool, nullResult: Bool)
        /// A string column contains the ASCII `needle` (lowercase when `folds`: ASCII case is ignored). A segment
        /// whose strings are all ASCII is searched as one buffer; any other runs `test` per row (the same answer).
        /// Null rows do not match.
        case contains(column: Int, needle: [UInt8], folds: Bool, test: (UnsafeRawBufferPointer) -> Bool)

        /// The columns the kernel reads as 8-byte slots (with their nulls).
        var slotColumns: Set<Int> { columns.slots }

        /// The columns the kernel reads as strings.
        var stringColumns: Set<Int> { columns.strings }

        /// The columns the kernel reads, found with an explicit stack.
        private var columns: (slots: Set<Int>, strings: Set<Int>) {
            var slots = Set<Int>()
            var strings = Set<Int>()
            var pending = [self]
            while let kernel = pending.popLast() {
                switch kernel {
                case .constant: break
                case .and(let operands), .or(let operands): pending += operands
                case .not(let operand): pending.append(operand)
                case .null(let column, _), .int(let column, _, _), .double(let column, _, _),
                    .ordered(let column, _, _, _, _), .intSet(let column, _, _):
                    slots.insert(column)
                case .bytes(let column, _, _), .contains(let column, _, _, _): strings.insert(column)
                }
            }
            return (slots, strings)
        }
    }

    enum Comparison {
        case equal, notEqual, less, lessOrEqual, greater, greaterOrEqual

        init?(_ op: RQLOperator) {
            switch op {
            case .equal: self = .equal
            case .notEqual: self = .notEqual
            case .less: self = .less
            case .lessOrEqual: self = .lessOrEqual
            case .greater: self = .greater
            case .greaterOrEqual: self = .greaterOrEqual
            default: return nil
            }
        }

        /// What a null row gives: only `!=` holds for it.
        var nullResult: Bool { self == .notEqual }
    }

    /// How a column's 8-byte slot reads as a number for `.ordered`.
    enum ColumnKind {
        case intAsDouble, float, double
    }

    /// One column of a segment: each row's 8-byte slot (0 when null) and, when any row is null, which are.
    final class Column: Sendable {
        let values: [Int64]
        /// Empty when no row of the segment is null in this column.
        let nulls: [Bool]

        init(values: [Int64], nulls: [Bool]) {
            self.values = values
            self.nulls = nulls
        }

        var cost: Int { values.count * 8 + nulls.count + 64 }
    }

    /// One string column of a segment: every row's UTF-8 bytes back to back, where each starts, and which are null.
    final class Strings: Sendable {
        /// Row `i`'s bytes are `bytes[offsets[i]..<offsets[i + 1]]`.
        let offsets: [Int32]
        let bytes: [UInt8]
        /// Empty when no row of the segment is null in this column.
        let nulls: [Bool]

        /// Whether every byte is ASCII (then a byte-level case fold is the whole fold).
        let isASCII: Bool

        init(offsets: [Int32], bytes: [UInt8], nulls: [Bool]) {
            self.offsets = offsets
            self.bytes = bytes
            self.nulls = nulls
            isASCII = bytes.withUnsafeBytes { QueryValues.isASCII($0) }
        }

        var cost: Int { offsets.count * 4 + bytes.count + nulls.count + 96 }
    }

    /// The extracts a kernel reads, for one segment.
    struct Extracts {
        var slots: [Int: Column] = [:]
        var strings: [Int: Strings] = [:]
    }

    /// The object keys of a segment's rows, in order.
    final class Keys: Sendable {
        let keys: [Int64]
        init(_ keys: [Int64]) { self.keys = keys }
        var cost: Int { keys.count * 8 + 64 }
    }

    /// Cache tag of a segment's keys; slot columns use their column number, string columns theirs plus this.
    private static let keysTag = -1
    private static let stringsTag = 1 << 32

    /// The kernel of `filters` (all of them, ANDed), or nil when one of them is not a plain column condition.
    static func kernel(_ filters: [BoundPredicate], realm: Realm? = nil) -> Kernel? {
        var kernels: [Kernel] = []
        for filter in filters {
            guard let kernel = filter.columnKernel(realm: realm) else { return nil }
            kernels.append(kernel)
        }
        switch kernels.count {
        case 0: return nil
        case 1: return kernels[0]
        default: return .and(kernels)
        }
    }

    /// The keys (and rows) of the objects in `tree` satisfying `kernel`, in key order.
    static func scan(_ tree: TreeView, kernel: Kernel, cache: SegmentCache) throws -> ResultsQuery.Found {
        let columns = kernel.slotColumns.sorted()
        let strings = kernel.stringColumns.sorted()
        var keys: [Int64] = []
        var pending = PendingRows()
        var match: [UInt8] = []
        var scratch: [[UInt8]] = []
        var positions: [Int] = []
        try tree.forEachSegment { segment in
            let (found, extracts) = try self.extracts(of: segment, columns: columns, strings: strings, cache: cache)
            guard let segmentKeys = found else { throw StorageError.invalidArgument("segment keys were not extracted") }
            let count = segmentKeys.keys.count
            if match.count != count { match = [UInt8](repeating: 0, count: count) }
            evaluate(kernel, extracts, count: count, into: &match, scratch: &scratch, depth: 0)
            positions.removeAll(keepingCapacity: true)
            match.withUnsafeBufferPointer { match in
                for position in 0..<count where match[position] != 0 { positions.append(position) }
            }
            guard !positions.isEmpty else { return true }
            segmentKeys.keys.withUnsafeBufferPointer { all in
                for position in positions { keys.append(all[position]) }
            }
            pending.segments.append(
                (segment.identity, pending.positions.count..<pending.positions.count + positions.count))
            pending.positions.append(contentsOf: positions)
            return true
        }
        return ResultsQuery.Found(keys: keys, rows: nil, ascending: true, pending: pending)
    }

    /// Where the rows a scan found are: positions in the segments that held them. Reading them is left to whoever
    /// needs them (a count does not).
    struct PendingRows {
        /// Each segment holding matches, in key order, with the range of `positions` that are its matches.
        var segments: [(identity: TreeSegment.Identity, range: Range<Int>)] = []
        var positions: [Int] = []

        /// The rows, read from the version `realm` reads now (the one the scan ran on).
        func rows(realm: Realm, binding: TableBinding) throws(Realm.Error) -> [StableValue] {
            var rows: [StableValue] = []
            rows.reserveCapacity(positions.count)
            guard !segments.isEmpty else { return rows }
            guard let tree = realm.treeView(binding.rowsTree) else {
                throw .fileAccess(path: realm.path, reason: "the rows a query found are no longer readable")
            }
            try realm.storage {
                try forEachSegment(of: tree) { segment, positions in
                    rows.append(contentsOf: try segment.stableValues(at: Array(positions)))
                }
            }
            return rows
        }

        /// Calls `body` with each segment of `tree` holding matches, in key order, and the matches' positions in
        /// it; throws when `tree` (the version the scan ran on) no longer has one of those segments.
        func forEachSegment(of tree: TreeView, _ body: (TreeSegment, ArraySlice<Int>) throws -> Void) throws {
            guard !segments.isEmpty else { return }
            var next = 0
            try tree.forEachSegment { segment in
                guard segment.identity == segments[next].identity else { return true }
                try body(segment, positions[segments[next].range])
                next += 1
                return next < segments.count
            }
            guard next == segments.count else {
                throw StorageError.invalidArgument("the rows a query found are no longer in the version it read")
            }
        }
    }

    /// Count, sum, smallest and largest of a numeric column's non-null values (the fields of the column's kind).
    struct Totals {
        var count = 0
        var intSum: Int64 = 0
        var intMin = Int64.max
        var intMax = Int64.min
        var doubleSum = 0.0
        /// NaN never becomes the smallest or largest value (it is unordered).
        var doubleMin = Double.infinity
        var doubleMax = -Double.infinity
    }

    /// How a numeric column's slot reads.
    enum NumberKind {
        case int, double, float
    }

    /// ``Totals`` of slot column `column` over every row of `tree` or, given `pending`, over the rows a column
    /// scan found: read from the segments' cached extracts (extracted once when missing), in key order, so a
    /// floating-point sum adds in the same order as a walk over the rows.
    static func totals(
        _ tree: TreeView, column: Int, kind: NumberKind, pending: PendingRows?, cache: SegmentCache
    ) throws -> Totals {
        var totals = Totals()
        /// Adds the column's values of `segment` at `selected` (every position when nil).
        func add(_ segment: TreeSegment, _ selected: ArraySlice<Int>?) throws {
            let (_, extracts) = try self.extracts(
                of: segment, columns: [column], strings: [], cache: cache, needsKeys: false)
            guard let extract = extracts.slots[column] else {
                throw StorageError.invalidArgument("column \(column) was not extracted")
            }
            extract.values.withUnsafeBufferPointer { values in
                extract.nulls.withUnsafeBufferPointer { nulls in
                    func add(_ position: Int) {
                        if !nulls.isEmpty && nulls[position] { return }
                        totals.count += 1
                        let slot = values[position]
                        switch kind {
                        case .int:
                            totals.intSum &+= slot
                            totals.intMin = Swift.min(totals.intMin, slot)
                            totals.intMax = Swift.max(totals.intMax, slot)
                        case .double, .float:
                            let value =
                                kind == .double
                                ? Double(bitPattern: UInt64(bitPattern: slot))
                                : Double(Float(bitPattern: UInt32(truncatingIfNeeded: slot)))
                            totals.doubleSum += value
                            if value < totals.doubleMin { totals.doubleMin = value }
                            if value > totals.doubleMax { totals.doubleMax = value }
                        }
                    }
                    if let selected {
                        for position in selected { add(position) }
                    } else if kind == .int && nulls.isEmpty {
                        // The common case as a plain loop the compiler can vectorise.
                        var sum: Int64 = 0
                        var low = totals.intMin
                        var high = totals.intMax
                        for value in values {
                            sum &+= value
                            low = Swift.min(low, value)
                            high = Swift.max(high, value)
                        }
                        totals.count += values.count
                        totals.intSum &+= sum
                        totals.intMin = low
                        totals.intMax = high
                    } else {
                        for position in 0..<values.count { add(position) }
                    }
                }
            }
        }
        if let pending {
            try pending.forEachSegment(of: tree) { segment, positions in try add(segment, positions) }
        } else {
            try tree.forEachSegment { segment in
                try add(segment, nil)
                return true
            }
        }
        return totals
    }

    /// The keys and the wanted columns of `segment`, from the cache or extracted in one pass over its rows.
    private static func extracts(
        of segment: TreeSegment, columns: [Int], strings: [Int], cache: SegmentCache, needsKeys: Bool = true
    ) throws -> (Keys?, Extracts) {
        func key(_ tag: Int) -> SegmentCache.Key { SegmentCache.Key(segment: segment.identity, tag: tag) }
        // Aggregates do not need the keys: when they are not cached, they are not extracted either.
        var keys = needsKeys ? cache.value(for: key(keysTag)) as? Keys : nil
        var found = Extracts()
        var missing: [Int] = []
        var missingStrings: [Int] = []
        for column in columns {
            if let cached = cache.value(for: key(column)) as? Column {
                found.slots[column] = cached
            } else {
                missing.append(column)
            }
        }
        for column in strings {
            if let cached = cache.value(for: key(stringsTag + column)) as? Strings {
                found.strings[column] = cached
            } else {
                missingStrings.append(column)
            }
        }
        if keys != nil || !needsKeys, missing.isEmpty, missingStrings.isEmpty { return (keys, found) }
        let count = segment.count
        let extractsKeys = needsKeys && keys == nil
        // Filled through raw buffers: captured arrays would cost an exclusivity check and a uniqueness check per
        // row and column (an extraction then cost twice a walk over the rows).
        let slots = max(count, 1)
        let keysOut = UnsafeMutablePointer<Int64>.allocate(capacity: extractsKeys ? slots : 1)
        let valuesOut = UnsafeMutablePointer<Int64>.allocate(capacity: max(missing.count, 1) * slots)
        let nullsOut = UnsafeMutablePointer<Bool>.allocate(capacity: max(missing.count, 1) * slots)
        let anyNull = UnsafeMutablePointer<Bool>.allocate(capacity: max(missing.count, 1))
        defer {
            keysOut.deallocate()
            valuesOut.deallocate()
            nullsOut.deallocate()
            anyNull.deallocate()
        }
        valuesOut.initialize(repeating: 0, count: max(missing.count, 1) * slots)
        nullsOut.initialize(repeating: false, count: max(missing.count, 1) * slots)
        anyNull.initialize(repeating: false, count: max(missing.count, 1))
        if extractsKeys { keysOut.initialize(repeating: 0, count: slots) }
        let slotColumns = missing
        var offsets = missingStrings.map { _ in [Int32](repeating: 0, count: count + 1) }
        var bytes = missingStrings.map { _ in [UInt8]() }
        var stringNulls = missingStrings.map { _ in [Bool]() }
        let hasStrings = !missingStrings.isEmpty
        try segment.forEachStableEntry { position, key, value in
            guard position < count else { return }
            if extractsKeys { keysOut[position] = KeyEncoding.decodeObjectKey(key) }
            guard !slotColumns.isEmpty || hasStrings else { return }
            let row = try RowView(value.bytes)
            for index in slotColumns.indices {
                let column = slotColumns[index]
                if row.isNull(column) {
                    nullsOut[index * slots + position] = true
                    anyNull[index] = true
                } else {
                    valuesOut[index * slots + position] = row.int(column)
                }
            }
            guard hasStrings else { return }
            for (index, column) in missingStrings.enumerated() {
                if row.isNull(column) {
                    if stringNulls[index].isEmpty { stringNulls[index] = [Bool](repeating: false, count: count) }
                    stringNulls[index][position] = true
                } else {
                    row.withBytes(column) { bytes[index].append(contentsOf: $0) }
                }
                guard bytes[index].count <= Int(Int32.max) else {
                    throw StorageError.invalidArgument("segment strings over 2 GiB")
                }
                offsets[index][position + 1] = Int32(bytes[index].count)
            }
        }
        if extractsKeys {
            let made = Keys(Array(UnsafeBufferPointer(start: keysOut, count: count)))
            cache.insert(made, cost: made.cost, for: key(keysTag))
            keys = made
        }
        for (index, column) in missing.enumerated() {
            let made = Column(
                values: Array(UnsafeBufferPointer(start: valuesOut + index * slots, count: count)),
                nulls: anyNull[index] ? Array(UnsafeBufferPointer(start: nullsOut + index * slots, count: count)) : [])
            cache.insert(made, cost: made.cost, for: key(column))
            found.slots[column] = made
        }
        for (index, column) in missingStrings.enumerated() {
            let made = Strings(offsets: offsets[index], bytes: bytes[index], nulls: stringNulls[index])
            cache.insert(made, cost: made.cost, for: key(stringsTag + column))
            found.strings[column] = made
        }
        return (keys, found)
    }

    /// Substring search over a whole segment's string buffer.
    enum Substrings {
        /// Sets `match[row]` to 1 for the rows of `strings` (all ASCII) containing `needle` (lowercase when
        /// `folds`), 0 for the others. Positions are screened 16 at a time on the needle's first two bytes (either
        /// case), and a hit counts only inside one row.
        static func mark(_ strings: Strings, needle: [UInt8], folds: Bool, into match: inout [UInt8]) {
            let rows = strings.offsets.count - 1
            match.withUnsafeMutableBufferPointer { match in
                match.update(repeating: 0)
                guard let first = needle.first else {
                    // Every string contains the empty string; nulls do not.
                    match.update(repeating: 1)
                    for (row, isNull) in strings.nulls.enumerated() where isNull { match[row] = 0 }
                    return
                }
                strings.bytes.withUnsafeBufferPointer { bytes in
                    strings.offsets.withUnsafeBufferPointer { offsets in
                        needle.withUnsafeBufferPointer { needle in
                            search(
                                bytes, offsets: offsets, rows: rows, needle: needle, first: first, folds: folds,
                                into: match)
                        }
                    }
                }
            }
        }

        @inline(__always)
        private static func upper(_ byte: UInt8, _ folds: Bool) -> UInt8 {
            folds && byte >= 0x61 && byte <= 0x7A ? byte & 0xDF : byte
        }

        private static func search(
            _ bytes: UnsafeBufferPointer<UInt8>, offsets: UnsafeBufferPointer<Int32>, rows: Int,
            needle: UnsafeBufferPointer<UInt8>, first: UInt8, folds: Bool, into match: UnsafeMutableBufferPointer<UInt8>
        ) {
            let total = bytes.count
            let length = needle.count
            guard total >= length, let base = bytes.baseAddress else { return }
            let second = length > 1 ? needle[1] : first
            let firstLow = SIMD16<UInt8>(repeating: first)
            let firstHigh = SIMD16<UInt8>(repeating: upper(first, folds))
            let secondLow = SIMD16<UInt8>(repeating: second)
            let secondHigh = SIMD16<UInt8>(repeating: upper(second, folds))
            let raw = UnsafeRawPointer(base)
            var row = 0
            /// Checks a candidate start; on a match inside one row, marks the row and returns where the next row
            /// starts (no need to look further in this one).
            func check(_ start: Int) -> Int? {
                guard start + length <= total else { return nil }
                var offset = 0
                while offset < length {
                    var byte = base[start + offset]
                    if folds && byte >= 0x41 && byte <= 0x5A { byte |= 0x20 }
                    if byte != needle[offset] { return nil }
                    offset += 1
                }
                while row + 1 <= rows && Int(offsets[row + 1]) <= start { row += 1 }
                guard row < rows, start + length <= Int(offsets[row + 1]) else { return nil }
                match[row] = 1
                return Int(offsets[row + 1])
            }
            var position = 0
            // Positions before this are inside a row already found.
            var skipUntil = 0
            // Screen 16 positions at a time: both vectors must fit (position + 1 + 16 <= total).
            while position + 17 <= total {
                let here = raw.loadUnaligned(fromByteOffset: position, as: SIMD16<UInt8>.self)
                let next = raw.loadUnaligned(fromByteOffset: position + 1, as: SIMD16<UInt8>.self)
                let firstHits = (here .== firstLow) .| (here .== firstHigh)
                let hits = length > 1 ? firstHits .& ((next .== secondLow) .| (next .== secondHigh)) : firstHits
                if any(hits) {
                    for lane in 0..<16 where hits[lane] && position + lane >= skipUntil {
                        if let after = check(position + lane) { skipUntil = after }
                    }
                }
                position = max(position + 16, skipUntil)
            }
            while position + length <= total {
                if position >= skipUntil, base[position] == first || base[position] == upper(first, folds),
                    let after = check(position)
                {
                    skipUntil = after
                }
                position = max(position + 1, skipUntil)
            }
        }
    }

    /// Writes 1 into `match` for each row satisfying `kernel`, 0 for the others. Recurses once per level of
    /// nesting in this small function; other conditions are `evaluateCondition`'s.
    private static func evaluate(
        _ kernel: Kernel, _ columns: Extracts, count: Int, into match: inout [UInt8], scratch: inout [[UInt8]],
        depth: Int
    ) {
        switch kernel {
        case .and(let operands), .or(let operands):
            guard let first = operands.first else {
                // No operands: AND holds, OR does not.
                let byte: UInt8
                if case .and = kernel { byte = 1 } else { byte = 0 }
                match.withUnsafeMutableBufferPointer { $0.update(repeating: byte) }
                return
            }
            evaluate(first, columns, count: count, into: &match, scratch: &scratch, depth: depth + 1)
            while scratch.count <= depth { scratch.append([]) }
            var other = scratch[depth]
            scratch[depth] = []
            if other.count != count { other = [UInt8](repeating: 0, count: count) }
            let isAnd: Bool
            if case .and = kernel { isAnd = true } else { isAnd = false }
            for operand in operands.dropFirst() {
                evaluate(operand, columns, count: count, into: &other, scratch: &scratch, depth: depth + 1)
                match.withUnsafeMutableBufferPointer { match in
                    other.withUnsafeBufferPointer { other in
                        if isAnd {
                            for index in 0..<count { match[index] &= other[index] }
                        } else {
                            for index in 0..<count { match[index] |= other[index] }
                        }
                    }
                }
            }
            scratch[depth] = other
        case .not(let a):
            evaluate(a, columns, count: count, into: &match, scratch: &scratch, depth: depth + 1)
            match.withUnsafeMutableBufferPointer { match in
                for index in 0..<count { match[index] ^= 1 }
            }
        default:
            evaluateCondition(kernel, columns, count: count, into: &match)
        }
    }

    /// `evaluate` for a kernel that is not `and`, `or` or `not`.
    @inline(never)
    private static func evaluateCondition(_ kernel: Kernel, _ columns: Extracts, count: Int, into match: inout [UInt8])
    {
        switch kernel {
        case .and, .or, .not:
            var scratch: [[UInt8]] = []
            evaluate(kernel, columns, count: count, into: &match, scratch: &scratch, depth: 0)
        case .constant(let value):
            let byte: UInt8 = value ? 1 : 0
            match.withUnsafeMutableBufferPointer { $0.update(repeating: byte) }
        case .null(let column, let isNull):
            let nulls = columns.slots[column]!.nulls
            match.withUnsafeMutableBufferPointer { match in
                if nulls.isEmpty {
                    match.update(repeating: isNull ? 0 : 1)
                } else {
                    for index in 0..<count { match[index] = nulls[index] == isNull ? 1 : 0 }
                }
            }
        case .int(let column, let comparison, let constant):
            let extract = columns.slots[column]!
            extract.values.withUnsafeBufferPointer { values in
                match.withUnsafeMutableBufferPointer { match in
                    compare(values, comparison, constant, into: match)
                }
            }
            applyNulls(extract.nulls, comparison.nullResult, into: &match)
        case .double(let column, let comparison, let constant):
            let extract = columns.slots[column]!
            extract.values.withUnsafeBufferPointer { values in
                match.withUnsafeMutableBufferPointer { match in
                    // The slots hold the doubles' bit patterns.
                    values.withMemoryRebound(to: Double.self) { compare($0, comparison, constant, into: match) }
                }
            }
            applyNulls(extract.nulls, comparison.nullResult, into: &match)
        case .ordered(let column, let kind, let comparison, let constant, let nanUnordered):
            let extract = columns.slots[column]!
            extract.values.withUnsafeBufferPointer { values in
                match.withUnsafeMutableBufferPointer { match in
                    for index in 0..<count {
                        let slot = values[index]
                        let value: Double
                        switch kind {
                        case .intAsDouble: value = Double(slot)
                        case .double: value = Double(bitPattern: UInt64(bitPattern: slot))
                        case .float: value = Double(Float(bitPattern: UInt32(truncatingIfNeeded: slot)))
                        }
                        let sign = value < constant ? -1 : value > constant ? 1 : 0
                        let holds: Bool
                        if nanUnordered && (value.isNaN || constant.isNaN) {
                            match[index] = comparison == .notEqual ? 1 : 0
                            continue
                        }
                        switch comparison {
                        case .equal: holds = sign == 0
                        case .notEqual: holds = sign != 0
                        case .less: holds = sign < 0
                        case .lessOrEqual: holds = sign <= 0
                        case .greater: holds = sign > 0
                        case .greaterOrEqual: holds = sign >= 0
                        }
                        match[index] = holds ? 1 : 0
                    }
                }
            }
            applyNulls(extract.nulls, comparison.nullResult, into: &match)
        case .bytes(let column, let test, let nullResult):
            let extract = columns.strings[column]!
            extract.offsets.withUnsafeBufferPointer { offsets in
                extract.bytes.withUnsafeBytes { bytes in
                    match.withUnsafeMutableBufferPointer { match in
                        for index in 0..<count {
                            let start = Int(offsets[index])
                            let value = UnsafeRawBufferPointer(
                                rebasing: bytes[start..<Int(offsets[index + 1])])
                            match[index] = test(value) ? 1 : 0
                        }
                    }
                }
            }
            applyNulls(extract.nulls, nullResult, into: &match)
        case .contains(let column, let needle, let folds, let test):
            let extract = columns.strings[column]!
            if extract.isASCII {
                Substrings.mark(extract, needle: needle, folds: folds, into: &match)
            } else {
                evaluateCondition(.bytes(column: column, test, nullResult: false), columns, count: count, into: &match)
            }
        case .intSet(let column, let set, let matchesNull):
            let extract = columns.slots[column]!
            let lookup = IntLookup(set)
            extract.values.withUnsafeBufferPointer { values in
                match.withUnsafeMutableBufferPointer { match in
                    lookup.test(values, into: match)
                }
            }
            applyNulls(extract.nulls, matchesNull, into: &match)
        }
    }

    /// An open-addressing table of a few integers with a multiplicative hash: a membership test costs a multiply,
    /// a shift and usually one probe (`Set`'s seeded hashing costs several times that per row).
    struct IntLookup {
        private let slots: [Int64]
        private let used: [Bool]
        private let shift: UInt64
        private let low: Int64
        private let high: Int64

        init(_ values: Set<Int64>) {
            var capacity = 8
            while capacity < values.count * 4 { capacity <<= 1 }
            shift = UInt64(64 - capacity.trailingZeroBitCount)
            var slots = [Int64](repeating: 0, count: capacity)
            var used = [Bool](repeating: false, count: capacity)
            for value in values {
                var slot = Self.hash(value, shift)
                while used[slot] { slot = (slot + 1) & (capacity - 1) }
                slots[slot] = value
                used[slot] = true
            }
            self.slots = slots
            self.used = used
            low = values.min() ?? 0
            high = values.max() ?? -1
        }

        @inline(__always)
        private static func hash(_ value: Int64, _ shift: UInt64) -> Int {
            Int(truncatingIfNeeded: (UInt64(bitPattern: value) &* 0x9E37_79B9_7F4A_7C15) >> shift)
        }

        /// Writes into `match` whether each of `values` is in the table.
        func test(_ values: UnsafeBufferPointer<Int64>, into match: UnsafeMutableBufferPointer<UInt8>) {
            let mask = slots.count - 1
            let shift = shift
            let low = low
            let high = high
            slots.withUnsafeBufferPointer { slots in
                used.withUnsafeBufferPointer { used in
                    for index in 0..<match.count {
                        let value = values[index]
                        var found: UInt8 = 0
                        if value >= low && value <= high {
                            var slot = Self.hash(value, shift)
                            while used[slot] {
                                if slots[slot] == value {
                                    found = 1
                                    break
                                }
                                slot = (slot + 1) & mask
                            }
                        }
                        match[index] = found
                    }
                }
            }
        }
    }

    /// Overwrites the result of every null row (`nulls` empty: none) with `result`.
    private static func applyNulls(_ nulls: [Bool], _ result: Bool, into match: inout [UInt8]) {
        guard !nulls.isEmpty else { return }
        let byte: UInt8 = result ? 1 : 0
        nulls.withUnsafeBufferPointer { nulls in
            match.withUnsafeMutableBufferPointer { match in
                for index in 0..<match.count where nulls[index] { match[index] = byte }
            }
        }
    }

    // One loop per operator, so that each is a branch-free loop the compiler can vectorise.
    @inline(__always)
    private static func compare<T: Comparable>(
        _ values: UnsafeBufferPointer<T>, _ comparison: Comparison, _ constant: T,
        into match: UnsafeMutableBufferPointer<UInt8>
    ) {
        switch comparison {
        case .equal: for index in 0..<match.count { match[index] = values[index] == constant ? 1 : 0 }
        case .notEqual: for index in 0..<match.count { match[index] = values[index] != constant ? 1 : 0 }
        case .less: for index in 0..<match.count { match[index] = values[index] < constant ? 1 : 0 }
        case .lessOrEqual: for index in 0..<match.count { match[index] = values[index] <= constant ? 1 : 0 }
        case .greater: for index in 0..<match.count { match[index] = values[index] > constant ? 1 : 0 }
        case .greaterOrEqual: for index in 0..<match.count { match[index] = values[index] >= constant ? 1 : 0 }
        }
    }
}

extension BoundPredicate {
    /// The predicate as a column kernel, when it only tests fixed-width columns of the object's own row against
    /// constants (the cases `compiled` handles for those types, with the same answers) or, given `realm`, a
    /// condition across a to-one link (a semi-join: the link column's value is one of the matching targets' keys);
    /// nil otherwise.
    /// Conditions nested deeper than `conditionRecursionLimit` get no kernel (evaluating it recurses per level).
    func columnKernel(realm: Realm? = nil, depth: Int = 0) -> ColumnScan.Kernel? {
        if depth >= conditionRecursionLimit, logicalOperands != nil { return nil }
        switch self {
        case .constant(let value):
            return .constant(value)
        case .and(let operands):
            return Self.columnKernels(operands, realm: realm, depth: depth + 1).map { .and($0) }
        case .or(let operands):
            if let (path, values) = equalityDisjunction(), let set = Self.intMembership(path, values) { return set }
            return Self.columnKernels(operands, realm: realm, depth: depth + 1).map { .or($0) }
        case .not(let a):
            return a.columnKernel(realm: realm, depth: depth + 1).map { .not($0) }
        default:
            return columnKernelCondition(realm: realm)
        }
    }

    /// `columnKernel` for a condition that is not `AND`, `OR` or `NOT` (apart, so that its large frame is not part
    /// of the recursion over nested conditions).
    @inline(never)
    private func columnKernelCondition(realm: Realm?) -> ColumnScan.Kernel? {
        switch self {
        case .constant, .and, .or, .not:
            return columnKernel(realm: realm)
        case .between(let path, let low, let high, nil) where path.directColumn != nil:
            guard let lower = Self.columnCompare(path, .greaterOrEqual, low),
                let upper = Self.columnCompare(path, .lessOrEqual, high)
            else { return nil }
            return .and([lower, upper])
        case .compare(let path, let op, .value(.string(let text)), let options, nil) where path.directColumn != nil:
            return Self.stringCompare(path, op, text, options)
        case .compare(let path, let op, .value(let value), _, nil) where path.directColumn != nil:
            return Self.columnCompare(path, op, value)
        case .compare(let path, .in, .values(let values), let options, nil) where path.directColumn != nil:
            if !options.caseInsensitive, !options.diacriticInsensitive, let set = Self.intMembership(path, values) {
                return set
            }
            // One flat OR however long the list (an empty list matches nothing).
            var tests: [ColumnScan.Kernel] = []
            for value in values {
                guard let test = Self.columnCompare(path, .equal, value) else { return nil }
                tests.append(test)
            }
            return .or(tests)
        default:
            guard let realm, let join = semiJoinParts(realm) else { return nil }
            return .intSet(column: join.column, join.targets, matchesNull: join.nilMatches)
        }
    }

    /// Each of `operands` as a kernel; nil when one of them cannot be.
    private static func columnKernels(_ operands: [BoundPredicate], realm: Realm?, depth: Int)
        -> [ColumnScan.Kernel]?
    {
        var kernels: [ColumnScan.Kernel] = []
        kernels.reserveCapacity(operands.count)
        for operand in operands {
            guard let kernel = operand.columnKernel(realm: realm, depth: depth) else { return nil }
            kernels.append(kernel)
        }
        return kernels
    }

    /// Whether an integer column's value is one of `values`, as `membership` compiles it for rows: one hash
    /// lookup per row. Nil for other column types or values.
    private static func intMembership(_ path: BoundPath, _ values: [_StoredValue]) -> ColumnScan.Kernel? {
        guard let (column, info) = path.directColumn, info.type == .int,
            let (set, matchesNull) = integerSet(values)
        else { return nil }
        return .intSet(column: column, set, matchesNull: matchesNull)
    }

    /// `path op value` on a fixed-width column, as `compare` compiles it for rows.
    private static func columnCompare(_ path: BoundPath, _ op: RQLOperator, _ value: _StoredValue)
        -> ColumnScan.Kernel?
    {
        guard let (column, info) = path.directColumn, info.type != .any else { return nil }
        if case .null = value {
            switch op {
            case .equal: return .null(column: column, isNull: true)
            case .notEqual: return .null(column: column, isNull: false)
            default: return [.less, .lessOrEqual, .greater, .greaterOrEqual].contains(op) ? .constant(false) : nil
            }
        }
        guard let comparison = ColumnScan.Comparison(op) else { return nil }
        switch (info.type, value) {
        case (.int, .int(let constant)):
            return .int(column: column, comparison, constant)
        case (.double, .int), (.double, .double):
            guard let constant = QueryValues.number(value) else { return nil }
            return .double(column: column, comparison, constant)
        case (.int, _), (.float, _):
            guard let constant = QueryValues.number(value), !value.isDecimal else { return nil }
            return .ordered(
                column: column, info.type == .int ? .intAsDouble : .float, comparison, constant, nanUnordered: true)
        case (.double, _):
            guard let constant = QueryValues.number(value), !value.isDecimal else { return nil }
            return .ordered(column: column, .double, comparison, constant, nanUnordered: true)
        case (.date, .date(let date)):
            return .ordered(
                column: column, .double, comparison, date.timeIntervalSinceReferenceDate, nanUnordered: false)
        case (.bool, .bool(let constant)):
            return .int(column: column, comparison, constant ? 1 : 0)
        default:
            return nil
        }
    }

    /// A string condition on a string column, as `compare` compiles it for rows.
    private static func stringCompare(_ path: BoundPath, _ op: RQLOperator, _ text: String, _ options: CompareOptions)
        -> ColumnScan.Kernel?
    {
        guard let (column, info) = path.directColumn, info.type == .string,
            let test = BoundPredicate.stringTest(op, text, options)
        else { return nil }
        let needle = Array(text.utf8)
        if op == .contains, needle.allSatisfy({ $0 < 0x80 }) {
            // ASCII has no diacritics: over ASCII strings only [c] can change the answer.
            let folds = options.caseInsensitive
            let lowered = folds ? needle.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 } : needle
            return .contains(column: column, needle: lowered, folds: folds, test: test)
        }
        return .bytes(column: column, test, nullResult: op == .notEqual)
    }
}

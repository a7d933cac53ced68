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
        var columns: (slots: Set<Int>, strings: Set<Int>) {
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
    static let keysTag = -1
    static let stringsTag = 1 << 32

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

}

import StrataStorage

// Running a column kernel over a segment's extracts: one tight loop per comparison, writing a match byte per row.

extension ColumnScan {
    /// Writes 1 into `match` for each row satisfying `kernel`, 0 for the others. Recurses once per level of
    /// nesting in this small function; other conditions are `evaluateCondition`'s.
    static func evaluate(
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
    static func compare<T: Comparable>(
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

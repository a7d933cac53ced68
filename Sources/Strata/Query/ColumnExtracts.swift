import StrataStorage

// Column extracts: a segment's object keys and wanted columns read once into plain arrays, kept in the file's
// segment cache.

extension ColumnScan {
    /// The keys and the wanted columns of `segment`, from the cache or extracted in one pass over its rows.
    static func extracts(
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
        static func upper(_ byte: UInt8, _ folds: Bool) -> UInt8 {
            folds && byte >= 0x61 && byte <= 0x7A ? byte & 0xDF : byte
        }

        static func search(
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
}

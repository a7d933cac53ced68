import Foundation
import StrataStorage

// Compiled kernels for one comparison of a row's column with a constant: integers, floats, strings (folded for
// `[c]`/`[d]`), data, dates and ids, read in place from the row's bytes.

extension BoundPredicate {
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

    static func compare(_ path: BoundPath, _ op: RQLOperator, _ value: _StoredValue, _ options: CompareOptions)
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

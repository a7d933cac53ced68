import Foundation
import StrataStorage

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
            // A mixed value's string and data compare by their bytes, as in the Realm Swift SDK.
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

}

extension _StoredValue {
    var isDecimal: Bool { if case .decimal128 = self { true } else { false } }
}

// Reads one line of JSON into a `JSONValue`, keeping numbers as their text (so that `1` and `1.0`, an integer and a
// double, stay apart, and large integers stay exact) and members in their order.

/// Why a line is not valid JSON, and the character (counted from 1) where that was found.
struct JSONSyntaxError: Error {
    let reason: String
    let column: Int
}

struct JSONReader {
    private let bytes: [UInt8]
    private var at = 0
    /// Nesting deeper than this is refused rather than recursed into (mixed values nest at most 100 levels).
    static let maximumDepth = 512

    /// The JSON value `text` holds, which must be all of it (white space around it aside).
    static func parse(_ text: String) throws(JSONSyntaxError) -> JSONValue {
        var reader = JSONReader(bytes: Array(text.utf8))
        let value = try reader.value(depth: 0)
        reader.skipSpaces()
        guard reader.at == reader.bytes.count else { throw reader.error("unexpected text after the value") }
        return value
    }

    private init(bytes: [UInt8]) { self.bytes = bytes }

    private func error(_ reason: String) -> JSONSyntaxError {
        // Columns count characters, not bytes.
        JSONSyntaxError(
            reason: reason, column: String(decoding: bytes[..<min(at, bytes.count)], as: UTF8.self).count + 1)
    }

    private var current: UInt8? { at < bytes.count ? bytes[at] : nil }

    private mutating func skipSpaces() {
        while let byte = current, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { at += 1 }
    }

    private mutating func expect(_ literal: String, _ value: JSONValue) throws(JSONSyntaxError) -> JSONValue {
        let expected = Array(literal.utf8)
        guard bytes.count - at >= expected.count, Array(bytes[at..<(at + expected.count)]) == expected else {
            throw error("unexpected character")
        }
        at += expected.count
        return value
    }

    private mutating func value(depth: Int) throws(JSONSyntaxError) -> JSONValue {
        skipSpaces()
        guard depth < Self.maximumDepth else { throw error("nested more than \(Self.maximumDepth) levels deep") }
        switch current {
        case nil: throw error("a value is missing")
        case UInt8(ascii: "n"): return try expect("null", .null)
        case UInt8(ascii: "t"): return try expect("true", .bool(true))
        case UInt8(ascii: "f"): return try expect("false", .bool(false))
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "["):
            at += 1
            var elements: [JSONValue] = []
            skipSpaces()
            if current == UInt8(ascii: "]") {
                at += 1
                return .array(elements)
            }
            while true {
                elements.append(try value(depth: depth + 1))
                skipSpaces()
                if current == UInt8(ascii: "]") {
                    at += 1
                    return .array(elements)
                }
                guard current == UInt8(ascii: ",") else { throw error("expected , or ] in an array") }
                at += 1
            }
        case UInt8(ascii: "{"):
            at += 1
            var members: [(key: String, value: JSONValue)] = []
            var keys: Set<String> = []
            skipSpaces()
            if current == UInt8(ascii: "}") {
                at += 1
                return .object(members)
            }
            while true {
                skipSpaces()
                guard current == UInt8(ascii: "\"") else { throw error("expected a member name in quotes") }
                let start = at
                let key = try string()
                guard keys.insert(key).inserted else {
                    at = start
                    throw error("the member \"\(key)\" appears twice")
                }
                skipSpaces()
                guard current == UInt8(ascii: ":") else { throw error("expected : after a member name") }
                at += 1
                members.append((key, try value(depth: depth + 1)))
                skipSpaces()
                if current == UInt8(ascii: "}") {
                    at += 1
                    return .object(members)
                }
                guard current == UInt8(ascii: ",") else { throw error("expected , or } in an object") }
                at += 1
            }
        case let byte? where byte == UInt8(ascii: "-") || (byte >= 0x30 && byte <= 0x39):
            return .number(try number())
        default:
            throw error("unexpected character")
        }
    }

    /// A number as its text, checked against JSON's grammar.
    private mutating func number() throws(JSONSyntaxError) -> String {
        let start = at
        func digits() -> Int {
            let first = at
            while let byte = current, byte >= 0x30 && byte <= 0x39 { at += 1 }
            return at - first
        }
        if current == UInt8(ascii: "-") { at += 1 }
        let leadingZero = current == UInt8(ascii: "0")
        let integerDigits = digits()
        guard integerDigits > 0 else { throw error("a number needs digits") }
        guard !leadingZero || integerDigits == 1 else { throw error("a number cannot start with 0") }
        if current == UInt8(ascii: ".") {
            at += 1
            guard digits() > 0 else { throw error("a number needs digits after its point") }
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            at += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { at += 1 }
            guard digits() > 0 else { throw error("a number needs digits in its exponent") }
        }
        return String(decoding: bytes[start..<at], as: UTF8.self)
    }

    /// A string (the cursor at its opening quote), unescaped.
    private mutating func string() throws(JSONSyntaxError) -> String {
        at += 1
        var scalars = String.UnicodeScalarView()
        var run = at
        func flush() { scalars.append(contentsOf: String(decoding: bytes[run..<at], as: UTF8.self).unicodeScalars) }
        while true {
            guard let byte = current else { throw error("the string is not closed") }
            if byte == UInt8(ascii: "\"") {
                flush()
                at += 1
                return String(scalars)
            }
            guard byte >= 0x20 else { throw error("a control character must be escaped in a string") }
            guard byte == UInt8(ascii: "\\") else {
                at += 1
                continue
            }
            flush()
            at += 1
            guard let escaped = current else { throw error("the string is not closed") }
            at += 1
            switch escaped {
            case UInt8(ascii: "\""): scalars.append("\"")
            case UInt8(ascii: "\\"): scalars.append("\\")
            case UInt8(ascii: "/"): scalars.append("/")
            case UInt8(ascii: "b"): scalars.append("\u{8}")
            case UInt8(ascii: "f"): scalars.append("\u{C}")
            case UInt8(ascii: "n"): scalars.append("\n")
            case UInt8(ascii: "r"): scalars.append("\r")
            case UInt8(ascii: "t"): scalars.append("\t")
            case UInt8(ascii: "u"):
                var code = try hexQuad()
                if (0xD800..<0xDC00).contains(code) {
                    guard current == UInt8(ascii: "\\"), at + 1 < bytes.count, bytes[at + 1] == UInt8(ascii: "u")
                    else { throw error("a high surrogate must be followed by a low one") }
                    at += 2
                    let low = try hexQuad()
                    guard (0xDC00..<0xE000).contains(low) else { throw error("expected a low surrogate") }
                    code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                }
                guard let scalar = Unicode.Scalar(code) else { throw error("\\u escapes a lone surrogate") }
                scalars.append(scalar)
            default:
                at -= 1
                throw error("unknown escape \\\(String(decoding: [escaped], as: UTF8.self))")
            }
            run = at
        }
    }

    private mutating func hexQuad() throws(JSONSyntaxError) -> UInt32 {
        guard bytes.count - at >= 4 else { throw error("\\u needs four hexadecimal digits") }
        var code: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[at]
            let digit: UInt32
            switch byte {
            case 0x30...0x39: digit = UInt32(byte - 0x30)
            case 0x41...0x46: digit = UInt32(byte - 0x41 + 10)
            case 0x61...0x66: digit = UInt32(byte - 0x61 + 10)
            default: throw error("\\u needs four hexadecimal digits")
            }
            code = code << 4 | digit
            at += 1
        }
        return code
    }
}

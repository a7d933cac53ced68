import Foundation
import StrataStorage

// The lexer: query text to tokens (identifiers, `@` operators, numbers, strings, typed literals, arguments,
// symbols), and the token cursor the grammar reads them with.

extension RQLParser {
    mutating func tokenize() throws(Realm.Error) {
        var at = 0
        func peek(_ offset: Int = 0) -> UInt8? { at + offset < bytes.count ? bytes[at + offset] : nil }
        func isIdentifierByte(_ byte: UInt8) -> Bool {
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == 0x5F || byte >= 0x80
        }
        /// The identifier starting at `at` (possibly empty), consumed.
        func identifier() -> String {
            let start = at
            while let next = peek(), isIdentifierByte(next) { at += 1 }
            return String(decoding: bytes[start..<at], as: UTF8.self)
        }
        func skipSpaces() {
            while let next = peek(), [0x20, 0x09, 0x0A, 0x0D].contains(next) { at += 1 }
        }
        /// After `oid` or `uuid`: `(` and an unquoted value (hex digits, letters and `-`, which as ordinary
        /// tokens would split into numbers and names) as one token. A quoted value is left to the string rule.
        func bareValue() {
            let afterName = at
            skipSpaces()
            guard peek() == 0x28 else {  // (
                at = afterName
                return
            }
            tokens.append((.symbol("("), at))
            at += 1
            skipSpaces()
            let start = at
            while let next = peek(), isIdentifierByte(next) || next == 0x2D { at += 1 }
            if at > start { tokens.append((.bareValue(String(decoding: bytes[start..<at], as: UTF8.self)), start)) }
        }
        /// Whether `scan` finds a date literal at `at`; if so it is a token and `at` is past it.
        func dateLiteral(
            _ scan: ([UInt8], Int) throws(RQLDateLiteral.Failure) -> (date: Date, end: Int)?
        ) throws(Realm.Error) -> Bool {
            do {
                guard let (date, end) = try scan(bytes, at) else { return false }
                tokens.append((.date(date), at))
                at = end
                return true
            } catch {
                throw failure(error.reason, at: error.offset)
            }
        }
        while at < bytes.count {
            let byte = bytes[at]
            let start = at
            switch byte {
            case 0x20, 0x09, 0x0A, 0x0D:
                at += 1
            case 0x27, 0x22:  // ' "
                at += 1
                var value: [UInt8] = []
                var closed = false
                while let next = peek() {
                    at += 1
                    if next == byte {
                        closed = true
                        break
                    }
                    if next == 0x5C, let escaped = peek() {  // backslash
                        at += 1
                        switch escaped {
                        case 0x6E: value.append(0x0A)
                        case 0x74: value.append(0x09)
                        case 0x72: value.append(0x0D)
                        default: value.append(escaped)
                        }
                    } else {
                        value.append(next)
                    }
                }
                guard closed else { throw failure("the string is not closed", at: start) }
                tokens.append((.string(String(decoding: value, as: UTF8.self)), start))
            case 0x24 where peek(1).map({ isIdentifierByte($0) && !($0 >= 0x30 && $0 <= 0x39) }) ?? false:
                at += 1
                tokens.append((.variable("$" + identifier()), start))
            case 0x24:  // $
                at += 1
                var digits = ""
                while let next = peek(), next >= 0x30 && next <= 0x39 {
                    digits.append(Character(UnicodeScalar(next)))
                    at += 1
                }
                guard let number = Int(digits) else { throw failure("expected an argument number after $", at: start) }
                try noteArgumentStyle(dollar: true, at: start)
                tokens.append((.argument(number), start))
            case 0x25:  // %
                try formatSpecifier(at: &at)
            case 0x40:  // @
                at += 1
                let name = identifier()
                guard !name.isEmpty else { throw failure("expected an operator name after @", at: start) }
                tokens.append((.at(name.lowercased()), start))
            case 0x5B:  // [ options ] after an operator; [ of a map subscript or a coordinate pair
                var end = at + 1
                while end < bytes.count, bytes[end] != 0x5D { end += 1 }
                let content = String(decoding: bytes[(at + 1)..<end], as: UTF8.self)
                guard end < bytes.count, content.allSatisfy(\.isLetter), Self.takesOptions(tokens.last?.token) else {
                    tokens.append((.symbol("["), start))
                    at += 1
                    continue
                }
                let option = content.lowercased()
                guard ["c", "d", "cd", "dc"].contains(option) else {
                    throw failure("unknown option [\(option)] (use [c], [d] or [cd])", at: start)
                }
                tokens.append((.option(option), start))
                at = end + 1
            case 0x30...0x39 where try dateLiteral(RQLDateLiteral.scanReadable),
                0x54 where try dateLiteral(RQLDateLiteral.scanEpoch):  // T
                break
            case _
            where (byte >= 0x30 && byte <= 0x39)
                || (byte == 0x2E && (peek(1).map { $0 >= 0x30 && $0 <= 0x39 } ?? false)):
                var literal = ""
                var isFloat = false
                while let next = peek(),
                    (next >= 0x30 && next <= 0x39) || next == 0x2E || next == 0x65 || next == 0x45
                        || ((next == 0x2B || next == 0x2D) && (literal.last == "e" || literal.last == "E"))
                {
                    if next == 0x2E || next == 0x65 || next == 0x45 { isFloat = true }
                    literal.append(Character(UnicodeScalar(next)))
                    at += 1
                }
                if let next = peek(), isIdentifierByte(next) {
                    throw failure("unexpected character after number \(literal)", at: at)
                }
                if !isFloat, let value = Int64(literal) {
                    tokens.append((.integer(value), start))
                } else if let value = Double(literal) {
                    tokens.append((.number(value), start))
                } else {
                    throw failure("malformed number \(literal)", at: start)
                }
            default:
                if byte == UInt8(ascii: "B"), peek(1) == UInt8(ascii: "6"), peek(2) == UInt8(ascii: "4"),
                    let quote = peek(3), quote == 0x22 || quote == 0x27
                {
                    // `B64"AQID"`: the quoted base-64 text as data.
                    at += 4
                    let textStart = at
                    while let next = peek(), next != quote { at += 1 }
                    guard at < bytes.count else { throw failure("the string is not closed", at: start) }
                    let encoded = String(decoding: bytes[textStart..<at], as: UTF8.self)
                    at += 1
                    guard let data = Data(base64Encoded: encoded) else {
                        throw failure("B64\"\(encoded)\" is not base 64", at: start)
                    }
                    tokens.append((.data(data), start))
                    continue
                }
                if isIdentifierByte(byte) {
                    let name = identifier()
                    tokens.append((.identifier(name), start))
                    if ["oid", "uuid"].contains(name.lowercased()) { bareValue() }
                    continue
                }
                let two = at + 1 < bytes.count ? String(decoding: bytes[at...(at + 1)], as: UTF8.self) : ""
                if ["==", "!=", "<>", "<=", ">=", "=<", "=>", "&&", "||"].contains(two) {
                    tokens.append((.symbol(two), start))
                    at += 2
                } else if let scalar = Unicode.Scalar(UInt32(byte)), "=<>!(){},.-[]*+/".unicodeScalars.contains(scalar)
                {
                    tokens.append((.symbol(String(Character(scalar))), start))
                    at += 1
                } else {
                    throw failure("unexpected character '\(String(decoding: [byte], as: UTF8.self))'", at: start)
                }
            }
        }
        tokens.append((.end, bytes.count))
    }

    /// Whether `[c]`, `[d]` or `[cd]` after `token` are options: only right after a comparison operator (after a
    /// property, `[` opens a map subscript such as `parks['Oslo']`).
    private static func takesOptions(_ token: Token?) -> Bool {
        switch token {
        case .symbol(let symbol)?: ["==", "=", "!=", "<>", "<", "<=", ">", ">=", "=<", "=>"].contains(symbol)
        case .identifier(let word)?:
            ["BEGINSWITH", "ENDSWITH", "CONTAINS", "LIKE", "IN"].contains(word.uppercased())
        default: false
        }
    }

    /// Whether `token` can start a key path after a quantifier: a name, `@links`, or a SUBQUERY variable.
    static func startsKeyPath(_ token: Token) -> Bool {
        switch token {
        case .identifier, .at, .variable: true
        default: false
        }
    }

    var current: Token { tokens[index].token }
    var position: Int { tokens[index].position }

    mutating func advance() { if index < tokens.count - 1 { index += 1 } }

    func keyword(_ token: Token) -> String? {
        if case .identifier(let name) = token { return name.uppercased() }
        return nil
    }

    mutating func accept(keyword word: String) -> Bool {
        guard keyword(current) == word else { return false }
        advance()
        return true
    }

    mutating func accept(symbol: String) -> Bool {
        guard current == .symbol(symbol) else { return false }
        advance()
        return true
    }

    mutating func expect(symbol: String, _ what: String) throws(Realm.Error) {
        guard accept(symbol: symbol) else { throw failure("expected \(what)", at: position) }
    }

    /// Opens a level of nesting at the token at `start` (its caller leaves it with `depth -= 1`).
    mutating func enterLevel(at start: Int) throws(Realm.Error) {
        depth += 1
        guard depth <= QueryLimits.maximumDepth else { throw failure(QueryLimits.depthReason, at: start) }
    }

    /// Counts a condition or list value starting at `start`.
    mutating func countTerm(at start: Int) throws(Realm.Error) {
        terms += 1
        guard terms <= QueryLimits.maximumTerms else { throw failure(QueryLimits.termsReason, at: start) }
    }

    func describe(_ token: Token) -> String {
        switch token {
        case .identifier(let name): "'\(name)'"
        case .at(let name): "'@\(name)'"
        case .string(let value): "the string '\(value)'"
        case .integer(let value): "\(value)"
        case .number(let value): "\(value)"
        case .date(let value): "the date \(value.formatted(.iso8601))"
        case .argument(let number): "$\(number)"
        case .variable(let name): name
        case .symbol(let symbol): "'\(symbol)'"
        case .option(let option): "[\(option)]"
        case .bareValue(let value): "'\(value)'"
        case .data(let value): "B64\"\(value.base64EncodedString())\""
        case .end: "the end of the query"
        }
    }
}

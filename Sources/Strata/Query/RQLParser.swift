import Foundation
import StrataStorage

/// The Realm Query Language, parsed: a predicate tree over key paths, literals and `$n` arguments, before it is
/// bound to a schema (see `QueryBinder`). Positions are UTF-8 offsets into the query text, for error messages.
struct RQLQuery {
    var predicate: RQLPredicate
    /// The trailing `SORT(…)`, `DISTINCT(…)` and `LIMIT(…)` clauses, in the order they are written: each applies
    /// to what the ones before it produced.
    var ordering: [RQLOrdering] = []
}

/// One trailing clause of a query.
enum RQLOrdering {
    case sort([(keyPath: String, ascending: Bool)])
    case distinct([String])
    case limit(Int)
}

indirect enum RQLPredicate {
    case constant(Bool)
    /// Every operand holds. A chain `a AND b AND c` is one node with three operands (see ``all(_:)``), so that long
    /// chains do not nest.
    case and([RQLPredicate])
    /// At least one operand holds; flattened like `and`.
    case or([RQLPredicate])
    case not(RQLPredicate)
    case compare(RQLComparison)
    case between(RQLOperand, low: RQLOperand, high: RQLOperand, quantifier: RQLQuantifier?, position: Int)
    /// `property TEXT 'words'`: a full-text search.
    case text(RQLOperand, RQLOperand, position: Int)
    /// `property GEOWITHIN shape`.
    case geoWithin(RQLOperand, RQLOperand, position: Int)

    /// `operands` joined by AND, with operands that are ANDs themselves spliced in: the chain stays one level
    /// deep however it was grouped. One operand is returned as it is.
    static func all(_ operands: [RQLPredicate]) -> RQLPredicate {
        guard operands.count != 1 else { return operands[0] }
        var flat: [RQLPredicate] = []
        flat.reserveCapacity(operands.count)
        for operand in operands {
            if case .and(let inner) = operand { flat += inner } else { flat.append(operand) }
        }
        return .and(flat)
    }

    /// `operands` joined by OR, flattened as ``all(_:)`` flattens AND.
    static func any(_ operands: [RQLPredicate]) -> RQLPredicate {
        guard operands.count != 1 else { return operands[0] }
        var flat: [RQLPredicate] = []
        flat.reserveCapacity(operands.count)
        for operand in operands {
            if case .or(let inner) = operand { flat += inner } else { flat.append(operand) }
        }
        return .or(flat)
    }
}

struct RQLComparison {
    var left: RQLOperand
    var op: RQLOperator
    var right: RQLOperand
    var caseInsensitive = false
    var diacriticInsensitive = false
    var quantifier: RQLQuantifier?
    /// `ANY`, `ALL` or `NONE` before a list on the right (`age == NONE {18, 21}`); a list without one means `ANY`.
    var listQuantifier: RQLQuantifier?
    var position: Int
}

enum RQLOperator: String {
    case equal = "=="
    case notEqual = "!="
    case less = "<"
    case lessOrEqual = "<="
    case greater = ">"
    case greaterOrEqual = ">="
    case beginsWith = "BEGINSWITH"
    case endsWith = "ENDSWITH"
    case contains = "CONTAINS"
    case like = "LIKE"
    case `in` = "IN"
}

enum RQLQuantifier: String {
    case any = "ANY"
    case all = "ALL"
    case none = "NONE"
}

indirect enum RQLOperand {
    /// Property names and `@` operators (`@count`, `@sum`...), as written.
    case keyPath([String], position: Int)
    case literal(_StoredValue, position: Int)
    case argument(Int, position: Int)
    case list([RQLOperand], position: Int)
    /// `SUBQUERY(collection, $x, predicate).@count`: how many elements of the collection match.
    case subquery(collection: [String], variable: String, predicate: RQLPredicate, position: Int)
    /// `geoBox(…)`, `geoCircle(…)`, `geoPolygon(…)` written in the query.
    case shape(GeoShapeLiteral, position: Int)
    /// `left * right`, `left / right`, `left + right`, `left - right` (see `QueryArithmetic`).
    case arithmetic(ArithmeticOperator, RQLOperand, RQLOperand, position: Int)
    /// `obj('Person', 3)`: the object of class `className` whose primary key is `primaryKey` (see
    /// `QueryObjectLiteral`).
    case object(className: String, primaryKey: _StoredValue, position: Int)

    var position: Int {
        switch self {
        case .keyPath(_, let position), .literal(_, let position), .argument(_, let position),
            .list(_, let position), .subquery(_, _, _, let position), .shape(_, let position),
            .object(_, _, let position):
            position
        // An expression is where it starts (its own position, the operator's, is for errors about the operator).
        case .arithmetic(_, let left, _, _): left.position
        }
    }
}

/// A shape written in the query text (`geoBox`, `geoCircle`, `geoPolygon`); coordinates as GeoJSON orders them.
enum GeoShapeLiteral {
    struct Coordinate {
        var longitude: Double
        var latitude: Double
    }
    case box(bottomLeft: Coordinate, topRight: Coordinate)
    case circle(center: Coordinate, radians: Double)
    /// The outer ring first, then the holes.
    case polygon([[Coordinate]])
}

/// Turns query text into an `RQLQuery`, throwing `Realm.Error.invalidQuery` with the position of the offending
/// token.
struct RQLParser {
    private enum Token: Equatable {
        case identifier(String)
        case at(String)
        case string(String)
        case integer(Int64)
        case number(Double)
        /// A date literal (see `RQLDateLiteral`).
        case date(Date)
        case argument(Int)
        /// `$name`: a SUBQUERY variable.
        case variable(String)
        case symbol(String)
        case option(String)
        /// The value of `oid(…)` or `uuid(…)` written without quotes.
        case bareValue(String)
        /// `B64"…"`: binary data written in base 64.
        case data(Data)
        case end
    }

    private let text: String
    private let bytes: [UInt8]
    private var tokens: [(token: Token, position: Int)] = []
    private var index = 0
    /// How many levels (parentheses, NOT, SUBQUERY) enclose the current token: at most
    /// `QueryLimits.maximumDepth`, so that whatever walks the parsed tree stays within its bounds.
    private var depth = 0
    /// Conditions and list values so far: at most `QueryLimits.maximumTerms`.
    private var terms = 0
    /// How many SUBQUERYs enclose the current token: at most `QueryLimits.maximumSubqueryDepth`.
    private var subqueries = 0
    /// The query's arguments, read while parsing only by `%K` (whose argument is a key path, part of the query's
    /// structure rather than a value).
    private let arguments: [Any?]
    /// The NSPredicate-style specifiers (`%@`, `%K`, `%d`…) read so far: the next one takes this argument.
    private var formatArguments = 0
    /// Where the first `$n` and the first `%` specifier are: a query uses one style or the other.
    private var firstDollar: Int?
    private var firstPercent: Int?

    /// `text` parsed; `arguments` are needed only for `%K` (a query that uses it is not cached, since its
    /// structure depends on them).
    static func parse(_ text: String, arguments: [Any?] = []) throws(Realm.Error) -> RQLQuery {
        if let cached = ParsedQueries.shared.query(for: text) { return cached }
        guard text.utf8.count <= QueryLimits.maximumLength else {
            throw failure(in: text, QueryLimits.lengthReason, at: QueryLimits.maximumLength)
        }
        var parser = RQLParser(text: text, arguments: arguments)
        try parser.tokenize()
        let query = try parser.query()
        if !parser.substitutesKeys { ParsedQueries.shared.remember(query, for: text) }
        return query
    }

    private init(text: String, arguments: [Any?]) {
        self.text = text
        self.arguments = arguments
        bytes = Array(text.utf8)
    }

    /// Whether a `%K` took a key path from the arguments.
    private var substitutesKeys = false
    /// `matchingParentheses(tokens)`, computed when a `(` is first met.
    private var closingParenthesis: [Int] = []

    private func failure(_ reason: String, at position: Int) -> Realm.Error {
        Self.failure(in: text, reason, at: position)
    }

    /// The error for `query` with the offending token at UTF-8 offset `offset`, reported (as the API promises) in
    /// `Character`s from the start of the query.
    static func failure(in query: String, _ reason: String, at offset: Int) -> Realm.Error {
        var characters = 0
        var bytes = 0
        for character in query {
            guard bytes < offset else { break }
            bytes += character.utf8.count
            characters += 1
        }
        return .invalidQuery(query: query, position: characters, reason: reason)
    }

    // MARK: Format arguments

    /// Records an argument of one style (`$n` when `dollar`, a `%` specifier otherwise) at `position`: NSPredicate
    /// numbers its `%@`s in order and the Realm Query Language its `$n`s explicitly, and a query mixing the two
    /// would number them inconsistently, so it is an error (as in the Realm SDK).
    private mutating func noteArgumentStyle(dollar: Bool, at position: Int) throws(Realm.Error) {
        if dollar {
            if firstDollar == nil { firstDollar = position }
        } else if firstPercent == nil {
            firstPercent = position
        }
        if firstDollar != nil, firstPercent != nil {
            throw failure(
                "a query takes its arguments either as %@ (in order) or as $0, $1…, not both", at: position)
        }
    }

    /// The conversion letters NSPredicate accepts for a value, after an optional length modifier (`%ld`, `%lf`,
    /// `%lld`, `%hd`, `%qd`): each takes the next argument as it is.
    private static let valueConversions: Set<UInt8> = Set("@difuxXeEgGcCsS".utf8)

    /// An NSPredicate-style specifier at `at` (on its `%`): `%@`, `%d`, `%f`… become the next argument, `%K` the
    /// key path its argument names. Consumed, with `at` past it.
    private mutating func formatSpecifier(at: inout Int) throws(Realm.Error) {
        let start = at
        at += 1
        while at < bytes.count, [UInt8(ascii: "l"), UInt8(ascii: "h"), UInt8(ascii: "q")].contains(bytes[at]) {
            at += 1
        }
        guard at < bytes.count else { throw failure("a format specifier such as %@ or %K must follow %", at: start) }
        let conversion = bytes[at]
        let specifier = String(decoding: bytes[start...at], as: UTF8.self)
        at += 1
        try noteArgumentStyle(dollar: false, at: start)
        let number = formatArguments
        formatArguments += 1
        if conversion == UInt8(ascii: "K"), at - start == 2 {
            try keyPathArgument(number, at: start)
        } else if Self.valueConversions.contains(conversion) {
            tokens.append((.argument(number), start))
        } else {
            throw failure("unknown format specifier \(specifier) (use %@ for a value or %K for a key path)", at: start)
        }
    }

    /// `%K`: the tokens of the key path that argument `number` names (`"name"`, `"owner.name"`, `"dogs.@count"`).
    private mutating func keyPathArgument(_ number: Int, at start: Int) throws(Realm.Error) {
        guard number < arguments.count else {
            throw failure("%K has no argument (\(arguments.count) given)", at: start)
        }
        guard let path = arguments[number] as? String else {
            throw failure(
                "%K takes a key path string such as \"name\" or \"owner.name\", not \(Self.describeArgument(arguments[number]))",
                at: start)
        }
        let components = path.split(separator: ".", omittingEmptySubsequences: false)
        for (offset, component) in components.enumerated() {
            let name = component.hasPrefix("@") ? component.dropFirst() : component[...]
            guard !name.isEmpty, name.utf8.allSatisfy(Self.isIdentifierByte), !(name.first?.isNumber ?? true) else {
                throw failure("%K: '\(path)' is not a key path (names joined by dots)", at: start)
            }
            if offset > 0 { tokens.append((.symbol("."), start)) }
            tokens.append((component.hasPrefix("@") ? .at(name.lowercased()) : .identifier(String(name)), start))
        }
        substitutesKeys = true
    }

    private static func isIdentifierByte(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
            || byte == 0x5F || byte >= 0x80
    }

    /// An argument's type, for messages.
    private static func describeArgument(_ argument: Any?) -> String {
        guard let argument else { return "nil" }
        return "\(type(of: argument))"
    }

    // MARK: Tokens

    private mutating func tokenize() throws(Realm.Error) {
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
    private static func startsKeyPath(_ token: Token) -> Bool {
        switch token {
        case .identifier, .at, .variable: true
        default: false
        }
    }

    private var current: Token { tokens[index].token }
    private var position: Int { tokens[index].position }

    private mutating func advance() { if index < tokens.count - 1 { index += 1 } }

    private func keyword(_ token: Token) -> String? {
        if case .identifier(let name) = token { return name.uppercased() }
        return nil
    }

    private mutating func accept(keyword word: String) -> Bool {
        guard keyword(current) == word else { return false }
        advance()
        return true
    }

    private mutating func accept(symbol: String) -> Bool {
        guard current == .symbol(symbol) else { return false }
        advance()
        return true
    }

    private mutating func expect(symbol: String, _ what: String) throws(Realm.Error) {
        guard accept(symbol: symbol) else { throw failure("expected \(what)", at: position) }
    }

    /// Opens a level of nesting at the token at `start` (its caller leaves it with `depth -= 1`).
    private mutating func enterLevel(at start: Int) throws(Realm.Error) {
        depth += 1
        guard depth <= QueryLimits.maximumDepth else { throw failure(QueryLimits.depthReason, at: start) }
    }

    /// Counts a condition or list value starting at `start`.
    private mutating func countTerm(at start: Int) throws(Realm.Error) {
        terms += 1
        guard terms <= QueryLimits.maximumTerms else { throw failure(QueryLimits.termsReason, at: start) }
    }

    private func describe(_ token: Token) -> String {
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

    // MARK: Grammar

    private static let postfixWords: Set<String> = ["SORT", "DISTINCT", "LIMIT"]

    private mutating func query() throws(Realm.Error) -> RQLQuery {
        var query = RQLQuery(predicate: try orExpression())
        while let word = keyword(current), Self.postfixWords.contains(word) {
            advance()
            try expect(symbol: "(", "( after \(word)")
            switch word {
            case "SORT":
                var keys: [(keyPath: String, ascending: Bool)] = []
                repeat {
                    let path = try keyPathText()
                    var ascending = true
                    if let direction = keyword(current), ["ASC", "ASCENDING", "DESC", "DESCENDING"].contains(direction)
                    {
                        ascending = direction.hasPrefix("ASC")
                        advance()
                    }
                    keys.append((path, ascending))
                } while accept(symbol: ",")
                query.ordering.append(.sort(keys))
            case "DISTINCT":
                var paths: [String] = []
                repeat { paths.append(try keyPathText()) } while accept(symbol: ",")
                query.ordering.append(.distinct(paths))
            default:
                guard case .integer(let value) = current, value >= 0 else {
                    throw failure("LIMIT takes a non-negative integer", at: position)
                }
                query.ordering.append(.limit(Int(value)))
                advance()
            }
            try expect(symbol: ")", ") to close \(word)")
        }
        guard current == .end else {
            throw failure("unexpected \(describe(current)) (expected AND, OR or the end of the query)", at: position)
        }
        return query
    }

    private mutating func keyPathText() throws(Realm.Error) -> String {
        guard case .keyPath(let components, _) = try keyPath() else {
            throw failure("expected a property name", at: position)
        }
        return components.joined(separator: ".")
    }

    /// A parenthesised group being parsed by `orExpression`: the OR operands and the AND operands of its current
    /// term so far, and the NOTs read before the operand being parsed.
    private struct Group {
        var ors: [RQLPredicate] = []
        var ands: [RQLPredicate] = []
        var nots = 0
    }

    /// `and (OR and)*`, where `and` is `not (AND not)*`, `not` is `NOT* primary` and `primary` is `( or )`,
    /// `TRUEPREDICATE`, `FALSEPREDICATE` or a comparison. Parsed with an explicit stack of open parentheses
    /// instead of one recursive call per level (a call chain that costs kilobytes of stack per level in a debug
    /// build); each chain of ORs or ANDs becomes one flat node however many terms it has.
    private mutating func orExpression() throws(Realm.Error) -> RQLPredicate {
        var groups = [Group()]
        while true {
            // An operand: NOTs, then an open parenthesis (a new group) or a primary.
            while true {
                let start = position
                guard accept(keyword: "NOT") || accept(symbol: "!") else { break }
                try enterLevel(at: start)
                groups[groups.count - 1].nots += 1
            }
            let start = position
            if !parenthesisOpensExpression(), accept(symbol: "(") {
                try enterLevel(at: start)
                groups.append(Group())
                continue
            }
            var operand = try primary()
            // Complete the operand, and every group the operand completes.
            while true {
                let nots = groups[groups.count - 1].nots
                for _ in 0..<nots { operand = .not(operand) }
                depth -= nots
                groups[groups.count - 1].nots = 0
                groups[groups.count - 1].ands.append(operand)
                if accept(keyword: "AND") || accept(symbol: "&&") { break }
                let term = RQLPredicate.all(groups[groups.count - 1].ands)
                groups[groups.count - 1].ands = []
                groups[groups.count - 1].ors.append(term)
                if accept(keyword: "OR") || accept(symbol: "||") { break }
                let group = groups.removeLast()
                operand = .any(group.ors)
                guard !groups.isEmpty else { return operand }
                try expect(symbol: ")", ") to close (")
                depth -= 1
            }
        }
    }

    /// `TRUEPREDICATE`, `FALSEPREDICATE` or a comparison (parentheses and NOT are `orExpression`'s).
    private mutating func primary() throws(Realm.Error) -> RQLPredicate {
        let start = position
        if accept(keyword: "TRUEPREDICATE") {
            try countTerm(at: start)
            return .constant(true)
        }
        if accept(keyword: "FALSEPREDICATE") {
            try countTerm(at: start)
            return .constant(false)
        }
        if current == .end { throw failure("expected a condition", at: position) }
        return try comparison()
    }

    private mutating func comparison() throws(Realm.Error) -> RQLPredicate {
        let start = position
        try countTerm(at: start)
        var quantifier: RQLQuantifier?
        if let word = keyword(current), ["ANY", "SOME", "ALL", "NONE"].contains(word),
            index + 1 < tokens.count, Self.startsKeyPath(tokens[index + 1].token)
        {
            quantifier = word == "ALL" ? .all : word == "NONE" ? RQLQuantifier.none : .any
            advance()
        }
        let left = try arithmeticOperand()
        if accept(keyword: "BETWEEN") {
            if case .argument = current {
                // `age BETWEEN %@` with an array of two bounds (NSPredicate's form): the argument stands for both
                // bounds, and the binder takes them from it.
                let bounds = try operand()
                return .between(left, low: bounds, high: bounds, quantifier: quantifier, position: start)
            }
            try expect(symbol: "{", "{ after BETWEEN")
            let low = try operand()
            try expect(symbol: ",", ", between the bounds of BETWEEN")
            let high = try operand()
            try expect(symbol: "}", "} to close BETWEEN")
            return .between(left, low: low, high: high, quantifier: quantifier, position: start)
        }
        if accept(keyword: "TEXT") {
            return .text(left, try operand(), position: start)
        }
        if accept(keyword: "GEOWITHIN") {
            return .geoWithin(left, try operand(), position: start)
        }
        let operatorPosition = position
        let op: RQLOperator
        switch current {
        case .symbol("=="), .symbol("="): op = .equal
        case .symbol("!="), .symbol("<>"): op = .notEqual
        case .symbol("<"): op = .less
        case .symbol("<="), .symbol("=<"): op = .lessOrEqual
        case .symbol(">"): op = .greater
        case .symbol(">="), .symbol("=>"): op = .greaterOrEqual
        default:
            switch keyword(current) {
            case "BEGINSWITH": op = .beginsWith
            case "ENDSWITH": op = .endsWith
            case "CONTAINS": op = .contains
            case "LIKE": op = .like
            case "IN": op = .in
            default:
                throw failure(
                    "expected a comparison operator after the left operand, found \(describe(current))",
                    at: operatorPosition)
            }
        }
        advance()
        var comparison = RQLComparison(
            left: left, op: op, right: .literal(.null, position: 0), quantifier: quantifier, position: start)
        if case .option(let option) = current {
            comparison.caseInsensitive = option.contains("c")
            comparison.diacriticInsensitive = option.contains("d")
            advance()
        }
        if let word = keyword(current), ["ANY", "SOME", "ALL", "NONE"].contains(word), index + 1 < tokens.count {
            switch tokens[index + 1].token {
            case .symbol("{"), .argument:
                comparison.listQuantifier = word == "ALL" ? .all : word == "NONE" ? RQLQuantifier.none : .any
                advance()
            default: break
            }
        }
        comparison.right = try arithmeticOperand()
        return .compare(comparison)
    }

    /// An operand, or an arithmetic expression of operands: `term (('+' | '-') term)*`, where a term is
    /// `factor (('*' | '/') factor)*` and a factor an operand or a parenthesised expression, so `*` and `/` bind
    /// tighter than `+` and `-`, and each chain groups from the left (as in the Realm Query Language).
    private mutating func arithmeticOperand() throws(Realm.Error) -> RQLOperand {
        var left = try arithmeticTerm()
        while case .symbol(let symbol) = current, let op = ArithmeticOperator(rawValue: symbol),
            op == .add || op == .subtract
        {
            let at = position
            advance()
            left = .arithmetic(op, left, try arithmeticTerm(), position: at)
        }
        return left
    }

    private mutating func arithmeticTerm() throws(Realm.Error) -> RQLOperand {
        var left = try arithmeticFactor()
        while case .symbol(let symbol) = current, let op = ArithmeticOperator(rawValue: symbol),
            op == .multiply || op == .divide
        {
            let at = position
            advance()
            left = .arithmetic(op, left, try arithmeticFactor(), position: at)
        }
        return left
    }

    private mutating func arithmeticFactor() throws(Realm.Error) -> RQLOperand {
        let start = position
        guard accept(symbol: "(") else { return try operand() }
        try enterLevel(at: start)
        let inner = try arithmeticOperand()
        try expect(symbol: ")", ") to close (")
        depth -= 1
        return inner
    }

    /// Whether the `(` at the current token opens an arithmetic expression (`(age + 1) * 2 > 50`) rather than a
    /// group of conditions: the token after its matching `)` continues an expression or a comparison.
    private mutating func parenthesisOpensExpression() -> Bool {
        guard current == .symbol("(") else { return false }
        if closingParenthesis.isEmpty { closingParenthesis = Self.matchingParentheses(tokens.map(\.token)) }
        let close = closingParenthesis[index]
        guard close >= 0, close + 1 < tokens.count else { return false }
        switch tokens[close + 1].token {
        case .symbol(let symbol):
            return ["*", "/", "+", "-", "==", "=", "!=", "<>", "<", "<=", ">", ">=", "=<", "=>"].contains(symbol)
        case .identifier(let word): return word.uppercased() == "IN"
        default: return false
        }
    }

    /// For each token, the index of the `)` closing it when it is a `(` (-1 otherwise or when unclosed): one pass
    /// with a stack, so that looking past a parenthesis costs nothing however deep the query nests.
    private static func matchingParentheses(_ tokens: [Token]) -> [Int] {
        var closing = [Int](repeating: -1, count: tokens.count)
        var open: [Int] = []
        for (at, token) in tokens.enumerated() {
            if token == .symbol("(") {
                open.append(at)
            } else if token == .symbol(")"), let start = open.popLast() {
                closing[start] = at
            }
        }
        return closing
    }

    private mutating func operand() throws(Realm.Error) -> RQLOperand {
        let start = position
        switch current {
        case .string(let value):
            advance()
            return .literal(.string(value), position: start)
        case .integer(let value):
            advance()
            return .literal(.int(value), position: start)
        case .number(let value):
            advance()
            return .literal(.double(value), position: start)
        case .date(let value):
            advance()
            return .literal(.date(value), position: start)
        case .data(let value):
            advance()
            return .literal(.data(value), position: start)
        case .argument(let number):
            advance()
            return .argument(number, position: start)
        case .symbol("-"):
            advance()
            switch current {
            case .integer(let value):
                advance()
                return .literal(.int(-value), position: start)
            case .number(let value):
                advance()
                return .literal(.double(-value), position: start)
            default: throw failure("expected a number after -", at: position)
            }
        case .symbol("{"):
            advance()
            var elements: [RQLOperand] = []
            if !accept(symbol: "}") {
                repeat {
                    try countTerm(at: position)
                    // Lists hold values: a nested list would only be flattened, and parsing nests once per level.
                    if current == .symbol("{") { throw failure("a list cannot hold another list", at: position) }
                    elements.append(try operand())
                } while accept(symbol: ",")
                try expect(symbol: "}", "} to close the list")
            }
            return .list(elements, position: start)
        case .identifier(let name):
            switch name.uppercased() {
            case "NIL", "NULL":
                advance()
                return .literal(.null, position: start)
            case "TRUE":
                advance()
                return .literal(.bool(true), position: start)
            case "FALSE":
                advance()
                return .literal(.bool(false), position: start)
            case "OID", "UUID":
                if index + 1 < tokens.count, tokens[index + 1].token == .symbol("(") {
                    return try typedLiteral(name.uppercased())
                }
            case "SUBQUERY":
                if index + 1 < tokens.count, tokens[index + 1].token == .symbol("(") { return try subquery() }
            case "OBJ":
                if index + 1 < tokens.count, tokens[index + 1].token == .symbol("(") { return try objectLiteral() }
            case "GEOBOX", "GEOCIRCLE", "GEOPOLYGON":
                if index + 1 < tokens.count, tokens[index + 1].token == .symbol("(") {
                    return try shape(name.uppercased())
                }
            default: break
            }
            return try keyPath()
        case .at, .variable:
            return try keyPath()
        default:
            throw failure("expected a property, a value or an argument, found \(describe(current))", at: start)
        }
    }

    /// `oid(…)` and `uuid(…)`, with the value written bare (`oid(507f1f77bcf86cd799439011)`) or quoted
    /// (`oid('507f1f77bcf86cd799439011')`). A malformed value is reported at the value.
    private mutating func typedLiteral(_ kind: String) throws(Realm.Error) -> RQLOperand {
        let start = position
        let name = kind.lowercased()
        advance()
        advance()
        let valuePosition = position
        let raw: String
        switch current {
        case .string(let text), .bareValue(let text): raw = text
        default:
            let expected =
                kind == "OID" ? "24 hexadecimal digits" : "a UUID such as E621E1F8-C36C-495A-93FC-0C247A3E6E5F"
            throw failure("expected \(expected) in \(name)(…), found \(describe(current))", at: valuePosition)
        }
        advance()
        try expect(symbol: ")", ") to close \(name)(")
        if kind == "OID" {
            guard let id = try? ObjectId(string: raw) else {
                throw failure("'\(raw)' is not an ObjectId (24 hexadecimal digits)", at: valuePosition)
            }
            return .literal(.objectId(id), position: start)
        }
        guard let uuid = UUID(uuidString: raw) else { throw failure("'\(raw)' is not a UUID", at: valuePosition) }
        return .literal(.uuid(uuid), position: start)
    }

    /// `obj('Class', primaryKey)`, as core's grammar has it: a quoted class name, then the primary key as a
    /// string, a number, `oid(…)`, `uuid(…)` or nil.
    private mutating func objectLiteral() throws(Realm.Error) -> RQLOperand {
        let start = position
        advance()
        advance()
        guard case .string(let className) = current else {
            throw failure("expected the class name as a string in obj(…), found \(describe(current))", at: position)
        }
        advance()
        try expect(symbol: ",", ", then the primary key in obj('\(className)', …)")
        let keyPosition = position
        guard case .literal(let key, _) = try operand() else {
            throw failure(
                "the primary key in obj('\(className)', …) must be written as a value (a string, a number, oid(…) "
                    + "or uuid(…))", at: keyPosition)
        }
        try expect(symbol: ")", ") to close obj(")
        return .object(className: className, primaryKey: key, position: start)
    }

    /// `SUBQUERY(collection, $x, predicate).@count`.
    private mutating func subquery() throws(Realm.Error) -> RQLOperand {
        let start = position
        try enterLevel(at: start)
        subqueries += 1
        defer {
            depth -= 1
            subqueries -= 1
        }
        guard subqueries <= QueryLimits.maximumSubqueryDepth else {
            throw failure(QueryLimits.subqueryReason, at: start)
        }
        advance()
        advance()
        guard case .keyPath(let collection, _) = try keyPath() else {
            throw failure("expected the collection SUBQUERY runs over", at: position)
        }
        try expect(symbol: ",", ", after the collection of SUBQUERY")
        guard case .variable(let variable) = current else {
            throw failure("expected a variable such as $x, found \(describe(current))", at: position)
        }
        advance()
        try expect(symbol: ",", ", after the variable of SUBQUERY")
        let predicate = try orExpression()
        try expect(symbol: ")", ") to close SUBQUERY")
        guard accept(symbol: "."), case .at(let name) = current, name == "count" || name == "size" else {
            throw failure("SUBQUERY(…) must be followed by .@count", at: position)
        }
        advance()
        return .subquery(collection: collection, variable: variable, predicate: predicate, position: start)
    }

    /// A number literal, possibly negative.
    private mutating func number() throws(Realm.Error) -> Double {
        let negative = accept(symbol: "-")
        let value: Double
        switch current {
        case .integer(let integer): value = Double(integer)
        case .number(let number): value = number
        default: throw failure("expected a number, found \(describe(current))", at: position)
        }
        advance()
        return negative ? -value : value
    }

    /// `[longitude, latitude]`.
    private mutating func coordinate() throws(Realm.Error) -> GeoShapeLiteral.Coordinate {
        try expect(symbol: "[", "[ to open a [longitude, latitude] pair")
        let longitude = try number()
        try expect(symbol: ",", ", between longitude and latitude")
        let latitude = try number()
        try expect(symbol: "]", "] to close a [longitude, latitude] pair")
        return GeoShapeLiteral.Coordinate(longitude: longitude, latitude: latitude)
    }

    /// `geoBox([lon, lat], [lon, lat])`, `geoCircle([lon, lat], radians)`,
    /// `geoPolygon({[lon, lat], …}, {…hole…}, …)`.
    private mutating func shape(_ kind: String) throws(Realm.Error) -> RQLOperand {
        let start = position
        advance()
        advance()
        let literal: GeoShapeLiteral
        switch kind {
        case "GEOBOX":
            let bottomLeft = try coordinate()
            try expect(symbol: ",", ", between the corners of geoBox")
            literal = .box(bottomLeft: bottomLeft, topRight: try coordinate())
        case "GEOCIRCLE":
            let center = try coordinate()
            try expect(symbol: ",", ", between the center and the radius of geoCircle")
            literal = .circle(center: center, radians: try number())
        default:
            var rings: [[GeoShapeLiteral.Coordinate]] = []
            repeat {
                try expect(symbol: "{", "{ to open a ring of geoPolygon")
                var ring: [GeoShapeLiteral.Coordinate] = []
                repeat { ring.append(try coordinate()) } while accept(symbol: ",")
                try expect(symbol: "}", "} to close a ring of geoPolygon")
                rings.append(ring)
            } while accept(symbol: ",")
            literal = .polygon(rings)
        }
        try expect(symbol: ")", ") to close \(kind.lowercased())")
        return .shape(literal, position: start)
    }

    private mutating func keyPath() throws(Realm.Error) -> RQLOperand {
        let start = position
        var components: [String] = []
        while true {
            switch current {
            case .identifier(let name): components.append(name)
            case .at(let name): components.append("@" + name)
            case .variable(let name) where components.isEmpty: components.append(name)
            default:
                throw failure("expected a property name, found \(describe(current))", at: position)
            }
            advance()
            while current == .symbol("[") {
                // `parks['Oslo']`: the value at a key of a map, as a component `[Oslo` (no property name starts
                // with `[`). `extra[0]`, `extra[FIRST]`, `extra[LAST]`, `extra[SIZE]`, `extra[*]`: a position in
                // (or all of) a mixed value's nested collection, as a component `]0`, `]FIRST`, … (nor with `]`).
                advance()
                switch current {
                case .string(let key): components.append("[" + key)
                case .integer(let index) where index >= 0: components.append("]\(index)")
                case .symbol("*"): components.append("]*")
                case .identifier(let word) where ["FIRST", "LAST", "SIZE"].contains(word.uppercased()):
                    components.append("]" + word.uppercased())
                default:
                    throw failure(
                        "expected a quoted map key, a position, FIRST, LAST, SIZE or * inside [ ], found \(describe(current))",
                        at: position)
                }
                advance()
                try expect(symbol: "]", "] to close the map key or position")
            }
            guard accept(symbol: ".") else { break }
        }
        return .keyPath(components, position: start)
    }
}

/// Query strings already parsed, process-wide: an app filters with the same few strings again and again (the
/// arguments change, not the text), as SQLite users reuse prepared statements. Parsing is pure, so the parsed
/// form of a text is the same everywhere; errors are not kept.
final class ParsedQueries: @unchecked Sendable {
    static let shared = ParsedQueries()
    /// Texts kept at most; the table starts over when it is full (a program with more distinct query texts than
    /// this builds them dynamically, and a cache would not help it).
    static let capacity = 512
    private let entries = Locked<[String: RQLQuery]>([:])

    func query(for text: String) -> RQLQuery? { entries.withLock { $0[text] } }

    func remember(_ query: RQLQuery, for text: String) {
        guard text.utf8.count <= 4_096 else { return }
        entries.withLock { entries in
            if entries.count >= Self.capacity { entries.removeAll(keepingCapacity: true) }
            entries[text] = query
        }
    }
}

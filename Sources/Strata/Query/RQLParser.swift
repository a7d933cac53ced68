import Foundation
import StrataStorage

/// Turns query text into an `RQLQuery`, throwing `Realm.Error.invalidQuery` with the position of the offending
/// token.
struct RQLParser {
    enum Token: Equatable {
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

    let text: String
    let bytes: [UInt8]
    var tokens: [(token: Token, position: Int)] = []
    var index = 0
    /// How many levels (parentheses, NOT, SUBQUERY) enclose the current token: at most
    /// `QueryLimits.maximumDepth`, so that whatever walks the parsed tree stays within its bounds.
    var depth = 0
    /// Conditions and list values so far: at most `QueryLimits.maximumTerms`.
    var terms = 0
    /// How many SUBQUERYs enclose the current token: at most `QueryLimits.maximumSubqueryDepth`.
    var subqueries = 0
    /// The query's arguments, read while parsing only by `%K` (whose argument is a key path, part of the query's
    /// structure rather than a value).
    let arguments: [Any?]
    /// The NSPredicate-style specifiers (`%@`, `%K`, `%d`…) read so far: the next one takes this argument.
    var formatArguments = 0
    /// Where the first `$n` and the first `%` specifier are: a query uses one style or the other.
    var firstDollar: Int?
    var firstPercent: Int?

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
    var substitutesKeys = false
    /// `matchingParentheses(tokens)`, computed when a `(` is first met.
    private var closingParenthesis: [Int] = []

    func failure(_ reason: String, at position: Int) -> Realm.Error {
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

    private static let postfixWords: Set<String> = ["SORT", "DISTINCT", "LIMIT"]

    mutating func query() throws(Realm.Error) -> RQLQuery {
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
    mutating func orExpression() throws(Realm.Error) -> RQLPredicate {
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

}

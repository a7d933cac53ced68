import Foundation
import StrataStorage

// Arithmetic in the Realm Query Language: `age * 2 > 50`, `price + tax < 10`, `(a - b) / 2 >= 1`, on either side of
// `==`, `!=`, `<`, `<=`, `>`, `>=` and `IN`, with numeric properties (through to-one links, aggregates and SUBQUERY
// counts included), number literals and arguments as operands. The parser builds `RQLOperand.arithmetic`; the
// binder folds constant parts and turns an expression over properties into a one-step `BoundPath` whose value is
// computed per object, so every comparison that takes a property takes an expression.

/// `*`, `/`, `+`, `-`.
enum ArithmeticOperator: String {
    case multiply = "*"
    case divide = "/"
    case add = "+"
    case subtract = "-"
}

/// An arithmetic expression bound to a class: constants folded, properties resolved.
indirect enum BoundArithmetic {
    case value(_StoredValue)
    case path(BoundPath)
    case operation(ArithmeticOperator, BoundArithmetic, BoundArithmetic)
}

extension RQLOperand {
    /// Whether the operand is a property, or an expression reading one.
    var readsProperty: Bool {
        switch self {
        case .keyPath, .subquery: true
        case .arithmetic(_, let left, let right, _): left.readsProperty || right.readsProperty
        default: false
        }
    }
}

extension QueryBinder {
    /// An expression over properties as a path whose one value, per object, is the expression's result.
    func bindArithmeticPath(_ operand: RQLOperand) throws(Realm.Error) -> BoundPath {
        let (expression, type, text) = try bindArithmetic(operand)
        return BoundPath(
            steps: [.arithmetic(expression)], type: type, isOptional: true, isMultiple: false, objectClassName: nil,
            text: text, directColumn: nil)
    }

    /// An expression without properties, computed now.
    func arithmeticConstant(_ operand: RQLOperand) throws(Realm.Error) -> _StoredValue {
        guard case .value(let value) = try bindArithmetic(operand).expression else {
            throw failure("the expression reads a property", at: operand.position)
        }
        return value
    }

    /// `operand` bound, with the number type it produces and its text for messages. Each operand must be a single
    /// number: a numeric (or mixed) property, an aggregate or count, a number literal or a number argument.
    private func bindArithmetic(_ operand: RQLOperand) throws(Realm.Error)
        -> (expression: BoundArithmetic, type: PropertyType, text: String)
    {
        switch operand {
        case .arithmetic(let op, let left, let right, let position):
            let (leftExpression, leftType, leftText) = try bindArithmetic(left)
            let (rightExpression, rightType, rightText) = try bindArithmetic(right)
            let type = QueryArithmetic.resultType(leftType, rightType)
            let text = "(\(leftText) \(op.rawValue) \(rightText))"
            if op == .divide, case .value(let divisor) = rightExpression, QueryArithmetic.isZero(divisor) {
                throw failure("division by zero in \(text)", at: position)
            }
            if case .value(let x) = leftExpression, case .value(let y) = rightExpression {
                guard let result = QueryArithmetic.apply(op, x, y) else {
                    throw failure("\(text) overflows", at: position)
                }
                return (.value(result), type, text)
            }
            return (.operation(op, leftExpression, rightExpression), type, text)
        case .keyPath(let components, let position):
            let path = try bindPath(components, at: position)
            return (.path(try numericPath(path, at: position)), path.type == .any ? .double : path.type, path.text)
        case .subquery:
            guard let path = try bindPathOperand(operand) else {
                throw failure("expected a SUBQUERY count", at: operand.position)
            }
            return (.path(try numericPath(path, at: operand.position)), path.type, path.text)
        case .literal(let value, let position):
            return (.value(value), try numberType(value, at: position), QueryBinder.describe(value))
        case .argument(let number, let position):
            let anyNumber = BoundPath(
                steps: [], type: .double, isOptional: false, isMultiple: false, objectClassName: nil,
                text: "an arithmetic operand", directColumn: nil)
            guard case .value(let value) = try bindOperand(operand, for: anyNumber) else {
                throw failure("$\(number): arithmetic needs a number, not a list", at: position)
            }
            return (.value(value), try numberType(value, at: position), "$\(number)")
        case .list(_, let position), .shape(_, let position), .object(_, _, let position):
            throw failure("arithmetic needs numbers, not a list, shape or object", at: position)
        }
    }

    /// `path` when it holds single numbers (or mixed values, computed when they hold numbers).
    private func numericPath(_ path: BoundPath, at position: Int) throws(Realm.Error) -> BoundPath {
        guard [.int, .float, .double, .decimal128, .any].contains(path.type) else {
            throw failure("arithmetic needs numbers; \(path.text) is \(path.type)", at: position)
        }
        guard !path.isMultiple else {
            throw failure(
                "arithmetic needs one number; \(path.text) passes through a collection (use @sum, @min, @max or @avg)",
                at: position)
        }
        return path
    }

    /// The number type of a literal or argument; anything else is an error.
    private func numberType(_ value: _StoredValue, at position: Int) throws(Realm.Error) -> PropertyType {
        switch value {
        case .int: .int
        case .float: .float
        case .double: .double
        case .decimal128: .decimal128
        default: throw failure("arithmetic needs numbers, not \(QueryBinder.describe(value))", at: position)
        }
    }
}

enum QueryArithmetic {
    /// The type of `a op b`: decimal when either is, else double when either is not an integer, else integer.
    static func resultType(_ a: PropertyType, _ b: PropertyType) -> PropertyType {
        if a == .decimal128 || b == .decimal128 { return .decimal128 }
        if a == .int && b == .int { return .int }
        return .double
    }

    static func isZero(_ value: _StoredValue) -> Bool {
        switch value {
        case .decimal128(let decimal): decimal == 0
        default: QueryValues.number(value) == 0
        }
    }

    /// `x op y`; nil (no value, so no comparison holds) for a non-number, division by zero or integer overflow.
    /// Integers stay integers (division truncates, as in the Realm SDK's engine); with a decimal the arithmetic is
    /// decimal, otherwise double.
    static func apply(_ op: ArithmeticOperator, _ x: _StoredValue, _ y: _StoredValue) -> _StoredValue? {
        if case .null = x { return .null }
        if case .null = y { return .null }
        if case .int(let a) = x, case .int(let b) = y {
            let result: (partialValue: Int64, overflow: Bool)
            switch op {
            case .add: result = a.addingReportingOverflow(b)
            case .subtract: result = a.subtractingReportingOverflow(b)
            case .multiply: result = a.multipliedReportingOverflow(by: b)
            case .divide:
                guard b != 0 else { return nil }
                result = a.dividedReportingOverflow(by: b)
            }
            return result.overflow ? nil : .int(result.partialValue)
        }
        if case .decimal128 = x {
            return decimal(op, x, y)
        }
        if case .decimal128 = y {
            return decimal(op, x, y)
        }
        guard let a = QueryValues.number(x), let b = QueryValues.number(y) else { return nil }
        switch op {
        case .add: return .double(a + b)
        case .subtract: return .double(a - b)
        case .multiply: return .double(a * b)
        case .divide: return b == 0 ? nil : .double(a / b)
        }
    }

    private static func decimal(_ op: ArithmeticOperator, _ x: _StoredValue, _ y: _StoredValue) -> _StoredValue? {
        func decimal(_ value: _StoredValue) -> Decimal128? {
            switch value {
            case .decimal128(let decimal): decimal
            case .int(let int): Decimal128(Int(int))
            default: QueryValues.number(value).map { Decimal128($0) }
            }
        }
        guard let a = decimal(x), let b = decimal(y) else { return nil }
        switch op {
        case .add: return .decimal128(a + b)
        case .subtract: return .decimal128(a - b)
        case .multiply: return .decimal128(a * b)
        case .divide: return b == 0 ? nil : .decimal128(a / b)
        }
    }
}

extension Realm {
    /// The value of `expression` for object `key` (whose row is `row`): nil when it has none.
    func arithmeticValue(_ expression: BoundArithmetic, key: Int64, row: RowView?) throws(Realm.Error) -> _StoredValue?
    {
        switch expression {
        case .value(let value): return value
        case .path(let path): return try queryValues(path, key: key, row: row).first ?? .null
        case .operation(let op, let left, let right):
            guard let x = try arithmeticValue(left, key: key, row: row),
                let y = try arithmeticValue(right, key: key, row: row)
            else { return nil }
            return QueryArithmetic.apply(op, x, y)
        }
    }
}

extension BoundArithmetic {
    /// The expression with every class binding replaced by `map`'s (see `BoundPath.rebound`).
    func rebound(_ map: BindingMap) throws(Realm.Error) -> BoundArithmetic {
        switch self {
        case .value: self
        case .path(let path): .path(try path.rebound(map))
        case .operation(let op, let left, let right): .operation(op, try left.rebound(map), try right.rebound(map))
        }
    }
}

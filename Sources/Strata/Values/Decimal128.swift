public import Foundation

/// A 128-bit decimal floating-point number: IEEE 754-2008 `decimal128` in the binary integer decimal (BID)
/// encoding, the format BSON and most databases use for exact decimal values.
///
/// A finite value is `coefficient × 10^exponent` with a coefficient of up to 34 decimal digits and an exponent in
/// `-6176...6111`. Besides finite values there are positive and negative infinity and NaN.
///
/// Values keep the exponent they were written with, so `"1.50"` and `"1.5"` are different representations (members
/// of the same *cohort*) of the same number: ``canonicalString`` preserves trailing zeros and
/// `Decimal128(string: x.canonicalString)` reproduces `x` bit for bit (NaN payloads and signs excepted: every NaN
/// prints as `NaN`). ``stringValue`` and ``description`` print as the SDK does (`1.5E2`, `1.50`, `Inf`), and
/// read back to an equal value.
///
/// As in the SDK, the type is `Numeric`, `SignedNumeric` and `Strideable`, and has ``min``, ``max`` and
/// ``init(value:)``.
///
/// ## Equality, hashing and ordering
///
/// Equality is numeric: `1.0 == 1.00 == 1` and `+0 == -0`. Unlike IEEE 754 comparison, NaN is equal to every NaN
/// (and unequal to everything else), so that values — NaN included — can be used as dictionary keys and set
/// members. Hashing is consistent with this equality.
///
/// `Comparable` is numeric order, `-Infinity < finite values < +Infinity`, with NaN sorting before everything
/// else. This makes `<` a total order, suitable for sorting and indexing.
///
/// ## Arithmetic
///
/// `+`, `-`, `*` and `/` are exact whenever the exact result fits in 34 significant digits, and otherwise round to
/// 34 digits with round-half-even, as IEEE 754 specifies. Results that are too large become infinity; results too
/// small for the exponent range round to subnormal values or zero. Division by zero yields an infinity with the
/// sign of the quotient, and `0 / 0`, `∞ - ∞`, `0 × ∞` and `∞ / ∞` yield NaN. Any operation with a NaN operand
/// yields NaN.
public struct Decimal128: Sendable {
    /// The upper 64 bits of the BID encoding.
    private var high: UInt64
    /// The lower 64 bits of the BID encoding.
    private var low: UInt64

    /// Creates a value from its raw 128-bit BID encoding.
    ///
    /// Every bit pattern is accepted. Non-canonical encodings (a coefficient above `10^34 - 1`, including every
    /// coefficient in the `11` combination-field form) decode as zero, as the standard prescribes; the bits
    /// themselves are kept, so ``bid`` returns them unchanged.
    ///
    /// - Parameters:
    ///   - high: The upper 64 bits: sign, combination field and the top of the coefficient.
    ///   - low: The lower 64 bits of the coefficient.
    public init(bid high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// The raw 128-bit BID encoding, as stored on disk.
    public var bid: (high: UInt64, low: UInt64) { (high, low) }

    /// Creates a finite value from a canonical coefficient and an in-range exponent.
    private init(sign: Bool, coefficient: UInt128, exponent: Int) {
        assert(coefficient <= Self.maxCoefficient && (Self.minExponent...Self.maxExponent).contains(exponent))
        high =
            (sign ? 1 << 63 : 0) | UInt64(exponent + Self.exponentBias) << 49
            | UInt64(truncatingIfNeeded: coefficient >> 64)
        low = UInt64(truncatingIfNeeded: coefficient)
    }
}

// MARK: - Constants and classification

extension Decimal128 {
    /// Positive zero, `0`.
    public static let zero = Decimal128(bid: 0x3040_0000_0000_0000, low: 0)
    /// A quiet NaN (not a number).
    public static let nan = Decimal128(bid: 0x7C00_0000_0000_0000, low: 0)
    /// Positive infinity.
    public static let infinity = Decimal128(bid: 0x7800_0000_0000_0000, low: 0)

    /// The number of decimal digits a coefficient can hold.
    static let precision = 34
    /// The smallest exponent of a finite value.
    static let minExponent = -6176
    /// The largest exponent of a finite value.
    static let maxExponent = 6111
    /// The bias added to the exponent in the encoding.
    private static let exponentBias = 6176
    /// `10^34 - 1`, the largest canonical coefficient.
    private static let maxCoefficient = pow10[34] - 1

    /// Whether the value is NaN.
    public var isNaN: Bool { high & 0x7C00_0000_0000_0000 == 0x7C00_0000_0000_0000 }

    /// Whether the value is positive or negative infinity.
    public var isInfinite: Bool { high & 0x7C00_0000_0000_0000 == 0x7800_0000_0000_0000 }

    /// Whether the value is neither infinite nor NaN.
    public var isFinite: Bool { high & 0x7800_0000_0000_0000 != 0x7800_0000_0000_0000 }

    /// Whether the sign bit is set. This is `true` for negative numbers, `-0` and `-Infinity` (and NaNs with the
    /// sign bit set).
    public var isSignMinus: Bool { high >> 63 == 1 }

    /// Whether the value is a zero of either sign and any exponent (including non-canonical encodings).
    public var isZero: Bool {
        if case .finite(0, _) = kind { return true }
        return false
    }

    /// The decoded form of a value.
    enum Kind {
        case nan
        case infinity
        /// `coefficient × 10^exponent`, with a canonical coefficient (non-canonical ones are already zero).
        case finite(coefficient: UInt128, exponent: Int)
    }

    var kind: Kind {
        if isNaN { return .nan }
        if isInfinite { return .infinity }
        if high & 0x6000_0000_0000_0000 == 0x6000_0000_0000_0000 {
            // The "11" form: the coefficient is 0b100 followed by 111 bits, at least 2^113 > 10^34 - 1, so it is
            // never canonical and the value is zero.
            return .finite(coefficient: 0, exponent: Int(high >> 47 & 0x3FFF) - Self.exponentBias)
        }
        let coefficient = UInt128(high & 0x1_FFFF_FFFF_FFFF) << 64 | UInt128(low)
        return .finite(
            coefficient: coefficient > Self.maxCoefficient ? 0 : coefficient,
            exponent: Int(high >> 49 & 0x3FFF) - Self.exponentBias)
    }

    private static func infinity(negative: Bool) -> Decimal128 {
        negative ? -infinity : infinity
    }
}

// MARK: - Conversions

extension Decimal128 {
    /// Creates a value equal to an integer; the result has exponent 0.
    ///
    /// - Parameter value: The integer to represent; every `Int` fits exactly.
    public init(_ value: Int) {
        self.init(sign: value < 0, coefficient: UInt128(value.magnitude), exponent: 0)
    }

    /// Creates the value written by the shortest decimal text that round-trips `value`.
    ///
    /// The digits are those of `value.description` (so `0.1` becomes exactly `0.1`, not the binary approximation
    /// `0.1000000000000000055511151231257827`), except that integral values drop the `.0` suffix: `2.0` becomes `2`.
    /// Infinities and NaN map to their decimal counterparts.
    ///
    /// - Parameter value: The binary floating-point value to convert.
    public init(_ value: Double) {
        var text = value.description
        if text.hasSuffix(".0") {
            text.removeLast(2)
        }
        do {
            self = try Decimal128(string: text)
        } catch {
            preconditionFailure("Double description \"\(text)\" did not parse: \(error)")
        }
    }

    /// Creates a value numerically equal to a Foundation `Decimal`.
    ///
    /// The conversion is exact whenever the decimal has at most 34 significant digits (Foundation decimals can
    /// have up to 38); longer ones round to 34 digits with round-half-even. A NaN decimal becomes NaN.
    ///
    /// - Parameter number: The decimal to convert.
    public init(number: Decimal) {
        if number.isNaN {
            self = .nan
            return
        }
        do {
            self = try Decimal128(string: number.description)
        } catch {
            preconditionFailure("Decimal description \"\(number.description)\" did not parse: \(error)")
        }
    }

    /// The `Double` nearest to this value (correctly rounded); values beyond `Double`'s range become infinity or
    /// zero.
    public var doubleValue: Double {
        switch kind {
        case .nan:
            return .nan
        case .infinity:
            return isSignMinus ? -.infinity : .infinity
        case .finite(let coefficient, let exponent):
            let magnitude = Double("\(coefficient)e\(exponent)") ?? .nan
            return isSignMinus ? -magnitude : magnitude
        }
    }

    /// The Foundation `Decimal` equal to this value, or `nil` if there is none: for NaN, infinities and values
    /// whose exponent is outside `Decimal`'s range even after removing trailing zeros.
    public var decimalValue: Decimal? {
        guard case .finite(let coefficient, let exponent) = kind else { return nil }
        guard coefficient != 0 else { return Decimal(0) }
        let (normalized, normalizedExponent) = Self.stripTrailingZeros(coefficient, exponent)
        guard (-128...127).contains(normalizedExponent),
            let magnitude = Decimal(string: "\(normalized)e\(normalizedExponent)", locale: nil)
        else { return nil }
        return isSignMinus ? -magnitude : magnitude
    }
}

// MARK: - Literals

extension Decimal128: ExpressibleByIntegerLiteral {
    /// Creates a value equal to an integer literal, with exponent 0.
    ///
    /// - Parameter value: The literal's value.
    public init(integerLiteral value: Int) {
        self.init(value)
    }
}

extension Decimal128: ExpressibleByFloatLiteral {
    /// Creates a value from a floating-point literal, using the literal's shortest round-trip decimal digits (as
    /// the `Double` initializer does): `0.1` is exactly one tenth.
    ///
    /// - Parameter value: The literal's value.
    public init(floatLiteral value: Double) {
        self.init(value)
    }
}

extension Decimal128: ExpressibleByStringLiteral {
    /// Creates a value from a string literal such as `"1.50"` or `"-1E+10"`, with the syntax of
    /// ``init(string:)``.
    ///
    /// A malformed literal is a programming error and stops execution.
    ///
    /// - Parameter value: The literal's text.
    public init(stringLiteral value: String) {
        do {
            self = try Decimal128(string: value)
        } catch {
            preconditionFailure(error.description)
        }
    }
}

// MARK: - Parsing and printing

/// The error thrown by ``Decimal128/init(string:)`` for text that is not a decimal number.
public struct Decimal128ParseError: Error, Equatable, CustomStringConvertible {
    /// The string that failed to parse.
    public let input: String
    /// What is wrong with the input.
    public let reason: String

    /// Creates an error for the given unparsable input.
    ///
    /// - Parameters:
    ///   - input: The string that failed to parse.
    ///   - reason: What is wrong with it.
    public init(input: String, reason: String) {
        self.input = input
        self.reason = reason
    }

    /// A message naming the invalid input and the problem.
    public var description: String {
        "Invalid Decimal128 \"\(input)\": \(reason)"
    }
}

extension Decimal128 {
    /// Parses decimal text.
    ///
    /// Accepted forms, with an optional leading `+` or `-`:
    /// - digits with an optional decimal point (`"12"`, `"1.50"`, `"-0.001"`, `"5."`, `".5"`), optionally followed
    ///   by an exponent `e` or `E` with an optional sign and at least one digit (`"1E+10"`, `"1.23e-5"`);
    /// - `"Inf"` and `"Infinity"`, and `"NaN"`, in any letter case.
    ///
    /// The exponent written is kept, so `"1.50"` keeps its trailing zero. Text with more than 34 significant
    /// digits rounds to 34 with round-half-even; magnitudes beyond the largest finite value become infinity and
    /// magnitudes below the smallest subnormal round to zero. Whitespace is not accepted.
    ///
    /// - Parameter string: The text to parse.
    /// - Throws: ``Decimal128ParseError`` if `string` is not in one of the accepted forms.
    public init(string: String) throws(Decimal128ParseError) {
        let bytes = Array(string.utf8)
        func fail(_ reason: String) -> Decimal128ParseError {
            Decimal128ParseError(input: string, reason: reason)
        }
        guard !bytes.isEmpty else { throw fail("empty string") }
        var index = 0
        var negative = false
        if bytes[0] == UInt8(ascii: "+") || bytes[0] == UInt8(ascii: "-") {
            negative = bytes[0] == UInt8(ascii: "-")
            index = 1
        }
        let lowercasedFirst = index < bytes.count ? bytes[index] | 0x20 : 0
        if lowercasedFirst == UInt8(ascii: "i") || lowercasedFirst == UInt8(ascii: "n") {
            switch String(decoding: bytes[index...], as: UTF8.self).lowercased() {
            case "inf", "infinity":
                self = Self.infinity(negative: negative)
            case "nan":
                self = Self.nan
                if negative { high |= 1 << 63 }
            default:
                throw fail("expected a number, \"Infinity\" or \"NaN\"")
            }
            return
        }

        // Up to 38 significant digits are collected exactly (10^38 - 1 fits in UInt128); later digits only count
        // towards the exponent and the sticky bit, which is enough to round to 34 digits correctly.
        var coefficient: UInt128 = 0
        var significantDigits = 0
        var droppedDigits = 0
        var sticky = false
        var fractionDigits = 0
        var sawDigit = false
        var sawPoint = false
        while index < bytes.count {
            let byte = bytes[index]
            if byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") {
                let digit = byte - UInt8(ascii: "0")
                sawDigit = true
                if sawPoint { fractionDigits += 1 }
                if significantDigits == 0 && digit == 0 {
                    // A leading zero: no significance.
                } else if significantDigits < 38 {
                    coefficient = coefficient * 10 + UInt128(digit)
                    significantDigits += 1
                } else {
                    droppedDigits += 1
                    if digit != 0 { sticky = true }
                }
            } else if byte == UInt8(ascii: "."), !sawPoint {
                sawPoint = true
            } else {
                break
            }
            index += 1
        }
        guard sawDigit else { throw fail("expected digits") }

        var writtenExponent = 0
        if index < bytes.count && (bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E")) {
            index += 1
            var exponentNegative = false
            if index < bytes.count && (bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-")) {
                exponentNegative = bytes[index] == UInt8(ascii: "-")
                index += 1
            }
            var sawExponentDigit = false
            while index < bytes.count, bytes[index] >= UInt8(ascii: "0") && bytes[index] <= UInt8(ascii: "9") {
                sawExponentDigit = true
                // Saturate: anything this large is far outside the representable range either way.
                if writtenExponent < 10_000_000 {
                    writtenExponent = writtenExponent * 10 + Int(bytes[index] - UInt8(ascii: "0"))
                }
                index += 1
            }
            guard sawExponentDigit else { throw fail("expected exponent digits") }
            if exponentNegative { writtenExponent = -writtenExponent }
        }
        guard index == bytes.count else { throw fail("unexpected character at offset \(index)") }

        self = Self.rounded(
            negative: negative, coefficient: coefficient, exponent: writtenExponent - fractionDigits + droppedDigits,
            sticky: sticky)
    }

    /// The value in the IEEE 754 / BSON "to-scientific-string" form, which ``init(string:)`` parses back to the
    /// same bits (for every value but NaNs with a sign or payload, which print as plain `"NaN"`). The CLI's dumps
    /// use it; ``stringValue`` and ``description`` print the SDK's form instead.
    ///
    /// With an exponent of at most zero and an adjusted exponent (the exponent of the leading digit) of at least
    /// -6, plain notation with all coefficient digits (`"123"`, `"1.50"`, `"-0.001"`, `"0.000001"`); otherwise
    /// scientific notation with one digit before the point (`"1E+3"`, `"1.23E+40"`, `"1E-7"`). Infinities print
    /// as `"Infinity"` and `"-Infinity"`, every NaN as `"NaN"`.
    public var canonicalString: String {
        let coefficient: UInt128
        let exponent: Int
        switch kind {
        case .nan:
            return "NaN"
        case .infinity:
            return isSignMinus ? "-Infinity" : "Infinity"
        case .finite(let finiteCoefficient, let finiteExponent):
            coefficient = finiteCoefficient
            exponent = finiteExponent
        }
        let digits = String(coefficient)
        let adjusted = exponent + digits.count - 1
        var result = isSignMinus ? "-" : ""
        if exponent <= 0 && adjusted >= -6 {
            if exponent == 0 {
                result += digits
            } else if digits.count > -exponent {
                let split = digits.index(digits.endIndex, offsetBy: exponent)
                result += digits[..<split] + "." + digits[split...]
            } else {
                result += "0." + String(repeating: "0", count: -exponent - digits.count) + digits
            }
        } else {
            result += digits.prefix(1)
            if digits.count > 1 {
                result += "." + digits.dropFirst()
            }
            result += adjusted >= 0 ? "E+\(adjusted)" : "E\(adjusted)"
        }
        return result
    }
}

// MARK: - Codable

extension Decimal128: Codable {
    /// Decodes a value from a single string in the syntax of ``init(string:)``, or from a number.
    ///
    /// Numbers are read as an integer if possible, then as a Foundation `Decimal` (exact with `JSONDecoder`), and
    /// finally as a `Double`.
    ///
    /// - Parameter decoder: The decoder to read from.
    /// - Throws: `DecodingError` if the value is neither a valid decimal string nor a number.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let string = try? container.decode(String.self) {
            do {
                self = try Decimal128(string: string)
            } catch {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: error.description)
            }
        } else if let integer = try? container.decode(Int.self) {
            self.init(integer)
        } else if let decimal = try? container.decode(Decimal.self) {
            self.init(number: decimal)
        } else {
            self.init(try container.decode(Double.self))
        }
    }

    /// Encodes the value as a single string, its ``stringValue``, as the SDK does (`"1.23456789E132"`).
    ///
    /// - Parameter encoder: The encoder to write to.
    /// - Throws: The encoder's error.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(stringValue)
    }
}

// MARK: - Equality, hashing and ordering

extension Decimal128: Hashable {
    /// Whether two values are numerically equal; every NaN equals every other NaN.
    ///
    /// - Parameters:
    ///   - lhs: A value.
    ///   - rhs: Another value.
    /// - Returns: `true` if both are NaN or both denote the same number (`1.0 == 1.00`, `-0 == +0`).
    public static func == (lhs: Decimal128, rhs: Decimal128) -> Bool {
        order(lhs, rhs) == 0
    }

    /// Hashes the value's number, so that numerically equal values hash equally.
    ///
    /// - Parameter hasher: The hasher to feed.
    public func hash(into hasher: inout Hasher) {
        switch kind {
        case .nan:
            hasher.combine(0 as UInt8)
        case .infinity:
            hasher.combine(1 as UInt8)
            hasher.combine(isSignMinus)
        case .finite(0, _):
            hasher.combine(2 as UInt8)
        case .finite(let coefficient, let exponent):
            let (normalized, normalizedExponent) = Self.stripTrailingZeros(coefficient, exponent)
            hasher.combine(3 as UInt8)
            hasher.combine(isSignMinus)
            hasher.combine(UInt64(truncatingIfNeeded: normalized >> 64))
            hasher.combine(UInt64(truncatingIfNeeded: normalized))
            hasher.combine(normalizedExponent)
        }
    }
}

extension Decimal128: Comparable {
    /// Numeric order, with NaN before every other value (including `-Infinity`).
    ///
    /// - Parameters:
    ///   - lhs: A value.
    ///   - rhs: Another value.
    /// - Returns: `true` if `lhs` sorts before `rhs`.
    public static func < (lhs: Decimal128, rhs: Decimal128) -> Bool {
        order(lhs, rhs) < 0
    }

    /// The total order behind `==` and `<`: negative, zero or positive as `lhs` sorts before, with or after `rhs`.
    private static func order(_ lhs: Decimal128, _ rhs: Decimal128) -> Int {
        switch (lhs.kind, rhs.kind) {
        case (.nan, .nan): return 0
        case (.nan, _): return -1
        case (_, .nan): return 1
        default: break
        }
        let lhsClass = lhs.orderClass
        let rhsClass = rhs.orderClass
        if lhsClass != rhsClass { return lhsClass < rhsClass ? -1 : 1 }
        guard abs(lhsClass) == 1,
            case .finite(let lhsCoefficient, let lhsExponent) = lhs.kind,
            case .finite(let rhsCoefficient, let rhsExponent) = rhs.kind
        else { return 0 }
        let magnitudeOrder = compareMagnitudes(lhsCoefficient, lhsExponent, rhsCoefficient, rhsExponent)
        return lhsClass < 0 ? -magnitudeOrder : magnitudeOrder
    }

    /// -2 for -Infinity, -1 for negative numbers, 0 for zeros, 1 for positive numbers, 2 for +Infinity.
    private var orderClass: Int {
        switch kind {
        case .nan: 0
        case .infinity: isSignMinus ? -2 : 2
        case .finite(0, _): 0
        case .finite: isSignMinus ? -1 : 1
        }
    }

    /// Compares two non-zero magnitudes `lhs × 10^lhsExponent` and `rhs × 10^rhsExponent`.
    private static func compareMagnitudes(
        _ lhs: UInt128, _ lhsExponent: Int, _ rhs: UInt128, _ rhsExponent: Int
    ) -> Int {
        let lhsAdjusted = lhsExponent + digitCount(lhs)
        let rhsAdjusted = rhsExponent + digitCount(rhs)
        if lhsAdjusted != rhsAdjusted { return lhsAdjusted < rhsAdjusted ? -1 : 1 }
        // Same leading-digit position, so the exponents differ by at most 33 and scaling stays below 10^34.
        var left = lhs
        var right = rhs
        if lhsExponent > rhsExponent {
            left *= pow10[lhsExponent - rhsExponent]
        } else {
            right *= pow10[rhsExponent - lhsExponent]
        }
        return left == right ? 0 : left < right ? -1 : 1
    }
}

// MARK: - Arithmetic

extension Decimal128 {
    /// The value with its sign bit flipped (NaN stays NaN).
    ///
    /// - Parameter operand: The value to negate.
    /// - Returns: `-operand`; negating `0` gives `-0`.
    public static prefix func - (operand: Decimal128) -> Decimal128 {
        Decimal128(bid: operand.high ^ 1 << 63, low: operand.low)
    }

    /// The sum, exact when it fits in 34 digits and otherwise rounded half-even.
    ///
    /// - Parameters:
    ///   - lhs: The first addend.
    ///   - rhs: The second addend.
    /// - Returns: `lhs + rhs`, with the smaller of the two exponents when exact.
    public static func + (lhs: Decimal128, rhs: Decimal128) -> Decimal128 {
        add(lhs, rhs, negateRHS: false)
    }

    /// The difference, exact when it fits in 34 digits and otherwise rounded half-even.
    ///
    /// - Parameters:
    ///   - lhs: The minuend.
    ///   - rhs: The subtrahend.
    /// - Returns: `lhs - rhs`, with the smaller of the two exponents when exact.
    public static func - (lhs: Decimal128, rhs: Decimal128) -> Decimal128 {
        add(lhs, rhs, negateRHS: true)
    }

    /// The product, exact when it fits in 34 digits and otherwise rounded half-even.
    ///
    /// - Parameters:
    ///   - lhs: The multiplicand.
    ///   - rhs: The multiplier.
    /// - Returns: `lhs × rhs`, with the sum of the exponents when exact.
    public static func * (lhs: Decimal128, rhs: Decimal128) -> Decimal128 {
        let negative = lhs.isSignMinus != rhs.isSignMinus
        switch (lhs.kind, rhs.kind) {
        case (.nan, _), (_, .nan), (.infinity, .finite(0, _)), (.finite(0, _), .infinity):
            return .nan
        case (.infinity, _), (_, .infinity):
            return infinity(negative: negative)
        case (.finite(let lhsCoefficient, let lhsExponent), .finite(let rhsCoefficient, let rhsExponent)):
            let product = lhsCoefficient.multipliedFullWidth(by: rhsCoefficient)
            let exponent = lhsExponent + rhsExponent
            if product.high == 0 {
                return rounded(negative: negative, coefficient: product.low, exponent: exponent, sticky: false)
            }
            // Truncate to 38 digits, remembering whether anything non-zero was dropped; at least 4 more digits
            // are dropped when rounding to 34, so the final rounding is still correct.
            let dropped = digitCount(UInt256(high: product.high, low: product.low)) - 38
            let (quotient, remainder) = pow10[dropped].dividingFullWidth(product)
            return rounded(
                negative: negative, coefficient: quotient, exponent: exponent + dropped, sticky: remainder != 0)
        }
    }

    /// The quotient, exact when it fits in 34 digits and otherwise rounded half-even.
    ///
    /// An exact quotient uses the exponent closest to `lhs`'s exponent minus `rhs`'s (so `1 / 4 == 0.25` and
    /// `6E+3 / 2` is `3E+3`). A non-zero number divided by zero is an infinity; `0 / 0` is NaN.
    ///
    /// - Parameters:
    ///   - lhs: The dividend.
    ///   - rhs: The divisor.
    /// - Returns: `lhs / rhs`.
    public static func / (lhs: Decimal128, rhs: Decimal128) -> Decimal128 {
        let negative = lhs.isSignMinus != rhs.isSignMinus
        switch (lhs.kind, rhs.kind) {
        case (.nan, _), (_, .nan), (.infinity, .infinity), (.finite(0, _), .finite(0, _)):
            return .nan
        case (.infinity, _), (_, .finite(0, _)):
            return infinity(negative: negative)
        case (_, .infinity):
            return Decimal128(sign: negative, coefficient: 0, exponent: minExponent)
        case (.finite(0, let lhsExponent), .finite(_, let rhsExponent)):
            return rounded(negative: negative, coefficient: 0, exponent: lhsExponent - rhsExponent, sticky: false)
        case (.finite(let lhsCoefficient, let lhsExponent), .finite(let rhsCoefficient, let rhsExponent)):
            // Scale the dividend so that the integer quotient has 36 or 37 digits: enough for rounding to 34,
            // small enough for UInt128. The scaled dividend is below 10^70, well within 256 bits.
            let scale = 36 - digitCount(lhsCoefficient) + digitCount(rhsCoefficient)
            let dividend = pow10Wide[scale].multiplied(by: lhsCoefficient)
            var (quotient, remainder) = rhsCoefficient.dividingFullWidth((dividend.high, dividend.low))
            var exponent = lhsExponent - rhsExponent - scale
            if remainder == 0 {
                let preferred = lhsExponent - rhsExponent
                while exponent < preferred && quotient % 10 == 0 {
                    quotient /= 10
                    exponent += 1
                }
            }
            return rounded(negative: negative, coefficient: quotient, exponent: exponent, sticky: remainder != 0)
        }
    }

    /// Adds `rhs` to `lhs` in place.
    ///
    /// - Parameters:
    ///   - lhs: The value to update.
    ///   - rhs: The value to add.
    public static func += (lhs: inout Decimal128, rhs: Decimal128) {
        lhs = lhs + rhs
    }

    /// Subtracts `rhs` from `lhs` in place.
    ///
    /// - Parameters:
    ///   - lhs: The value to update.
    ///   - rhs: The value to subtract.
    public static func -= (lhs: inout Decimal128, rhs: Decimal128) {
        lhs = lhs - rhs
    }

    /// Multiplies `lhs` by `rhs` in place.
    ///
    /// - Parameters:
    ///   - lhs: The value to update.
    ///   - rhs: The value to multiply by.
    public static func *= (lhs: inout Decimal128, rhs: Decimal128) {
        lhs = lhs * rhs
    }

    /// Divides `lhs` by `rhs` in place.
    ///
    /// - Parameters:
    ///   - lhs: The value to update.
    ///   - rhs: The value to divide by.
    public static func /= (lhs: inout Decimal128, rhs: Decimal128) {
        lhs = lhs / rhs
    }

    private static func add(_ lhs: Decimal128, _ rhs: Decimal128, negateRHS: Bool) -> Decimal128 {
        let lhsNegative = lhs.isSignMinus
        let rhsNegative = rhs.isSignMinus != negateRHS
        switch (lhs.kind, rhs.kind) {
        case (.nan, _), (_, .nan):
            return .nan
        case (.infinity, .infinity):
            return lhsNegative == rhsNegative ? infinity(negative: lhsNegative) : .nan
        case (.infinity, _):
            return infinity(negative: lhsNegative)
        case (_, .infinity):
            return infinity(negative: rhsNegative)
        case (.finite(0, let lhsExponent), .finite(0, let rhsExponent)):
            return Decimal128(
                sign: lhsNegative && rhsNegative, coefficient: 0, exponent: Swift.min(lhsExponent, rhsExponent))
        case (.finite(0, let zeroExponent), .finite(let coefficient, let exponent)):
            return padded(negative: rhsNegative, coefficient: coefficient, exponent: exponent, toward: zeroExponent)
        case (.finite(let coefficient, let exponent), .finite(0, let zeroExponent)):
            return padded(negative: lhsNegative, coefficient: coefficient, exponent: exponent, toward: zeroExponent)
        case (.finite(let lhsCoefficient, let lhsExponent), .finite(let rhsCoefficient, let rhsExponent)):
            // Order the operands so that `big` has the larger exponent.
            typealias Operand = (negative: Bool, coefficient: UInt128, exponent: Int)
            let lhsOperand: Operand = (lhsNegative, lhsCoefficient, lhsExponent)
            let rhsOperand: Operand = (rhsNegative, rhsCoefficient, rhsExponent)
            let (big, small) = lhsExponent >= rhsExponent ? (lhsOperand, rhsOperand) : (rhsOperand, lhsOperand)
            let difference = big.exponent - small.exponent
            // How far `big` can be scaled up within 38 digits; at least 4.
            let room = 38 - digitCount(big.coefficient)
            if difference <= room {
                // Exact: align both on the smaller exponent; the sum stays below 10^38 + 10^34 < 2^128.
                let scaled = big.coefficient * pow10[difference]
                if big.negative == small.negative {
                    return rounded(
                        negative: big.negative, coefficient: scaled + small.coefficient, exponent: small.exponent,
                        sticky: false)
                }
                if scaled == small.coefficient {
                    return Decimal128(sign: false, coefficient: 0, exponent: small.exponent)
                }
                return scaled > small.coefficient
                    ? rounded(
                        negative: big.negative, coefficient: scaled - small.coefficient, exponent: small.exponent,
                        sticky: false)
                    : rounded(
                        negative: small.negative, coefficient: small.coefficient - scaled, exponent: small.exponent,
                        sticky: false)
            }
            // `big` scaled to 38 digits dwarfs `small` (below 10^34 units of a lower position): shift `small` down
            // to `big`'s scaled exponent, keeping only whether something non-zero fell off.
            let scaled = big.coefficient * pow10[room]
            let shift = difference - room
            let shifted = shift > 38 ? 0 : small.coefficient / pow10[shift]
            let sticky = shift > 38 || small.coefficient % pow10[shift] != 0
            let exponent = big.exponent - room
            if big.negative == small.negative {
                return rounded(
                    negative: big.negative, coefficient: scaled + shifted, exponent: exponent, sticky: sticky)
            }
            // With a fraction f in (0, 1) dropped: scaled - (shifted + f) = (scaled - shifted - 1) + (1 - f).
            let reduced = scaled - shifted - (sticky ? 1 : 0)
            return rounded(negative: big.negative, coefficient: reduced, exponent: exponent, sticky: sticky)
        }
    }

    /// `coefficient × 10^exponent` exactly, with trailing zeros added to bring the exponent as close to `target`
    /// as 34 digits allow (the IEEE result exponent for `x + 0`).
    private static func padded(negative: Bool, coefficient: UInt128, exponent: Int, toward target: Int) -> Decimal128 {
        guard target < exponent else {
            return Decimal128(sign: negative, coefficient: coefficient, exponent: exponent)
        }
        let shift = Swift.min(exponent - target, precision - digitCount(coefficient))
        return Decimal128(sign: negative, coefficient: coefficient * pow10[shift], exponent: exponent - shift)
    }

    /// Rounds `(coefficient + f) × 10^exponent` to a representable value, where `f` is an unknown fraction in
    /// `(0, 1)` if `sticky` and zero otherwise.
    ///
    /// Rounds half-even to 34 digits, then to the subnormal range if the exponent is below the minimum; overflows
    /// to infinity if the exponent is above the maximum after padding the coefficient with trailing zeros.
    /// Callers passing `sticky` must pass a coefficient of at least 35 digits (or one that is rounded for
    /// underflow), so that the fraction lies strictly below the rounding position.
    private static func rounded(negative: Bool, coefficient: UInt128, exponent: Int, sticky: Bool) -> Decimal128 {
        let digits = digitCount(coefficient)
        var result = coefficient
        var exponent = exponent
        let drop = Swift.max(0, digits - precision, minExponent - exponent)
        if drop > 38 {
            // Even 2^128 - 1 is below half of 10^39: rounds to zero.
            result = 0
            exponent += drop
        } else if drop > 0 {
            let divisor = pow10[drop]
            result = coefficient / divisor
            let remainder = coefficient % divisor
            let half = divisor / 2
            if remainder > half || (remainder == half && (sticky || result % 2 == 1)) {
                result += 1
                if result == pow10[precision] {
                    result = pow10[precision - 1]
                    exponent += 1
                }
            }
            exponent += drop
        } else {
            assert(!sticky, "an inexact value must carry digits to round away")
        }
        if exponent > maxExponent {
            if result == 0 {
                exponent = maxExponent
            } else {
                let padding = exponent - maxExponent
                guard digitCount(result) + padding <= precision else { return infinity(negative: negative) }
                result *= pow10[padding]
                exponent = maxExponent
            }
        }
        return Decimal128(sign: negative, coefficient: result, exponent: exponent)
    }

    /// Removes trailing zeros from a non-zero coefficient, raising the exponent to match.
    private static func stripTrailingZeros(_ coefficient: UInt128, _ exponent: Int) -> (UInt128, Int) {
        var coefficient = coefficient
        var exponent = exponent
        while coefficient != 0 && coefficient % 10 == 0 {
            coefficient /= 10
            exponent += 1
        }
        return (coefficient, exponent)
    }
}

// MARK: - Integer helpers

extension Decimal128 {
    /// `10^n` for `n` in `0...38`, every power of ten that fits in `UInt128`.
    private static let pow10: [UInt128] = {
        var powers: [UInt128] = [1]
        for _ in 1...38 { powers.append(powers[powers.count - 1] * 10) }
        return powers
    }()

    /// `10^n` for `n` in `0...77`, every power of ten that fits in 256 bits.
    private static let pow10Wide: [UInt256] = {
        var powers = [UInt256(high: 0, low: 1)]
        for _ in 1...77 { powers.append(powers[powers.count - 1].multiplied(by: 10)) }
        return powers
    }()

    /// The number of decimal digits of `value`; 1 for zero.
    static func digitCount(_ value: UInt128) -> Int {
        // floor(bits × log10 2) is either the digit count or one less.
        var digits = ((128 - value.leadingZeroBitCount) * 1233) >> 12
        while digits < pow10.count && value >= pow10[digits] { digits += 1 }
        while digits > 1 && value < pow10[digits - 1] { digits -= 1 }
        return Swift.max(digits, 1)
    }

    /// The number of decimal digits of `value`, which must be at least 2^128 (so it has at least 39 digits).
    fileprivate static func digitCount(_ value: UInt256) -> Int {
        assert(value.high != 0)
        var digits = 39
        while digits < pow10Wide.count && value >= pow10Wide[digits] { digits += 1 }
        return digits
    }
}

/// A minimal unsigned 256-bit integer: just what multiplication and division need for intermediate results.
private struct UInt256: Comparable {
    var high: UInt128
    var low: UInt128

    /// `self × factor`, which the caller guarantees fits in 256 bits.
    func multiplied(by factor: UInt128) -> UInt256 {
        let lowProduct = low.multipliedFullWidth(by: factor)
        return UInt256(high: high &* factor &+ lowProduct.high, low: lowProduct.low)
    }

    static func < (lhs: UInt256, rhs: UInt256) -> Bool {
        (lhs.high, lhs.low) < (rhs.high, rhs.low)
    }
}

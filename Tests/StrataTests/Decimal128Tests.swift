import Foundation
import StrataTestSupport
import Testing

@testable import Strata

@Suite("Decimal128")
struct Decimal128Tests {
    // MARK: Encoding

    struct KnownEncoding: Sendable, CustomTestStringConvertible {
        let text: String
        let high: UInt64
        let low: UInt64
        var testDescription: String { text }
    }

    /// Canonical strings and their BID encodings (the exponent bias is 6176 and sits at bit 113).
    static let knownEncodings = [
        KnownEncoding(text: "0", high: 0x3040_0000_0000_0000, low: 0),
        KnownEncoding(text: "-0", high: 0xB040_0000_0000_0000, low: 0),
        KnownEncoding(text: "1", high: 0x3040_0000_0000_0000, low: 1),
        KnownEncoding(text: "-1", high: 0xB040_0000_0000_0000, low: 1),
        KnownEncoding(text: "0.1", high: 0x303E_0000_0000_0000, low: 1),
        KnownEncoding(text: "0.001", high: 0x303A_0000_0000_0000, low: 1),
        KnownEncoding(text: "1.5", high: 0x303E_0000_0000_0000, low: 15),
        KnownEncoding(text: "1E+3", high: 0x3046_0000_0000_0000, low: 1),
        KnownEncoding(text: "12345678901234567", high: 0x3040_0000_0000_0000, low: 0x2B_DC54_5D6B_4B87),
        KnownEncoding(
            text: "9.999999999999999999999999999999999E+6144", high: 0x5FFF_ED09_BEAD_87C0, low: 0x378D_8E63_FFFF_FFFF),
        KnownEncoding(
            text: "1.234567890123456789012345678901234E-6100", high: 0x0056_3CDE_6FFF_9732, low: 0xDE82_5CD0_7E96_AFF2),
        KnownEncoding(text: "1E-6176", high: 0, low: 1),
        KnownEncoding(text: "Infinity", high: 0x7800_0000_0000_0000, low: 0),
        KnownEncoding(text: "-Infinity", high: 0xF800_0000_0000_0000, low: 0),
        KnownEncoding(text: "NaN", high: 0x7C00_0000_0000_0000, low: 0),
    ]

    @Test(arguments: knownEncodings)
    func knownEncodingsParseAndPrint(known: KnownEncoding) throws {
        let parsed = try Decimal128(string: known.text)
        #expect(parsed.bid.high == known.high)
        #expect(parsed.bid.low == known.low)
        let decoded = Decimal128(bid: known.high, low: known.low)
        #expect(decoded.canonicalString == known.text)
        #expect(decoded.bid == (known.high, known.low))
    }

    @Test func nonCanonicalEncodingsAreZero() {
        // The "11" combination-field form: the coefficient would be at least 2^113, so the value is zero.
        let elevenForm = Decimal128(bid: 0x6C10_0000_0000_0000, low: 0)
        #expect(elevenForm.isZero)
        #expect(elevenForm == 0)
        #expect(elevenForm.canonicalString == "0")
        let elevenFormWithBits = Decimal128(bid: 0x6FFF_FFFF_FFFF_FFFF, low: 0xFFFF_FFFF_FFFF_FFFF)
        #expect(elevenFormWithBits.isZero)
        #expect(elevenFormWithBits.isFinite)
        #expect(elevenFormWithBits.canonicalString == "0E+2015")
        // A coefficient of exactly 10^34 in the ordinary form is above the maximum.
        let tooLarge = Decimal128(bid: 0x3041_ED09_BEAD_87C0, low: 0x378D_8E64_0000_0000)
        #expect(tooLarge.isZero)
        #expect(tooLarge.canonicalString == "0")
        // The raw bits are kept.
        #expect(tooLarge.bid == (0x3041_ED09_BEAD_87C0, 0x378D_8E64_0000_0000))
    }

    @Test func classification() throws {
        let negativeZero = decimal("-0.00")
        #expect(negativeZero.isZero && negativeZero.isSignMinus && negativeZero.isFinite)
        #expect(!negativeZero.isNaN && !negativeZero.isInfinite)
        #expect(Decimal128.nan.isNaN && !Decimal128.nan.isFinite && !Decimal128.nan.isZero)
        #expect(Decimal128.infinity.isInfinite && !Decimal128.infinity.isSignMinus)
        #expect((-Decimal128.infinity).isInfinite && (-Decimal128.infinity).isSignMinus)
        #expect(decimal("-NaN").isNaN)
        #expect(Decimal128.zero.isZero && !Decimal128.zero.isSignMinus)
        #expect(!Decimal128(5).isZero)
    }

    // MARK: Text

    @Test(arguments: [
        "0", "-0", "0.00", "0E+3", "0E-6176", "0E+6111", "1", "-1", "123", "100", "1.0", "1.50", "-0.001", "12.345",
        "0.000001", "1E-7", "-1.23E-7", "1E+3", "1.23E+40", "1.000000000000000000000000000000000E+34",
        "0.3333333333333333333333333333333333", "9999999999999999999999999999999999",
        "9.999999999999999999999999999999999E+6144", "1.234567890123456789012345678901234E-6100", "1E-6176",
        "Infinity", "-Infinity", "NaN",
    ])
    func canonicalStringsRoundTrip(text: String) throws {
        let value = try Decimal128(string: text)
        #expect(value.canonicalString == text)
        let reparsed = try Decimal128(string: value.canonicalString)
        #expect(reparsed.bid == value.bid)
    }

    @Test(arguments: [
        ("+12", "12"), ("1e10", "1E+10"), ("1.23e-5", "0.0000123"), ("1e-06", "0.000001"), ("1E-7", "1E-7"),
        ("Inf", "Infinity"), ("-inf", "-Infinity"), ("+INFINITY", "Infinity"), ("nan", "NaN"), ("-NaN", "NaN"),
        (".5", "0.5"), ("5.", "5"), ("0001.50", "1.50"), ("1E+0", "1"), ("123E-2", "1.23"), ("-0.0", "-0.0"),
        ("0.000", "0.000"), ("000", "0"), ("1000e-3", "1.000"), ("12e+1", "1.2E+2"),
        ("1E+00000000000000000003", "1E+3"),
        // More than 34 significant digits round half-even.
        ("12345678901234567890123456789012345", "1.234567890123456789012345678901234E+34"),
        ("12345678901234567890123456789012355", "1.234567890123456789012345678901236E+34"),
        ("1234567890123456789012345678901234500001", "1.234567890123456789012345678901235E+39"),
        ("99999999999999999999999999999999995", "1.000000000000000000000000000000000E+35"),
        ("0.123456789012345678901234567890123449999", "0.1234567890123456789012345678901234"),
        ("1000000000000000000000000000000000000000", "1.000000000000000000000000000000000E+39"),
        // Out of range: overflow to infinity, clamping of zeros, subnormal rounding.
        ("1E+6144", "1.000000000000000000000000000000000E+6144"), ("1E+6145", "Infinity"), ("-1E+99999", "-Infinity"),
        ("1E+6112", "1.0E+6112"), ("0E+7000", "0E+6111"), ("-0E-7000", "-0E-6176"), ("1E-6177", "0E-6176"),
        ("6E-6177", "1E-6176"), ("5E-6177", "0E-6176"), ("15E-6177", "2E-6176"), ("-1E-7000", "-0E-6176"),
        ("1E-99999999999999999999", "0E-6176"),
    ])
    func parsingNormalizesToCanonicalText(input: String, expected: String) throws {
        #expect(try Decimal128(string: input).canonicalString == expected)
    }

    @Test(arguments: [
        "", "+", "-", ".", "e5", "1e", "1e+", "1E-", "1.2.3", "1..2", " 1", "1 ", "--1", "+-1", "1e+-1", "abc", "0x10",
        "1,5", "Infinit", "NaNa", "in", "1e5.0", "1_000", "\u{661}", "Infinity1", "1f", "+.e1",
    ])
    func malformedStringsThrow(input: String) {
        let error = #expect(throws: Decimal128ParseError.self) {
            try Decimal128(string: input)
        }
        #expect(error?.input == input)
        #expect(error?.description.contains("\"\(input)\"") == true)
    }

    @Test func randomValuesRoundTripThroughText() throws {
        var generator = SeededGenerator(seed: 1)
        for _ in 0..<2000 {
            let digits = Int.random(in: 1...34, using: &generator)
            let coefficient = randomDigits(digits, &generator)
            let exponent = Int.random(in: Decimal128.minExponent...Decimal128.maxExponent, using: &generator)
            let sign = Bool.random(using: &generator) ? "-" : ""
            let value = decimal("\(sign)\(coefficient)E\(exponent)")
            let (decodedCoefficient, decodedExponent) = decodeFinite(value)
            #expect(String(decodedCoefficient) == coefficient)
            #expect(decodedExponent == exponent)
            #expect(value.isSignMinus == (sign == "-"))
            #expect(try Decimal128(string: value.canonicalString).bid == value.bid)
        }
        // Arbitrary bit patterns print as text that parses back to an equal value (identical bits if canonical).
        for _ in 0..<2000 {
            let value = Decimal128(bid: generator.next(), low: generator.next())
            let reparsed = try Decimal128(string: value.canonicalString)
            #expect(reparsed == value)
            if value.isFinite && !value.isZero {
                #expect(reparsed.bid == value.bid)
            }
        }
    }

    // MARK: Conversions

    @Test func integerAndLiteralConversions() throws {
        #expect(Decimal128(0).bid == (0x3040_0000_0000_0000, 0))
        #expect(Decimal128(-42).canonicalString == "-42")
        #expect(Decimal128(Int.max).canonicalString == "9223372036854775807")
        #expect(Decimal128(Int.min).canonicalString == "-9223372036854775808")
        let integer: Decimal128 = 42
        let float: Decimal128 = 1.5
        let text: Decimal128 = "1.50"
        #expect(integer.canonicalString == "42")
        #expect(float.canonicalString == "1.5")
        #expect(text.canonicalString == "1.50")
        #expect(float == text)
    }

    @Test func doubleConversionUsesShortestDigits() throws {
        #expect(Decimal128(0.1).canonicalString == "0.1")
        #expect(Decimal128(0.1).bid == (0x303E_0000_0000_0000, 1))
        #expect(Decimal128(2.0).canonicalString == "2")
        #expect(Decimal128(-2.5).canonicalString == "-2.5")
        #expect(Decimal128(1e-7).canonicalString == "1E-7")
        #expect(Decimal128(1e22).canonicalString == "1E+22")
        #expect(Decimal128(-0.0).isZero && Decimal128(-0.0).isSignMinus)
        #expect(Decimal128(Double.nan).isNaN)
        #expect(Decimal128(Double.infinity) == .infinity)
        #expect(Decimal128(-Double.infinity) == -.infinity)
        #expect(Decimal128(Double.leastNonzeroMagnitude).canonicalString == "5E-324")
    }

    @Test func doubleValueIsNearest() throws {
        #expect(decimal("0.1").doubleValue == 0.1)
        #expect(decimal("-1.50").doubleValue == -1.5)
        #expect(decimal("1E+400").doubleValue == .infinity)
        #expect(decimal("-1E+400").doubleValue == -.infinity)
        #expect(decimal("1E-400").doubleValue == 0)
        #expect(decimal("0.3333333333333333333333333333333333").doubleValue == 1.0 / 3.0)
        #expect(Decimal128.nan.doubleValue.isNaN)
        var generator = SeededGenerator(seed: 2)
        for _ in 0..<2000 {
            let double = Double(bitPattern: generator.next())
            guard double.isFinite else { continue }
            #expect(Decimal128(double).doubleValue == double)
        }
    }

    @Test func foundationDecimalConversions() throws {
        #expect(Decimal128(number: Decimal(string: "1.5")!).canonicalString == "1.5")
        #expect(Decimal128(number: Decimal(string: "-0.001")!) == decimal("-0.001"))
        #expect(Decimal128(number: Decimal(string: "1e-120")!).canonicalString == "1E-120")
        #expect(Decimal128(number: Decimal.nan).isNaN)
        // 38 digits round to 34.
        #expect(
            Decimal128(number: Decimal(string: "12345678901234567890123456789012345678")!).canonicalString
                == "1.234567890123456789012345678901235E+37")
        #expect(decimal("1.50").decimalValue == Decimal(string: "1.5"))
        #expect(decimal("-0.00").decimalValue == 0)
        #expect(decimal("100E+125").decimalValue == Decimal(string: "1e127"))
        #expect(decimal("1000E+125").decimalValue == nil)
        #expect(decimal("1E+200").decimalValue == nil)
        #expect(Decimal128.infinity.decimalValue == nil)
        #expect(Decimal128.nan.decimalValue == nil)
    }

    @Test func randomAgreementWithFoundationDecimal() throws {
        var generator = SeededGenerator(seed: 3)
        for _ in 0..<2000 {
            // At most 12 digits and exponents within 20 of each other: every result is exact in both types.
            let a = randomOperand(maxDigits: 12, exponents: -10...10, &generator)
            let b = randomOperand(maxDigits: 12, exponents: -10...10, &generator)
            let x = try Decimal128(string: a)
            let y = try Decimal128(string: b)
            let dx = try #require(Decimal(string: a))
            let dy = try #require(Decimal(string: b))
            #expect(Decimal128(number: dx) == x)
            #expect(x.decimalValue == dx)
            #expect((x < y) == (dx < dy))
            #expect((x == y) == (dx == dy))
            #expect(x + y == Decimal128(number: dx + dy))
            #expect(x - y == Decimal128(number: dx - dy))
            #expect(x * y == Decimal128(number: dx * dy))
        }
    }

    // MARK: Equality, hashing, ordering

    @Test func equalityIsNumericAcrossCohorts() throws {
        let ones = try ["1", "1.0", "1.00", "1E+0", "0.1E+1", "100E-2"].map { try Decimal128(string: $0) }
        for one in ones {
            #expect(one == 1)
            #expect(one.hashValue == Decimal128(1).hashValue)
        }
        #expect(Set(ones).count == 1)
        let zeros = try ["0", "-0", "0E+10", "0.000", "-0E-6176", "0E+6111"].map { try Decimal128(string: $0) }
        #expect(Set(zeros).count == 1)
        #expect(zeros.allSatisfy { $0 == .zero })
        #expect(decimal("100") == decimal("1E+2"))
        #expect(decimal("1.5") != decimal("1.51"))
        #expect(decimal("-1") != decimal("1"))
        #expect(Decimal128.nan == Decimal128.nan)
        #expect(Decimal128.nan == Decimal128(bid: 0xFE00_0000_0000_0000, low: 12))
        #expect(Decimal128.nan != 0)
        #expect(Decimal128.infinity != -Decimal128.infinity)
        var dictionary: [Decimal128: String] = [decimal("2.50"): "a", .nan: "nan"]
        dictionary[decimal("2.5")] = "b"
        #expect(dictionary.count == 2)
        #expect(dictionary[decimal("2.500000")] == "b")
        #expect(dictionary[Decimal128(bid: 0x7E00_0000_0000_0000, low: 0)] == "nan")
    }

    @Test func hashIsConsistentWithEqualityForRandomCohorts() throws {
        var generator = SeededGenerator(seed: 4)
        for _ in 0..<1000 {
            let digits = randomDigits(Int.random(in: 1...30, using: &generator), &generator)
            let zeros = Int.random(in: 1...4, using: &generator)
            let exponent = Int.random(in: -100...100, using: &generator)
            let a = decimal("\(digits)E\(exponent)")
            let b = decimal("\(digits)\(String(repeating: "0", count: zeros))E\(exponent - zeros)")
            #expect(a == b)
            #expect(a.hashValue == b.hashValue)
            #expect(a.bid != b.bid)
        }
    }

    @Test func orderingIsNumericWithNaNFirst() throws {
        let ascending = try [
            "NaN", "-Infinity", "-9.999999999999999999999999999999999E+6144", "-1E+10", "-1", "-0.5", "0",
            "1E-6176", "0.1", "0.99999", "1.0000", "1.5", "2", "9.99", "1E+1", "1E+10",
            "9.999999999999999999999999999999999E+6144", "Infinity",
        ].map { try Decimal128(string: $0) }
        for (lower, higher) in zip(ascending, ascending.dropFirst()) {
            #expect(lower < higher)
            #expect(!(higher < lower))
            #expect(lower != higher)
        }
        var generator = SeededGenerator(seed: 5)
        let shuffled = ascending.shuffled(using: &generator)
        #expect(shuffled.sorted().map(\.canonicalString) == ascending.map(\.canonicalString))
        #expect(decimal("-0") <= decimal("0.00"))
        #expect(decimal("-0") >= decimal("0.00"))
        #expect(!(Decimal128.nan < Decimal128.nan))
        #expect(decimal("1.50") >= decimal("1.5"))
        #expect(decimal("1.50") <= decimal("1.5"))
    }

    @Test func randomComparisonsMatchReference() throws {
        var generator = SeededGenerator(seed: 6)
        for _ in 0..<2000 {
            let a = randomTerm(exponents: -40...40, &generator)
            let b = randomTerm(exponents: -40...40, &generator)
            let x = try Decimal128(string: a.text)
            let y = try Decimal128(string: b.text)
            let expected = compareReference(a, b)
            #expect((x < y) == (expected < 0))
            #expect((x == y) == (expected == 0))
            #expect((y < x) == (expected > 0))
        }
    }

    // MARK: Arithmetic

    @Test func decimalFractionsAreExact() throws {
        let sum = decimal("0.1") + decimal("0.2")
        #expect(sum == decimal("0.3"))
        #expect(sum.bid == (0x303E_0000_0000_0000, 3))
        #expect((decimal("1.50") + decimal("1.5")).canonicalString == "3.00")
        #expect((decimal("1.5") * decimal("1.5")).canonicalString == "2.25")
        #expect((decimal("1.20") * 3).canonicalString == "3.60")
        #expect((decimal("1") - decimal("3E-34")).canonicalString == "0.9999999999999999999999999999999997")
        #expect((Decimal128(1) + decimal("0.00")).canonicalString == "1.00")
        #expect((Decimal128(1) + decimal("0E+5")).canonicalString == "1")
        #expect((decimal("1E+5") + decimal("0E-3")).canonicalString == "100000.000")
    }

    @Test func divisionRoundsTo34Digits() throws {
        #expect((Decimal128(1) / 3).canonicalString == "0." + String(repeating: "3", count: 34))
        #expect((Decimal128(2) / 3).canonicalString == "0." + String(repeating: "6", count: 33) + "7")
        #expect((Decimal128(-1) / 3).canonicalString == "-0." + String(repeating: "3", count: 34))
        #expect((Decimal128(1) / 7).canonicalString == "0.1428571428571428571428571428571429")
        // Exact quotients use the exponent closest to the difference of the operands' exponents.
        #expect((Decimal128(1) / 4).canonicalString == "0.25")
        #expect((Decimal128(1) / 8).canonicalString == "0.125")
        #expect((Decimal128(10) / 2).canonicalString == "5")
        #expect((decimal("1.00") / 1).canonicalString == "1.00")
        #expect((decimal("6E+3") / 2).canonicalString == "3E+3")
        #expect((decimal("-6") / decimal("-2")).canonicalString == "3")
        #expect((decimal("0.00") / 7).canonicalString == "0.00")
    }

    @Test func roundingHalfEvenAtThePrecisionLimit() throws {
        let largest = decimal("9999999999999999999999999999999999")
        #expect((largest + 1).canonicalString == "1.000000000000000000000000000000000E+34")
        #expect((largest + decimal("0.5")).canonicalString == "1.000000000000000000000000000000000E+34")
        #expect((largest - 1 + decimal("0.5")).canonicalString == "9999999999999999999999999999999998")
        #expect((largest - 1 + decimal("0.51")).canonicalString == "9999999999999999999999999999999999")
        #expect((largest - 1 + decimal("0.49")).canonicalString == "9999999999999999999999999999999998")
        #expect((largest * largest).canonicalString == "9.999999999999999999999999999999998E+67")
        // 390625000021875000000000000000000250000000014: a tie at digit 35 decided by a digit far below it.
        #expect(
            (decimal("125000000007") * decimal("3125000000000000000000000000000002")).canonicalString
                == "3.906250000218750000000000000000003E+44")
        #expect((Decimal128(1) + decimal("1E-100")).canonicalString == "1.000000000000000000000000000000000")
        #expect((Decimal128(1) - decimal("1E-100")).canonicalString == "1.000000000000000000000000000000000")
        #expect((Decimal128(1) - decimal("6E-35")).canonicalString == "0.9999999999999999999999999999999999")
        #expect((Decimal128(1) - decimal("5E-35")).canonicalString == "1.000000000000000000000000000000000")
        #expect(
            (Decimal128(1) - decimal("5.00000001E-35")).canonicalString
                == "0.9999999999999999999999999999999999")
    }

    @Test func overflowAndUnderflow() throws {
        let large = decimal("1E+6144")
        #expect(large * 10 == .infinity)
        #expect(-large * 10 == -.infinity)
        let max = decimal("9.999999999999999999999999999999999E+6144")
        #expect(max + max == .infinity)
        #expect((decimal("1E-6176") / 2).canonicalString == "0E-6176")
        #expect((decimal("3E-6176") / 2).canonicalString == "2E-6176")
        #expect((decimal("-1E-6000") * decimal("1E-6000")).canonicalString == "-0E-6176")
        #expect((decimal("1E-3100") * decimal("1E-3100")).canonicalString == "0E-6176")
        #expect((decimal("1E-3000") * decimal("1.5E-3176")).canonicalString == "2E-6176")
        #expect((decimal("0E+6000") * decimal("0E+6000")).canonicalString == "0E+6111")
    }

    @Test func specialValues() throws {
        let one = Decimal128(1)
        let zero = Decimal128.zero
        let infinity = Decimal128.infinity
        #expect(one / zero == infinity)
        #expect(-one / zero == -infinity)
        #expect((one / decimal("-0")) == -infinity)
        #expect((zero / zero).isNaN)
        #expect((infinity - infinity).isNaN)
        #expect((infinity + infinity) == infinity)
        #expect((zero * infinity).isNaN)
        #expect((infinity / infinity).isNaN)
        #expect((infinity * -2) == -infinity)
        #expect((infinity / 2) == infinity)
        #expect((infinity + 1) == infinity)
        #expect((one / infinity).isZero)
        #expect((-one / infinity).isSignMinus)
        #expect((Decimal128.nan + 1).isNaN)
        #expect((one * .nan).isNaN)
        #expect((Decimal128.nan / 0).isNaN)
        // Signs of zero results.
        #expect((decimal("-0") + decimal("-0")).canonicalString == "-0")
        #expect((decimal("-0") + decimal("0")).canonicalString == "0")
        #expect((one - one).canonicalString == "0")
        #expect((decimal("1.0") - one).canonicalString == "0.0")
        #expect((Decimal128(-2) * 0).canonicalString == "-0")
        #expect((-Decimal128.zero).isSignMinus)
    }

    @Test func compoundAssignment() throws {
        var value = Decimal128(10)
        value += 5
        #expect(value == 15)
        value -= decimal("0.5")
        #expect(value.canonicalString == "14.5")
        value *= 2
        #expect(value.canonicalString == "29.0")
        value /= 4
        #expect(value.canonicalString == "7.25")
    }

    @Test func randomAdditionMatchesReference() throws {
        var generator = SeededGenerator(seed: 8)
        for _ in 0..<3000 {
            let a = randomTerm(exponents: -40...40, &generator)
            let b = randomTerm(exponents: -40...40, &generator)
            let x = try Decimal128(string: a.text)
            let y = try Decimal128(string: b.text)
            let base = min(a.exponent, b.exponent)
            let left = Digits(a.digits).shifted(by: a.exponent - base)
            let right = Digits(b.digits).shifted(by: b.exponent - base)
            let expected: Decimal128
            if a.negative == b.negative {
                expected = referenceRounded(negative: a.negative, left + right, exponent: base)
            } else if left == right {
                expected = decimal("0E\(base)")
            } else if left > right {
                expected = referenceRounded(negative: a.negative, left - right, exponent: base)
            } else {
                expected = referenceRounded(negative: b.negative, right - left, exponent: base)
            }
            let sum = x + y
            #expect(sum.bid == expected.bid, "\(a.text) + \(b.text) = \(sum), expected \(expected)")
            let negated = try Decimal128(string: (b.negative ? "" : "-") + b.digits + "E\(b.exponent)")
            #expect((x - negated).bid == expected.bid)
        }
    }

    @Test func randomMultiplicationMatchesReference() throws {
        var generator = SeededGenerator(seed: 9)
        for _ in 0..<3000 {
            let a = randomTerm(exponents: -40...40, &generator)
            let b = randomTerm(exponents: -40...40, &generator)
            let product = try Decimal128(string: a.text) * Decimal128(string: b.text)
            let expected = referenceRounded(
                negative: a.negative != b.negative, Digits(a.digits) * Digits(b.digits),
                exponent: a.exponent + b.exponent)
            #expect(product.bid == expected.bid, "\(a.text) * \(b.text) = \(product), expected \(expected)")
        }
    }

    @Test func randomDivisionIsCorrectlyRounded() throws {
        var generator = SeededGenerator(seed: 10)
        for _ in 0..<3000 {
            let a = randomTerm(exponents: -30...30, &generator)
            let b = randomTerm(exponents: -30...30, &generator)
            let quotient = try Decimal128(string: a.text) / Decimal128(string: b.text)
            #expect(quotient.isSignMinus == (a.negative != b.negative))
            let (coefficient, exponent) = decodeFinite(quotient)
            let q = Digits(String(coefficient))
            // |a - q·b| in units of 10^base, and the quotient's unit in the last place times |b| in the same units.
            let base = min(a.exponent, exponent + b.exponent)
            let left = Digits(a.digits).shifted(by: a.exponent - base)
            let right = (q * Digits(b.digits)).shifted(by: exponent + b.exponent - base)
            let unit = Digits(b.digits).shifted(by: exponent + b.exponent - base)
            let context = "\(a.text) / \(b.text) = \(quotient)"
            if left == right {
                // Exact: the exponent is the preferred one unless more digits were needed.
                let preferred = a.exponent - b.exponent
                #expect(exponent == preferred || (exponent < preferred && coefficient % 10 != 0), "\(context)")
                continue
            }
            #expect(String(coefficient).count == 34, "\(context)")
            let error = left > right ? left - right : right - left
            let doubled = error + error
            if coefficient == 1_000_000_000_000_000_000_000_000_000_000_000 as UInt128 && right > left {
                // Just below a power of ten the spacing of representable values is a tenth of the unit.
                #expect(doubled * Digits("10") <= unit, "\(context)")
            } else {
                #expect(doubled < unit || (doubled == unit && coefficient % 2 == 0), "\(context)")
            }
        }
    }

    @Test func multiplyThenDivideRestoresExactValues() throws {
        var generator = SeededGenerator(seed: 12)
        for _ in 0..<1000 {
            let a = try Decimal128(string: randomOperand(maxDigits: 17, exponents: -20...20, &generator))
            let b = try Decimal128(string: randomOperand(maxDigits: 17, exponents: -20...20, &generator))
            #expect((a * b) / b == a)
        }
    }

    // MARK: Codable

    @Test func codableRoundTripPreservesBits() throws {
        let values = try [
            "1.50", "-Infinity", "NaN", "1E+3", "-0.001", "0E-6176", "9999999999999999999999999999999999",
        ]
        .map { try Decimal128(string: $0) }
        let data = try JSONEncoder().encode(values)
        // The SDK's text (see Decimal128CompatibilityTests), which reads back to the same bits for these values.
        #expect(
            String(decoding: data, as: UTF8.self)
                == #"["1.50","-Inf","NaN","1E3","-1E-3","0E-6176","+9999999999999999999999999999999999E+0"]"#)
        let decoded = try JSONDecoder().decode([Decimal128].self, from: data)
        #expect(decoded.map(\.bid.high) == values.map(\.bid.high))
        #expect(decoded.map(\.bid.low) == values.map(\.bid.low))
    }

    @Test func decodingAcceptsNumbers() throws {
        let decoded = try JSONDecoder().decode(
            [Decimal128].self, from: Data("[1, -1.5, 0.1000000000000000000001, 1e3]".utf8))
        #expect(decoded[0].canonicalString == "1")
        #expect(decoded[1] == decimal("-1.5"))
        #expect(decoded[2] == decimal("0.1000000000000000000001"))
        #expect(decoded[3] == 1000)
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode([Decimal128].self, from: Data(#"["1.2.3"]"#.utf8))
        }
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode([Decimal128].self, from: Data("[true]".utf8))
        }
    }
}

// MARK: - Helpers

/// A value from text known to be valid (through the string-literal initializer, which traps on malformed text).
private func decimal(_ text: String) -> Decimal128 {
    Decimal128(stringLiteral: text)
}

/// A random decimal string: up to `maxDigits` significant digits and an exponent in `exponents`.
private func randomOperand(
    maxDigits: Int, exponents: ClosedRange<Int>, _ generator: inout SeededGenerator
) -> String {
    let digits = randomDigits(Int.random(in: 1...maxDigits, using: &generator), &generator)
    let sign = Bool.random(using: &generator) ? "-" : ""
    return "\(sign)\(digits)E\(Int.random(in: exponents, using: &generator))"
}

/// A non-zero term with up to 34 digits, biased towards runs of nines, fives and zeros that provoke carries and
/// ties.
private struct Term {
    var negative: Bool
    var digits: String
    var exponent: Int
    var text: String { "\(negative ? "-" : "")\(digits)E\(exponent)" }
}

private func randomTerm(exponents: ClosedRange<Int>, _ generator: inout SeededGenerator) -> Term {
    let count = Int.random(in: 1...34, using: &generator)
    let digits: String
    switch Int.random(in: 0..<5, using: &generator) {
    case 0:
        digits = String(repeating: "9", count: count)
    case 1:
        digits = "5" + String(repeating: "0", count: count - 1)
    case 2:
        let head = (count + 1) / 2
        digits = randomDigits(head, &generator) + String(repeating: "0", count: count - head)
    case 3:
        // Sparse: a short head and a short tail with zeros between, which makes exact ties likely.
        let head = ["1", "2", "4", "5", "8", "25", "125", "625", "3125"].randomElement(using: &generator)!
        let tail = String(Int.random(in: 1...9, using: &generator))
        let zeros = Int.random(in: 0...(34 - head.count - tail.count), using: &generator)
        digits = head + String(repeating: "0", count: zeros) + tail
    default:
        digits = randomDigits(count, &generator)
    }
    return Term(
        negative: Bool.random(using: &generator), digits: digits,
        exponent: Int.random(in: exponents, using: &generator))
}

/// `count` random decimal digits, the first non-zero.
private func randomDigits(_ count: Int, _ generator: inout SeededGenerator) -> String {
    var text = String(Int.random(in: 1...9, using: &generator))
    for _ in 1..<count { text += String(Int.random(in: 0...9, using: &generator)) }
    return text
}

/// The coefficient and exponent of a finite value, decoded from the BID bits independently of the implementation.
private func decodeFinite(_ value: Decimal128) -> (UInt128, Int) {
    let (high, low) = value.bid
    precondition(high & 0x6000_0000_0000_0000 != 0x6000_0000_0000_0000, "only the ordinary form is expected")
    return (UInt128(high & 0x1_FFFF_FFFF_FFFF) << 64 | UInt128(low), Int(high >> 49 & 0x3FFF) - 6176)
}

/// The sign of `a - b`, computed on digit strings.
private func compareReference(_ a: Term, _ b: Term) -> Int {
    let base = min(a.exponent, b.exponent)
    let left = Digits(a.digits).shifted(by: a.exponent - base)
    let right = Digits(b.digits).shifted(by: b.exponent - base)
    let magnitude = left == right ? 0 : left < right ? -1 : 1
    switch (a.negative, b.negative) {
    case (false, false): return magnitude
    case (true, true): return -magnitude
    case (false, true): return 1
    case (true, false): return -1
    }
}

/// `value × 10^exponent` rounded half-even to 34 digits on digit strings, for exponents that stay in range.
private func referenceRounded(negative: Bool, _ value: Digits, exponent: Int) -> Decimal128 {
    var text = value.text
    var exponent = exponent
    if text.count > 34 {
        let kept = String(text.prefix(34))
        let rest = text.dropFirst(34)
        exponent += rest.count
        let first = rest.first!
        let tail = rest.dropFirst().contains { $0 != "0" }
        let odd = Int(String(kept.last!))! % 2 == 1
        var rounded = Digits(kept)
        if first > "5" || (first == "5" && (tail || odd)) {
            rounded = rounded + Digits("1")
        }
        text = rounded.text
        if text.count == 35 {
            text.removeLast()
            exponent += 1
        }
    }
    return decimal("\(negative ? "-" : "")\(text)E\(exponent)")
}

/// A non-negative integer as little-endian decimal digits: slow, obviously correct reference arithmetic.
private struct Digits: Comparable {
    /// Little-endian digits without most-significant zeros; empty for zero.
    private var digits: [Int]

    init(_ text: String) {
        self.init(digits: text.reversed().map { Int(String($0))! })
    }

    private init(digits: [Int]) {
        var digits = digits
        while digits.last == 0 { digits.removeLast() }
        self.digits = digits
    }

    var text: String {
        digits.isEmpty ? "0" : digits.reversed().map(String.init).joined()
    }

    /// The digit of weight `10^index`.
    private func digit(at index: Int) -> Int {
        index < digits.count ? digits[index] : 0
    }

    /// `self × 10^places`.
    func shifted(by places: Int) -> Digits {
        digits.isEmpty ? self : Digits(digits: [Int](repeating: 0, count: places) + digits)
    }

    static func + (lhs: Digits, rhs: Digits) -> Digits {
        var result: [Int] = []
        var carry = 0
        for index in 0..<max(lhs.digits.count, rhs.digits.count) {
            let sum = lhs.digit(at: index) + rhs.digit(at: index) + carry
            result.append(sum % 10)
            carry = sum / 10
        }
        if carry > 0 { result.append(carry) }
        return Digits(digits: result)
    }

    /// `lhs - rhs` for `lhs >= rhs`.
    static func - (lhs: Digits, rhs: Digits) -> Digits {
        precondition(lhs >= rhs)
        var result: [Int] = []
        var borrow = 0
        for index in 0..<lhs.digits.count {
            var difference = lhs.digits[index] - rhs.digit(at: index) - borrow
            borrow = difference < 0 ? 1 : 0
            if difference < 0 { difference += 10 }
            result.append(difference)
        }
        return Digits(digits: result)
    }

    static func * (lhs: Digits, rhs: Digits) -> Digits {
        guard !lhs.digits.isEmpty && !rhs.digits.isEmpty else { return Digits(digits: []) }
        var result = [Int](repeating: 0, count: lhs.digits.count + rhs.digits.count + 1)
        for (i, left) in lhs.digits.enumerated() {
            for (j, right) in rhs.digits.enumerated() {
                result[i + j] += left * right
            }
        }
        for index in 0..<(result.count - 1) {
            result[index + 1] += result[index] / 10
            result[index] %= 10
        }
        return Digits(digits: result)
    }

    static func < (lhs: Digits, rhs: Digits) -> Bool {
        if lhs.digits.count != rhs.digits.count { return lhs.digits.count < rhs.digits.count }
        return lhs.digits.reversed().lexicographicallyPrecedes(rhs.digits.reversed())
    }
}

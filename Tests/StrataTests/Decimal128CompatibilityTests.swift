import Foundation
import Strata
import Testing

/// `Decimal128` as the SDK documents it: the numeric protocols, `init(value:)`, `min`/`max`, the NaN
/// predicates, and the text and `Codable` forms the SDK prints.
@Suite("Decimal128 compatibility")
struct Decimal128CompatibilityTests {
    private static func decimal(_ text: String) -> Decimal128 {
        do { return try Decimal128(string: text) } catch { fatalError("\(error)") }
    }

    struct Printed: Sendable, CustomTestStringConvertible {
        let input: String
        let text: String
        var testDescription: String { "\(input) -> \(text)" }
    }

    /// How the SDK prints parsed values (the SDK's own tests and its core's).
    static let printed = [
        Printed(input: "1.5E2", text: "1.5E2"),
        Printed(input: "1234567890e123", text: "1.23456789E132"),
        Printed(input: "150", text: "150"),
        Printed(input: "1.50", text: "1.50"),
        Printed(input: "0", text: "0"),
        Printed(input: "-0", text: "-0"),
        Printed(input: "0.000", text: "0E-3"),
        Printed(input: "0.001", text: "1E-3"),
        Printed(input: "3.1416", text: "3.1416"),
        Printed(input: "3.1416e-4", text: "3.1416E-4"),
        Printed(input: "-3.1416e-4", text: "-3.1416E-4"),
        Printed(input: "1e-00021", text: "1E-21"),
        Printed(input: "10.100e2", text: "1010.0"),
        Printed(input: ".00000001", text: "1E-8"),
        Printed(input: ".00000001000000000", text: "1.000000000E-8"),
        Printed(input: "1.14142E27", text: "1.14142E27"),
        Printed(input: "1.701e38", text: "1.701E38"),
        Printed(input: "1.797e308", text: "1.797E308"),
        Printed(input: "+Infinity", text: "Inf"),
        Printed(input: "-INF", text: "-Inf"),
        Printed(input: "NaN", text: "NaN"),
        Printed(input: "9.99e6144", text: "+9990000000000000000000000000000000E+6111"),
    ]

    @Test(arguments: printed)
    func printsAsTheSDK(_ case: Printed) throws {
        let value = try Decimal128(string: `case`.input)
        #expect(value.stringValue == `case`.text)
        #expect(value.description == `case`.text)
        #expect("\(value)" == `case`.text)
        // The printed text reads back to an equal value (NaN equals NaN here, as in the SDK).
        #expect(try Decimal128(string: value.stringValue) == value)
    }

    @Test func canonicalStringKeepsEveryBit() throws {
        for text in ["1234567890E+123", "1.50", "-0.001", "1.0E+3", "NaN", "-Infinity", "0E-3"] {
            let value = try Decimal128(string: text)
            #expect(try Decimal128(string: value.canonicalString).bid == value.bid, "\(text)")
        }
    }

    @Test func codableWritesTheSDKText() throws {
        let encoded = try JSONEncoder().encode(["1234567890e123" as Decimal128])
        #expect(String(decoding: encoded, as: UTF8.self) == "[\"1.23456789E132\"]")
        #expect(try JSONDecoder().decode([Decimal128].self, from: Data("[2.2]".utf8)) == ["2.2"])
        #expect(
            try JSONDecoder().decode([Decimal128].self, from: Data("[\"1234567890e123\"]".utf8)) == ["1234567890e123"])
        #expect(try JSONDecoder().decode([Decimal128?].self, from: Data("[null]".utf8)) == [nil])
    }

    @Test func numericAndSignedNumeric() {
        func total<T: Numeric>(_ values: [T]) -> T { values.reduce(0, +) }
        #expect(total(["1.5", "2.25"] as [Decimal128]) == "3.75")
        #expect(Decimal128(exactly: 100) == 100)
        #expect(Decimal128(exactly: Int64.min) == Self.decimal("-9223372036854775808"))
        #expect(Decimal128(exactly: UInt128.max) == nil)  // 39 digits do not fit in 34
        #expect(Self.decimal("-1.50").magnitude.stringValue == "1.50")
        #expect(Self.decimal("2").magnitude == 2)
        var value = Self.decimal("2.5")
        value.negate()
        #expect(value == Self.decimal("-2.5"))
        func flipped<T: SignedNumeric>(_ value: T) -> T { -value }
        #expect(flipped(Self.decimal("1.25")) == Self.decimal("-1.25"))
        #expect((Decimal128(3) * 4) == 12)
    }

    @Test func strideable() {
        let start: Decimal128 = 0
        #expect(start.advanced(by: "0.25") == "0.25")
        #expect(start.distance(to: "1.5") == "1.5")
        let steps = Array(stride(from: start, to: 1, by: Self.decimal("0.25")))
        #expect(steps == ["0", "0.25", "0.5", "0.75"])
    }

    @Test func minMaxAndNaNPredicates() {
        #expect(Decimal128.max.stringValue == "+9999999999999999999999999999999999E+6111")
        #expect(Decimal128.min == -Decimal128.max)
        #expect(Decimal128.min < Self.decimal("-1E6000"))
        #expect(Decimal128.max > Self.decimal("1E6000"))
        // The SDK answers isNaN for both, and so does Strata.
        #expect(Decimal128.nan.isSignaling && Decimal128.nan.isSignalingNaN)
        #expect(!Decimal128(1).isSignaling && !Decimal128(1).isSignalingNaN)
    }

    @Test func initFromAnyValue() {
        #expect(Decimal128(value: 42) == 42)
        #expect(Decimal128(value: Int8(-7)) == -7)
        #expect(Decimal128(value: UInt64.max) == Self.decimal("18446744073709551615"))
        #expect(Decimal128(value: 2.5) == Self.decimal("2.5"))
        #expect(Decimal128(value: Float(0.5)) == Self.decimal("0.5"))
        #expect(Decimal128(value: "1.50").stringValue == "1.50")
        #expect(Decimal128(value: Decimal(string: "12.34")!) == Self.decimal("12.34"))
        #expect(Decimal128(value: NSNumber(value: 7)) == 7)
        #expect(Decimal128(value: Self.decimal("9.9")) == Self.decimal("9.9"))
    }
}

import Foundation

// MARK: - Numeric, SignedNumeric and Strideable, as in the SDK

extension Decimal128: Numeric {
    /// The type of ``magnitude``: a `Decimal128`.
    public typealias Magnitude = Decimal128

    /// Creates the value of `source` if 34 decimal digits hold it exactly, as `Numeric` requires.
    ///
    /// ```swift
    /// Decimal128(exactly: 100)          // 100
    /// Decimal128(exactly: UInt128.max)  // nil: 39 digits
    /// ```
    ///
    /// - Parameter source: An integer of any type.
    public init?<T: BinaryInteger>(exactly source: T) {
        let digits = String(source.magnitude)
        guard digits.count <= Self.precision, let value = try? Decimal128(string: String(source)) else {
            return nil
        }
        self = value
    }

    /// The absolute value: the same digits and exponent with the sign cleared (`-1.50` gives `1.50`; NaN stays
    /// NaN). Exact, where the SDK goes through a `Double`.
    public var magnitude: Decimal128 {
        Decimal128(bid: bid.high & ~(1 << 63), low: bid.low)
    }
}

extension Decimal128: SignedNumeric {
    /// Flips the sign in place, exactly (`0` becomes `-0`; NaN stays NaN), as `SignedNumeric` requires.
    public mutating func negate() {
        self = -self
    }
}

extension Decimal128: Strideable {
    /// The type of a distance between two values: a `Decimal128`.
    public typealias Stride = Decimal128

    /// The distance from this value to `other`, `other - self`.
    ///
    /// - Parameter other: The value to measure to.
    /// - Returns: `other - self`, exact when it fits in 34 digits.
    public func distance(to other: Decimal128) -> Decimal128 {
        other - self
    }

    /// This value moved by `n`, `self + n`.
    ///
    /// - Parameter n: The distance to move.
    /// - Returns: `self + n`, exact when it fits in 34 digits.
    public func advanced(by n: Decimal128) -> Decimal128 {
        self + n
    }
}

// MARK: - SDK conveniences

extension Decimal128 {
    /// The largest finite value, `9999999999999999999999999999999999E6111` (34 nines), as the SDK's `max`.
    public static let max = Decimal128(bid: 0x5FFF_ED09_BEAD_87C0, low: 0x378D_8E63_FFFF_FFFF)

    /// The smallest (most negative) finite value, `-max`, as the SDK's `min`.
    public static let min = -max

    /// Whether the value is a NaN. The SDK answers `isNaN` here (it has no separate signaling state), and so
    /// does Strata, so that code written against the SDK keeps its meaning.
    public var isSignaling: Bool { isNaN }

    /// The same as ``isSignaling``: whether the value is a NaN, as in the SDK.
    public var isSignalingNaN: Bool { isSignaling }

    /// Converts a number or numeric text to a `Decimal128`, as the SDK's `init(value:)` does.
    ///
    /// Accepted: `Decimal128`, any Swift integer type, `Float`, `Double`, `Decimal`, `NSNumber` and `String`
    /// (in the syntax of ``init(string:)``).
    ///
    /// ```swift
    /// Decimal128(value: 42)       // 42
    /// Decimal128(value: "1.50")   // 1.50
    /// ```
    ///
    /// Another type, or a string that is not a number, is a programming error and stops the program with a
    /// message naming the value, as in the SDK; for input from outside the program use ``init(string:)``, which
    /// throws.
    ///
    /// - Parameter value: The value to convert.
    public init(value: Any) {
        if let converted = Decimal128.converting(value) {
            self = converted
            return
        }
        if let text = value as? String {
            do {
                self = try Decimal128(string: text)
                return
            } catch {
                fatalError("Decimal128(value:): \(error.description)")
            }
        }
        fatalError(
            "Decimal128(value:): cannot convert a \(type(of: value)) (\(value)) to Decimal128; expected an integer, "
                + "Float, Double, Decimal, NSNumber or String")
    }

    /// `value` as a `Decimal128` if it is a number of a supported type.
    private static func converting(_ value: Any) -> Decimal128? {
        switch value {
        case let decimal as Decimal128: return decimal
        case let integer as Int: return Decimal128(integer)
        case let integer as any BinaryInteger: return Decimal128(exactly: integer)
        case let float as Float: return Decimal128(Double(float))
        case let double as Double: return Decimal128(double)
        case let decimal as Decimal: return Decimal128(number: decimal)
        case let number as NSNumber: return Decimal128(number: number.decimalValue)
        default: return nil
        }
    }
}

// MARK: - The SDK's text form

extension Decimal128 {
    /// The value as the SDK prints it (its `stringValue`, `description` and `Codable` form), which
    /// ``init(string:)`` reads back to an equal value.
    ///
    /// The digits of the coefficient are written out with the decimal point moved left past as many of them as
    /// the exponent allows, and any exponent left over follows an `E`, with no `+` sign and no padding:
    ///
    /// | Value (coefficient, exponent) | Text              |
    /// |-------------------------------|-------------------|
    /// | 150, 0                        | `150`             |
    /// | 15, 1                         | `1.5E2`           |
    /// | 1234567890, 123               | `1.23456789E132`  |
    /// | 150, -2                       | `1.50`            |
    /// | 1, -3                         | `1E-3`            |
    /// | 0, -3                         | `0E-3`            |
    /// | -0                            | `-0`              |
    /// | infinities, NaN               | `Inf`, `-Inf`, `NaN` |
    ///
    /// With a positive exponent the fraction drops its trailing zeros (`1.23456789E132`, as the SDK prints
    /// `1234567890e123`). A coefficient too large for 64 bits (20 digits or more) is printed in full with signed
    /// coefficient and exponent, as the SDK's fallback does: `+3333333333333333333333333333333333E-34`.
    /// ``canonicalString`` is the bit-exact alternative.
    public var stringValue: String {
        let sign = isSignMinus ? "-" : ""
        let coefficient: UInt128
        var exponent: Int
        switch kind {
        case .nan: return sign + "NaN"
        case .infinity: return sign + "Inf"
        case .finite(let finiteCoefficient, let finiteExponent):
            coefficient = finiteCoefficient
            exponent = finiteExponent
        }
        if coefficient > UInt128(UInt64.max) {
            let exponentSign = exponent < 0 ? "-" : "+"
            return (isSignMinus ? "-" : "+") + String(coefficient) + "E" + exponentSign + String(exponent.magnitude)
        }
        var digits = Array(String(coefficient))
        var before = digits.count
        while before > 1 && exponent != 0 {
            before -= 1
            exponent += 1
        }
        if exponent > 0 {
            while digits.count > before, digits.last == "0" { digits.removeLast() }
        }
        var result = sign + String(digits[..<before])
        if before < digits.count { result += "." + String(digits[before...]) }
        if exponent != 0 { result += "E" + String(exponent) }
        return result
    }
}

extension Decimal128: CustomStringConvertible {
    /// The value as the SDK prints it, the same as ``stringValue`` (`1.5E2`, `1.50`, `Inf`).
    public var description: String { stringValue }
}

import Foundation
import StrataStorage

// `@sum`, `@avg`, `@min`, `@max` over the values of a path.

extension QueryValues {
    /// `@sum`, `@avg`, `@min` or `@max` of `values` (nils skipped; nil when nothing is left, except `@sum`: 0).
    static func aggregate(_ name: String, _ values: [_StoredValue]) -> _StoredValue {
        let present = values.filter { if case .null = $0 { false } else { true } }
        switch name {
        case "@min", "@max":
            var best: _StoredValue?
            // NaN is unordered: it is never the smallest or largest value.
            for value in present where !(number(value)?.isNaN ?? false) {
                guard let current = best else {
                    best = value
                    continue
                }
                if let order = order(value, current), name == "@min" ? order < 0 : order > 0 { best = value }
            }
            return best ?? .null
        case "@sum":
            if present.allSatisfy({ if case .int = $0 { true } else { false } }) {
                return .int(present.reduce(Int64(0)) { if case .int(let v) = $1 { $0 &+ v } else { $0 } })
            }
            if present.contains(where: { if case .decimal128 = $0 { true } else { false } }) {
                return .decimal128(
                    present.reduce(Decimal128(0)) { sum, value in
                        if case .decimal128(let d) = value { return sum + d }
                        return sum + Decimal128(number(value) ?? 0)
                    })
            }
            return .double(present.compactMap(number).reduce(0, +))
        default:
            guard !present.isEmpty else { return .null }
            if present.contains(where: { if case .decimal128 = $0 { true } else { false } }) {
                let sum = present.reduce(Decimal128(0)) { sum, value in
                    if case .decimal128(let d) = value { return sum + d }
                    return sum + Decimal128(number(value) ?? 0)
                }
                return .decimal128(sum / Decimal128(present.count))
            }
            return .double(present.compactMap(number).reduce(0, +) / Double(present.count))
        }
    }
}

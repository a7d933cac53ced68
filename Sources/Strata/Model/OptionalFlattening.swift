/// `value` with any levels of `Optional` removed; nil for a nil value.
///
/// Values reach the object layer as `Any` (dictionaries given to `create`, key-value coding, projections' key
/// paths), and an `Optional` inside an `Any` is not seen through by `if let`. A cast to a protocol only `Optional`
/// conforms to finds it for a few hundred instructions; reflecting the value with `Mirror` cost about 6,000.
func flattenedOptional(_ value: Any) -> Any? {
    if let optional = value as? any AnyOptional { return optional.wrappedAny.flatMap(flattenedOptional) }
    return value
}

/// An `Optional` of any type.
protocol AnyOptional {
    /// The wrapped value, nil when there is none.
    var wrappedAny: Any? { get }
}

extension Optional: AnyOptional {
    var wrappedAny: Any? { self.map { $0 as Any } }
}

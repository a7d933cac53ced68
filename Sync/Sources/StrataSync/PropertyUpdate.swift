/// A change of one property: a whole new value (properties that hold one value), or operations on a collection
/// (lists, maps and sets merge element by element, so that concurrent edits of one collection all survive where
/// the rules allow).
public enum PropertyUpdate: Sendable, Hashable, Codable {
    /// The property's new value, written at `at`; the greatest `at` wins.
    case value(SyncValue, at: HybridTimestamp)
    /// Edits of a `List` property, in order.
    case list([ListOperation])
    /// Edits of a `Map` property, in order.
    case map([MapOperation])
    /// Edits of a `MutableSet` property, in order.
    case set([SetOperation])
}

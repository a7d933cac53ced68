/// What a captured write transaction did to one `Map`, `MutableSet` or `List` property of an object, found by
/// comparing the collection in the transaction with the version it started from (see `Documentation/Sync.md`,
/// "Collections"). For Strata Sync (`StrataSync`), not for applications.
@_spi(StrataSync) public enum CapturedCollectionChange: Sendable, Hashable {
    /// A map's keys set to new values, and the keys removed (per-key last writer wins: each is stamped with the
    /// transaction's timestamp).
    case map(set: [String: CapturedValue], removed: [String])
    /// A set's values added, each with the new tag of its add, and the values removed, each with the tags of the
    /// adds this replica had seen (observed-remove: an add it had not seen survives the removal).
    case set(added: [CapturedSetElement], removed: [CapturedSetElement])
}

/// A value of a synced `MutableSet` with tags: the ids of adds (hybrid timestamps in their text form).
@_spi(StrataSync) public struct CapturedSetElement: Sendable, Hashable {
    /// The value.
    public var value: CapturedValue
    /// The tags of its adds.
    public var tags: [String]

    /// `value` with `tags`.
    public init(value: CapturedValue, tags: [String]) {
        self.value = value
        self.tags = tags
    }
}

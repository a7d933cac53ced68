/// What a captured write transaction did to one `Map`, `MutableSet` or `List` property of an object, found by
/// comparing the collection in the transaction with the version it started from (see `Documentation/Sync.md`,
/// "Collections"). For Strata Sync (`StrataSync`), not for applications.
@_spi(StrataSync) public enum CapturedCollectionChange: Sendable, Hashable {
    /// A map's keys set to new values, and the keys removed (per-key last writer wins: each is stamped with the
    /// transaction's timestamp).
    case map(set: [String: CapturedValue], removed: [String])
}

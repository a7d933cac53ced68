/// One edit of a synced list (a replicated growable array, RGA). Every element has an id — the timestamp of its
/// insert — and is placed after the element it was inserted after, so concurrent inserts at the same place are
/// both kept (the later insert first); a removal leaves a tombstone, so an insert after a removed element still
/// finds its place. A move is a removal plus an insert.
public enum ListOperation: Sendable, Hashable, Codable {
    /// Inserts `value` as the element `id` right after the element `after` (nil: at the start).
    case insert(id: HybridTimestamp, after: HybridTimestamp?, value: SyncValue)
    /// Removes the element `id` (a tombstone: it stays for ordering, invisible).
    case remove(id: HybridTimestamp)
    /// Removes every element inserted before `at` (a list assigned as a whole, or an object re-created):
    /// elements inserted concurrently with later timestamps survive.
    case clear(at: HybridTimestamp)
}

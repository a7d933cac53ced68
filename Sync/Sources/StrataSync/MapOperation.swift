/// One edit of a synced map: each key is a last-writer-wins register of its own.
public enum MapOperation: Sendable, Hashable, Codable {
    /// Sets `key` to `value` at `at`, or removes it when `value` is nil; the greatest `at` per key wins.
    case set(key: String, value: SyncValue?, at: HybridTimestamp)
    /// Removes every key written before `at` (a map assigned as a whole, or an object re-created).
    case clear(at: HybridTimestamp)
}

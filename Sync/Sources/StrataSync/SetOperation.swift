/// One edit of a synced set, an observed-remove set in which an add wins over a concurrent remove: every add
/// carries a tag (its timestamp), and a remove removes only the tags of the value that the remover had seen.
/// An add that the remover had not seen keeps the value in the set.
public enum SetOperation: Sendable, Hashable, Codable {
    /// Adds `value` with the tag `tag`.
    case add(value: SyncValue, tag: HybridTimestamp)
    /// Removes `value`'s tags `observedTags` (those the remover saw): the value stays if it has other tags.
    case remove(value: SyncValue, observedTags: [HybridTimestamp])
}

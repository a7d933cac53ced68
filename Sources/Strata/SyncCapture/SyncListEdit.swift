/// A positional edit of a synced `List`, recorded while the write transaction runs (by the operations behind
/// `List`, after the edit succeeded), so that the commit turns a list's edits into list operations in O(edit)
/// instead of comparing the whole list with its base (see `Realm.capturedListChange`). Elements are the stored
/// element rows (links as object keys), decoded at the commit.
enum SyncListEdit {
    /// `element` inserted at `index`.
    case insert(at: Int, element: [UInt8])
    /// The element at `index` replaced by `element`.
    case replace(at: Int, element: [UInt8])
    /// The element at `index` removed.
    case remove(at: Int)
    /// The element at `from` (`element`) moved to `to` (a position in the list without it).
    case move(from: Int, to: Int, element: [UInt8])
    /// Every element removed.
    case removeAll
}

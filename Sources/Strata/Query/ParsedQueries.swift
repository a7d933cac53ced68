import Foundation
import StrataStorage

/// Query strings already parsed, process-wide: an app filters with the same few strings again and again (the
/// arguments change, not the text), as SQLite users reuse prepared statements. Parsing is pure, so the parsed
/// form of a text is the same everywhere; errors are not kept.
final class ParsedQueries: @unchecked Sendable {
    static let shared = ParsedQueries()
    /// Texts kept at most; the table starts over when it is full (a program with more distinct query texts than
    /// this builds them dynamically, and a cache would not help it).
    static let capacity = 512
    let entries = Locked<[String: RQLQuery]>([:])

    func query(for text: String) -> RQLQuery? { entries.withLock { $0[text] } }

    func remember(_ query: RQLQuery, for text: String) {
        guard text.utf8.count <= 4_096 else { return }
        entries.withLock { entries in
            if entries.count >= Self.capacity { entries.removeAll(keepingCapacity: true) }
            entries[text] = query
        }
    }
}

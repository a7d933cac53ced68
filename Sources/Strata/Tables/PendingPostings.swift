import Foundation
import StrataStorage

/// The full-text postings a write transaction added to one index tree and has not written yet, by word.
///
/// A posting added to the tree at once costs a descent and a put at a random place per word per text; held here,
/// a word's postings are merged into its posting blocks (see `FullTextPostings.swift`) once per flush, a few puts
/// per word. What is held is always exactly what the tree lacks: removals flush first (see
/// `TableStore.updateIndexes`), and everything is flushed before the index is read in the transaction and before
/// it commits.
final class PendingPostings {
    /// A word, given as an index entry (word, 0, object key) of it: the entry is kept, not copied into a new
    /// array, and only its word is hashed and compared.
    struct Word: Hashable {
        let entry: [UInt8]

        var bytes: ArraySlice<UInt8> { entry[..<(entry.count - 9)] }

        func hash(into hasher: inout Hasher) {
            entry.withUnsafeBytes { hasher.combine(bytes: UnsafeRawBufferPointer(rebasing: $0[..<($0.count - 9)])) }
        }

        static func == (left: Word, right: Word) -> Bool {
            left.entry.count == right.entry.count
                && left.entry.withUnsafeBytes { a in
                    right.entry.withUnsafeBytes { b in memcmp(a.baseAddress!, b.baseAddress!, a.count - 9) == 0 }
                }
        }
    }

    /// Each word's new object keys, in the order they were added.
    private(set) var keys: [Word: [Int64]] = [:]
    /// The number of postings held.
    private(set) var count = 0

    /// Holds the posting of index entry `entry` (word, 0, object key).
    func add(_ entry: [UInt8]) {
        let key = entry.withUnsafeBytes {
            KeyEncoding.decodeObjectKey(UnsafeRawBufferPointer(rebasing: $0[($0.count - 8)...]))
        }
        keys[Word(entry: entry), default: []].append(key)
        count += 1
    }

    /// The words in tree order (so their blocks are written in key order), each with its keys ascending.
    func sortedWords() -> [(word: ArraySlice<UInt8>, keys: [Int64])] {
        keys.map { word, keys in
            // A load adds keys ascending; edits of older objects may not.
            let ascending = zip(keys, keys.dropFirst()).allSatisfy { $0 < $1 }
            return (word.bytes, ascending ? keys : SortedKeys.normalized(keys))
        }
        .sorted { $0.word.lexicographicallyPrecedes($1.word) }
    }
}

extension TableStore {
    /// Postings held for a tree are written when this many are held, so a huge load's buffer stays bounded.
    static let pendingPostingsLimit = 1 << 20

    /// Adds the posting of full-text index entry `entry` to index tree `name`: held until the next flush.
    func addPosting(_ entry: [UInt8], tree name: String) throws(Realm.Error) {
        let pending: PendingPostings
        if let held = pendingPostings[name] {
            pending = held
        } else {
            pending = PendingPostings()
            pendingPostings[name] = pending
        }
        pending.add(entry)
        if pending.count >= Self.pendingPostingsLimit { try flushPostings(tree: name) }
    }

    /// Writes the postings held for index tree `name` into it.
    func flushPostings(tree name: String) throws(Realm.Error) {
        guard let pending = pendingPostings.removeValue(forKey: name) else { return }
        let transaction = try activeTransaction()
        let tree = try handle(name, create: true)!
        try mutate {
            for (word, keys) in pending.sortedWords() {
                try FullText.insertPostings(keys, word: word, in: tree, transaction)
            }
        }
    }

    /// Writes every posting held (before a commit).
    func flushAllPostings() throws(Realm.Error) {
        for name in pendingPostings.keys.sorted() { try flushPostings(tree: name) }
    }

    /// Forgets the postings held for tree `name` (it is being emptied or dropped).
    func discardPostings(tree name: String) {
        pendingPostings[name] = nil
    }
}

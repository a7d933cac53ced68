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
    // Unchecked exclusivity: only the table layer's write path reaches these, one call at a time, and the
    // dynamic checks cost about as much as the rest of holding a posting.

    /// The words held, each once, in the order first added.
    @exclusivity(unchecked) private var words: [[UInt8]] = []
    /// Word `i`'s hash (see ``hash(_:)``).
    @exclusivity(unchecked) private var hashes: [UInt64] = []
    /// Word `i`'s object keys, in the order added.
    @exclusivity(unchecked) private var keys: [[Int64]] = []
    /// An open-addressing table of the words: a slot holds a word's index + 1, or 0. At most half full.
    @exclusivity(unchecked) private var slots = [Int](repeating: 0, count: 64)
    /// Mixed into every hash, so that which words collide differs from one transaction to the next.
    private let seed = UInt64.random(in: 0...UInt64.max)
    /// The number of postings held.
    @exclusivity(unchecked) private(set) var count = 0

    /// FNV-1a over the word: a word is a few bytes, and SipHash (Swift's `Hasher`) cost more than the rest of
    /// holding a posting.
    private func hash(_ word: UnsafeRawBufferPointer) -> UInt64 {
        var hash = 0xCBF2_9CE4_8422_2325 ^ seed
        for byte in word { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01B3 }
        return hash
    }

    /// The first slot to look at for `hash`: its high bits after a multiplicative mix.
    private func home(_ hash: UInt64) -> Int {
        Int(truncatingIfNeeded: (hash &* 0x9E37_79B9_7F4A_7C15) >> UInt64(64 - slots.count.trailingZeroBitCount))
    }

    /// Holds the posting of `word` for object `key`. The words of one text come one after the other, so a word
    /// repeated in it finds `key` already last in its list and is held once.
    func add(word: UnsafeRawBufferPointer, key: Int64) {
        let hash = hash(word)
        let mask = slots.count - 1
        var slot = home(hash)
        while slots[slot] != 0 {
            let index = slots[slot] - 1
            if hashes[index] == hash,
                words[index].withUnsafeBytes({
                    $0.count == word.count && memcmp($0.baseAddress!, word.baseAddress!, $0.count) == 0
                })
            {
                if keys[index].last != key {
                    keys[index].append(key)
                    count += 1
                }
                return
            }
            slot = (slot + 1) & mask
        }
        words.append(Array(word))
        hashes.append(hash)
        keys.append([key])
        slots[slot] = words.count
        count += 1
        if words.count * 2 > slots.count { grow() }
    }

    /// Holds the posting of index entry `entry` (word, 0, object key).
    func add(_ entry: [UInt8]) {
        entry.withUnsafeBytes {
            add(
                word: UnsafeRawBufferPointer(rebasing: $0[..<($0.count - 9)]),
                key: KeyEncoding.decodeObjectKey(UnsafeRawBufferPointer(rebasing: $0[($0.count - 8)...])))
        }
    }

    /// Doubles the table and places every word again.
    private func grow() {
        slots = [Int](repeating: 0, count: slots.count * 2)
        let mask = slots.count - 1
        for index in words.indices {
            var slot = home(hashes[index])
            while slots[slot] != 0 { slot = (slot + 1) & mask }
            slots[slot] = index + 1
        }
    }

    /// The words in tree order (so their blocks are written in key order), each with its keys ascending.
    func sortedWords() -> [(word: [UInt8], keys: [Int64])] {
        zip(words, keys).map { word, keys in
            // A load adds keys ascending; edits of older objects may not.
            let ascending = zip(keys, keys.dropFirst()).allSatisfy { $0 < $1 }
            return (word, ascending ? keys : SortedKeys.normalized(keys))
        }
        .sorted { $0.word.lexicographicallyPrecedes($1.word) }
    }
}

extension TableStore {
    /// Postings held for a tree are written when this many are held, so a huge load's buffer stays bounded.
    static let pendingPostingsLimit = 1 << 20

    /// Adds the posting of full-text index entry `entry` to index tree `name`: held until the next flush.
    func addPosting(_ entry: [UInt8], tree name: String) throws(Realm.Error) {
        let pending = heldPostings(tree: name)
        pending.add(entry)
        if pending.count >= Self.pendingPostingsLimit { try flushPostings(tree: name) }
    }

    /// Adds the postings of every word of `text` for new object `key` to index tree `name`: straight from the
    /// words, without an index entry per word (an object just inserted has no old words to diff against).
    func addPostings(of text: String, key: Int64, tree name: String) throws(Realm.Error) {
        let pending = heldPostings(tree: name)
        FullText.forEachWord(text) { pending.add(word: UnsafeRawBufferPointer($0), key: key) }
        if pending.count >= Self.pendingPostingsLimit { try flushPostings(tree: name) }
    }

    /// The postings held for index tree `name`, made empty if there are none.
    private func heldPostings(tree name: String) -> PendingPostings {
        if let held = pendingPostings[name] { return held }
        let pending = PendingPostings()
        pendingPostings[name] = pending
        return pending
    }

    /// Writes the postings held for index tree `name` into it.
    func flushPostings(tree name: String) throws(Realm.Error) {
        guard let pending = pendingPostings.removeValue(forKey: name) else { return }
        let transaction = try activeTransaction()
        let tree = try handle(name, create: true)!
        try mutate {
            for (word, keys) in pending.sortedWords() {
                try FullText.insertPostings(keys, word: word[...], in: tree, transaction)
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

import Foundation
import StrataStorage

/// Full-text search over string properties: how text is cut into words, how those words are indexed, and how a
/// `TEXT` query (`"cheese -blue sal*"`) is matched.
///
/// A word is a run of letters and digits. Words are folded before they are stored or compared: lowercased and
/// stripped of diacritics (`Crème` → `creme`), so searches are case- and diacritics-insensitive. Words longer than
/// ``maximumWordLength`` bytes are cut. A full-text index holds, per object, each distinct word of its string.
enum FullText {
    /// Longer words are cut to this many UTF-8 bytes (so `supercalifragilistic…` still finds itself).
    static let maximumWordLength = 64

    /// The folded words of `text`, in order, with repeats.
    static func words(_ text: String) -> [[UInt8]] {
        var words: [[UInt8]] = []
        var isASCII = true
        for byte in text.utf8 where byte >= 0x80 {
            isASCII = false
            break
        }
        if isASCII {
            var word: [UInt8] = []
            for byte in text.utf8 {
                switch byte {
                case 0x30...0x39, 0x61...0x7A: word.append(byte)
                case 0x41...0x5A: word.append(byte | 0x20)
                default:
                    if !word.isEmpty { words.append(cut(word)) }
                    word.removeAll(keepingCapacity: true)
                }
            }
            if !word.isEmpty { words.append(cut(word)) }
            return words
        }
        let folded = text.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil)
        var word = ""
        for character in folded {
            if character.isLetter || character.isNumber {
                word.append(character)
            } else if !word.isEmpty {
                words.append(cut(Array(word.utf8)))
                word = ""
            }
        }
        if !word.isEmpty { words.append(cut(Array(word.utf8))) }
        return words
    }

    private static func cut(_ word: [UInt8]) -> [UInt8] {
        guard word.count > maximumWordLength else { return word }
        var end = maximumWordLength
        // Never split a UTF-8 sequence: back up to the start of the character.
        while end > 0 && word[end] & 0xC0 == 0x80 { end -= 1 }
        return Array(word[..<end])
    }

    /// The index entries of a stored string value for object `key`: each distinct word, a 0 byte, the key.
    static func entries(_ value: _StoredValue, key: Int64) -> Set<[UInt8]> {
        guard case .string(let text) = value else { return [] }
        let objectKey = KeyEncoding.objectKey(key)
        return Set(words(text).map { $0 + [0] + objectKey })
    }

    /// A parsed `TEXT` search: every required term must occur, no excluded term may.
    struct Search {
        struct Term: Hashable {
            var word: [UInt8]
            /// `word*`: any word starting with `word`.
            var isPrefix: Bool

            func matches(_ candidate: [UInt8]) -> Bool {
                isPrefix ? candidate.starts(with: word) : candidate == word
            }
        }
        var required: [Term] = []
        var excluded: [Term] = []

        /// Parses `text`: terms separated by spaces, `-term` excludes, `term*` matches words by prefix. A term
        /// that folds to several words (`e-mail`) requires (or excludes) each of them. Nil when nothing is left.
        init?(_ text: String) {
            for raw in text.split(whereSeparator: \.isWhitespace) {
                var term = Substring(raw)
                let excluding = term.hasPrefix("-")
                if excluding { term = term.dropFirst() }
                let prefix = term.hasSuffix("*")
                if prefix { term = term.dropLast() }
                let parts = FullText.words(String(term))
                for (offset, word) in parts.enumerated() {
                    let entry = Term(word: word, isPrefix: prefix && offset == parts.count - 1)
                    if excluding { excluded.append(entry) } else { required.append(entry) }
                }
            }
            if required.isEmpty && excluded.isEmpty { return nil }
        }

        /// Whether `text` satisfies the search.
        func matches(_ text: String) -> Bool {
            let present = Set(FullText.words(text))
            for term in required {
                if term.isPrefix ? !present.contains(where: term.matches) : !present.contains(term.word) {
                    return false
                }
            }
            for term in excluded
            where term.isPrefix ? present.contains(where: term.matches) : present.contains(term.word) {
                return false
            }
            return true
        }
    }
}

extension FullText {
    /// One exact word's postings in a full-text index tree (entries `word, 0, object key (8 bytes, big-endian)`),
    /// read in key order with a cursor that can skip ahead.
    struct Postings {
        var cursor: TreeCursor
        let prefix: [UInt8]
        /// The key the cursor is on (as unsigned, the entries' order); nil once past the word's entries.
        private(set) var current: UInt64?

        init(_ tree: TreeView, word: [UInt8]) throws {
            cursor = tree.makeCursor()
            prefix = word + [0]
            current = try cursor.seek(atOrAfter: prefix) ? try Self.key(cursor, prefix) : nil
        }

        private static func key(_ cursor: TreeCursor, _ prefix: [UInt8]) throws -> UInt64? {
            try cursor.withKey { entry -> UInt64? in
                guard entry.count == prefix.count + 8,
                    prefix.withUnsafeBytes({ memcmp(entry.baseAddress!, $0.baseAddress!, prefix.count) }) == 0
                else { return nil }
                return entry.loadUnaligned(fromByteOffset: prefix.count, as: UInt64.self).bigEndian
            }
        }

        /// Moves to the first posting at or after `target` and returns its key (nil when there is none). Steps
        /// forward a few entries first (cheap when the keys are dense), then seeks from the root.
        mutating func advance(toAtLeast target: UInt64) throws -> UInt64? {
            var steps = 0
            while let key = current, key < target {
                if steps == 8 {
                    var seekKey = prefix
                    withUnsafeBytes(of: target.bigEndian) { seekKey.append(contentsOf: $0) }
                    current = try cursor.seek(atOrAfter: seekKey) ? try Self.key(cursor, prefix) : nil
                    return current
                }
                steps += 1
                current = try cursor.next() ? try Self.key(cursor, prefix) : nil
            }
            return current
        }
    }

    /// The object keys (ascending) holding every one of the exact `words` — and, given `within` (ascending),
    /// only keys of it — found by a leapfrog join of their postings.
    static func intersect(_ tree: TreeView, words: [Search.Term], within: [Int64]? = nil) throws -> [Int64] {
        var lists = try words.map { try Postings(tree, word: $0.word) }
        var result: [Int64] = []
        if let within {
            // Membership of each given key in one word's postings.
            guard var only = lists.first else { return within }
            for key in within where try only.advance(toAtLeast: UInt64(bitPattern: key)) == UInt64(bitPattern: key) {
                result.append(key)
            }
            return result
        }
        guard !lists.isEmpty else { return [] }
        var target: UInt64 = 0
        var agreed = 0
        var index = 0
        while true {
            guard let key = try lists[index].advance(toAtLeast: target) else { break }
            if key == target {
                agreed += 1
            } else {
                target = key
                agreed = 1
            }
            if agreed == lists.count {
                result.append(Int64(bitPattern: target))
                guard target < .max else { break }
                target += 1
                agreed = 0
            }
            index = (index + 1) % lists.count
        }
        return result
    }
}

extension Realm {
    /// Calls `take` with each entry of index tree `name` from the first one at or after `start`, until it
    /// returns false.
    func forEachIndexEntry(tree name: String, from start: [UInt8], _ take: (UnsafeRawBufferPointer) -> Bool)
        throws(Realm.Error)
    {
        try start.withStorageBytes { (start) throws(Realm.Error) in try forEachIndexEntry(tree: name, from: start, take)
        }
    }

    /// ``forEachIndexEntry(tree:from:_:)`` from raw bytes.
    func forEachIndexEntry(
        tree name: String, from start: UnsafeRawBufferPointer, _ take: (UnsafeRawBufferPointer) -> Bool
    ) throws(Realm.Error) {
        if let transaction = writeTransactionIfAny {
            guard let tree = try handle(name, create: false) else { return }
            try storage {
                var cursor = try transaction.makeCursor(for: tree)
                var more = try cursor.seek(atOrAfter: start)
                while more, try cursor.key().withUnsafeBytes(take) { more = try cursor.next() }
            }
        } else if let tree = treeView(name) {
            try storage {
                var cursor = tree.makeCursor()
                var more = try cursor.seek(atOrAfter: start)
                // Read in place: no key is copied.
                while more, try cursor.withEntry({ key, _ in take(key) }) { more = try cursor.next() }
            }
        }
    }

    /// The objects the full-text index of `property` says satisfy `search`, ascending; nil when the search has no
    /// required term (only exclusions: every object is a candidate).
    func fullTextKeys(_ binding: TableBinding, property: Int, search: FullText.Search) throws(Realm.Error)
        -> [Int64]?
    {
        let name = binding.indexTrees[property]
        /// The objects holding `term`, ascending (an exact word's entries are in key order already).
        func keys(_ term: FullText.Search.Term) throws(Realm.Error) -> [Int64] {
            var keys: [Int64] = []
            let prefix = term.isPrefix ? term.word : term.word + [0]
            try forEachIndexEntry(tree: name, from: prefix) { entry in
                guard entry.count >= prefix.count + 8, entry.starts(with: prefix) else { return false }
                keys.append(KeyEncoding.decodeObjectKey(UnsafeRawBufferPointer(rebasing: entry[(entry.count - 8)...])))
                return true
            }
            if term.isPrefix {
                keys.sort()
                keys = keys.enumerated().compactMap {
                    $0.offset > 0 && keys[$0.offset - 1] == $0.element ? nil : $0.element
                }
            }
            return keys
        }
        /// The keys of sorted `a` that are (or, with `keeping` false, are not) in sorted `b`.
        func merge(_ a: [Int64], _ b: [Int64], keeping: Bool) -> [Int64] {
            var result: [Int64] = []
            var j = 0
            for key in a {
                while j < b.count && b[j] < key { j += 1 }
                if (j < b.count && b[j] == key) == keeping { result.append(key) }
            }
            return result
        }
        guard !search.required.isEmpty else { return nil }
        if let tree = treeView(name), search.required.contains(where: { !$0.isPrefix }) {
            // Outside a write: the exact words' postings are walked together, each skipping ahead to the next
            // key the others hold (a leapfrog join), so a common word costs no more than the rarest one's
            // matches instead of a read of its whole posting list.
            var result = try storage { try FullText.intersect(tree, words: search.required.filter { !$0.isPrefix }) }
            for term in search.required where term.isPrefix {
                if result.isEmpty { break }
                result = merge(result, try keys(term), keeping: true)
            }
            for term in search.excluded where !result.isEmpty {
                if term.isPrefix {
                    result = merge(result, try keys(term), keeping: false)
                } else {
                    let present = try storage { try FullText.intersect(tree, words: [term], within: result) }
                    result = merge(result, present, keeping: false)
                }
            }
            return result
        }
        var result: [Int64]?
        for term in search.required {
            let found = try keys(term)
            result = result.map { merge($0, found, keeping: true) } ?? found
            if result?.isEmpty == true { return [] }
        }
        for term in search.excluded {
            let found = try keys(term)
            result = result.map { merge($0, found, keeping: false) }
        }
        return result
    }
}

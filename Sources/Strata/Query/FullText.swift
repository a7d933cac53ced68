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
        forEachWord(text) { words.append(Array($0)) }
        return words
    }

    /// Calls `body` with each folded word of `text` (cut to ``maximumWordLength`` bytes), in order, with repeats.
    /// The buffer is valid only during the call.
    static func forEachWord(_ text: String, _ body: (UnsafeBufferPointer<UInt8>) -> Void) {
        var text = text
        let folded: Bool = text.withUTF8 { bytes in
            guard bytes.allSatisfy({ $0 < 0x80 }) else { return false }
            // ASCII: fold each letter as it is copied into a word buffer on the stack; bytes past the longest
            // word are dropped (the word is cut).
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: maximumWordLength) { word in
                var length = 0
                for byte in bytes {
                    let folded: UInt8
                    switch byte {
                    case 0x30...0x39, 0x61...0x7A: folded = byte
                    case 0x41...0x5A: folded = byte | 0x20
                    default:
                        if length > 0 { body(UnsafeBufferPointer(rebasing: word[..<length])) }
                        length = 0
                        continue
                    }
                    if length < maximumWordLength {
                        word[length] = folded
                        length += 1
                    }
                }
                if length > 0 { body(UnsafeBufferPointer(rebasing: word[..<length])) }
            }
            return true
        }
        if folded { return }
        func end(_ word: String) {
            let bytes = Array(word.utf8)
            var end = bytes.count
            if end > maximumWordLength {
                end = maximumWordLength
                // Never split a UTF-8 sequence: back up to the start of the character.
                while end > 0 && bytes[end] & 0xC0 == 0x80 { end -= 1 }
            }
            bytes.withUnsafeBufferPointer { body(UnsafeBufferPointer(rebasing: $0[..<end])) }
        }
        var word = ""
        for character in text.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil) {
            if character.isLetter || character.isNumber {
                word.append(character)
            } else if !word.isEmpty {
                end(word)
                word = ""
            }
        }
        if !word.isEmpty { end(word) }
    }

    /// The index entries of a stored string value for object `key`: each distinct word, a 0 byte, the key. Sorted
    /// in the index tree's (byte) order, so an object's old and new entries are compared and diffed in one pass
    /// (``forEachChange(from:to:removed:added:)``) and put in tree order.
    static func entries(_ value: _StoredValue, key: Int64) -> [[UInt8]] {
        guard case .string(let text) = value else { return [] }
        let objectKey = KeyEncoding.objectKey(key)
        var entries: [[UInt8]] = []
        forEachWord(text) { word in
            // One allocation per entry: the word, the separator and the key written straight into it.
            var entry: [UInt8] = []
            entry.reserveCapacity(word.count + 1 + objectKey.count)
            entry.append(contentsOf: word)
            entry.append(0)
            entry.append(contentsOf: objectKey)
            entries.append(entry)
        }
        guard entries.count > 1 else { return entries }
        entries.sort { $0.lexicographicallyPrecedes($1) }
        // Repeated words are adjacent now: keep the first of each run.
        var kept = 1
        for index in 1..<entries.count where entries[index] != entries[kept - 1] {
            entries.swapAt(kept, index)
            kept += 1
        }
        entries.removeLast(entries.count - kept)
        return entries
    }

    /// Calls `removed` with each entry of `old` that `new` lacks and `added` with each entry of `new` that `old`
    /// lacks; both sorted and distinct, as ``entries(_:key:)`` returns them.
    static func forEachChange(
        from old: [[UInt8]], to new: [[UInt8]], removed: ([UInt8]) throws -> Void, added: ([UInt8]) throws -> Void
    ) rethrows {
        var oldIndex = 0
        var newIndex = 0
        while oldIndex < old.count || newIndex < new.count {
            if newIndex == new.count || oldIndex < old.count && old[oldIndex].lexicographicallyPrecedes(new[newIndex]) {
                try removed(old[oldIndex])
                oldIndex += 1
            } else if oldIndex == old.count || new[newIndex].lexicographicallyPrecedes(old[oldIndex]) {
                try added(new[newIndex])
                newIndex += 1
            } else {
                oldIndex += 1
                newIndex += 1
            }
        }
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
    /// One segment of a full-text index tree (posting blocks, see `FullTextPostings.swift`), decoded once
    /// and kept in the file's ``SegmentCache``: its distinct words in tree order and each word's postings (object
    /// keys, ascending). A word's postings are then a slice of an array instead of a walk over index entries.
    final class SegmentPostings: Sendable {
        let words: [[UInt8]]
        /// Word `i`'s postings are `keys[starts[i] ..< starts[i + 1]]`.
        let starts: [Int]
        let keys: [Int64]

        init(_ segment: TreeSegment) throws {
            var words: [[UInt8]] = []
            var starts: [Int] = []
            var keys: [Int64] = []
            keys.reserveCapacity(segment.count)
            try segment.forEachStableEntry { _, key, value in
                // Skip anything that is not a posting block (the index holds nothing else).
                guard key.count >= 9, key[key.count - 9] == 0 else { return }
                let word = UnsafeRawBufferPointer(rebasing: key[..<(key.count - 9)])
                if words.last.map({ !$0.elementsEqual(word) }) ?? true {
                    words.append(Array(word))
                    starts.append(keys.count)
                }
                try FullText.decodeBlock(key: key, value: value.bytes, into: &keys)
            }
            starts.append(keys.count)
            self.words = words
            self.starts = starts
            self.keys = keys
        }

        var cost: Int { keys.count * 8 + starts.count * 8 + words.reduce(0) { $0 + $1.count + 32 } + 96 }

        /// The first word at or after `word` in tree order.
        func lowerBound(_ word: [UInt8]) -> Int {
            var low = 0
            var high = words.count
            while low < high {
                let middle = (low + high) / 2
                if words[middle].lexicographicallyPrecedes(word) { low = middle + 1 } else { high = middle }
            }
            return low
        }
    }

    /// Cache tag of a full-text index segment's postings.
    static let postingsTag = 1 << 40

    /// `word`'s postings (object keys, ascending) in full-text index `tree`, from the segments that hold them.
    static func postings(_ tree: TreeView, word: [UInt8], cache: SegmentCache) throws -> [Int64] {
        var result: [Int64] = []
        try (word + [0]).withUnsafeBytes { from in
            try tree.forEachSegment(from: from) { segment in
                let cacheKey = SegmentCache.Key(segment: segment.identity, tag: postingsTag)
                let extract: SegmentPostings
                if let cached = cache.value(for: cacheKey) as? SegmentPostings {
                    extract = cached
                } else {
                    extract = try SegmentPostings(segment)
                    cache.insert(extract, cost: extract.cost, for: cacheKey)
                }
                let index = extract.lowerBound(word)
                guard index < extract.words.count else { return true }  // the word may start in the next segment
                guard extract.words[index] == word else { return false }
                result.append(contentsOf: extract.keys[extract.starts[index]..<extract.starts[index + 1]])
                // A word's postings continue in the next segment only when it is this one's last word.
                return index == extract.words.count - 1
            }
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

    /// Calls `take` with the key and value of each entry of index tree `name` from the first one at or after
    /// `start`, until it returns false.
    func forEachIndexBlock(
        tree name: String, from start: [UInt8],
        _ take: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool
    ) throws(Realm.Error) {
        if let transaction = writeTransactionIfAny {
            guard let tree = try handle(name, create: false) else { return }
            try storage {
                var cursor = try transaction.makeCursor(for: tree)
                var more = try cursor.seek(atOrAfter: start)
                while more {
                    let key = try cursor.key()
                    let value = try cursor.value()
                    guard
                        try key.withUnsafeBytes({ key in try value.withUnsafeBytes { value in try take(key, value) } })
                    else { break }
                    more = try cursor.next()
                }
            }
        } else if let tree = treeView(name) {
            try storage {
                var cursor = tree.makeCursor()
                var more = try cursor.seek(atOrAfter: start)
                // Read in place: nothing is copied.
                while more, try cursor.withEntry(take) { more = try cursor.next() }
            }
        }
    }

    /// The objects the full-text index of `property` says satisfy `search`, ascending; nil when the search has no
    /// required term (only exclusions: every object is a candidate).
    func fullTextKeys(_ binding: TableBinding, property: Int, search: FullText.Search) throws(Realm.Error)
        -> [Int64]?
    {
        let name = binding.indexTrees[property]
        /// The objects holding `term`, ascending (an exact word's blocks are in key order already).
        func keys(_ term: FullText.Search.Term) throws(Realm.Error) -> [Int64] {
            var keys: [Int64] = []
            let prefix = term.isPrefix ? term.word : term.word + [0]
            try forEachIndexBlock(tree: name, from: prefix) { key, value in
                guard key.count >= prefix.count + 8, key.starts(with: prefix) else { return false }
                try FullText.decodeBlock(key: key, value: value, into: &keys)
                return true
            }
            // A prefix's words each list their keys: sorted and merged into one list.
            return term.isPrefix ? SortedKeys.normalized(keys) : keys
        }
        guard !search.required.isEmpty else { return nil }
        // The postings the write transaction holds go into the tree before it is read.
        if writeTransactionIfAny != nil { try tables.flushPostings(tree: name) }
        // Outside a write, an exact word's postings come from the cached posting extracts of the index segments
        // that hold it (see `FullText.postings`); inside one, from the index entries.
        let tree = treeView(name)
        let cache = store.segmentCache
        func list(_ term: FullText.Search.Term) throws(Realm.Error) -> [Int64] {
            guard let tree, !term.isPrefix else { return try keys(term) }
            return try storage { try FullText.postings(tree, word: term.word, cache: cache) }
        }
        var lists: [[Int64]] = []
        for term in search.required { lists.append(try list(term)) }
        var result = SortedKeys.intersection(lists)
        for term in search.excluded where !result.isEmpty {
            result = SortedKeys.subtracting(result, try list(term))
        }
        return result
    }
}

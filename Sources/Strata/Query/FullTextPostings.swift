import StrataStorage

/// The posting blocks of a full-text index tree: one entry holds a word's postings for up to ``blockCapacity``
/// objects (as SQLite's FTS5 keeps a doclist per term), so that loading N texts writes about one entry per word
/// per flush instead of one per word per text.
///
/// An entry's key is the word, a 0 byte and the block's first object key (8 bytes, as `KeyEncoding.objectKey`);
/// its value is ``blockFormat`` followed by the block's other keys, each as the LEB128 varint of its difference
/// from the key before it. A word's blocks cover disjoint, ascending key ranges, so reading them in tree order
/// gives the word's postings ascending. An entry with an empty value is a posting as files written before the
/// blocks stored them (one entry per word and object): it reads as a block of one key, and the first write that
/// touches it rewrites it as a block. Both formats are read; no rebuild is needed.
extension FullText {
    /// Most keys one block holds: a block is decoded and re-encoded whole when a key is added or removed.
    static let blockCapacity = 128

    /// The first byte of a block's value (an empty value is a posting of the older format).
    static let blockFormat: UInt8 = 1

    /// A posting block that does not decode: the file is damaged (reported as
    /// ``RealmError/incompatibleFile(path:reason:)``, see `TableStore.damage(in:)`).
    struct DamagedPostings: Swift.Error {
        let reason: String
    }

    /// Appends the object keys of the block stored under `key` with `value` to `keys`, ascending.
    static func decodeBlock(key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, into keys: inout [Int64])
        throws(DamagedPostings)
    {
        guard key.count >= 9, key[key.count - 9] == 0 else {
            throw DamagedPostings(reason: "a full-text index entry has no object key")
        }
        var current = UInt64(bigEndian: key.loadUnaligned(fromByteOffset: key.count - 8, as: UInt64.self))
        keys.append(Int64(bitPattern: current))
        // Written before posting blocks: the entry is one posting.
        if value.isEmpty { return }
        guard value[0] == blockFormat else {
            throw DamagedPostings(reason: "a full-text posting block has unknown format \(value[0])")
        }
        var index = 1
        while index < value.count {
            var delta: UInt64 = 0
            var shift: UInt64 = 0
            while true {
                guard index < value.count, shift < 64 else {
                    throw DamagedPostings(reason: "a full-text posting block ends inside a key")
                }
                let byte = value[index]
                index += 1
                delta |= UInt64(byte & 0x7F) << shift
                if byte < 0x80 { break }
                shift += 7
            }
            let (next, overflow) = current.addingReportingOverflow(delta)
            guard delta > 0, !overflow else {
                throw DamagedPostings(reason: "a full-text posting block's keys are not ascending")
            }
            current = next
            keys.append(Int64(bitPattern: current))
        }
    }

    /// ``decodeBlock(key:value:into:)`` for copied bytes.
    static func decodeBlock(key: [UInt8], value: [UInt8], into keys: inout [Int64]) throws {
        try key.withUnsafeBytes { key in
            try value.withUnsafeBytes { value in try decodeBlock(key: key, value: value, into: &keys) }
        }
    }

    /// The value of a block of `keys` (ascending, distinct, at least one): the format byte and the differences.
    static func encodeBlock(_ keys: ArraySlice<Int64>) -> [UInt8] {
        var value: [UInt8] = [blockFormat]
        value.reserveCapacity(1 + keys.count * 2)
        var previous = UInt64(bitPattern: keys.first!)
        for key in keys.dropFirst() {
            var delta = UInt64(bitPattern: key) &- previous
            previous = UInt64(bitPattern: key)
            while delta >= 0x80 {
                value.append(UInt8(truncatingIfNeeded: delta) | 0x80)
                delta >>= 7
            }
            value.append(UInt8(delta))
        }
        return value
    }

    /// The key of `word`'s block whose first object key is `first`.
    static func blockKey(_ word: ArraySlice<UInt8>, first: Int64) -> [UInt8] {
        var key: [UInt8] = []
        key.reserveCapacity(word.count + 9)
        key.append(contentsOf: word)
        key.append(0)
        key.append(contentsOf: KeyEncoding.objectKey(first))
        return key
    }

    /// The block of `word` that object key `probe` belongs in: the word's last block starting at or before it,
    /// else the word's first block (nil when the word has none); with the first key of the block after it (nil
    /// when it is the word's last).
    private static func block(
        of word: ArraySlice<UInt8>, for probe: Int64, in tree: TreeHandle, _ transaction: WriteTransaction
    ) throws -> (key: [UInt8], value: [UInt8], nextFirst: Int64?)? {
        let probeKey = blockKey(word, first: probe)
        func isBlock(_ key: [UInt8]) -> Bool {
            key.count == word.count + 9 && key[word.count] == 0 && key[..<word.count].elementsEqual(word)
        }
        func firstKey(_ key: [UInt8]) -> Int64 { KeyEncoding.decodeObjectKey(Array(key[(key.count - 8)...])) }
        var cursor = try transaction.makeCursor(for: tree)
        let after: [UInt8]? = try cursor.seek(atOrAfter: probeKey) ? try cursor.key() : nil
        if let after, after == probeKey {
            let value = try cursor.value()
            let next = try cursor.next() ? try cursor.key() : nil
            return (after, value, next.flatMap { isBlock($0) ? firstKey($0) : nil })
        }
        if try after != nil ? cursor.previous() : cursor.last() {
            let key = try cursor.key()
            if isBlock(key) {
                return (key, try cursor.value(), after.flatMap { isBlock($0) ? firstKey($0) : nil })
            }
        }
        // `probe` comes before the word's first block, if it has one.
        guard let after, isBlock(after), try cursor.seek(atOrAfter: after) else { return nil }
        let value = try cursor.value()
        let next = try cursor.next() ? try cursor.key() : nil
        return (after, value, next.flatMap { isBlock($0) ? firstKey($0) : nil })
    }

    /// Writes `keys` (ascending, distinct) as blocks of `word` in place of the block stored under `replacing`.
    private static func writeBlocks(
        _ keys: [Int64], word: ArraySlice<UInt8>, replacing: [UInt8]?, in tree: TreeHandle,
        _ transaction: WriteTransaction
    ) throws {
        // Equal shares: a full block that gains a key becomes two half-full ones, not a full one and a single.
        let count = (keys.count + blockCapacity - 1) / blockCapacity
        var start = 0
        for block in 0..<count {
            let end = keys.count * (block + 1) / count
            let key = blockKey(word, first: keys[start])
            if let replacing, block == 0, key != replacing { _ = try transaction.delete(replacing, in: tree) }
            try transaction.put(key, encodeBlock(keys[start..<end]), in: tree)
            start = end
        }
        if count == 0, let replacing { _ = try transaction.delete(replacing, in: tree) }
    }

    /// Adds postings `keys` (ascending, distinct, none already in the index) of `word` to index `tree`: each run
    /// of keys that falls in one block is merged into it and the block rewritten (split when over capacity).
    static func insertPostings(
        _ keys: [Int64], word: ArraySlice<UInt8>, in tree: TreeHandle, _ transaction: WriteTransaction
    ) throws {
        var index = 0
        while index < keys.count {
            guard let found = try block(of: word, for: keys[index], in: tree, transaction) else {
                try writeBlocks(Array(keys[index...]), word: word, replacing: nil, in: tree, transaction)
                return
            }
            var end = index + 1
            if let next = found.nextFirst {
                while end < keys.count && keys[end] < next { end += 1 }
            } else {
                end = keys.count
            }
            var stored: [Int64] = []
            try decodeBlock(key: found.key, value: found.value, into: &stored)
            try writeBlocks(
                SortedKeys.union(stored, Array(keys[index..<end])), word: word, replacing: found.key, in: tree,
                transaction)
            index = end
        }
    }

    /// Removes the posting of index entry `entry` (word, 0, object key) from index `tree`. A block left empty is
    /// deleted; one left under a quarter full takes in the word's next block when both fit in one, so that
    /// removals do not leave a word spread over many small blocks.
    static func removePosting(_ entry: [UInt8], in tree: TreeHandle, _ transaction: WriteTransaction) throws {
        let word = entry[..<(entry.count - 9)]
        let key = KeyEncoding.decodeObjectKey(Array(entry[(entry.count - 8)...]))
        guard let found = try block(of: word, for: key, in: tree, transaction) else { return }
        var stored: [Int64] = []
        try decodeBlock(key: found.key, value: found.value, into: &stored)
        guard let position = stored.firstIndex(of: key) else { return }
        stored.remove(at: position)
        if !stored.isEmpty, stored.count < blockCapacity / 4, let next = found.nextFirst {
            let nextKey = blockKey(word, first: next)
            if let value = try transaction.get(nextKey, in: tree) {
                var following: [Int64] = []
                try decodeBlock(key: nextKey, value: value, into: &following)
                if stored.count + following.count <= blockCapacity {
                    _ = try transaction.delete(nextKey, in: tree)
                    stored += following
                }
            }
        }
        if !stored.isEmpty, stored.count < blockCapacity / 4,
            let previous = try previousBlock(of: word, before: found.key, in: tree, transaction)
        {
            var merged: [Int64] = []
            try decodeBlock(key: previous.key, value: previous.value, into: &merged)
            if merged.count + stored.count <= blockCapacity {
                // Removals in key order shrink a block after its next one: it goes into the one before.
                _ = try transaction.delete(found.key, in: tree)
                try writeBlocks(merged + stored, word: word, replacing: previous.key, in: tree, transaction)
                return
            }
        }
        try writeBlocks(stored, word: word, replacing: found.key, in: tree, transaction)
    }

    /// The block of `word` just before the one stored under `key`, if there is one.
    private static func previousBlock(
        of word: ArraySlice<UInt8>, before key: [UInt8], in tree: TreeHandle, _ transaction: WriteTransaction
    ) throws -> (key: [UInt8], value: [UInt8])? {
        var cursor = try transaction.makeCursor(for: tree)
        guard try cursor.seek(atOrAfter: key), try cursor.previous() else { return nil }
        let previous = try cursor.key()
        guard previous.count == word.count + 9, previous[word.count] == 0, previous[..<word.count].elementsEqual(word)
        else { return nil }
        return (previous, try cursor.value())
    }
}

import Foundation
import Testing

@testable import StrataStorage

/// Pages whose last bytes are reserved (``PageGeometry/reservedTail``; issue 26): an encrypted file keeps each
/// page's nonce and tag in its last 44 bytes, so the page layout — leaf and branch entries, splits and merges,
/// overflow chains, nested trees, the free list, meta pages — must stay inside the first `pageSize - 44` bytes.
/// Here a plain file is laid out that way, so every byte on disk can be inspected.
@Suite("Reserved page tail")
struct ReservedPageTailTests {
    private static let tail = BlockCipher.nonceSize + BlockCipher.tagSize
    private static let pageSize = 1024

    private func options() -> StoreOptions {
        var options = StoreOptions(pageSize: Self.pageSize, durability: .full)
        options.reservedPageTail = Self.tail
        return options
    }

    /// Inserts, overwrites and deletes keyed entries of every size class (short, the longest key, inline values up
    /// to the largest, overflow values), a nested list, over several commits (logged and not), and returns what
    /// the tree must hold.
    private func fill(_ store: Store) throws -> [[UInt8]: [UInt8]] {
        var expected: [[UInt8]: [UInt8]] = [:]
        var generator = SeededGenerator(seed: 26)
        let longestKey = store.maxKeySize
        for round in 0..<6 {
            try store.write { txn in
                let tree = try #require(try txn.tree(named: "t", create: .keyed))
                for _ in 0..<400 {
                    let keyLength = Int.random(in: 1...longestKey, using: &generator)
                    let key = (0..<keyLength).map { _ in UInt8.random(in: 0...255, using: &generator) }
                    let valueLength = [0, 10, 200, 3_000, 9_000].randomElement(using: &generator)!
                    let value = [UInt8](repeating: UInt8(round), count: valueLength)
                    try txn.put(key, value, in: tree)
                    expected[key] = value
                }
                // Deletes shrink pages below the merge threshold, so siblings merge.
                for key in expected.keys.sorted(by: { $0.lexicographicallyPrecedes($1) }).prefix(150) {
                    #expect(try txn.delete(key, in: tree))
                    expected[key] = nil
                }
                let list = try #require(try txn.subtree(forKey: [UInt8]("list"), in: tree, create: .list))
                for index in 0..<50 { try txn.append(key(round * 50 + index), to: list) }
            }
            // A small commit too, which goes through the commit log.
            try store.write { txn in
                let tree = try #require(try txn.tree(named: "small", create: .keyed))
                try txn.put(key(round), [UInt8]("small \(round)"), in: tree)
            }
        }
        return expected
    }

    @Test func theLayoutNeverWritesIntoTheReservedTail() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("tail.strata")
        var expected: [[UInt8]: [UInt8]] = [:]
        do {
            let store = try Store.open(path: path, options: options())
            #expect(store.maxKeySize == PageGeometry(pageSize: Self.pageSize, reservedTail: Self.tail).maxKeySize)
            #expect(store.maxKeySize < PageGeometry(pageSize: Self.pageSize).maxKeySize)
            expected = try fill(store)
        }
        // A fresh process's view: the file alone says how its pages are laid out.
        let store = try Store.open(path: path, options: StoreOptions(pageSize: Self.pageSize))
        let snapshot = try store.read()
        let tree = try #require(try snapshot.tree(named: "t"))
        var found: [[UInt8]: [UInt8]] = [:]
        for (key, value) in try tree.entries() where key != [UInt8]("list") { found[key] = value }
        #expect(found == expected)
        #expect(try tree.subtree(forKey: [UInt8]("list"))?.count == 300)
        let report = try store.verify()
        #expect(report.problems.isEmpty, "\(report)")

        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(bytes.count >= 100 * Self.pageSize)
        var dirtyTails: [Int] = []
        for page in 0..<(bytes.count / Self.pageSize) {
            let end = (page + 1) * Self.pageSize
            if bytes[(end - Self.tail)..<end].contains(where: { $0 != 0 }) { dirtyTails.append(page) }
        }
        #expect(dirtyTails.isEmpty, "pages with bytes in their reserved tail: \(dirtyTails.prefix(20))")
    }

    @Test func aPlainFileKeepsZeroWhereTheTailIsRecorded() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("plain.strata")
        do {
            let store = try Store.open(path: path, options: StoreOptions(pageSize: Self.pageSize))
            try incrementCounter(store)
        }
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        for slot in 0..<2 {
            let offset = slot * Self.pageSize + Meta.reservedTailOffset
            #expect(bytes[offset..<offset + 4].allSatisfy { $0 == 0 })
        }
        #expect(try Store.open(path: path).shared.geometry == PageGeometry(pageSize: Self.pageSize))
    }
}

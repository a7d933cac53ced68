import StrataTestSupport
import Testing

@testable import StrataStorage

@Suite("Tree segments and the segment cache")
struct TreeSegmentTests {
    private func value(_ k: Int, _ generation: Int) -> [UInt8] {
        Array("v\(k)-\(generation)-".utf8) + [UInt8](repeating: UInt8(k & 0xFF), count: k % 40)
    }

    /// Every (key, value) of every segment, in order, with the segments' identities and counts.
    private func segments(_ view: TreeView) throws -> (
        entries: [([UInt8], [UInt8])], identities: [TreeSegment.Identity], counts: [Int]
    ) {
        var entries: [([UInt8], [UInt8])] = []
        var identities: [TreeSegment.Identity] = []
        var counts: [Int] = []
        try view.forEachSegment { segment in
            identities.append(segment.identity)
            counts.append(segment.count)
            var expected = 0
            try segment.forEachStableEntry { position, key, value in
                #expect(position == expected)
                expected += 1
                entries.append((Array(key), Array(value.bytes)))
            }
            return true
        }
        return (entries, identities, counts)
    }

    @Test func segmentsCoverTheTreeInOrderAndOnlyModifiedOnesChangeIdentity() throws {
        let store = try Store.inMemory(options: testOptions())
        let total = 20_000
        try store.write { txn in
            let tree = try #require(try txn.tree(named: "t", create: .keyed))
            for k in 0..<total { try txn.put(key(k), value(k, 0), in: tree) }
        }
        let first = try store.read()
        let before = try segments(try #require(try first.tree(named: "t")))
        #expect(before.identities.count > 3)
        #expect(before.counts.reduce(0, +) == total)
        #expect(before.entries.map(\.0) == (0..<total).map { key($0) })
        #expect(before.entries.map(\.1) == (0..<total).map { value($0, 0) })
        #expect(Set(before.identities).count == before.identities.count)

        // Change one key: exactly the segment holding it gets a new identity.
        let changed = total / 2
        try store.write { txn in
            try txn.put(key(changed), value(changed, 1), in: try #require(try txn.tree(named: "t")))
        }
        let second = try store.read()
        let after = try segments(try #require(try second.tree(named: "t")))
        #expect(after.entries.count == total)
        #expect(after.entries[changed].1 == value(changed, 1))
        #expect(after.identities.count == before.identities.count)
        let differing = zip(before.identities, after.identities).enumerated().filter { $0.element.0 != $0.element.1 }
        #expect(differing.count == 1)
        if let index = differing.first?.offset {
            let start = before.counts[..<index].reduce(0, +)
            #expect((start..<start + before.counts[index]).contains(changed))
        }
        // The older version still reads its own segments, unchanged.
        let again = try segments(try #require(try first.tree(named: "t")))
        #expect(again.identities == before.identities)
        #expect(again.entries.map(\.1) == before.entries.map(\.1))
    }

    /// Starting from a key skips the segments before the one that holds it (or would): the segments seen are a
    /// suffix of all of them, and the first one's key range covers the key.
    @Test func segmentsFromAKeyStartAtTheSegmentHoldingIt() throws {
        let store = try Store.inMemory(options: testOptions())
        try store.write { txn in
            let tree = try #require(try txn.tree(named: "t", create: .keyed))
            for k in stride(from: 0, to: 40_000, by: 2) { try txn.put(key(k), value(k, 0), in: tree) }
        }
        let view = try #require(try store.read().tree(named: "t"))
        let all = try segments(view)
        #expect(all.identities.count > 3)
        var firstKeys: [[UInt8]] = []
        var offset = 0
        for count in all.counts {
            firstKeys.append(all.entries[offset].0)
            offset += count
        }
        for probe in [-1, 0, 1, 777, 10_001, 20_000, 39_998, 39_999, 50_000] {
            let probeKey = probe < 0 ? [UInt8]() : key(probe)
            var seen: [TreeSegment.Identity] = []
            try probeKey.withUnsafeBytes { from in
                try view.forEachSegment(from: from) { segment in
                    seen.append(segment.identity)
                    return true
                }
            }
            // The segment that would hold the key: the last whose first key is not after it (or the first one).
            let holder = max(0, (firstKeys.lastIndex { !probeKey.lexicographicallyPrecedes($0) } ?? 0))
            #expect(seen == Array(all.identities[holder...]), "from \(probe)")
        }
        // Stopping early stops the walk.
        var calls = 0
        try key(0).withUnsafeBytes { from in
            try view.forEachSegment(from: from) { _ in
                calls += 1
                return false
            }
        }
        #expect(calls == 1)
    }

    @Test func valuesAtPositionsMatchTheSegmentsEntries() throws {
        let store = try Store.inMemory(options: testOptions())
        try store.write { txn in
            let tree = try #require(try txn.tree(named: "t", create: .keyed))
            for k in 0..<5_000 { try txn.put(key(k), value(k, 0), in: tree) }
        }
        let snapshot = try store.read()
        let view = try #require(try snapshot.tree(named: "t"))
        var generator = SeededGenerator(seed: 7)
        var start = 0
        try view.forEachSegment { segment in
            let positions = (0..<segment.count).filter { _ in generator.next() % 5 == 0 }
            let values = try segment.stableValues(at: positions).map { Array($0.bytes) }
            #expect(values == positions.map { value(start + $0, 0) })
            #expect(throws: StorageError.self) { try segment.stableValues(at: [segment.count]) }
            start += segment.count
            return true
        }
        #expect(start == 5_000)
        // A one-leaf tree is one segment.
        try store.write { txn in
            let small = try #require(try txn.tree(named: "small", create: .keyed))
            try txn.put(key(1), [1], in: small)
        }
        let small = try #require(try store.read().tree(named: "small"))
        var count = 0
        try small.forEachSegment { segment in
            count += 1
            #expect(segment.count == 1)
            let values = try segment.stableValues(at: [0]).map { Array($0.bytes) }
            #expect(values == [[1]])
            return true
        }
        #expect(count == 1)
    }

    @Test func cacheKeepsWithinItsBudgetDroppingTheLeastRecentlyUsed() {
        let cache = SegmentCache(budget: 1_000)
        func key(_ page: UInt32) -> SegmentCache.Key {
            SegmentCache.Key(segment: TreeSegment.Identity(page: page, version: 1), tag: 0)
        }
        for page in 0..<5 { cache.insert(Int(page), cost: 200, for: key(UInt32(page))) }
        #expect(cache.bytes == 1_000)
        // Use page 0 so that it is the most recent; the next insert evicts down to 750 bytes, oldest first.
        #expect(cache.value(for: key(0)) as? Int == 0)
        cache.insert(5, cost: 200, for: key(5))
        #expect(cache.bytes <= 1_000)
        #expect(cache.value(for: key(5)) as? Int == 5)
        #expect(cache.value(for: key(0)) as? Int == 0)
        #expect(cache.value(for: key(1)) == nil)
        #expect(cache.value(for: key(2)) == nil)
        // Too large for the whole budget: not kept, nothing evicted for it.
        let count = cache.count
        cache.insert(6, cost: 5_000, for: key(6))
        #expect(cache.value(for: key(6)) == nil)
        #expect(cache.count == count)
        // Replacing an entry replaces its cost.
        cache.insert(50, cost: 10, for: key(5))
        #expect(cache.value(for: key(5)) as? Int == 50)
        cache.removeAll()
        #expect(cache.bytes == 0 && cache.count == 0)
    }
}

import Testing

@testable import StrataStorage

/// A write transaction remembers the leaf its last put left dirty (`LastLeaf`): reads and same-size puts of keys
/// in it skip the descent. These interleave such reads and puts with everything that must retire the memo
/// (splits, merges, other trees, resized values, nested trees) and compare every step with a plain dictionary.
@Suite("Last-leaf memo of a write transaction")
struct LastLeafTests {
    /// A value of `size` bytes that tells `seed` apart.
    private func value(_ seed: Int, size: Int = 24) -> [UInt8] {
        (0..<size).map { UInt8(truncatingIfNeeded: seed &* 31 &+ $0) }
    }

    @Test func readModifyWriteInKeyOrderMatchesADictionary() throws {
        let store = try Store.inMemory(options: testOptions(pageSize: 1024))
        var model: [[UInt8]: [UInt8]] = [:]
        try store.write { txn in
            let tree = try #require(try txn.tree(named: "t", create: .keyed))
            for k in 0..<2_000 {
                try txn.put(key(k), value(k), in: tree)
                model[key(k)] = value(k)
            }
        }
        try store.write { txn in
            let tree = try #require(try txn.tree(named: "t"))
            for round in 1...3 {
                for k in 0..<2_000 {
                    // The read finds the row in the leaf the previous put left; the put rewrites it in place.
                    let stored = try #require(try txn.stableValue(forKey: key(k), in: tree))
                    #expect(Array(stored.bytes) == model[key(k)])
                    try txn.put(key(k), value(k &* 7 &+ round), in: tree)
                    model[key(k)] = value(k &* 7 &+ round)
                    #expect(try txn.get(key(k), in: tree) == model[key(k)])
                }
            }
        }
        let view = try store.read().tree(named: "t")
        #expect(try contents(of: view) == model)
    }

    @Test func splitsMergesResizesAndOtherTreesBetweenRewritesKeepEveryValue() throws {
        let store = try Store.inMemory(options: testOptions(pageSize: 1024))
        var model: [[UInt8]: [UInt8]] = [:]
        var other: [[UInt8]: [UInt8]] = [:]
        var rng = UInt64(7)
        func next(_ bound: Int) -> Int {
            rng = rng &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((rng >> 33) % UInt64(bound))
        }
        try store.write { txn in
            let tree = try #require(try txn.tree(named: "t", create: .keyed))
            let second = try #require(try txn.tree(named: "u", create: .keyed))
            for step in 0..<6_000 {
                let k = next(600)
                switch next(10) {
                case 0...3:  // a same-size rewrite, in place when the memo holds the key
                    try txn.put(key(k), value(step), in: tree)
                    model[key(k)] = value(step)
                case 4:  // a resized value: moved within the leaf, or a split
                    try txn.put(key(k), value(step, size: 8 + next(120)), in: tree)
                    model[key(k)] = try txn.get(key(k), in: tree)
                case 5:  // a delete: may merge leaves
                    #expect(try txn.delete(key(k), in: tree) == (model.removeValue(forKey: key(k)) != nil))
                case 6:  // another tree, with keys equal to this one's
                    try txn.put(key(k), value(-step), in: second)
                    other[key(k)] = value(-step)
                default:
                    let stored = try txn.stableValue(forKey: key(k), in: tree).map { Array($0.bytes) }
                    #expect(stored == model[key(k)])
                }
            }
        }
        let snapshot = try store.read()
        #expect(try contents(of: snapshot.tree(named: "t")) == model)
        #expect(try contents(of: snapshot.tree(named: "u")) == other)
    }

    @Test func aRewriteInPlaceMovesACursorToTheNewValue() throws {
        let store = try Store.inMemory(options: testOptions(pageSize: 1024))
        try store.write { txn in
            let tree = try #require(try txn.tree(named: "t", create: .keyed))
            for k in 0..<100 { try txn.put(key(k), value(k), in: tree) }
            var cursor = try txn.makeCursor(for: tree)
            #expect(try cursor.seek(atOrAfter: key(50)))
            #expect(try cursor.value() == value(50))
            try txn.put(key(50), value(500), in: tree)
            #expect(try cursor.value() == value(500))
        }
    }

    @Test func aNestedTreeUnderTheKeyIsReplacedAsBeforeNotPatched() throws {
        let store = try Store.inMemory(options: testOptions(pageSize: 1024))
        try store.write { txn in
            let tree = try #require(try txn.tree(named: "t", create: .keyed))
            for k in 0..<10 where k != 5 { try txn.put(key(k), value(k), in: tree) }
            let nested = try #require(try txn.subtree(forKey: key(5), in: tree, create: .keyed))
            try txn.put(key(1), value(1), in: nested)
            try txn.put(key(4), value(44), in: tree)
            try txn.put(key(5), value(55), in: tree)
            #expect(try txn.get(key(5), in: tree) == value(55))
        }
        let view = try store.read().tree(named: "t")
        #expect(try view?.get(key(5)) == value(55))
    }
}

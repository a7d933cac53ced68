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

    /// New keys put in or next to the remembered leaf are inserted there without a descent when they fall between
    /// two of its keys (or past the last key of the rightmost leaf); anything else descends. Runs of neighbouring
    /// keys, appends, random keys, `insertIfAbsent`, resized values and deletes (splits and merges) are mixed, and
    /// every step is checked against a dictionary; a reader pinned before the write must see none of it, the counts
    /// along the paths must add up (`rank`, `element(at:)`, `verify`) and a failed write must leave nothing behind.
    @Test func newKeysInTheRememberedLeafLandInTheRightLeafAndOrder() throws {
        let store = try Store.inMemory(options: testOptions(pageSize: 1024))
        var model: [[UInt8]: [UInt8]] = [:]
        try store.write { txn in
            let tree = try #require(try txn.tree(named: "t", create: .keyed))
            for k in stride(from: 0, to: 40_000, by: 40) {
                try txn.put(key(k), value(k), in: tree)
                model[key(k)] = value(k)
            }
        }
        let pinned = try store.read()
        let before = model
        var rng = UInt64(11)
        func next(_ bound: Int) -> Int {
            rng = rng &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((rng >> 33) % UInt64(bound))
        }
        try store.write { txn in
            let tree = try #require(try txn.tree(named: "t"))
            var cursor = 0
            for step in 0..<8_000 {
                switch next(16) {
                case 0...6:  // the key after the last one put: usually inside the same leaf
                    cursor += 1 + next(3)
                    try txn.put(key(cursor), value(step), in: tree)
                    model[key(cursor)] = value(step)
                case 7:  // a random key: usually another leaf
                    cursor = next(41_000)
                    let stored = value(step, size: 8 + next(40))
                    try txn.put(key(cursor), stored, in: tree)
                    model[key(cursor)] = stored
                case 8:  // past the last key of the tree
                    let last = 41_000 + step
                    try txn.put(key(last), value(step), in: tree)
                    model[key(last)] = value(step)
                case 9, 10:  // unique inserts next to the last key
                    cursor += 1
                    let inserted = try txn.insertIfAbsent(key(cursor), value(-step), in: tree)
                    #expect(inserted == (model[key(cursor)] == nil))
                    if inserted { model[key(cursor)] = value(-step) }
                case 11:  // a resized value
                    let resized = value(step, size: 4 + next(90))
                    try txn.put(key(cursor), resized, in: tree)
                    model[key(cursor)] = resized
                case 12:  // deletes: merges
                    for offset in 0..<4 {
                        let victim = key(cursor - offset)
                        #expect(try txn.delete(victim, in: tree) == (model.removeValue(forKey: victim) != nil))
                    }
                default:
                    let probe = key(cursor + next(5) - 2)
                    #expect(try txn.get(probe, in: tree) == model[probe])
                }
            }
            #expect(try txn.count(in: tree) == model.count)
            let sorted = model.keys.sorted { $0.lexicographicallyPrecedes($1) }
            for position in stride(from: 0, to: sorted.count, by: 97) {
                #expect(try txn.element(at: position, in: tree).key == sorted[position])
                #expect(try txn.rank(of: sorted[position], in: tree) == (position, true))
            }
        }
        #expect(try contents(of: pinned.tree(named: "t")) == before)
        let view = try store.read().tree(named: "t")
        #expect(view?.count == model.count)
        #expect(try contents(of: view) == model)
        let report = try store.verify()
        #expect(report.problems.isEmpty, "\(report)")

        struct Abandon: Error {}
        #expect(throws: Abandon.self) {
            try store.write { txn in
                let tree = try #require(try txn.tree(named: "t"))
                for k in 0..<2_000 { try txn.put(key(50_000 + k * 3), value(k), in: tree) }
                for k in 0..<2_000 { try txn.put(key(k * 7 + 1), value(k), in: tree) }
                throw Abandon()
            }
        }
        #expect(try contents(of: store.read().tree(named: "t")) == model)
    }

    /// Map-like string keys set in numeric order ("key0", "key1", … "key10" sorts before "key2"): each new key
    /// mostly goes right after the one put before it, in the same leaf, between existing keys.
    @Test func stringKeysInNumericOrderMatchADictionary() throws {
        let store = try Store.inMemory(options: testOptions(pageSize: 1024))
        var model: [[UInt8]: [UInt8]] = [:]
        try store.write { txn in
            let tree = try #require(try txn.tree(named: "t", create: .keyed))
            for k in 0..<6_000 {
                let name = [UInt8]("key\(k)")
                try txn.put(name, value(k, size: 9), in: tree)
                model[name] = value(k, size: 9)
            }
            #expect(try txn.count(in: tree) == model.count)
        }
        #expect(try contents(of: store.read().tree(named: "t")) == model)
        #expect(try store.verify().problems.isEmpty)
    }

    /// Two trees written in turn (an object insert's rows and primary-key trees) each keep their own memo. Mixed in:
    /// random keys, deletes that merge and free pages, nested trees created, filled and removed (their pages freed
    /// and reused by the other trees), a reader pinned before the write; every step is checked against dictionaries.
    @Test func twoTreesWrittenInTurnKeepTheirOwnMemos() throws {
        let store = try Store.inMemory(options: testOptions(pageSize: 1024))
        try store.write { txn in
            let rows = try #require(try txn.tree(named: "rows", create: .keyed))
            for k in 0..<500 { try txn.put(key(k * 10), value(k), in: rows) }
        }
        let pinned = try store.read()
        let pinnedRows = try contents(of: pinned.tree(named: "rows"))
        var rows: [[UInt8]: [UInt8]] = [:]
        var keys: [[UInt8]: [UInt8]] = [:]
        for (key, value) in pinnedRows { rows[key] = value }
        var rng = UInt64(3)
        func next(_ bound: Int) -> Int {
            rng = rng &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((rng >> 33) % UInt64(bound))
        }
        try store.write { txn in
            let rowTree = try #require(try txn.tree(named: "rows"))
            let keyTree = try #require(try txn.tree(named: "keys", create: .keyed))
            var nextRow = 5_000
            for step in 0..<6_000 {
                switch next(12) {
                case 0...5:  // an insert: a new row, then its unique key
                    nextRow += 1
                    try txn.put(key(nextRow), value(step), in: rowTree)
                    rows[key(nextRow)] = value(step)
                    let unique = key(nextRow * 3)
                    #expect(try txn.insertIfAbsent(unique, key(nextRow), in: keyTree) == (keys[unique] == nil))
                    if keys[unique] == nil { keys[unique] = key(nextRow) }
                case 6:  // rows between the old ones
                    let k = next(5_000)
                    try txn.put(key(k), value(-step), in: rowTree)
                    rows[key(k)] = value(-step)
                case 7:  // deletes: merges and freed pages
                    for _ in 0..<3 {
                        let victim = key(next(nextRow + 1))
                        #expect(try txn.delete(victim, in: rowTree) == (rows.removeValue(forKey: victim) != nil))
                    }
                case 8:  // a nested tree under a key of the keys tree, filled then removed
                    let owner = key(1_000_000 + step)
                    let nested = try #require(try txn.subtree(forKey: owner, in: keyTree, create: .keyed))
                    for k in 0..<60 { try txn.put(key(k), value(k, size: 40), in: nested) }
                    #expect(try txn.delete(owner, in: keyTree))
                case 9:  // an existing unique key: left as it is
                    if let existing = keys.keys.first {
                        #expect(try !txn.insertIfAbsent(existing, value(step), in: keyTree))
                    }
                default:
                    let probe = key(nextRow - next(20))
                    #expect(try txn.get(probe, in: rowTree) == rows[probe])
                }
            }
            #expect(try txn.count(in: rowTree) == rows.count)
            #expect(try txn.count(in: keyTree) == keys.count)
        }
        #expect(try contents(of: pinned.tree(named: "rows")) == pinnedRows)
        #expect(try pinned.tree(named: "keys") == nil)
        let snapshot = try store.read()
        #expect(try contents(of: snapshot.tree(named: "rows")) == rows)
        #expect(try contents(of: snapshot.tree(named: "keys")) == keys)
        let report = try store.verify()
        #expect(report.problems.isEmpty, "\(report)")
    }

    /// Freeing a page retires every memo: a nested tree's leaf, freed with its tree, is reused here as another tree's
    /// new root, and the memo of the removed tree (which names that page as its root) must not take the next put.
    @Test func aFreedRootReusedByAnotherTreeIsNotTakenForTheRemovedTree() throws {
        let store = try Store.inMemory(options: testOptions(pageSize: 1024))
        var big: [[UInt8]: [UInt8]] = [:]
        try store.write { txn in
            let bigTree = try #require(try txn.tree(named: "big", create: .keyed))
            let owners = try #require(try txn.tree(named: "owners", create: .keyed))
            // 24 entries of 40 bytes with their slots fill a 1 KiB root leaf; the 25th splits it.
            for k in 0..<24 {
                try txn.put(key(k), value(k), in: bigTree)
                big[key(k)] = value(k)
            }
            try txn.put(key(100), value(100), in: owners)
            for owner in 0..<2 {
                let nested = try #require(try txn.subtree(forKey: key(owner), in: owners, create: .keyed))
                try txn.put(key(7), value(owner), in: nested)
            }
            // Each nested tree is one leaf page, reused last freed first: the split below takes the first tree's
            // page for its new leaf and the second's (whose memo is the one still kept) for the new root.
            #expect(try txn.delete(key(1), in: owners))
            #expect(try txn.delete(key(0), in: owners))
            for k in 24..<200 {
                try txn.put(key(k), value(k), in: bigTree)
                big[key(k)] = value(k)
            }
        }
        #expect(try contents(of: store.read().tree(named: "big")) == big)
        let report = try store.verify()
        #expect(report.problems.isEmpty, "\(report)")
    }

    /// Appends to a list after an append to it go into its last leaf without a descent. Mixed in: inserts, removes
    /// and replacements anywhere (splits and merges), appends to a second list and puts into a keyed tree in
    /// between, a reader pinned before the write; every step is checked against arrays.
    @Test func listAppendsIntoTheRememberedLastLeafMatchAnArray() throws {
        let store = try Store.inMemory(options: testOptions(pageSize: 1024))
        try store.write { txn in
            let list = try #require(try txn.tree(named: "list", create: .list))
            for k in 0..<300 { try txn.append(value(k, size: 12), to: list) }
        }
        let pinned = try store.read()
        let pinnedList = try #require(try pinned.tree(named: "list")).entries().map(\.value)
        var model = pinnedList
        var second: [[UInt8]] = []
        var rng = UInt64(5)
        func next(_ bound: Int) -> Int {
            rng = rng &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((rng >> 33) % UInt64(bound))
        }
        try store.write { txn in
            let list = try #require(try txn.tree(named: "list"))
            let other = try #require(try txn.tree(named: "other", create: .list))
            let keyed = try #require(try txn.tree(named: "keyed", create: .keyed))
            for step in 0..<8_000 {
                let element = value(step, size: 4 + next(30))
                switch next(20) {
                case 0...11:
                    try txn.append(element, to: list)
                    model.append(element)
                case 12:
                    let index = next(model.count + 1)
                    try txn.insert(element, at: index, in: list)
                    model.insert(element, at: index)
                case 13, 14:
                    let index = next(model.count)
                    try txn.remove(at: index, from: list)
                    model.remove(at: index)
                case 15:
                    let index = next(model.count)
                    try txn.replace(at: index, with: element, in: list)
                    model[index] = element
                case 16, 17:
                    try txn.append(element, to: other)
                    second.append(element)
                case 18:
                    try txn.put(key(next(500)), element, in: keyed)
                default:
                    let index = next(model.count)
                    #expect(try txn.value(at: index, in: list) == model[index])
                }
            }
            #expect(try txn.count(in: list) == model.count)
            for index in stride(from: 0, to: model.count, by: 41) {
                #expect(try txn.value(at: index, in: list) == model[index])
            }
        }
        #expect(try #require(try pinned.tree(named: "list")).entries().map(\.value) == pinnedList)
        let snapshot = try store.read()
        #expect(try #require(try snapshot.tree(named: "list")).entries().map(\.value) == model)
        #expect(try #require(try snapshot.tree(named: "other")).entries().map(\.value) == second)
        let report = try store.verify()
        #expect(report.problems.isEmpty, "\(report)")
    }
}

import Testing

@testable import StrataStorage

@Suite("B+tree operations")
struct BTreeTests {
    @Test func putGetDeleteInOneTransaction() throws {
        let store = try Store.inMemory(options: testOptions())
        try store.write { txn in
            let tree = try #require(try txn.tree(named: "t", create: .keyed))
            try txn.put([UInt8]("a"), [UInt8]("1"), in: tree)
            try txn.put([UInt8]("b"), [UInt8]("2"), in: tree)
            #expect(try txn.get([UInt8]("a"), in: tree) == [UInt8]("1"))
            try txn.put([UInt8]("a"), [UInt8]("one"), in: tree)
            #expect(try txn.get([UInt8]("a"), in: tree) == [UInt8]("one"))
            #expect(try txn.delete([UInt8]("b"), in: tree))
            #expect(try !txn.delete([UInt8]("b"), in: tree))
            #expect(try txn.count(in: tree) == 1)
        }
        let snapshot = try store.read()
        let view = try #require(try snapshot.tree(named: "t"))
        #expect(try view.get([UInt8]("a")) == [UInt8]("one"))
        #expect(try view.get([UInt8]("b")) == nil)
        #expect(view.count == 1)
        #expect(snapshot.version == 1)
    }

    /// `forEachKey` hands every key of a write transaction's tree in order (its own uncommitted changes included),
    /// stops when asked, and refuses a change made while it walks instead of reading a tree that moved under it.
    @Test func forEachKeyWalksTheTransactionsTreeAndRefusesChangesMeanwhile() throws {
        let store = try Store.inMemory(options: testOptions(pageSize: 1024))
        try store.write { txn in
            let tree = try #require(try txn.tree(named: "t", create: .keyed))
            for k in stride(from: 0, to: 3_000, by: 2) {
                try txn.put(key(k), [UInt8](repeating: 1, count: 30), in: tree)
            }
            #expect(try txn.delete(key(10), in: tree))
            var seen: [[UInt8]] = []
            try txn.forEachKey(in: tree) { key in
                seen.append(Array(key))
                return true
            }
            #expect(seen == stride(from: 0, to: 3_000, by: 2).filter { $0 != 10 }.map { key($0) })
            var visited = 0
            try txn.forEachKey(in: tree) { _ in
                visited += 1
                return visited < 5
            }
            #expect(visited == 5)
            #expect(throws: StorageError.self) {
                try txn.forEachKey(in: tree) { _ in
                    try txn.put(key(1), [1], in: tree)
                    return true
                }
            }
        }
    }

    @Test func renamingATreeKeepsItsContentsSequenceAndPages() throws {
        let store = try Store.inMemory(options: testOptions(pageSize: 1024))
        try store.write { txn in
            let tree = try #require(try txn.tree(named: "old", create: .keyed))
            for k in 0..<2_000 { try txn.put(key(k), [UInt8](repeating: 7, count: 40), in: tree) }
            let nested = try #require(try txn.subtree(forKey: key(50_000), in: tree, create: .list))
            try txn.append([UInt8]("n"), to: nested)
            _ = try txn.nextSequence(in: tree)
            _ = try txn.nextSequence(in: tree)
        }
        try store.write { txn in
            let tree = try #require(try txn.tree(named: "old"))
            // A change in the same transaction, in the nested tree too, goes with the rename.
            try txn.put(key(9_999), [UInt8]("late"), in: tree)
            let nested = try #require(try txn.subtree(forKey: key(50_000), in: tree))
            try txn.append([UInt8]("m"), to: nested)
            _ = try txn.tree(named: "existing", create: .keyed)
            #expect(throws: StorageError.self) { try txn.renameTree(named: "old", to: "existing") }
            #expect(try txn.renameTree(named: "old", to: "new"))
            #expect(try !txn.renameTree(named: "old", to: "other"))
            #expect(try txn.tree(named: "old") == nil)
            let renamed = try #require(try txn.tree(named: "new"))
            #expect(try txn.nextSequence(in: renamed) == 3)
        }
        let snapshot = try store.read()
        #expect(try snapshot.tree(named: "old") == nil)
        let view = try #require(try snapshot.tree(named: "new"))
        #expect(view.count == 2_002)
        #expect(try view.get(key(9_999)) == [UInt8]("late"))
        #expect(try view.subtree(forKey: key(50_000))?.count == 2)
        let report = try store.verify()
        #expect(report.problems.isEmpty, "\(report)")
    }

    /// Scattered deletes that leave most nodes far below a quarter full merge them: the tree gives its pages back
    /// instead of keeping a leaf per survivor (the merge check stops early for nodes that are well filled, and
    /// must still find the ones that are not).
    @Test func scatteredDeletesMergeNodesThatFallBelowAQuarter() throws {
        let store = try Store.inMemory(options: testOptions(pageSize: 4096))
        try store.write { txn in
            let tree = try #require(try txn.tree(named: "t", create: .keyed))
            for k in 0..<20_000 { try txn.put(key(k), [UInt8](repeating: 3, count: 100), in: tree) }
        }
        let full = try store.verify()
        var generator = SeededGenerator(seed: 5)
        let victims = (0..<20_000).filter { $0 % 20 != 0 }.shuffled(using: &generator)
        try store.write { txn in
            let tree = try #require(try txn.tree(named: "t"))
            for k in victims { #expect(try txn.delete(key(k), in: tree)) }
        }
        let thinned = try store.verify()
        #expect(thinned.isValid, "\(thinned)")
        // A twentieth of the entries are left; without merges nearly every leaf would stay, holding one or two.
        #expect(thinned.reachablePages * 4 < full.reachablePages, "\(full.reachablePages) → \(thinned.reachablePages)")
        let view = try #require(try store.read().tree(named: "t"))
        #expect(view.count == 1_000)
        #expect(try view.get(key(20)) == [UInt8](repeating: 3, count: 100) && view.get(key(21)) == nil)
    }

    /// A delete follows the path its read-only search recorded: deletes at a leaf's first, middle and last slots of a
    /// three-level tree, between puts that split and deletes that merge the same leaves in one write, leave exactly
    /// the model's keys.
    @Test func deletesFollowTheirRecordedPathBetweenSplitsAndMerges() throws {
        let store = try Store.inMemory(options: testOptions(pageSize: 1024))
        var model: [Int: [UInt8]] = [:]
        try store.write { txn in
            let tree = try #require(try txn.tree(named: "t", create: .keyed))
            for k in stride(from: 0, to: 8_000, by: 2) {
                let value = [UInt8](repeating: UInt8(k & 0xFF), count: 40)
                try txn.put(key(k), value, in: tree)
                model[k] = value
            }
        }
        var generator = SeededGenerator(seed: 9)
        try store.write { txn in
            let tree = try #require(try txn.tree(named: "t"))
            for round in 0..<6_000 {
                let k = Int.random(in: 0..<8_000, using: &generator)
                if round % 3 == 0 {
                    let value = [UInt8](
                        repeating: UInt8(round & 0xFF), count: Int.random(in: 1..<90, using: &generator))
                    try txn.put(key(k), value, in: tree)
                    model[k] = value
                } else {
                    #expect(try txn.delete(key(k), in: tree) == (model.removeValue(forKey: k) != nil))
                }
            }
            #expect(try txn.count(in: tree) == model.count)
        }
        #expect(try store.verify().isValid)
        #expect(
            try contents(of: try store.read().tree(named: "t"))
                == Dictionary(uniqueKeysWithValues: model.map { (key($0), $1) }))
    }

    @Test(arguments: [1024, 4096])
    func manyKeysStayOrderedAndCounted(pageSize: Int) throws {
        let store = try Store.inMemory(options: testOptions(pageSize: pageSize))
        var generator = SeededGenerator(seed: 42)
        var model: [Int: [UInt8]] = [:]
        try store.write { txn in
            let tree = try #require(try txn.tree(named: "t", create: .keyed))
            for _ in 0..<20_000 {
                let k = Int.random(in: 0..<50_000, using: &generator)
                let value = [UInt8](repeating: UInt8(k & 0xFF), count: Int.random(in: 0..<120, using: &generator))
                try txn.put(key(k), value, in: tree)
                model[k] = value
            }
            #expect(try txn.count(in: tree) == model.count)
        }
        let view = try #require(try store.read().tree(named: "t"))
        #expect(view.count == model.count)
        let sortedKeys = model.keys.sorted()
        var index = 0
        try view.scan { k, v in
            #expect(k == key(sortedKeys[index]))
            #expect(v == model[sortedKeys[index]])
            index += 1
            return true
        }
        #expect(index == model.count)
        // Positional access and rank agree with the sorted order.
        for probe in stride(from: 0, to: sortedKeys.count, by: 97) {
            #expect(try view.element(at: probe).key == key(sortedKeys[probe]))
            #expect(try view.rank(of: key(sortedKeys[probe])) == (probe, true))
        }
        // Reverse iteration.
        var reversed: [[UInt8]] = []
        try view.scan(reverse: true) { k, _ in
            reversed.append(k)
            return true
        }
        #expect(reversed == sortedKeys.reversed().map(key))

        // Delete everything in random order; the tree shrinks back to empty.
        try store.write { txn in
            let tree = try #require(try txn.tree(named: "t"))
            var keys = Array(model.keys)
            keys.shuffle(using: &generator)
            for (offset, k) in keys.enumerated() {
                #expect(try txn.delete(key(k), in: tree))
                if offset % 1000 == 0 { #expect(try txn.get(key(keys[keys.count - 1]), in: tree) != nil) }
            }
            #expect(try txn.count(in: tree) == 0)
        }
        let empty = try #require(try store.read().tree(named: "t"))
        #expect(empty.count == 0)
        #expect(try empty.entries().isEmpty)
    }

    @Test func seeksAndRangeScans() throws {
        let store = try Store.inMemory(options: testOptions())
        try store.write { txn in
            let tree = try #require(try txn.tree(named: "t", create: .keyed))
            for k in stride(from: 0, to: 10_000, by: 10) { try txn.put(key(k), key(k * 2), in: tree) }
        }
        let view = try #require(try store.read().tree(named: "t"))
        var cursor = view.makeCursor()
        #expect(try cursor.seek(atOrAfter: key(55)))
        #expect(try cursor.key() == key(60))
        #expect(try cursor.previous())
        #expect(try cursor.key() == key(50))
        #expect(try cursor.seek(atOrBefore: key(55)))
        #expect(try cursor.key() == key(50))
        #expect(try cursor.seek(atOrBefore: key(50)))
        #expect(try cursor.key() == key(50))
        #expect(try !cursor.seek(atOrAfter: key(10_000)))
        #expect(try !cursor.seek(atOrBefore: [UInt8]()))
        #expect(try cursor.seek(atOrBefore: key(99_999)))
        #expect(try cursor.key() == key(9_990))
        #expect(try !cursor.next())
        // withEntry hands out key and value together, in place.
        #expect(try cursor.seek(atOrAfter: key(20)))
        #expect(try cursor.withEntry { k, v in (Array(k), Array(v)) } == (key(20), key(40)))
        #expect(try cursor.next())
        #expect(try cursor.withEntry { k, _ in Array(k) } == key(30))
        // advance steps from the start (or on) and hands out each key with its value as a StableValue.
        var stepped: [([UInt8], [UInt8])] = []
        var fromStart = true
        while let entry = try cursor.advance(fromStart: fromStart, { k, v in (Array(k), Array(v.bytes)) }) {
            stepped.append(entry)
            fromStart = false
        }
        let steppedAll = stepped.map(\.0) == stride(from: 0, to: 10_000, by: 10).map(key)
        #expect(steppedAll && stepped.allSatisfy { $0.1.count == 8 } && stepped[7].1 == key(140))
        #expect(try cursor.advance(fromStart: true) { k, _ in Array(k) } == key(0))
        // Forward range [1000, 2000).
        var seen: [[UInt8]] = []
        try view.scan(from: key(1000)) { k, _ in
            guard k.lexicographicallyPrecedes(key(2000)) else { return false }
            seen.append(k)
            return true
        }
        #expect(seen == stride(from: 1000, to: 2000, by: 10).map(key))
    }

    @Test func listPositionalOperationsMatchArray() throws {
        let store = try Store.inMemory(options: testOptions())
        var generator = SeededGenerator(seed: 7)
        var model: [[UInt8]] = []
        try store.write { txn in
            let list = try #require(try txn.tree(named: "list", create: .list))
            for step in 0..<6_000 {
                let roll = Int.random(in: 0..<10, using: &generator)
                let value = key(step) + [UInt8](repeating: 7, count: Int.random(in: 0..<40, using: &generator))
                if roll < 5 || model.isEmpty {
                    let index = Int.random(in: 0...model.count, using: &generator)
                    try txn.insert(value, at: index, in: list)
                    model.insert(value, at: index)
                } else if roll < 8 {
                    let index = Int.random(in: 0..<model.count, using: &generator)
                    try txn.remove(at: index, from: list)
                    model.remove(at: index)
                } else {
                    let index = Int.random(in: 0..<model.count, using: &generator)
                    try txn.replace(at: index, with: value, in: list)
                    model[index] = value
                }
            }
            #expect(try txn.count(in: list) == model.count)
            for index in stride(from: 0, to: model.count, by: 37) {
                #expect(try txn.value(at: index, in: list) == model[index])
            }
        }
        let view = try #require(try store.read().tree(named: "list"))
        #expect(try view.entries().map(\.value) == model)
        #expect(throws: StorageError.indexOutOfRange(index: model.count, count: model.count)) {
            try view.element(at: model.count)
        }
    }

    /// `insertIfAbsent` stores a key only when it is absent, across splits, and reports a present key without
    /// changing its value (inline or overflow) or the tree's count; what it stored commits like a put.
    @Test func insertIfAbsentStoresOnlyMissingKeys() throws {
        let store = try Store.inMemory(options: testOptions(pageSize: 1024))
        let big = [UInt8](repeating: 7, count: 3_000)
        try store.write { txn in
            let tree = try #require(try txn.tree(named: "t", create: .keyed))
            // Scattered order, then every key again: the second pass must find each one.
            for k in 0..<2_000 {
                let scattered = (k &* 7_919) % 2_000
                #expect(try txn.insertIfAbsent(key(scattered), [UInt8](repeating: UInt8(k % 251), count: 20), in: tree))
            }
            for k in 0..<2_000 {
                let scattered = (k &* 7_919) % 2_000
                #expect(try !txn.insertIfAbsent(key(scattered), [UInt8]("other"), in: tree))
                #expect(try txn.get(key(scattered), in: tree) == [UInt8](repeating: UInt8(k % 251), count: 20))
            }
            #expect(try txn.insertIfAbsent(key(5_000), big, in: tree))
            #expect(try !txn.insertIfAbsent(key(5_000), [UInt8]("small"), in: tree))
            #expect(try txn.get(key(5_000), in: tree) == big)
            #expect(try txn.count(in: tree) == 2_001)
        }
        let view = try #require(try store.read().tree(named: "t"))
        #expect(view.count == 2_001)
        for k in 0..<2_000 {
            #expect(try view.get(key((k &* 7_919) % 2_000)) == [UInt8](repeating: UInt8(k % 251), count: 20))
        }
        #expect(try view.get(key(5_000)) == big)
    }

    /// Along the rightmost path a put compares its key with the last one first (appends skip the search): a key
    /// equal to the last replaces it, one below it still lands in order, on every level of a three-level tree.
    @Test func putsAlongTheRightmostPathReplaceAndOrderLikeAnyOther() throws {
        let store = try Store.inMemory(options: testOptions(pageSize: 1024))
        var model: [Int: UInt8] = [:]
        try store.write { txn in
            let tree = try #require(try txn.tree(named: "t", create: .keyed))
            for k in stride(from: 0, to: 12_000, by: 3) {
                try txn.put(key(k), [UInt8(k % 251)], in: tree)
                model[k] = UInt8(k % 251)
                if k % 9 == 0 {
                    try txn.put(key(k), [7], in: tree)  // the last key again
                    model[k] = 7
                }
                if k % 30 == 0 && k > 0 {
                    #expect(try txn.insertIfAbsent(key(k - 1), [9], in: tree))  // below the last key
                    #expect(try !txn.insertIfAbsent(key(k), [9], in: tree))  // the last key
                    model[k - 1] = 9
                }
            }
            #expect(try txn.count(in: tree) == model.count)
        }
        let view = try #require(try store.read().tree(named: "t"))
        let expected = model.keys.sorted().map { (key: key($0), value: [model[$0]!]) }
        let entries = try view.entries()
        #expect(entries.map(\.key) == expected.map(\.key))
        #expect(entries.map(\.value) == expected.map(\.value))
    }

    @Test func appendsFillPagesCompletely() throws {
        let store = try Store.inMemory(options: testOptions(pageSize: 4096))
        try store.write { txn in
            let tree = try #require(try txn.tree(named: "seq", create: .keyed))
            for k in 0..<100_000 { try txn.put(key(k), [UInt8](repeating: 1, count: 8), in: tree) }
        }
        let snapshot = try store.read()
        // 100k entries of 2 + 6 + 8 + 8 bytes: about 170 per 4 KiB page when pages are full, 85 when half full.
        #expect(snapshot.pageCount < 800)
    }

    @Test func overflowValuesRoundTrip() throws {
        let store = try Store.inMemory(options: testOptions())
        let big = (0..<(3 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        try store.write { txn in
            let tree = try #require(try txn.tree(named: "blobs", create: .keyed))
            try txn.put([UInt8]("big"), big, in: tree)
            try txn.put([UInt8]("medium"), [UInt8](repeating: 9, count: 5000), in: tree)
            try txn.put([UInt8]("small"), [UInt8]("x"), in: tree)
        }
        do {
            let view = try #require(try store.read().tree(named: "blobs"))
            #expect(try view.get([UInt8]("big")) == big)
            #expect(try view.withValue(forKey: [UInt8]("big")) { $0.count } == big.count)
            #expect(try view.get([UInt8]("medium")) == [UInt8](repeating: 9, count: 5000))
        }
        // Replacing and deleting overflow values returns their pages (no reader holds old versions here).
        var sizes: [Int] = []
        for round in 0..<6 {
            try store.write { txn in
                let tree = try #require(try txn.tree(named: "blobs"))
                try txn.put([UInt8]("big"), [UInt8](repeating: UInt8(round), count: 3 << 20), in: tree)
            }
            sizes.append(try store.read().pageCount)
        }
        // Each replacement reuses the chain freed by the one before: after the second round the file stops growing.
        #expect(sizes[5] <= sizes[1] + 16, "page counts per round: \(sizes)")
        try store.write { txn in
            let tree = try #require(try txn.tree(named: "blobs"))
            #expect(try txn.delete([UInt8]("big"), in: tree))
        }
        #expect(try store.read().tree(named: "blobs")?.get([UInt8]("big")) == nil)
    }

    @Test func sixteenMegabyteValue() throws {
        let store = try Store.inMemory(options: testOptions(pageSize: 4096))
        let value = (0..<(16 << 20)).map { UInt8(truncatingIfNeeded: $0 >> 3) }
        try store.write { txn in
            try txn.put([UInt8]("v"), value, in: try #require(try txn.tree(named: "t", create: .keyed)))
        }
        #expect(try store.read().tree(named: "t")?.get([UInt8]("v")) == value)
    }

    @Test func nestedTreesPersistThroughParents() throws {
        let store = try Store.inMemory(options: testOptions())
        try store.write { txn in
            let objects = try #require(try txn.tree(named: "objects", create: .keyed))
            for object in 0..<200 {
                try txn.put(key(object), [UInt8]("row"), in: objects)
                let list = try #require(try txn.subtree(forKey: key(object) + [0xFF], in: objects, create: .list))
                for element in 0..<object { try txn.append(key(element), to: list) }
            }
        }
        let view = try #require(try store.read().tree(named: "objects"))
        #expect(view.count == 400)
        for object in [0, 1, 57, 199] {
            let list = try #require(try view.subtree(forKey: key(object) + [0xFF]))
            #expect(list.kind == .list)
            #expect(try list.entries().map(\.value) == (0..<object).map(key))
        }
        // Deleting the parent entry frees the nested tree; modifying a nested tree re-roots it in its parent.
        try store.write { txn in
            let objects = try #require(try txn.tree(named: "objects"))
            let list = try #require(try txn.subtree(forKey: key(57) + [0xFF], in: objects))
            try txn.remove(at: 0, from: list)
            #expect(try txn.delete(key(199) + [0xFF], in: objects))
        }
        let after = try #require(try store.read().tree(named: "objects"))
        #expect(try after.subtree(forKey: key(57) + [0xFF])?.count == 56)
        #expect(try after.subtree(forKey: key(199) + [0xFF]) == nil)
    }

    @Test func argumentErrorsAreTypedAndLeaveTheTransactionUsable() throws {
        let store = try Store.inMemory(options: testOptions())
        try store.write { txn in
            let tree = try #require(try txn.tree(named: "t", create: .keyed))
            let list = try #require(try txn.tree(named: "l", create: .list))
            let tooLong = [UInt8](repeating: 1, count: store.maxKeySize + 1)
            #expect(throws: StorageError.keyTooLarge(size: tooLong.count, limit: store.maxKeySize)) {
                try txn.put(tooLong, [UInt8](), in: tree)
            }
            #expect(throws: StorageError.wrongTreeKind(expected: .list, actual: .keyed)) {
                try txn.append([UInt8](), to: tree)
            }
            #expect(throws: StorageError.indexOutOfRange(index: 1, count: 0)) {
                try txn.insert([UInt8](), at: 1, in: list)
            }
            try txn.put([UInt8]("ok"), [UInt8]("fine"), in: tree)
        }
        #expect(try store.read().tree(named: "t")?.get([UInt8]("ok")) == [UInt8]("fine"))
    }

    @Test func abortedTransactionLeavesNoTrace() throws {
        let store = try Store.inMemory(options: testOptions())
        try store.write { txn in
            try txn.put([UInt8]("k"), [UInt8]("v1"), in: try #require(try txn.tree(named: "t", create: .keyed)))
        }
        let txn = try store.beginWrite()
        try txn.put([UInt8]("k"), [UInt8]("v2"), in: try #require(try txn.tree(named: "t")))
        _ = try txn.tree(named: "other", create: .keyed)
        txn.abort()
        let snapshot = try store.read()
        #expect(try snapshot.tree(named: "t")?.get([UInt8]("k")) == [UInt8]("v1"))
        #expect(try snapshot.treeNames() == ["t"])
        #expect(snapshot.version == 1)
    }
}

@Suite("Key order")
struct KeyOrderTests {
    /// The inline comparison must agree with plain lexicographic byte order for every length and position.
    @Test func compareMatchesLexicographicOrder() {
        var generator = SeededGenerator(seed: 3)
        for _ in 0..<20_000 {
            let length = Int.random(in: 0...40, using: &generator)
            let a = (0..<length).map { _ in UInt8.random(in: 0...3, using: &generator) * 85 }
            var b = a
            switch Int.random(in: 0..<4, using: &generator) {
            case 0 where !b.isEmpty:
                b[Int.random(in: 0..<b.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
            case 1: b.append(UInt8.random(in: 0...255, using: &generator))
            case 2 where !b.isEmpty: b.removeLast(Int.random(in: 1...b.count, using: &generator))
            default:
                b = (0..<Int.random(in: 0...40, using: &generator)).map { _ in
                    UInt8.random(in: 0...255, using: &generator)
                }
            }
            let expected = a.lexicographicallyPrecedes(b) ? -1 : (a == b ? 0 : 1)
            let actual = a.withUnsafeBytes { x in b.withUnsafeBytes { y in Bytes.compare(x, y) } }
            #expect(actual.signum() == expected, "\(a) vs \(b)")
        }
    }
}

import StrataTestSupport
import Testing

@testable import StrataStorage

@Suite("Tree differences between versions")
struct TreeDiffTests {
    /// Random puts, overwrites (some with the same bytes) and deletes across several commits: the differences
    /// between any two versions equal those of the two versions' contents as dictionaries.
    @Test func differencesMatchTheContents() throws {
        let store = try Store.inMemory(options: testOptions())
        var generator = SeededGenerator(seed: 42)
        var model: [[UInt8]: [UInt8]] = [:]
        var versions: [(ReadTransaction, [[UInt8]: [UInt8]])] = []
        try store.write { txn in _ = try txn.tree(named: "t", create: .keyed) }
        versions.append((try store.read(), model))
        for _ in 0..<30 {
            try store.write { txn in
                let tree = try #require(try txn.tree(named: "t"))
                for _ in 0..<Int.random(in: 1...60, using: &generator) {
                    let k = key(Int.random(in: 0..<3000, using: &generator))
                    switch Int.random(in: 0..<10, using: &generator) {
                    case 0..<2:
                        _ = try txn.delete(k, in: tree)
                        model[k] = nil
                    case 2:
                        // The same bytes again: not a change.
                        if let value = model[k] { try txn.put(k, value, in: tree) }
                    default:
                        let size = Int.random(in: 0..<10, using: &generator) == 0 ? 9000 : 40
                        let value = (0..<size).map { _ in UInt8.random(in: 0...255, using: &generator) }
                        try txn.put(k, value, in: tree)
                        model[k] = value
                    }
                }
            }
            versions.append((try store.read(), model))
        }
        for _ in 0..<40 {
            let a = Int.random(in: 0..<versions.count, using: &generator)
            let b = Int.random(in: a..<versions.count, using: &generator)
            let (oldTxn, oldModel) = versions[a]
            let (newTxn, newModel) = versions[b]
            let found = try #require(try newTxn.tree(named: "t")).differences(
                from: try #require(try oldTxn.tree(named: "t")))
            let inserted = newModel.keys.filter { oldModel[$0] == nil }
            let deleted = oldModel.keys.filter { newModel[$0] == nil }
            let changed = newModel.keys.filter { oldModel[$0] != nil && oldModel[$0] != newModel[$0] }
            #expect(Set(found.inserted) == Set(inserted))
            #expect(Set(found.deleted) == Set(deleted))
            // Values rewritten with equal bytes may count as changed only when stored in overflow pages.
            #expect(Set(changed).isSubset(of: Set(found.changed)))
            for key in Set(found.changed).subtracting(changed) { #expect((newModel[key]?.count ?? 0) > 1000) }
        }
    }

    @Test func changedTreeNamesListCreatedChangedAndDroppedTrees() throws {
        let store = try Store.inMemory(options: testOptions())
        try store.write { txn in
            try txn.put(key(1), [1], in: try #require(try txn.tree(named: "a", create: .keyed)))
            try txn.put(key(1), [1], in: try #require(try txn.tree(named: "b", create: .keyed)))
        }
        let old = try store.read()
        try store.write { txn in
            try txn.put(key(2), [2], in: try #require(try txn.tree(named: "a")))
            _ = try txn.dropTree(named: "b")
            _ = try txn.tree(named: "c", create: .keyed)
        }
        let new = try store.read()
        #expect(Set(try new.changedTreeNames(since: old)) == ["a", "b", "c"])
        #expect(try new.changedTreeNames(since: new).isEmpty)
    }
}

import Foundation
import Testing

@testable import StrataStorage

@Suite("Versions and pinning")
struct MVCCTests {
    private func put(_ store: Store, _ k: Int, _ value: [UInt8]) throws {
        try store.write { txn in try txn.put(key(k), value, in: try #require(try txn.tree(named: "t", create: .keyed)))
        }
    }

    @Test func readersKeepTheirVersion() throws {
        let store = try Store.inMemory(options: testOptions())
        try put(store, 1, [UInt8]("a"))
        let old = try store.read()
        try put(store, 1, [UInt8]("b"))
        try put(store, 2, [UInt8]("c"))
        let new = try store.read()
        #expect(try old.tree(named: "t")?.get(key(1)) == [UInt8]("a"))
        #expect(try old.tree(named: "t")?.get(key(2)) == nil)
        #expect(try new.tree(named: "t")?.get(key(1)) == [UInt8]("b"))
        #expect(old.version == 1 && new.version == 3)
    }

    @Test func pinnedVersionsBlockReuseUntilReleased() throws {
        let store = try Store.inMemory(options: testOptions())
        let value = [UInt8](repeating: 5, count: 200_000)
        try put(store, 1, value)
        var reader: ReadTransaction? = try store.read()
        #expect(store.pinnedVersionCount == 1)
        for round in 0..<4 { try put(store, 1, [UInt8](repeating: UInt8(round), count: value.count)) }
        let grownWhilePinned = try store.read().pageCount
        // The pinned reader still sees its bytes, although four newer versions replaced them.
        #expect(try reader?.tree(named: "t")?.get(key(1)) == value)
        reader = nil
        #expect(store.pinnedVersionCount == 0)
        for round in 0..<8 { try put(store, 1, [UInt8](repeating: UInt8(round), count: value.count)) }
        // With nobody pinning old versions, replaced pages are recycled: the file stops growing.
        #expect(try store.read().pageCount <= grownWhilePinned)
    }

    /// After a long-pinned reader goes away, the backlog of freed pages is reused and the file stops growing
    /// exactly (regression: the free list's own pages used to come from file growth at every commit).
    @Test func fileSizeIsStableOnceReadersLeave() throws {
        let store = try Store.inMemory(options: StoreOptions(durability: .none))
        func round(_ r: Int) throws {
            try store.write { txn in
                let data = try txn.tree(named: "data", create: .keyed)!
                for k in 0..<200 {
                    try txn.put(key(k), [UInt8](repeating: UInt8(truncatingIfNeeded: r), count: 150), in: data)
                }
            }
        }
        try round(0)
        var reader: ReadTransaction? = try store.read()
        for r in 1...30 { try round(r) }
        #expect(try reader?.tree(named: "data")?.get(key(7)) == [UInt8](repeating: 0, count: 150))
        reader = nil
        var counts: [Int] = []
        for r in 31...90 {
            try round(r)
            counts.append(try store.read().pageCount)
        }
        #expect(Set(counts.suffix(50)).count == 1, "page counts: \(counts)")
        #expect(try store.verify().isValid)
    }

    @Test func emptyCommitDoesNotCreateAVersion() throws {
        let store = try Store.inMemory(options: testOptions())
        try put(store, 1, [UInt8]("a"))
        // A transaction that only reads commits nothing: no new version, no write to the file.
        let committed = try store.beginWrite()
        #expect(try committed.get(key(1), in: try #require(try committed.tree(named: "t"))) == [UInt8]("a"))
        #expect(try committed.commit() == 1)
        #expect(store.latestVersion == 1)
    }

    @Test func sharedInMemoryIdentifier() throws {
        let first = try Store.inMemory(identifier: "shared-test", options: testOptions())
        try put(first, 9, [UInt8]("x"))
        let second = try Store.inMemory(identifier: "shared-test", options: testOptions())
        #expect(try second.read().tree(named: "t")?.get(key(9)) == [UInt8]("x"))
    }

    /// Readers on several threads read a freshly opened file (no page validated yet) while a writer rewrites
    /// pages: validations of the same pages race, pages come back with new versions, and every reader still sees
    /// exactly its version. Run under ThreadSanitizer in CI.
    @Test func readersOnManyThreadsValidatePagesAtOnce() throws {
        let file = MemoryFile(name: "validation")
        let setup = try Store.open(file: file, options: testOptions())
        for k in 0..<2_000 { try put(setup, k, key(k)) }
        let store = try Store.open(
            file: FaultInjectingFile(name: "fresh", image: file.snapshot()), options: testOptions())
        let failures = Locked<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 5) { worker in
            do {
                if worker == 0 {
                    for round in 0..<20 {
                        try store.write { txn in
                            let tree = try #require(try txn.tree(named: "t"))
                            for k in stride(from: round, to: 2_000, by: 50) {
                                try txn.put(key(k), key(k + 1), in: tree)
                            }
                        }
                    }
                    return
                }
                for _ in 0..<10 {
                    let snapshot = try store.read()
                    let view = try #require(try snapshot.tree(named: "t"))
                    var count = 0
                    try view.forEachEntry { _, _ in
                        count += 1
                        return true
                    }
                    if count != 2_000 { failures.withLock { $0.append("read \(count) entries") } }
                }
            } catch {
                failures.withLock { $0.append("\(error)") }
            }
        }
        #expect(failures.withLock { $0 }.isEmpty)
        #expect(try store.verify().isValid)
    }
}

import Foundation
import Testing

@testable import StrataStorage

/// Behaviour of real files: compaction, read-only handles, recognition before touching a directory, and replay of
/// the commit log.
@Suite("Files")
struct FileTests {
    /// A store with keyed, list and nested trees, overflow values and many freed pages.
    private func populate(_ store: Store) throws {
        var generator = SeededGenerator(seed: 12)
        for round in 0..<8 {
            try store.write { txn in
                let keyed = try #require(try txn.tree(named: "keyed", create: .keyed))
                for k in 0..<600 {
                    try txn.put(
                        key(k), [UInt8](repeating: UInt8(round), count: Int.random(in: 1...120, using: &generator)),
                        in: keyed)
                }
                for k in stride(from: round, to: 600, by: 3) { try txn.delete(key(k), in: keyed) }
                try txn.put([UInt8]("blob"), [UInt8](repeating: UInt8(round), count: 20_000), in: keyed)
                let list = try #require(try txn.subtree(forKey: [0xEE], in: keyed, create: .list))
                for k in 0..<50 { try txn.append(key(round * 100 + k), to: list) }
                _ = try txn.nextSequence(in: keyed)
            }
        }
    }

    private func dump(_ snapshot: ReadTransaction) throws -> [String: [[UInt8]]] {
        var result: [String: [[UInt8]]] = [:]
        for name in try snapshot.treeNames() {
            let view = try #require(try snapshot.tree(named: name))
            var entries: [[UInt8]] = []
            var cursor = view.makeCursor()
            var more = try cursor.first()
            while more {
                entries.append(try cursor.key())
                entries.append(
                    try cursor.isSubtree() ? try cursor.subtree().entries().flatMap(\.value) : try cursor.value())
                more = try cursor.next()
            }
            result[name] = entries
        }
        return result
    }

    /// Durable writes: page-aligned buffers go through the direct descriptor, anything else through the page cache;
    /// either way the bytes are there, read through the file's mapping and after reopening.
    @Test func durableWritesLandWhetherAlignedOrNot() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("durable.bin")
        let file = try DiskFile(path: path, writable: true, create: true)
        let aligned = UnsafeMutableRawPointer.allocate(byteCount: 8192, alignment: 4096)
        defer { aligned.deallocate() }
        for index in 0..<8192 {
            aligned.storeBytes(of: UInt8(truncatingIfNeeded: index * 7), toByteOffset: index, as: UInt8.self)
        }
        try file.writeDurably(UnsafeRawBufferPointer(start: aligned, count: 8192), at: 4096)
        let odd: [UInt8] = Array(repeating: 0xAB, count: 100)
        try odd.withUnsafeBytes { try file.writeDurably($0, at: 12_288 + 3) }
        // Aligned again after an unaligned write to the same file: the page cache and direct writes agree.
        try file.writeDurably(UnsafeRawBufferPointer(start: aligned, count: 4096), at: 16_384)
        #expect(try file.size() == 20_480)
        let mapping = try file.mapping(covering: 20_480)
        #expect(memcmp(mapping.base + 4096, aligned, 8192) == 0)
        #expect((0..<100).allSatisfy { mapping.base.load(fromByteOffset: 12_291 + $0, as: UInt8.self) == 0xAB })
        #expect(memcmp(mapping.base + 16_384, aligned, 4096) == 0)
        let reread = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(reread.count == 20_480 && reread[4096] == 0 && reread[4097] == 7 && reread[12_291] == 0xAB)
    }

    @Test func compactionKeepsTheDataAndDropsTheFreeSpace() throws {
        let directory = TemporaryDirectory()
        let store = try Store.open(path: directory.file("source.strata"), options: StoreOptions(pageSize: 1024))
        try populate(store)
        let before = try store.statistics()
        #expect(before.freePages > 0)
        let result = try store.compact(to: directory.file("compact.strata"))
        #expect(result.compactedPages < result.sourcePages)
        let compacted = try Store.open(path: directory.file("compact.strata"), options: StoreOptions(readOnly: true))
        #expect(try compacted.verify().isValid)
        #expect(try compacted.statistics().freePages == 0)
        #expect(try dump(compacted.read()) == dump(store.read()))
        #expect(try compacted.read().tree(named: "keyed")?.sequence == 8)
        // The target must be new.
        #expect(throws: StorageError.self) { try store.compact(to: directory.file("compact.strata")) }
    }

    @Test func readOnlyHandleRefusesWritesEvenBesideAWritableOne() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("shared.strata")
        let writable = try Store.open(path: path)
        try populate(writable)
        let readOnly = try Store.open(path: path, options: StoreOptions(readOnly: true))
        #expect(throws: StorageError.readOnly(path: path)) { try readOnly.beginWrite() }
        #expect(try readOnly.read().tree(named: "keyed") != nil)
        _ = try writable.beginWrite()
    }

    @Test func foreignFileGetsNoLockFileBesideIt() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("notes.txt")
        try Data(repeating: 0x20, count: 8192).write(to: URL(fileURLWithPath: path))
        #expect(throws: StorageError.self) { try Store.open(path: path) }
        #expect(!FileManager.default.fileExists(atPath: path + ".lock"))
        #expect(!FileManager.default.fileExists(atPath: path + ".log"))
    }

    /// The state a power cut leaves behind with the commit log: the main file as of its last checkpoint, the log
    /// holding every commit since. A read-only open explains; a read-write open replays.
    @Test func commitLogIsReplayedIntoAStaleMainFile() throws {
        let original = TemporaryDirectory()
        let path = original.file("db.strata")
        let store = try Store.open(path: path)
        let staleMain = try Data(contentsOf: URL(fileURLWithPath: path))
        var model: [[UInt8]: [UInt8]] = [:]
        for round in 0..<3 {
            try store.write { txn in
                let tree = try #require(try txn.tree(named: "data", create: .keyed))
                for k in 0..<20 {
                    try txn.put(key(round * 100 + k), key(k), in: tree)
                    model[key(round * 100 + k)] = key(k)
                }
            }
        }
        #expect(store.latestVersion == 3)
        let log = try Data(contentsOf: URL(fileURLWithPath: path + ".log"))

        let crashed = TemporaryDirectory()
        let copy = crashed.file("db.strata")
        try staleMain.write(to: URL(fileURLWithPath: copy))
        try log.write(to: URL(fileURLWithPath: copy + ".log"))
        // A read-only open must not silently show the stale main file.
        let refusal = #expect(throws: StorageError.self) {
            try Store.open(path: copy, options: StoreOptions(readOnly: true))
        }
        #expect(refusal?.description.contains("not yet applied") == true, "\(String(describing: refusal))")
        let recovered = try Store.open(path: copy)
        #expect(recovered.latestVersion == 3)
        #expect(try contents(of: try recovered.read().tree(named: "data")) == model)
        #expect(try recovered.verify().isValid)
        #expect(try Store.open(path: copy, options: StoreOptions(readOnly: true)).latestVersion == 3)
    }
}

import Foundation
import Testing

@testable import StrataStorage

/// Stores on encrypted files (issue 26): what is written comes back after a reopen, across many pages and with
/// overflow values; the file's bytes hold no plaintext; another key, after data exists, is a wrong key; a changed
/// byte in any page is damage or goes unread, never a wrong value; and two independent handles on one file (each
/// with its own decrypted pages, coordinating through the file as two processes do) see each other's commits;
/// copies encrypt, decrypt and re-key; `verify` checks an encrypted file; compacting on launch compacts one.
@Suite("Encrypted stores")
struct EncryptedStoreTests {
    private let key = (0..<64).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }
    private let otherKey = (0..<64).map { UInt8(truncatingIfNeeded: 200 &- $0) }
    /// Stored in every value: must not appear anywhere in the file's bytes.
    private static let marker = "Zebra-Quartz-Marmalade"

    private func options(durability: StoreOptions.Durability = .full) -> StoreOptions {
        StoreOptions(durability: durability, encryptionKey: key)
    }

    private func keyBytes(_ index: Int) -> [UInt8] { Array(String(format: "key-%06d", index).utf8) }

    /// A value that spans a few hundred bytes (every 97th one several pages: an overflow chain).
    private func value(_ index: Int) -> [UInt8] {
        let repeats = index % 97 == 0 ? 600 : 8
        return Array(String(repeating: "\(Self.marker) #\(index) ", count: repeats).utf8)
    }

    /// Writes records `range` into the tree "records", in commits of `batch`.
    private func writeRecords(_ store: Store, _ range: Range<Int>, batch: Int = 250) throws {
        var start = range.lowerBound
        while start < range.upperBound {
            let end = min(start + batch, range.upperBound)
            try store.write { transaction in
                let tree = try #require(try transaction.tree(named: "records", create: .keyed))
                for index in start..<end { try transaction.put(keyBytes(index), value(index), in: tree) }
            }
            start = end
        }
    }

    /// Checks that records `range` read back exactly.
    private func expectRecords(_ store: Store, _ range: Range<Int>) throws {
        let tree = try #require(try store.read().tree(named: "records"))
        #expect(tree.count == range.count)
        for index in range { #expect(try tree.get(keyBytes(index)) == value(index), "record \(index)") }
    }

    @Test func recordsSurviveAReopenAcrossManyPages() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("encrypted.strata")
        do {
            let store = try Store.open(path: path, options: options())
            try writeRecords(store, 0..<3000)
            try expectRecords(store, 0..<3000)
            #expect(try store.read().pageCount > 200)
        }
        let reopened = try Store.open(path: path, options: options())
        #expect(reopened.recovery == nil)
        try expectRecords(reopened, 0..<3000)
        // Writing goes on after the reopen: pages are rewritten and read back under fresh nonces.
        try reopened.write { transaction in
            let tree = try #require(try transaction.tree(named: "records", create: .keyed))
            for index in stride(from: 0, to: 3000, by: 3) { _ = try transaction.delete(keyBytes(index), in: tree) }
        }
        let tree = try #require(try reopened.read().tree(named: "records"))
        #expect(tree.count == 2000)
        #expect(try tree.get(keyBytes(3)) == nil)
        #expect(try tree.get(keyBytes(4)) == value(4))
    }

    /// One commit larger than a ``SealingStage`` batch, so its pages are sealed and written through the reused
    /// buffer in several batches; then a second large commit rewrites many of them through the same buffer.
    @Test(arguments: [StoreOptions.Durability.full, .none])
    func aCommitOfManyBatchesReadsBackAfterAReopen(durability: StoreOptions.Durability) throws {
        let directory = TemporaryDirectory()
        let path = directory.file("encrypted.strata")
        do {
            let store = try Store.open(path: path, options: options(durability: durability))
            try writeRecords(store, 0..<12_000, batch: 12_000)
            #expect(try store.read().pageCount > 3 * SealingStage.batchPages)
            try store.write { transaction in
                let tree = try #require(try transaction.tree(named: "records"))
                for index in stride(from: 1, to: 12_000, by: 2) {
                    _ = try transaction.delete(keyBytes(index), in: tree)
                }
            }
            store.close()
        }
        let reopened = try Store.open(path: path, options: options(durability: durability))
        let tree = try #require(try reopened.read().tree(named: "records"))
        #expect(tree.count == 6000)
        for index in stride(from: 0, to: 12_000, by: 2) { #expect(try tree.get(keyBytes(index)) == value(index)) }
        #expect(try tree.get(keyBytes(1)) == nil)
        let report = try reopened.verify()
        #expect(report.isValid, "\(report)")
    }

    /// A write transaction builds its pages in the decrypted-page cache's slots (``DecryptedPages/claim(_:)``): one
    /// that fails after rewriting hundreds of pages leaves what every reader sees as it was, and the next
    /// transaction, which takes the same free pages again, commits and reads back right, in this process and
    /// after a reopen.
    @Test func aFailedTransactionsPagesInTheCacheChangeNothingReadersSee() throws {
        struct Abandon: Error {}
        let directory = TemporaryDirectory()
        let path = directory.file("encrypted.strata")
        do {
            let store = try Store.open(path: path, options: options())
            try writeRecords(store, 0..<3000, batch: 3000)
            let pinned = try store.read()
            #expect(throws: Abandon.self) {
                try store.write { transaction in
                    let tree = try #require(try transaction.tree(named: "records"))
                    for index in 0..<3000 { try transaction.put(keyBytes(index), Array("changed".utf8), in: tree) }
                    throw Abandon()
                }
            }
            try expectRecords(store, 0..<3000)
            let before = try #require(try pinned.tree(named: "records"))
            #expect(try before.get(keyBytes(1234)) == value(1234))
            try store.write { transaction in
                let tree = try #require(try transaction.tree(named: "records"))
                for index in stride(from: 0, to: 3000, by: 2) { _ = try transaction.delete(keyBytes(index), in: tree) }
            }
            let tree = try #require(try store.read().tree(named: "records"))
            #expect(tree.count == 1500)
            #expect(try tree.get(keyBytes(1)) == value(1) && tree.get(keyBytes(2)) == nil)
            store.close()
        }
        let reopened = try Store.open(path: path, options: options())
        let tree = try #require(try reopened.read().tree(named: "records"))
        for index in stride(from: 1, to: 3000, by: 2) { #expect(try tree.get(keyBytes(index)) == value(index)) }
        let report = try reopened.verify()
        #expect(report.isValid, "\(report)")
    }

    @Test func theFileHoldsNoPlaintext() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("encrypted.strata")
        do {
            let store = try Store.open(path: path, options: options())
            try writeRecords(store, 0..<500)
        }
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(bytes.count > 50 * 4096)
        for needle in [Self.marker, "records", "key-000123", "STRATA\u{0}"] {
            #expect(bytes.range(of: Data(needle.utf8)) == nil, "\(needle) is in the file in clear")
        }
        // Without the key, the data cannot be had: the open says a key is needed.
        #expect(throws: StorageError.encryptionKeyRequired(path: path)) { try Store.open(path: path) }
    }

    @Test func anotherKeyAfterDataExistsIsAWrongKeyAndChangesNothing() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("encrypted.strata")
        do {
            let store = try Store.open(path: path, options: options())
            try writeRecords(store, 0..<300)
        }
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(throws: StorageError.wrongEncryptionKey(path: path)) {
            try Store.open(path: path, options: StoreOptions(encryptionKey: otherKey))
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
        try expectRecords(try Store.open(path: path, options: options()), 0..<300)
    }

    /// Flips one byte in each data page in turn (in a copy of the file): every open and read either fails with a
    /// typed damage error or returns exactly what was written (the page was free, or dropped with the newest
    /// commit by recovery); never another value. Damage must be seen at least once.
    @Test func aFlippedByteInAnyPageIsDamageNeverAWrongValue() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("encrypted.strata")
        let records = 0..<400
        do {
            let store = try Store.open(path: path, options: options(durability: .none))
            try writeRecords(store, records, batch: 400)
            // A last small commit, so a page it lists being damaged drops it and leaves the records intact.
            try store.write { transaction in
                let tree = try #require(try transaction.tree(named: "last", create: .keyed))
                try transaction.put(Array("k".utf8), Array("v".utf8), in: tree)
            }
        }
        let original = try Data(contentsOf: URL(fileURLWithPath: path))
        let pageSize = 4096
        var damageSeen = 0
        for page in 2..<(original.count / pageSize) {
            var damaged = original
            let offset = page * pageSize + 100 + page % 1000
            damaged[offset] ^= 0x20
            let copy = directory.file("damaged-\(page).strata")
            try damaged.write(to: URL(fileURLWithPath: copy))
            do {
                let store = try Store.open(path: copy, options: options(durability: .none))
                let tree = try #require(try store.read().tree(named: "records"))
                for index in records {
                    let found = try tree.get(keyBytes(index))
                    #expect(found == value(index), "page \(page) damaged: record \(index) read wrong")
                }
            } catch let error as StorageError {
                switch error {
                case .corruptPage, .incompatibleFile: damageSeen += 1
                default: Issue.record("page \(page) damaged: unexpected \(error)")
                }
            }
            try FileManager.default.removeItem(atPath: copy)
        }
        #expect(damageSeen > 0)
    }

    /// Two handles with their own shared state (as two processes have): each sees the other's commits, reads the
    /// pages the other rewrote (its decrypted copies are stale, and their nonces tell) and writes on top of them.
    @Test func twoIndependentHandlesReadAndWriteOneFile() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("encrypted.strata")
        let first = try Store.open(path: path, options: options())
        try writeRecords(first, 0..<1000)
        let second = try Store.openUnshared(path: path, options: options())
        #expect(second.shared !== first.shared)
        try expectRecords(second, 0..<1000)
        // The first handle rewrites pages the second has decrypted.
        try first.write { transaction in
            let tree = try #require(try transaction.tree(named: "records", create: .keyed))
            for index in 0..<1000 where index % 2 == 0 {
                try transaction.put(keyBytes(index), Array("first \(index)".utf8), in: tree)
            }
        }
        let seen = try #require(try second.read().tree(named: "records"))
        for index in 0..<1000 {
            let expected = index % 2 == 0 ? Array("first \(index)".utf8) : value(index)
            #expect(try seen.get(keyBytes(index)) == expected, "record \(index) as seen by the second handle")
        }
        // And the other way round, with more records than before.
        try writeRecords(second, 1000..<1500)
        let tree = try #require(try first.read().tree(named: "records"))
        #expect(tree.count == 1500)
        #expect(try tree.get(keyBytes(1499)) == value(1499))
        #expect(try tree.get(keyBytes(2)) == Array("first 2".utf8))
    }

    /// Copies encrypt, decrypt and re-key (``Store/compact(to:encryptionKey:)``): plain → encrypted → re-keyed →
    /// plain, every record equal at each step; each encrypted copy opens only with its own key (typed errors
    /// otherwise) and holds no plaintext; `compact(to:)` keeps the source's key; a bad key writes nothing.
    @Test func copiesEncryptDecryptAndRekey() throws {
        let directory = TemporaryDirectory()
        let plain = directory.file("plain.strata")
        try writeRecords(try Store.open(path: plain, options: StoreOptions(durability: .none)), 0..<1500)
        let encrypted = directory.file("encrypted.strata")
        try Store.open(path: plain, options: StoreOptions()).compact(to: encrypted, encryptionKey: key)
        let rekeyed = directory.file("rekeyed.strata")
        try Store.open(path: encrypted, options: options()).compact(to: rekeyed, encryptionKey: otherKey)
        let sameKey = directory.file("same-key.strata")
        try Store.open(path: rekeyed, options: StoreOptions(encryptionKey: otherKey)).compact(to: sameKey)
        let decrypted = directory.file("decrypted.strata")
        try Store.open(path: sameKey, options: StoreOptions(encryptionKey: otherKey))
            .compact(to: decrypted, encryptionKey: nil)

        try expectRecords(try Store.open(path: encrypted, options: options()), 0..<1500)
        try expectRecords(try Store.open(path: rekeyed, options: StoreOptions(encryptionKey: otherKey)), 0..<1500)
        try expectRecords(try Store.open(path: sameKey, options: StoreOptions(encryptionKey: otherKey)), 0..<1500)
        try expectRecords(try Store.open(path: decrypted, options: StoreOptions()), 0..<1500)
        for path in [encrypted, rekeyed, sameKey] {
            let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
            #expect(bytes.range(of: Data(Self.marker.utf8)) == nil, "\(path) holds plaintext")
        }
        #expect(throws: StorageError.encryptionKeyRequired(path: rekeyed)) {
            try Store.open(path: rekeyed, options: StoreOptions())
        }
        #expect(throws: StorageError.wrongEncryptionKey(path: rekeyed)) {
            try Store.open(path: rekeyed, options: options())
        }
        #expect(throws: StorageError.notEncrypted(path: decrypted)) {
            try Store.open(path: decrypted, options: options())
        }

        let refused = directory.file("refused.strata")
        #expect(throws: StorageError.self) {
            try Store.open(path: encrypted, options: options()).compact(to: refused, encryptionKey: Array(key[0..<32]))
        }
        #expect(!FileManager.default.fileExists(atPath: refused))
    }

    /// `verify` authenticates and checks every page of an encrypted file: an intact file passes, and a byte
    /// changed in any reachable page is reported as damage on that page.
    @Test func verifyChecksEveryPageOfAnEncryptedFileAndReportsATamperedOne() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("encrypted.strata")
        let reachable: [PageNumber]
        do {
            let store = try Store.open(path: path, options: options(durability: .none))
            try writeRecords(store, 0..<600, batch: 600)
            let before = Set(try store.reachablePages())
            // A last small commit: a page it wrote being damaged would make recovery drop it, and verify would
            // check the version before; the pages both versions reach are the ones to damage.
            try store.write { transaction in
                let tree = try #require(try transaction.tree(named: "last", create: .keyed))
                try transaction.put(Array("k".utf8), Array("v".utf8), in: tree)
            }
            let report = try store.verify()
            #expect(report.isValid, "\(report)")
            #expect(report.entryCount >= 601)
            #expect(report.metaSlots.contains { $0.contains("version") }, "\(report.metaSlots)")
            reachable = try store.reachablePages().filter { $0 >= 2 && before.contains($0) }
            #expect(reachable.count > 10)
        }
        let original = try Data(contentsOf: URL(fileURLWithPath: path))
        for page in reachable.prefix(12) {
            var damaged = original
            damaged[Int(page) * 4096 + 200] ^= 0x01
            let copy = directory.file("damaged-\(page).strata")
            try damaged.write(to: URL(fileURLWithPath: copy))
            let checked = Result { () throws(StorageError) in
                try Store.open(path: copy, options: options(durability: .none)).verify()
            }
            switch checked {
            case .success(let report):
                #expect(report.problems.contains { $0.page == page }, "page \(page): \(report)")
            case .failure(.corruptPage(_, let found, _)):
                // A root page is checked by the open itself, which refuses the file as damaged.
                #expect(found == page)
            case .failure(let error):
                Issue.record("page \(page): unexpected \(error)")
            }
        }
    }

    /// Compacting on launch compacts an encrypted file, which stays encrypted with the same key.
    @Test func compactOnLaunchCompactsAnEncryptedFile() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("encrypted.strata")
        do {
            let store = try Store.open(path: path, options: options(durability: .none))
            try writeRecords(store, 0..<2000)
            try store.write { transaction in
                let tree = try #require(try transaction.tree(named: "records", create: .keyed))
                for index in 500..<2000 { _ = try transaction.delete(keyBytes(index), in: tree) }
            }
        }
        let before = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int ?? 0
        #expect(try Store.compactOnLaunch(path: path, options: options()) { _, _ in true })
        let after = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int ?? 0
        #expect(after < before)
        let store = try Store.open(path: path, options: options())
        try expectRecords(store, 0..<500)
        #expect(try store.verify().isValid)
        #expect(throws: StorageError.encryptionKeyRequired(path: path)) {
            try Store.open(path: path, options: StoreOptions())
        }
    }
}

extension Store {
    /// Opens `path` with shared state of its own, as another process would: its own meta reads, pins, write
    /// context and decrypted pages, coordinating with this process's other handles only through the file and
    /// the lock file.
    static func openUnshared(path: String, options: StoreOptions) throws -> Store {
        SharedFile.registry.withLock { files in
            for (key, file) in files where file.value?.path == path { files[key] = nil }
        }
        return try Store.open(path: path, options: options)
    }
}

import Foundation
import Testing

@testable import StrataStorage

/// What an open of an encrypted file reuses since issue 26's second cold-open step, and that none of it is trusted
/// beyond what was authenticated: cipher contexts kept per key by the process, each meta slot decoded once an
/// open, the pages recovery authenticated seeding the decrypted-page cache, and the slots' reservation kept for
/// the next open.
@Suite("Encrypted open reuse")
struct EncryptedOpenReuseTests {
    private static func key(_ seed: Int) -> [UInt8] { (0..<64).map { UInt8(truncatingIfNeeded: $0 &* 11 &+ seed) } }

    private static let fileID = (0..<16).map { UInt8($0 &+ 40) }

    private static func value(_ n: Int, seed: Int) -> [UInt8] {
        (0..<150).map { UInt8(truncatingIfNeeded: $0 &* 3 &+ n &+ seed) }
    }

    /// Writes 300 keys under `key` to a new file at `path`, in two commits (so that both meta slots name pages).
    private static func fill(_ path: String, key: [UInt8], seed: Int) throws {
        let store = try Store.open(path: path, options: StoreOptions(encryptionKey: key))
        for part in 0..<2 {
            try store.write { txn in
                let tree = try #require(try txn.tree(named: "data", create: .keyed))
                for n in stride(from: part, to: 300, by: 2) {
                    try txn.put(Array("key-\(n)".utf8), value(n, seed: seed), in: tree)
                }
            }
        }
        store.close()
    }

    /// Opens `path` under `key`, checks a few of its values and closes it.
    private static func check(_ path: String, key: [UInt8], seed: Int) throws {
        let store = try Store.open(path: path, options: StoreOptions(encryptionKey: key))
        defer { store.close() }
        let tree = try #require(try store.read().tree(named: "data"))
        for n in [0, 77, 299] {
            #expect(try tree.withValue(forKey: Array("key-\(n)".utf8)) { Array($0) } == value(n, seed: seed))
        }
    }

    @Test func filesUnderMoreKeysThanTheProcessKeepsEachOpenRightAndAWrongKeyStillFails() throws {
        let directory = TemporaryDirectory()
        // More keys than the process keeps contexts for, so that some are made again.
        let count = 6
        for file in 0..<count { try Self.fill(directory.file("f\(file).strata"), key: Self.key(file), seed: file) }
        for round in 0..<3 {
            for file in 0..<count {
                try Self.check(directory.file("f\(file).strata"), key: Self.key(file), seed: file)
                // Another file's key, kept by the process: still another key.
                let other = Self.key((file + 1 + round) % count)
                #expect(throws: StorageError.wrongEncryptionKey(path: directory.file("f\(file).strata"))) {
                    _ = try Store.open(
                        path: directory.file("f\(file).strata"), options: StoreOptions(encryptionKey: other))
                }
            }
        }
    }

    #if !canImport(CommonCrypto)
        @Test func ciphersOfOneKeyShareTheirContextsAndOtherKeysDoNot() throws {
            let library = try LibCrypto.shared.get()
            let first = KeyedContexts.shared(library: library, key: Self.key(100), suite: .newFiles)
            #expect(KeyedContexts.shared(library: library, key: Self.key(100), suite: .newFiles) === first)
            #expect(KeyedContexts.shared(library: library, key: Self.key(101), suite: .newFiles) !== first)
            // The same key in the other suite: contexts keyed otherwise.
            #expect(
                KeyedContexts.shared(library: library, key: Self.key(100), suite: .aes256CTRWithHMACSHA256) !== first)
            // Sealed with a cipher, opened with another of the same key (shared contexts) and not with another key.
            let sealer = PageSealer(cipher: try BlockCipher(key: Self.key(100)), fileID: Self.fileID, pageSize: 4096)
            let sameKey = PageSealer(cipher: try BlockCipher(key: Self.key(100)), fileID: Self.fileID, pageSize: 4096)
            let otherKey = PageSealer(cipher: try BlockCipher(key: Self.key(101)), fileID: Self.fileID, pageSize: 4096)
            let clear = (0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 5) }
            var sealed = [UInt8](repeating: 0, count: 4096)
            try clear.withUnsafeBytes { clear in
                try sealed.withUnsafeMutableBytes {
                    try sealer.seal(clear.baseAddress!, page: 4, into: $0.baseAddress!)
                }
            }
            var opened = [UInt8](repeating: 0, count: 4096)
            let sameOpens = try sealed.withUnsafeBytes { sealed in
                try opened.withUnsafeMutableBytes {
                    try sameKey.open(sealed.baseAddress!, page: 4, into: $0.baseAddress!)
                }
            }
            #expect(sameOpens)
            #expect(opened[0..<sealer.usableSize] == clear[0..<sealer.usableSize])
            let otherOpens = try sealed.withUnsafeBytes { sealed in
                try opened.withUnsafeMutableBytes {
                    try otherKey.open(sealed.baseAddress!, page: 4, into: $0.baseAddress!)
                }
            }
            #expect(!otherOpens)
        }
    #endif

    @Test func aMetaSlotDecodedOnceAnOpenIsKnownByItsTailAndAnotherTailIsCheckedAgain() throws {
        let cipher = try BlockCipher(key: Self.key(7))
        let codec = SealedMeta(header: try EncryptedFileHeader(pageSize: 4096, cipher: cipher), cipher: cipher)
        let meta = Meta(
            version: 12, pageCount: 40, pageSize: 4096, catalog: TreeRoot(kind: .keyed),
            freeTree: TreeRoot(kind: .keyed),
            commitTime: 1_700_000_000_000_000, written: [Meta.PageStamp(page: 5, checksum: 99)],
            reservedTail: PageSealer.overhead)
        var page = [UInt8](repeating: 0, count: 4096)
        try page.withUnsafeMutableBytes { try codec.encode(meta, into: $0.baseAddress!, slot: 1) }
        func decode(_ codec: SealedMeta, _ page: [UInt8]) throws -> Result<Meta, Meta.Rejection> {
            try page.withUnsafeBytes { try codec.decode($0.baseAddress!, slot: 1, available: $0.count) }
        }
        let opening = codec.remembering(AuthenticatedPages())
        #expect(try decode(opening, page) == .success(meta))
        // The ciphertext changed under the same tail: this open knows the slot by its tail and gives the meta it
        // authenticated (a different slot under the same nonce and tag would be a forged tag); any other codec,
        // such as the next open's, checks it and rejects it.
        var damaged = page
        damaged[200] ^= 0x10
        #expect(try decode(opening, damaged) == .success(meta))
        #expect(try decode(codec, damaged) == .failure(.checksum))
        #expect(try decode(codec.remembering(AuthenticatedPages()), damaged) == .failure(.checksum))
        // Another tag: checked, and it fails, also in this open.
        var retagged = page
        retagged[4095] ^= 0x01
        #expect(try decode(opening, retagged) == .failure(.checksum))
        // The same slot written again (a new nonce): decoded afresh, to the new meta.
        var newer = meta
        newer.version = 13
        var rewritten = [UInt8](repeating: 0, count: 4096)
        try rewritten.withUnsafeMutableBytes { try codec.encode(newer, into: $0.baseAddress!, slot: 1) }
        #expect(try decode(opening, rewritten) == .success(newer))
    }

    @Test func aCommitFoundWholeIsNotCheckedAgainInTheSameOpenButIsInTheNext() throws {
        let options = StoreOptions(pageSize: 4096, encryptionKey: Self.key(6))
        let file = MemoryFile(name: "found-whole")
        let store = try Store.open(file: file, options: options)
        for n in 0..<2 {
            try store.write { txn in
                let tree = try #require(try txn.tree(named: "data", create: .keyed))
                try txn.put(Array("key-\(n)".utf8), Self.value(n, seed: 6), in: tree)
            }
        }
        store.close()
        let codec = try MetaCodec.forExisting(file, options: options)
        let opening = codec.remembering(AuthenticatedPages())
        let (newest, _) = try SharedFile.recover(file, metas: opening)
        let listed = try #require(newest.written.first { $0.page != newest.catalog.root }).page
        // Damage a page the newest commit listed (nonce and tag kept), as a torn write would leave it.
        var byte: [UInt8] = [0]
        _ = try byte.withUnsafeMutableBytes { try file.read(into: $0, at: Int(listed) * 4096 + 100) }
        byte[0] ^= 0x40
        try byte.withUnsafeBytes { try file.write($0, at: Int(listed) * 4096 + 100) }
        // The same open's second look finds the same meta and does not check its pages again.
        #expect(try SharedFile.recover(file, metas: opening).0 == newest)
        // The next open checks them: the newest commit is not whole, and it is not the one opened.
        do {
            let (recovered, _) = try SharedFile.recover(file, metas: codec.remembering(AuthenticatedPages()))
            #expect(recovered.version < newest.version)
        } catch {
            guard case .incompatibleFile = error else {
                Issue.record("expected an older version or incompatibleFile, got \(error)")
                return
            }
        }
    }

    @Test func aPageRecoveryAuthenticatedSeedsTheCacheWithItsAuthenticatedBytes() throws {
        let sealer = PageSealer(cipher: try BlockCipher(key: Self.key(8)), fileID: Self.fileID, pageSize: 4096)
        let pages = try #require(DecryptedPages(sealer: sealer, maximumBytes: 1 << 30))
        let path = PathRef("/seeded-test-file")
        let clear = (0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ 1) }
        var sealed = [UInt8](repeating: 0, count: 4096)
        try clear.withUnsafeBytes { clear in
            try sealed.withUnsafeMutableBytes { try sealer.seal(clear.baseAddress!, page: 9, into: $0.baseAddress!) }
        }
        let authenticated = AuthenticatedPages(seeding: pages)
        // Recovery's check of page 9: authenticated, decrypted in its own copy, and stored in the cache.
        var copy = sealed
        let opened = try copy.withUnsafeMutableBytes { copy in
            try sealer.open(copy.baseAddress!, page: 9, into: copy.baseAddress!, authenticated: authenticated)
        }
        #expect(opened)
        // The cache has it under its nonce: a read finds the authenticated bytes without decrypting (the
        // ciphertext is damaged now, nonce and tag kept, so a read that decrypted would fail).
        var damaged = sealed
        damaged[300] ^= 0x08
        let read = try damaged.withUnsafeBytes { damaged in
            let page = try pages.page(9, sealed: damaged.baseAddress!, file: path)
            return Array(UnsafeRawBufferPointer(start: page, count: sealer.usableSize))
        }
        #expect(read[...] == clear[0..<sealer.usableSize])
        // A page that fails its tag seeds nothing: reading it is damage.
        var forged = sealed
        forged[10] ^= 0x01
        var forgedCopy = forged
        let forgedOpened = try forgedCopy.withUnsafeMutableBytes { copy in
            try sealer.open(copy.baseAddress!, page: 10, into: copy.baseAddress!, authenticated: authenticated)
        }
        #expect(!forgedOpened)
        #expect(throws: StorageError.self) {
            try forged.withUnsafeBytes { _ = try pages.page(10, sealed: $0.baseAddress!, file: path) }
        }
    }

    @Test func aKeptReservationComesBackWithNoPageCurrent() throws {
        let sealer = PageSealer(cipher: try BlockCipher(key: Self.key(9)), fileID: Self.fileID, pageSize: 4096)
        // A size no other test uses, so that the reservation kept below is the one taken again.
        let maximumBytes = (1 << 30) + 4096 * 37
        let path = PathRef("/kept-reservation-test-file")
        let clear = (0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 17 &+ 5) }
        var sealed = [UInt8](repeating: 0, count: 4096)
        try clear.withUnsafeBytes { clear in
            try sealed.withUnsafeMutableBytes { try sealer.seal(clear.baseAddress!, page: 3, into: $0.baseAddress!) }
        }
        // The first file's pages, released at the end of this closure as at a close.
        let slot = try { () throws -> UnsafeRawPointer in
            let first = try #require(DecryptedPages(sealer: sealer, maximumBytes: maximumBytes))
            return try sealed.withUnsafeBytes { try first.page(3, sealed: $0.baseAddress!, file: path) }
        }()
        let second = try #require(DecryptedPages(sealer: sealer, maximumBytes: maximumBytes))
        #expect(second.holds(slot), "the closed file's reservation is reused")
        // The slot still holds page 3's bytes from before, under the same nonce; the entry was cleared, so the page
        // is authenticated again: damaged (nonce and tag kept), it fails.
        var damaged = sealed
        damaged[50] ^= 0x02
        #expect(throws: StorageError.self) {
            try damaged.withUnsafeBytes { _ = try second.page(3, sealed: $0.baseAddress!, file: path) }
        }
        let read = try sealed.withUnsafeBytes { sealed in
            let page = try second.page(3, sealed: sealed.baseAddress!, file: path)
            return Array(UnsafeRawBufferPointer(start: page, count: sealer.usableSize))
        }
        #expect(read[...] == clear[0..<sealer.usableSize])
    }

    /// Few pages read (their entries listed) or more than ``SetEntries/listed`` (every entry up to the highest
    /// cleared), one of them in a second chunk of entries: none is current in the next open.
    @Test(arguments: [3, SetEntries.listed + 6])
    func aKeptReservationClearsEveryEntryItsFileSet(pagesRead: Int) throws {
        let sealer = PageSealer(cipher: try BlockCipher(key: Self.key(10)), fileID: Self.fileID, pageSize: 4096)
        // A size no other test uses, so that the reservation kept below is the one taken again.
        let maximumBytes = (1 << 30) + 4096 * (41 + pagesRead)
        let path = PathRef("/kept-entries-test-file")
        let numbers: [PageNumber] = (0..<pagesRead).map { (index: Int) -> PageNumber in
            index == 1 ? 5000 : PageNumber(2 + 3 * index)
        }
        var sealed: [PageNumber: [UInt8]] = [:]
        for number in numbers {
            let clear = (0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ Int(number)) }
            var page = [UInt8](repeating: 0, count: 4096)
            try clear.withUnsafeBytes { clear in
                try page.withUnsafeMutableBytes {
                    try sealer.seal(clear.baseAddress!, page: number, into: $0.baseAddress!)
                }
            }
            sealed[number] = page
        }
        let slot = try { () throws -> UnsafeRawPointer in
            let first = try #require(DecryptedPages(sealer: sealer, maximumBytes: maximumBytes))
            var slot: UnsafeRawPointer?
            for number in numbers {
                let page = try sealed[number]!.withUnsafeBytes {
                    try first.page(number, sealed: $0.baseAddress!, file: path)
                }
                slot = slot ?? page
            }
            return try #require(slot)
        }()
        let second = try #require(DecryptedPages(sealer: sealer, maximumBytes: maximumBytes))
        #expect(second.holds(slot), "the closed file's reservation is reused")
        for number in numbers {
            #expect(second.current.pointee.knownCurrent(number) == nil)
            // Damaged, nonce and tag kept: authenticated again, it fails.
            var damaged = sealed[number]!
            damaged[60] ^= 0x04
            #expect(throws: StorageError.self) {
                try damaged.withUnsafeBytes { _ = try second.page(number, sealed: $0.baseAddress!, file: path) }
            }
        }
    }

    @Test func aPageDamagedAfterAnOpenFailsTheNextOpen() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("damaged.strata")
        let key = Self.key(3)
        try Self.fill(path, key: key, seed: 3)
        // An open that seeds its cache, keeps its contexts and, at close, its reservation.
        try Self.check(path, key: key, seed: 3)
        // Damage every page past the metas (nonce and tag kept): nothing the last open authenticated may pass.
        let handle = try #require(FileHandle(forUpdatingAtPath: path))
        var bytes = [UInt8](handle.readDataToEndOfFile())
        for page in stride(from: 2 * 4096, to: bytes.count, by: 4096) { bytes[page + 100] ^= 0x20 }
        try handle.seek(toOffset: 0)
        handle.write(Data(bytes))
        try handle.close()
        // The commit log holds the same pages, signed, and the next open would replay them over the damage.
        try? FileManager.default.removeItem(atPath: path + ".log")
        // Both meta slots name damaged pages: the open reports the damage, typed.
        do {
            let store = try Store.open(path: path, options: StoreOptions(encryptionKey: key))
            store.close()
            Issue.record("a damaged file opened")
        } catch {
            guard case .incompatibleFile(_, let reason) = error else {
                Issue.record("expected incompatibleFile, got \(error)")
                return
            }
            #expect(reason.contains("meta 0") && reason.contains("meta 1"), "\(reason)")
        }
    }
}

import Foundation
import Testing

@testable import StrataStorage

/// The decrypted copy of an encrypted file's pages (``DecryptedPages``, issue 26), over a stand-in for the file's
/// mapping: a page is decrypted once and then found by its nonce; a page rewritten (a new nonce, as another
/// process's commit leaves it) is decrypted again; a page that does not authenticate is damage and never read;
/// readers on several threads get the right bytes.
@Suite("Decrypted pages")
struct DecryptedPagesTests {
    private static let pageSize = 4096
    private static let pageCount = 64

    /// Sealed pages standing in for an encrypted file's mapping, and what each holds decrypted.
    private final class SealedFile: @unchecked Sendable {
        let sealer: PageSealer
        let base: UnsafeMutableRawPointer
        let path = PathRef("/sealed-test-file")
        private(set) var contents: [[UInt8]]

        init() throws {
            sealer = PageSealer(
                cipher: try BlockCipher(key: (0..<64).map { UInt8($0) }), fileID: [UInt8](repeating: 3, count: 16),
                pageSize: DecryptedPagesTests.pageSize)
            base = .allocate(byteCount: DecryptedPagesTests.pageCount * DecryptedPagesTests.pageSize, alignment: 4096)
            contents = []
            for number in 0..<DecryptedPagesTests.pageCount {
                contents.append([])
                try write(PageNumber(number), generation: 0)
            }
        }

        deinit { base.deallocate() }

        /// Seals new content for page `number`, as a commit writes it.
        func write(_ number: PageNumber, generation: Int) throws {
            let plain = (0..<sealer.usableSize).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(number) &+ generation) }
            try plain.withUnsafeBytes { plain in
                try sealer.seal(plain.baseAddress!, page: number, into: base + Int(number) * sealer.pageSize)
            }
            contents[Int(number)] = plain
        }

        func sealed(_ number: PageNumber) -> UnsafeRawPointer { UnsafeRawPointer(base + Int(number) * sealer.pageSize) }
    }

    private func read(_ pages: DecryptedPages, _ file: SealedFile, _ number: PageNumber) throws -> [UInt8] {
        let page = try pages.page(number, sealed: file.sealed(number), file: file.path)
        return Array(UnsafeRawBufferPointer(start: page, count: file.sealer.usableSize))
    }

    @Test func aPageIsDecryptedOnceAndFoundByItsNonceAfterwards() throws {
        let file = try SealedFile()
        let pages = try #require(DecryptedPages(sealer: file.sealer, maximumBytes: 1 << 30))
        #expect(try read(pages, file, 5) == file.contents[5])
        let first = try pages.page(5, sealed: file.sealed(5), file: file.path)
        // Damage the ciphertext without touching the nonce: a lookup that decrypted again would now fail, so a
        // clean second read shows the entry was found by its nonce alone.
        file.base.storeBytes(
            of: ~file.sealed(5).load(fromByteOffset: 100, as: UInt8.self), toByteOffset: 5 * Self.pageSize + 100,
            as: UInt8.self)
        let second = try pages.page(5, sealed: file.sealed(5), file: file.path)
        #expect(first == second)
        #expect(try read(pages, file, 5) == file.contents[5])
    }

    @Test func aPageStoredAtCommitIsReadWithoutDecrypting() throws {
        let file = try SealedFile()
        let pages = try #require(DecryptedPages(sealer: file.sealer, maximumBytes: 1 << 30))
        #expect(try read(pages, file, 7) == file.contents[7])
        // A commit rewrites page 7 and stores its clear bytes as it seals them.
        try file.write(7, generation: 2)
        file.contents[7].withUnsafeBytes { clear in
            pages.store(7, clear: clear.baseAddress!, sealed: file.sealed(7))
        }
        // Damage the ciphertext without touching the nonce: only a read that does not decrypt still succeeds.
        file.base.storeBytes(
            of: ~file.sealed(7).load(fromByteOffset: 100, as: UInt8.self), toByteOffset: 7 * Self.pageSize + 100,
            as: UInt8.self)
        #expect(try read(pages, file, 7) == file.contents[7])
        // A page rewritten again by another process (a new nonce, another commit than the one that stored it; the
        // file's reload starts a new epoch) is decrypted again.
        try file.write(7, generation: 3)
        pages.advanceEpoch()
        #expect(try read(pages, file, 7) == file.contents[7])
    }

    @Test func aRewrittenPageIsDecryptedAgain() throws {
        let file = try SealedFile()
        let pages = try #require(DecryptedPages(sealer: file.sealer, maximumBytes: 1 << 30))
        #expect(try read(pages, file, 9) == file.contents[9])
        try file.write(9, generation: 1)
        pages.advanceEpoch()
        #expect(try read(pages, file, 9) == file.contents[9])
        #expect(try read(pages, file, 10) == file.contents[10])
    }

    @Test func aPageThatDoesNotAuthenticateIsDamage() throws {
        let file = try SealedFile()
        let pages = try #require(DecryptedPages(sealer: file.sealer, maximumBytes: 1 << 30))
        let before = file.contents[12]
        #expect(try read(pages, file, 12) == before)
        // A rewrite whose bytes were then damaged: the new nonce misses, and its tag fails.
        try file.write(12, generation: 1)
        pages.advanceEpoch()
        file.base.storeBytes(
            of: ~file.sealed(12).load(fromByteOffset: 7, as: UInt8.self), toByteOffset: 12 * Self.pageSize + 7,
            as: UInt8.self)
        #expect(throws: StorageError.self) { try pages.page(12, sealed: file.sealed(12), file: file.path) }
        // A page never read before, damaged, and the same page at another number: damage too.
        file.base.storeBytes(
            of: ~file.sealed(13).load(fromByteOffset: 4000, as: UInt8.self), toByteOffset: 13 * Self.pageSize + 4000,
            as: UInt8.self)
        #expect(throws: StorageError.self) { try pages.page(13, sealed: file.sealed(13), file: file.path) }
        #expect(throws: StorageError.self) { try pages.page(14, sealed: file.sealed(15), file: file.path) }
        #expect(throws: StorageError.self) {
            try pages.page(PageNumber(pages.capacity), sealed: file.sealed(1), file: file.path)
        }
    }

    @Test func aSlotKnownCurrentInTheEpochIsUsedAndANewEpochComparesNoncesAgain() throws {
        let file = try SealedFile()
        let pages = try #require(DecryptedPages(sealer: file.sealer, maximumBytes: 1 << 30))
        let before = file.contents[20]
        #expect(try read(pages, file, 20) == before)
        // Rewritten by another process's commit that this process has not reloaded yet: no reader here can reach
        // it, and the slot known current in this epoch is used without looking at the sealed page.
        try file.write(20, generation: 4)
        #expect(try read(pages, file, 20) == before)
        // The reload that makes that commit readable starts a new epoch: the nonce is compared, the page
        // decrypted again.
        pages.advanceEpoch()
        #expect(try read(pages, file, 20) == file.contents[20])
        // Found current in the new epoch, it is used without the sealed page again: damaging the nonce shows it.
        let tail = 20 * Self.pageSize + file.sealer.usableSize
        file.base.storeBytes(
            of: ~file.base.load(fromByteOffset: tail, as: UInt8.self), toByteOffset: tail, as: UInt8.self)
        #expect(try read(pages, file, 20) == file.contents[20])
        // And in the next epoch the changed nonce is compared, and the page fails its tag.
        pages.advanceEpoch()
        #expect(throws: StorageError.self) { try pages.page(20, sealed: file.sealed(20), file: file.path) }
    }

    @Test func theReadPathsLookupWithoutReferenceCountingFindsExactlyTheSlotsKnownCurrentInTheEpoch() throws {
        let file = try SealedFile()
        let pages = try #require(DecryptedPages(sealer: file.sealer, maximumBytes: 1 << 30))
        let current = pages.current.pointee
        // Never read: nothing known, the sealed page must be looked at.
        #expect(current.knownCurrent(12) == nil)
        let slot = try pages.page(12, sealed: file.sealed(12), file: file.path)
        #expect(current.knownCurrent(12) == slot)
        // Beyond the slots, or in a chunk of entries never installed: nothing known.
        #expect(current.knownCurrent(PageNumber(pages.capacity)) == nil)
        #expect(current.knownCurrent(PageNumber(pages.capacity - 1)) == nil)
        // Another process's commit rewrote it: after the reload's new epoch it is not known current, and the
        // full lookup compares the nonce and decrypts the new content.
        try file.write(12, generation: 9)
        pages.advanceEpoch()
        #expect(current.knownCurrent(12) == nil)
        #expect(try read(pages, file, 12) == file.contents[12])
        #expect(current.knownCurrent(12) == slot)
        // A slot a write transaction claims is known current for no one until its commit stores it.
        _ = pages.claim(12)
        #expect(current.knownCurrent(12) == nil)
    }

    @Test func readersOnSeveralThreadsGetTheirPagesBytes() throws {
        let file = try SealedFile()
        let pages = try #require(DecryptedPages(sealer: file.sealer, maximumBytes: 1 << 30))
        let failures = Locked(0)
        DispatchQueue.concurrentPerform(iterations: 4) { thread in
            for round in 0..<20 {
                for step in 0..<Self.pageCount {
                    let number = PageNumber((step * 7 + thread * 13 + round) % Self.pageCount)
                    if (try? read(pages, file, number)) != file.contents[Int(number)] {
                        failures.withLock { $0 += 1 }
                    }
                }
            }
        }
        #expect(failures.withLock { $0 } == 0)
    }
}

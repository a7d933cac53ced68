import Testing

@testable import StrataStorage

/// The meta pages of an encrypted file (``SealedMeta``, issue 26): a clear-text header, then the meta record
/// sealed. A sealed meta opens to exactly the meta written, only in its own slot, in its own file, under its own
/// key and undamaged; anything else is rejected as a damaged slot would be, so recovery can fall back.
@Suite("Sealed meta pages")
struct SealedMetaTests {
    private static let pageSize = 4096
    private let key = (0..<64).map { UInt8(($0 * 7 + 1) & 0xFF) }

    private func codec(key: [UInt8]? = nil, header: EncryptedFileHeader? = nil) throws -> SealedMeta {
        let cipher = try BlockCipher(key: key ?? self.key)
        return SealedMeta(
            header: try header ?? EncryptedFileHeader(pageSize: Self.pageSize, cipher: cipher), cipher: cipher)
    }

    private func meta(version: UInt64, written: Int = 3) -> Meta {
        Meta(
            version: version, pageCount: 40, pageSize: Self.pageSize, catalog: TreeRoot(kind: .keyed),
            freeTree: TreeRoot(kind: .keyed), commitTime: 1_700_000_000_000_000,
            written: (0..<written).map { Meta.PageStamp(page: PageNumber(2 + $0), checksum: UInt64($0) &* 0x9E37) },
            reservedTail: PageSealer.overhead)
    }

    private func encode(_ codec: SealedMeta, _ meta: Meta, slot: PageNumber) throws -> [UInt8] {
        var page = [UInt8](repeating: 0xEE, count: Self.pageSize)
        try page.withUnsafeMutableBytes { try codec.encode(meta, into: $0.baseAddress!, slot: slot) }
        return page
    }

    private func decode(_ codec: SealedMeta, _ page: [UInt8], slot: PageNumber) throws -> Result<
        Meta, Meta.Rejection
    > {
        try page.withUnsafeBytes { try codec.decode($0.baseAddress!, slot: slot, available: $0.count) }
    }

    private func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        (0...(haystack.count - needle.count)).contains { Array(haystack[$0..<$0 + needle.count]) == needle }
    }

    @Test func aSealedMetaOpensToTheMetaWrittenBehindItsClearTextHeader() throws {
        let codec = try codec()
        let written = meta(version: 9)
        let page = try encode(codec, written, slot: 1)
        #expect(try decode(codec, page, slot: 1) == .success(written))
        #expect(
            EncryptedFileHeader.decode(page.withUnsafeBytes { UnsafeRawBufferPointer(rebasing: $0[0..<40]) })
                == codec.header)
        // The plain meta's magic and fields are inside the ciphertext: a plain reader finds no Strata meta.
        #expect(!contains(page, Meta.magic))
        #expect(
            page.withUnsafeBytes { Meta.decode($0.baseAddress!, slot: 1, available: $0.count) }
                == .failure(
                    .notStrata))
    }

    @Test func aFullListOfWrittenPagesFitsBeforeTheNonceAndTag() throws {
        let codec = try codec()
        #expect(codec.maxWritten == Meta.maxWritten(usableSize: Self.pageSize - 40 - 44))
        let written = meta(version: 2, written: codec.maxWritten)
        #expect(try decode(codec, try encode(codec, written, slot: 0), slot: 0) == .success(written))
    }

    @Test func aFlippedByteAnywhereRejectsTheSlot() throws {
        let codec = try codec()
        let page = try encode(codec, meta(version: 4), slot: 0)
        for offset in stride(from: 0, to: Self.pageSize, by: 37) {
            var damaged = page
            damaged[offset] ^= 0x10
            let expected: Meta.Rejection = offset < EncryptedFileHeader.size ? .notStrata : .checksum
            #expect(try decode(codec, damaged, slot: 0) == .failure(expected), "byte \(offset)")
        }
    }

    @Test func aMetaOpensOnlyInItsSlotItsFileAndUnderItsKey() throws {
        let codec = try codec()
        let page = try encode(codec, meta(version: 5), slot: 0)
        #expect(try decode(codec, page, slot: 1) == .failure(.checksum), "moved to the other slot")
        let otherFile = try self.codec()
        #expect(try decode(otherFile, page, slot: 0) == .failure(.notStrata), "another file's header")
        var otherKey = key
        otherKey[40] ^= 1
        let sameHeaderOtherKey = try self.codec(key: otherKey, header: codec.header)
        #expect(try decode(sameHeaderOtherKey, page, slot: 0) == .failure(.checksum), "another HMAC key")
    }

    @Test func aTruncatedSlotIsNotAMeta() throws {
        let codec = try codec()
        let page = try encode(codec, meta(version: 6), slot: 0)
        let short = Array(page[0..<(Self.pageSize - 1)])
        #expect(try decode(codec, short, slot: 0) == .failure(.notStrata))
    }
}

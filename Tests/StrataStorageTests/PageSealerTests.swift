import Testing

@testable import StrataStorage

/// How a page of an encrypted file is stored (``PageSealer``, issue 26): its usable bytes encrypted, then a fresh
/// nonce and a tag over the page number and the file id. A sealed page opens to exactly what was sealed, and only
/// at its own page number, in its own file, under its own key, undamaged; otherwise nothing is written.
@Suite("Page sealer")
struct PageSealerTests {
    private static let pageSize = 4096
    private let key = (0..<64).map { UInt8($0 * 3 & 0xFF) }
    private let fileID = (0..<16).map { UInt8($0 + 100) }

    private func sealer(key: [UInt8]? = nil, fileID: [UInt8]? = nil) throws -> PageSealer {
        PageSealer(
            cipher: try BlockCipher(key: key ?? self.key), fileID: fileID ?? self.fileID, pageSize: Self.pageSize)
    }

    /// A page whose usable bytes spell a recognisable text over and over.
    private func plainPage(_ usable: Int) -> [UInt8] {
        let text = Array("distinctive plaintext 26 ".utf8)
        return (0..<Self.pageSize).map { $0 < usable ? text[$0 % text.count] : 0 }
    }

    private func seal(_ sealer: PageSealer, _ page: [UInt8], number: PageNumber) throws -> [UInt8] {
        var sealed = [UInt8](repeating: 0, count: Self.pageSize)
        try page.withUnsafeBytes { plain in
            try sealed.withUnsafeMutableBytes { sealed in
                try sealer.seal(plain.baseAddress!, page: number, into: sealed.baseAddress!)
            }
        }
        return sealed
    }

    /// What opening `sealed` as page `number` gives: nil when it does not authenticate (and then the output
    /// buffer, filled with a marker first, must be untouched).
    private func open(_ sealer: PageSealer, _ sealed: [UInt8], number: PageNumber) throws -> [UInt8]? {
        var output = [UInt8](repeating: 0xA5, count: Self.pageSize)
        let opened = try sealed.withUnsafeBytes { sealed in
            try output.withUnsafeMutableBytes { output in
                try sealer.open(sealed.baseAddress!, page: number, into: output.baseAddress!)
            }
        }
        if !opened {
            #expect(output.allSatisfy { $0 == 0xA5 }, "a page that failed to open was written")
            return nil
        }
        return Array(output[0..<sealer.usableSize])
    }

    @Test func aSealedPageOpensToItsUsableBytesAndShowsNoPlaintext() throws {
        let sealer = try sealer()
        #expect(sealer.usableSize == Self.pageSize - 44)
        let page = plainPage(sealer.usableSize)
        let sealed = try seal(sealer, page, number: 7)
        #expect(try open(sealer, sealed, number: 7) == Array(page[0..<sealer.usableSize]))
        let needle = Array("distinctive".utf8)
        let found = (0...(sealed.count - needle.count)).contains { Array(sealed[$0..<$0 + needle.count]) == needle }
        #expect(!found, "the sealed page holds plaintext")
        // Every write draws a new nonce, so the same page never looks the same twice.
        let again = try seal(sealer, page, number: 7)
        #expect(again[sealer.usableSize..<sealer.usableSize + 12] != sealed[sealer.usableSize..<sealer.usableSize + 12])
        #expect(again != sealed)
    }

    @Test func sealingWorksInPlace() throws {
        let sealer = try sealer()
        let page = plainPage(sealer.usableSize)
        var buffer = page
        try buffer.withUnsafeMutableBytes { buffer in
            try sealer.seal(buffer.baseAddress!, page: 9, into: buffer.baseAddress!)
            #expect(try sealer.open(buffer.baseAddress!, page: 9, into: buffer.baseAddress!))
        }
        #expect(Array(buffer[0..<sealer.usableSize]) == Array(page[0..<sealer.usableSize]))
    }

    @Test func aPageMovedCopiedFromAnotherFileOrUnderAnotherKeyDoesNotOpen() throws {
        let sealer = try sealer()
        let sealed = try seal(sealer, plainPage(sealer.usableSize), number: 7)
        #expect(try open(sealer, sealed, number: 8) == nil)
        #expect(try open(try self.sealer(fileID: (0..<16).map { UInt8($0) }), sealed, number: 7) == nil)
        #expect(try open(try self.sealer(key: (0..<64).map { UInt8(255 - $0) }), sealed, number: 7) == nil)
    }

    @Test(arguments: [0, 1, 31, 32, 2000, 4051, 4052, 4060, 4063, 4064, 4080, 4095])
    func aFlippedByteAnywhereFailsToOpen(offset: Int) throws {
        let sealer = try sealer()
        var sealed = try seal(sealer, plainPage(sealer.usableSize), number: 7)
        sealed[offset] ^= 0x10
        #expect(try open(sealer, sealed, number: 7) == nil)
    }
}

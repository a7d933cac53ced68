import Testing

@testable import StrataStorage

/// Recovery reads an encrypted file's meta slots through their seal (``MetaCodec``, issue 26): the newest slot
/// that opens wins, a damaged newer slot is passed over for the older one as after a torn meta write, and a file
/// whose slots both fail is reported, never read.
@Suite("Sealed meta recovery")
struct SealedMetaRecoveryTests {
    private static let pageSize = 4096
    private let cipher: BlockCipher
    private let codec: SealedMeta

    init() throws {
        cipher = try BlockCipher(key: (0..<64).map { UInt8(($0 * 11 + 5) & 0xFF) })
        codec = SealedMeta(header: try EncryptedFileHeader(pageSize: Self.pageSize, cipher: cipher), cipher: cipher)
    }

    private func meta(version: UInt64) -> Meta {
        Meta(
            version: version, pageCount: 2, pageSize: Self.pageSize, catalog: TreeRoot(kind: .keyed),
            freeTree: TreeRoot(kind: .keyed), commitTime: 1_700_000_000_000_000 + version,
            reservedTail: PageSealer.overhead)
    }

    /// An encrypted file of its two meta pages: slot 0 at version 4, slot 1 at version 5, with `damage` applied.
    private func file(damage: (inout [UInt8]) -> Void = { _ in }) throws -> MemoryFile {
        var bytes = [UInt8](repeating: 0, count: 2 * Self.pageSize)
        try bytes.withUnsafeMutableBytes { bytes in
            try codec.encode(meta(version: 4), into: bytes.baseAddress!, slot: 0)
            try codec.encode(meta(version: 5), into: bytes.baseAddress! + Self.pageSize, slot: 1)
        }
        damage(&bytes)
        let file = MemoryFile(name: "sealed-metas")
        try bytes.withUnsafeBytes { try file.write($0, at: 0) }
        return file
    }

    @Test func theNewestSealedSlotIsRecovered() throws {
        let (recovered, _) = try SharedFile.recover(try file(), metas: .sealed(codec))
        #expect(recovered == meta(version: 5))
    }

    @Test func aDamagedNewerSlotFallsBackToTheOlderOne() throws {
        let damaged = try file { $0[Self.pageSize + 700] ^= 0x01 }
        let (recovered, _) = try SharedFile.recover(damaged, metas: .sealed(codec))
        #expect(recovered == meta(version: 4))
    }

    @Test func bothSlotsDamagedIsReportedNotRead() throws {
        let damaged = try file {
            $0[100] ^= 0x01
            $0[Self.pageSize - 1] ^= 0x01
            $0[Self.pageSize + 100] ^= 0x01
        }
        #expect {
            try SharedFile.recover(damaged, metas: .sealed(self.codec))
        } throws: { error in
            guard case StorageError.incompatibleFile(_, let reason) = error else { return false }
            // Slot 1 is looked for where slot 0 says; with slot 0 unreadable it is reported "not found", as in a
            // plain file whose slots are both damaged.
            return reason.contains("meta 0: checksum mismatch") && reason.contains("meta 1:")
        }
    }

    @Test func aPlainReaderFindsNoStrataMeta() throws {
        let encrypted = try file()
        #expect {
            try SharedFile.recover(encrypted)
        } throws: { error in
            guard case StorageError.incompatibleFile(_, let reason) = error else { return false }
            return reason.contains("not a Strata file")
        }
    }
}

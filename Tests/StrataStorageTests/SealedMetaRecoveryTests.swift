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

    /// Changes the version slot `slot` claims in the clear (its two version fields, counter mode being
    /// malleable) from `from` to `to`, without its tag: what a forger can do.
    private static func forgeClaim(_ bytes: inout [UInt8], slot: Int, from: UInt64, to: UInt64) {
        let record = slot * pageSize + EncryptedFileHeader.size
        for field in [PageHeader.version, Meta.versionOffset] {
            for byte in 0..<8 { bytes[record + field + byte] ^= UInt8(truncatingIfNeeded: (from ^ to) >> (8 * byte)) }
        }
    }

    private func claims(_ file: MemoryFile) throws -> [UInt64?] {
        let mapping = try file.mapping(covering: 2 * Self.pageSize)
        return try (0..<2).map { slot throws(StorageError) in
            try codec.claimedVersion(mapping.base + slot * Self.pageSize, available: (2 - slot) * Self.pageSize)
        }
    }

    @Test func eachSlotClaimsItsVersionAndADamagedClaimIsNone() throws {
        #expect(try claims(try file()) == [4, 5])
        // One of the two version fields changed: they disagree, nothing is claimed.
        #expect(try claims(try file { $0[EncryptedFileHeader.size + Meta.versionOffset] ^= 0x08 }) == [nil, 5])
    }

    @Test func aForgedHigherClaimOnTheOlderSlotStillRecoversTheNewestThatAuthenticates() throws {
        let forged = try file { Self.forgeClaim(&$0, slot: 0, from: 4, to: 6) }
        #expect(try claims(forged) == [6, 5])
        let (recovered, _) = try SharedFile.recover(forged, metas: .sealed(codec))
        #expect(recovered == meta(version: 5))
    }

    @Test func aForgedLowerClaimOnTheNewerSlotRecoversWhatTheFullCheckWould() throws {
        // The newer slot no longer authenticates: the older one is recovered, claims or not.
        let forged = try file { Self.forgeClaim(&$0, slot: 1, from: 5, to: 3) }
        #expect(try claims(forged) == [4, 3])
        let (recovered, _) = try SharedFile.recover(forged, metas: .sealed(codec))
        #expect(recovered == meta(version: 4))
    }

    @Test func anOlderSlotClaimingAnOlderVersionIsPassedOverWithoutANoticeAsInAPlainFile() throws {
        // Damaged past its version fields: the newest is recovered without authenticating it, and the recovery
        // notice trusts its claim as it trusts a plain slot's agreeing version fields.
        let damaged = try file { $0[700] ^= 0x01 }
        let (recovered, mapping) = try SharedFile.recover(damaged, metas: .sealed(codec))
        #expect(recovered == meta(version: 5))
        #expect(
            try SharedFile.recoveryNotice(
                opened: recovered, mapping: mapping, fileSize: 2 * Self.pageSize, metas: .sealed(codec)) == nil)
        // Damaged in a version field: it claims nothing, is authenticated, and the notice says it is unreadable.
        let unclaimed = try file { $0[EncryptedFileHeader.size + Meta.versionOffset] ^= 0x01 }
        let (opened, unclaimedMapping) = try SharedFile.recover(unclaimed, metas: .sealed(codec))
        #expect(opened == meta(version: 5))
        let notice = try SharedFile.recoveryNotice(
            opened: opened, mapping: unclaimedMapping, fileSize: 2 * Self.pageSize, metas: .sealed(codec))
        #expect(notice?.page == 0)
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

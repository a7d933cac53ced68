/// How a meta page of an encrypted file is stored: the clear-text ``EncryptedFileHeader`` in its first 40 bytes,
/// then the meta record (``Meta``, laid out as in a plain file) sealed into the rest of the page.
///
/// ```
/// [0, 40)                    the header: magic, page size, file id, key check (clear text)
/// [40, pageSize - 44)        the first pageSize - 84 bytes of the encoded meta page, encrypted in the file's suite
/// [pageSize - 44, pageSize)  nonce and tag, as on every page (PageSealer), over the slot number and the file id
/// ```
///
/// The meta record keeps its page header and checksum inside the ciphertext, so once opened it is decoded and
/// checked exactly as a plain meta page is (``Meta/decode(_:slot:available:)``); the bytes it cannot use (the
/// header's 40 and the tail's 44) are zero in the encoded page, so its checksum covers the same bytes on both
/// sides. A slot whose tag fails is rejected like a plain slot whose checksum fails, so recovery falls back to the
/// other slot after a torn meta write exactly as it does for plain files.
struct SealedMeta: Sendable {
    let header: EncryptedFileHeader
    /// Seals the meta record: a ``PageSealer`` over the page minus the header, so its nonce and tag land in the
    /// page's last 44 bytes and its associated data is the slot number and the file id.
    private let sealer: PageSealer
    /// What an open already authenticated, for its decodes of the slots and recovery's page checks
    /// (``remembering(_:)``); nil outside an open.
    private(set) var authenticated: AuthenticatedPages?

    init(header: EncryptedFileHeader, cipher: BlockCipher) {
        self.header = header
        self.sealer = PageSealer(
            cipher: cipher, fileID: header.fileID, pageSize: header.pageSize - EncryptedFileHeader.size)
    }

    /// This codec, with its decodes and recovery's page checks remembering in `pages` what authenticated.
    func remembering(_ pages: AuthenticatedPages) -> SealedMeta {
        var copy = self
        copy.authenticated = pages
        return copy
    }

    /// Seals the file's tree and overflow pages: the same key and file id, over whole pages.
    var pageSealer: PageSealer {
        PageSealer(cipher: sealer.cipher, fileID: header.fileID, pageSize: header.pageSize)
    }

    /// Bytes of the encoded meta page that are sealed; the rest of it must be zero.
    var recordSize: Int { sealer.usableSize }

    /// How many written pages an encrypted meta page can list: fewer than a plain one, the header's 40 bytes less.
    var maxWritten: Int { Meta.maxWritten(usableSize: recordSize) }

    /// The gap of `meta` sealed as a slot stores it, as page offsets: where its encoded record is zero (past the
    /// pages it lists, ``PageExtents``) the sealed bytes are the key stream of its nonce, which the commit log leaves
    /// out of a compact record (``CommitLog``) and replay computes again (``SealedGap``). A page-size extent (none)
    /// when the list fills the record.
    func loggedGap(of meta: Meta) -> (head: Int, tail: Int) {
        let used = Meta.writtenOffset + meta.written.count * Meta.stampSize
        guard used < recordSize else { return (header.pageSize, header.pageSize) }
        return (EncryptedFileHeader.size + used, EncryptedFileHeader.size + recordSize)
    }

    /// Writes `meta` as meta slot `slot` into `page` (``EncryptedFileHeader/pageSize`` bytes).
    func encode(_ meta: Meta, into page: UnsafeMutableRawPointer, slot: PageNumber) throws(StorageError) {
        precondition(meta.pageSize == header.pageSize, "a meta of another page size than its file")
        precondition(meta.written.count <= maxWritten, "too many pages listed in an encrypted meta page")
        let record = UnsafeMutableRawPointer.allocate(byteCount: meta.pageSize, alignment: 8)
        defer { record.deallocate() }
        meta.encode(into: record, slot: slot)
        header.encode(into: page)
        try sealer.seal(UnsafeRawPointer(record), page: slot, into: page + EncryptedFileHeader.size)
    }

    /// The version meta slot `page` claims, decrypted without authentication: its record's first bytes (the
    /// page header's version and the meta's), when the two agree and are not zero; nil for a slot without this
    /// file's header or whose copies disagree. Tells recovery which slot to authenticate first and the recovery
    /// notice which slot is older, as a plain slot's unverified version fields do: nothing is read from a slot
    /// on this alone (see ``SharedFile/claimedNewestMeta(in:fileSize:metas:)``).
    func claimedVersion(_ page: UnsafeRawPointer, available: Int) throws(StorageError) -> UInt64? {
        guard available >= header.pageSize,
            EncryptedFileHeader.decode(UnsafeRawBufferPointer(start: page, count: EncryptedFileHeader.size))
                == header
        else { return nil }
        let sealed = page + EncryptedFileHeader.size
        let nonce = [UInt8](UnsafeRawBufferPointer(start: sealed + sealer.usableSize, count: BlockCipher.nonceSize))
        // Counter mode in both suites: the record's first four blocks decrypt on their own.
        let count = 64
        let clear = UnsafeMutableRawPointer.allocate(byteCount: count, alignment: 8)
        defer { clear.deallocate() }
        try sealer.cipher.decryptAuthenticated(
            UnsafeRawBufferPointer(start: sealed, count: count), into: clear, nonce: nonce)
        let version = UnsafeRawPointer(clear).u64(PageHeader.version)
        return version != 0 && version == UnsafeRawPointer(clear).u64(Meta.versionOffset) ? version : nil
    }

    /// Reads meta slot `slot` from `page`, which holds at least `available` readable bytes. A slot without this
    /// file's header is `notStrata`; one whose tag fails (damaged, torn, moved or from another file) is
    /// `checksum`.
    ///
    /// The sealed bytes are copied first and authenticated, decrypted and decoded in the copy: `page` may be a
    /// mapping another process writes meanwhile, and what is decoded must be what was authenticated. During an
    /// open (``remembering(_:)``) a slot decoded before with the same sealed tail gives the same meta at once.
    func decode(_ page: UnsafeRawPointer, slot: PageNumber, available: Int) throws(StorageError) -> Result<
        Meta, Meta.Rejection
    > {
        let pageSize = header.pageSize
        guard available >= pageSize,
            EncryptedFileHeader.decode(UnsafeRawBufferPointer(start: page, count: EncryptedFileHeader.size))
                == header
        else { return .failure(.notStrata) }
        let sealedSize = sealer.pageSize
        let usable = sealer.usableSize
        if let authenticated,
            let meta = authenticated.meta(
                slot: slot,
                tail: UnsafeRawBufferPointer(
                    start: page + EncryptedFileHeader.size + usable, count: PageSealer.overhead))
        {
            return .success(meta)
        }
        // The copy: the sealed bytes, then zeros to a whole page (the encoded meta page's bytes past the sealed
        // record are zero, and its checksum covers them).
        let record = UnsafeMutableRawPointer.allocate(byteCount: pageSize, alignment: 8)
        defer { record.deallocate() }
        record.copyMemory(from: page + EncryptedFileHeader.size, byteCount: sealedSize)
        (record + sealedSize).initializeMemory(as: UInt8.self, repeating: 0, count: pageSize - sealedSize)
        let tail = [UInt8](UnsafeRawBufferPointer(start: record + usable, count: PageSealer.overhead))
        guard try sealer.open(UnsafeRawPointer(record), page: slot, into: record) else { return .failure(.checksum) }
        (record + usable).initializeMemory(as: UInt8.self, repeating: 0, count: PageSealer.overhead)
        let decoded = Meta.decode(UnsafeRawPointer(record), slot: slot, available: pageSize)
        if let authenticated, case .success(let meta) = decoded {
            tail.withUnsafeBytes { authenticated.insert(meta, slot: slot, tail: $0) }
        }
        return decoded
    }
}

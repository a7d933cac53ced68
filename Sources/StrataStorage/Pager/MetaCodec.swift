/// How a file's meta pages are written and read: as plain ``Meta`` pages, or sealed behind an encrypted file's
/// header (``SealedMeta``). Recovery reads the meta slots through it, so the same fallback rules (newest valid
/// slot wins; a damaged slot is passed over) hold for both kinds of file.
enum MetaCodec: Sendable {
    case plain
    case sealed(SealedMeta)

    /// Reads meta slot `slot` from `page`, which holds at least `available` readable bytes.
    func decode(_ page: UnsafeRawPointer, slot: PageNumber, available: Int) throws(StorageError) -> Result<
        Meta, Meta.Rejection
    > {
        switch self {
        case .plain: Meta.decode(page, slot: slot, available: available)
        case .sealed(let sealed): try sealed.decode(page, slot: slot, available: available)
        }
    }

    /// Writes `meta` as meta slot `slot` into `page` (`meta.pageSize` bytes).
    func encode(_ meta: Meta, into page: UnsafeMutableRawPointer, slot: PageNumber) throws(StorageError) {
        switch self {
        case .plain: meta.encode(into: page, slot: slot)
        case .sealed(let sealed): try sealed.encode(meta, into: page, slot: slot)
        }
    }

    /// The gap a compact log record leaves out of `meta`'s sealed image (``SealedMeta/loggedGap(of:)``); nil for a
    /// plain file, whose log finds the gap in the clear page.
    func loggedGap(of meta: Meta) -> (head: Int, tail: Int)? {
        switch self {
        case .plain: nil
        case .sealed(let sealed): sealed.loggedGap(of: meta)
        }
    }

    /// Whether the file's pages are sealed.
    var isSealed: Bool {
        if case .sealed = self { return true }
        return false
    }

    /// What seals and opens the file's tree and overflow pages; nil for a plain file.
    var pageSealer: PageSealer? {
        switch self {
        case .plain: nil
        case .sealed(let sealed): sealed.pageSealer
        }
    }

    /// How many written pages a meta page of this file can list, its pages' layout using `usableSize` bytes.
    func maxWritten(usableSize: Int) -> Int {
        switch self {
        case .plain: Meta.maxWritten(usableSize: usableSize)
        case .sealed(let sealed): sealed.maxWritten
        }
    }

    /// Runs `body` on the clear bytes of page `number`, stored at `page` (`pageSize` bytes): the page itself in a
    /// plain file; in an encrypted one a decrypted copy (its reserved tail zero, as when its checksum was
    /// computed), or nil when the page does not authenticate. For recovery, which checks a few pages before any
    /// decrypted-page cache exists; during an open (``remembering(_:)``) a page it authenticated already is only
    /// decrypted, and one authenticated whole seeds the file's decrypted-page cache (``AuthenticatedPages``).
    ///
    /// The page is copied first and opened in the copy: the mapping may be written by another process's commit
    /// meanwhile, and what is checked, decrypted and seeded must be the bytes authenticated.
    func withClearPage<R>(
        _ page: UnsafeRawPointer, number: PageNumber, pageSize: Int, _ body: (UnsafeRawPointer?) -> R
    ) -> R {
        guard case .sealed(let sealed) = self else { return body(page) }
        let clear = UnsafeMutableRawPointer.allocate(byteCount: pageSize, alignment: 16)
        defer { clear.deallocate() }
        clear.copyMemory(from: page, byteCount: pageSize)
        let sealer = sealed.pageSealer
        let opened =
            (try? sealer.open(UnsafeRawPointer(clear), page: number, into: clear, authenticated: sealed.authenticated))
            ?? false
        // The nonce and tag are not part of the clear page: its checksum was computed with zeros there.
        (clear + sealer.usableSize).initializeMemory(as: UInt8.self, repeating: 0, count: PageSealer.overhead)
        return body(opened ? UnsafeRawPointer(clear) : nil)
    }

    /// Whether this open found `meta`'s commit whole before (an encrypted file's open: see
    /// ``AuthenticatedPages/foundWhole(_:)``); always false for a plain file, whose checks cost little.
    func foundWhole(_ meta: Meta) -> Bool {
        guard case .sealed(let sealed) = self, let authenticated = sealed.authenticated else { return false }
        return authenticated.foundWhole(meta)
    }

    /// Remembers, during an encrypted file's open, that `meta`'s commit was found whole.
    func insertWhole(_ meta: Meta) {
        guard case .sealed(let sealed) = self, let authenticated = sealed.authenticated else { return }
        authenticated.insertWhole(meta)
    }

    /// This codec, remembering in `pages` which pages recovery's checks authenticated (one open's, so that its
    /// second read of the metas does not authenticate them again); a plain codec as it is.
    func remembering(_ pages: AuthenticatedPages) -> MetaCodec {
        guard case .sealed(let sealed) = self else { return self }
        return .sealed(sealed.remembering(pages))
    }
}

extension MetaCodec {
    /// The codec of a new file created with `options`: plain without a key; with one, sealed behind a fresh
    /// header (a new random file id).
    static func forNewFile(options: StoreOptions) throws(StorageError) -> MetaCodec {
        guard let key = options.encryptionKey else { return .plain }
        let cipher = try BlockCipher(key: key, suite: options.cipherSuite)
        let header = try EncryptedFileHeader(pageSize: options.pageSize, cipher: cipher)
        return .sealed(SealedMeta(header: header, cipher: cipher))
    }

    /// The codec of the existing file `file` opened with `options`, from its clear-text header. The open checked
    /// the key against the file already (``EncryptionOpenCheck``); the file is read again here because it may
    /// have been replaced meanwhile, and the header must be the one of the file being opened.
    static func forExisting(_ file: any PageFile, options: StoreOptions) throws(StorageError) -> MetaCodec {
        guard let key = options.encryptionKey else { return .plain }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: EncryptedFileHeader.size, alignment: 8)
        defer { buffer.deallocate() }
        let read = try file.read(into: buffer, at: 0)
        guard read == EncryptedFileHeader.size,
            let header = EncryptedFileHeader.decode(UnsafeRawBufferPointer(buffer))
        else { throw .notEncrypted(path: file.path) }
        let cipher = try BlockCipher(key: key, suite: try header.knownSuite(path: file.path))
        guard try header.accepts(cipher) else { throw .wrongEncryptionKey(path: file.path) }
        return .sealed(SealedMeta(header: header, cipher: cipher))
    }
}

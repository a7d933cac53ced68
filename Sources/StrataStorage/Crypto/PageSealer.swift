/// Seals the pages of one encrypted file and opens them again: the ``BlockCipher`` of the file's key, bound to
/// the file's id (``EncryptedFileHeader``).
///
/// A page of an encrypted file is stored as
/// ```
/// [0, usable)              the first `usable` bytes of the page, encrypted (AES-256-GCM, or AES-256-CTR in
///                          files of the first cipher suite: ``CipherSuite``)
/// [usable, usable + 12)    the nonce, fresh for every write of the page (``NonceSequence``)
/// [usable + 12, pageSize)  the tag field: GCM's 16-byte tag and 16 zero bytes, or HMAC-SHA-256 of (associated
///                          data, nonce, ciphertext) (``BlockCipher``)
/// ```
/// where `usable = pageSize - 44` (``PageGeometry/usableSize``): the page layout never puts data in the last 44
/// bytes. The associated data is the page number and the file id, so a page moved within the file, or copied from
/// another file encrypted with the same key, does not authenticate.
///
/// A fresh nonce per write means that two reads finding the same 12 nonce bytes at a page found the same page
/// content, which is how a cache of decrypted pages knows an entry is current without decrypting again, across
/// processes too.
struct PageSealer: Sendable {
    /// Bytes at the end of every page that hold its nonce and tag.
    static let overhead = BlockCipher.nonceSize + BlockCipher.tagSize

    let cipher: BlockCipher
    let fileID: [UInt8]
    let pageSize: Int

    /// Bytes of a page that hold data.
    var usableSize: Int { pageSize - Self.overhead }

    init(cipher: BlockCipher, fileID: [UInt8], pageSize: Int) {
        precondition(fileID.count == EncryptedFileHeader.fileIDSize, "a file id has 16 bytes")
        self.cipher = cipher
        self.fileID = fileID
        self.pageSize = pageSize
    }

    /// Runs `body` on the associated data of page `number`: its number (little-endian u32), then the file id. Built
    /// on the stack: every seal and every open needs it.
    private func withAssociated<R>(_ number: PageNumber, _ body: (UnsafeRawBufferPointer) -> R) -> R {
        withUnsafeTemporaryAllocation(byteCount: 4 + fileID.count, alignment: 4) { buffer in
            buffer.storeBytes(of: number.littleEndian, as: UInt32.self)
            fileID.withUnsafeBytes { (buffer.baseAddress! + 4).copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
            return body(UnsafeRawBufferPointer(buffer))
        }
    }

    /// Encrypts the first ``usableSize`` bytes of `plaintext` into `sealed` (``pageSize`` bytes, which may be
    /// `plaintext`'s own memory) under a fresh nonce, and writes the nonce and tag after them.
    func seal(_ plaintext: UnsafeRawPointer, page number: PageNumber, into sealed: UnsafeMutableRawPointer)
        throws(StorageError)
    {
        let usable = usableSize
        // Drawn straight into the page's tail, which the cipher reads it from: no array per seal.
        NonceSequence.shared.next(into: sealed + usable)
        let nonce = UnsafeRawBufferPointer(start: sealed + usable, count: BlockCipher.nonceSize)
        let failure: StorageError? = withAssociated(number) { associated -> StorageError? in
            do throws(StorageError) {
                try cipher.seal(
                    UnsafeRawBufferPointer(start: plaintext, count: usable), into: sealed, nonce: nonce,
                    associated: associated, tag: sealed + usable + BlockCipher.nonceSize)
                return nil
            } catch {
                return error
            }
        }
        if let failure { throw failure }
    }

    /// Checks the tag of the sealed page `sealed` (``pageSize`` bytes) stored as page `number` and, only if it
    /// authenticates, decrypts its first ``usableSize`` bytes into `plaintext` (which may be `sealed`'s own
    /// memory). Returns false, writing nothing, when it does not: the page was damaged or changed, moved from
    /// elsewhere, or sealed under another key.
    ///
    /// With `authenticated`, a page whose number and tail (nonce and tag) it holds is only decrypted, and one that
    /// authenticates is added to it (and stored in its decrypted-page cache when it seeds one: `sealed` must then
    /// not change while this runs, a private copy when the file may be written meanwhile, so that the nonce stored
    /// is the one of the bytes authenticated).
    func open(
        _ sealed: UnsafeRawPointer, page number: PageNumber, into plaintext: UnsafeMutableRawPointer,
        authenticated: AuthenticatedPages? = nil
    ) throws(StorageError) -> Bool {
        let usable = usableSize
        guard let authenticated else { return try open(sealed, page: number, into: plaintext) }
        let tail = UnsafeRawBufferPointer(start: sealed + usable, count: Self.overhead)
        if authenticated.contains(number, tail: tail) {
            let nonce = Array(tail[0..<BlockCipher.nonceSize])
            try cipher.decryptAuthenticated(
                UnsafeRawBufferPointer(start: sealed, count: usable), into: plaintext, nonce: nonce)
            return true
        }
        guard try open(sealed, page: number, into: plaintext) else { return false }
        authenticated.insert(number, tail: tail)
        authenticated.seeding?.store(number, clear: plaintext, sealed: sealed)
        return true
    }

    private func open(_ sealed: UnsafeRawPointer, page number: PageNumber, into plaintext: UnsafeMutableRawPointer)
        throws(StorageError) -> Bool
    {
        let usable = usableSize
        let nonce = Array(UnsafeRawBufferPointer(start: sealed + usable, count: BlockCipher.nonceSize))
        let failure: Result<Bool, StorageError> = withAssociated(number) { associated in
            do throws(StorageError) {
                return .success(
                    try cipher.open(
                        UnsafeRawBufferPointer(start: sealed, count: usable), into: plaintext, nonce: nonce,
                        associated: associated,
                        tag: UnsafeRawBufferPointer(
                            start: sealed + usable + BlockCipher.nonceSize, count: BlockCipher.tagSize)))
            } catch {
                return .failure(error)
            }
        }
        return try failure.get()
    }
}

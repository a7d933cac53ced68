/// Authenticates the records of an encrypted file's commit log with the file's key.
///
/// A record carries page images that are sealed already (each authenticates on its own once in the main file), but
/// the record's header says where they go and which version they make, and the unkeyed XXH64 checksum that
/// catches torn appends can be recomputed by anyone. So each record ends with a tag (a nonce and a GMAC, or an
/// HMAC-SHA-256 under the key's HMAC half in files of the first suite: ``BlockCipher/tag(of:associated:into:)``)
/// of the record's bytes after its checksum, bound to the file's id: a record changed, forged, or
/// taken from another file's log does not authenticate and is never replayed.
///
/// A compact record (``CommitLog``; every record written since issue 26's commit work) is signed over less: its
/// header and stamps, each image's sealed tail (nonce and tag, which identify the sealed bytes: another image of
/// the page has another tail) and the meta page's clear-text header, under associated data of its own
/// (`"STRATRC2"`), so that a tag of one kind never passes for the other. Each image then authenticates on its own
/// at replay, the meta page included.
struct LogRecordAuthenticator: Sendable {
    /// Bytes of the tag at the end of each record.
    static let tagSize = BlockCipher.tagSize

    let cipher: BlockCipher
    /// The file's page sealer: replay checks each page image with it.
    let sealer: PageSealer
    /// Opens the meta page's sealed record (its bytes after the clear-text header), as ``SealedMeta`` seals it:
    /// replay checks a compact record's meta image with it.
    let metaSealer: PageSealer
    /// Associated data: a label that tells a log record's tag from a sealed page's, then the file id.
    private let associated: [UInt8]
    /// Associated data of a compact record's tag: a label of its own, then the file id.
    private let compactAssociated: [UInt8]

    init(cipher: BlockCipher, fileID: [UInt8], pageSize: Int) {
        self.cipher = cipher
        sealer = PageSealer(cipher: cipher, fileID: fileID, pageSize: pageSize)
        metaSealer = PageSealer(cipher: cipher, fileID: fileID, pageSize: pageSize - EncryptedFileHeader.size)
        associated = Array("STRATREC".utf8) + fileID
        compactAssociated = Array("STRATRC2".utf8) + fileID
    }

    /// The authenticator of the file whose metas `metas` reads; nil for a plain file.
    init?(_ metas: MetaCodec) {
        guard case .sealed(let sealed) = metas else { return nil }
        self.init(
            cipher: sealed.pageSealer.cipher, fileID: sealed.header.fileID, pageSize: sealed.pageSealer.pageSize)
    }

    /// Writes the tag of `bytes` to the ``tagSize`` bytes at `tag`: over a whole record's bytes, or with `compact`
    /// over what a compact record's tag covers.
    func sign(_ bytes: UnsafeRawBufferPointer, compact: Bool = false, tag: UnsafeMutableRawPointer)
        throws(StorageError)
    {
        let label = compact ? compactAssociated : associated
        let failure: StorageError? = label.withUnsafeBytes { associated -> StorageError? in
            do throws(StorageError) {
                try cipher.tag(of: bytes, associated: associated, into: tag)
                return nil
            } catch {
                return error
            }
        }
        if let failure { throw failure }
    }

    /// Whether `tag` is the tag of `bytes` (signed as `compact` says). A failure of the cryptography counts as not
    /// authenticating.
    func verifies(_ bytes: UnsafeRawBufferPointer, compact: Bool = false, tag: UnsafeRawPointer) -> Bool {
        (compact ? compactAssociated : associated).withUnsafeBytes { associated in
            (try? cipher.authenticates(bytes, associated: associated, tag: tag)) ?? false
        }
    }
}

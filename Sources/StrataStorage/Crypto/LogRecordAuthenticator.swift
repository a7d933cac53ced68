/// Authenticates the records of an encrypted file's commit log with the file's key.
///
/// A record carries page images that are sealed already (each authenticates on its own once in the main file), but
/// the record's header says where they go and which version they make, and the unkeyed XXH64 checksum that
/// catches torn appends can be recomputed by anyone. So each record ends with a tag (a nonce and a GMAC, or an
/// HMAC-SHA-256 under the key's HMAC half in files of the first suite: ``BlockCipher/tag(of:associated:into:)``)
/// of the record's bytes after its checksum, bound to the file's id: a record changed, forged, or
/// taken from another file's log does not authenticate and is never replayed.
struct LogRecordAuthenticator: Sendable {
    /// Bytes of the tag at the end of each record.
    static let tagSize = BlockCipher.tagSize

    let cipher: BlockCipher
    /// The file's page sealer: replay checks each page image with it.
    let sealer: PageSealer
    /// Associated data: a label that tells a log record's tag from a sealed page's, then the file id.
    private let associated: [UInt8]

    init(cipher: BlockCipher, fileID: [UInt8], pageSize: Int) {
        self.cipher = cipher
        sealer = PageSealer(cipher: cipher, fileID: fileID, pageSize: pageSize)
        associated = Array("STRATREC".utf8) + fileID
    }

    /// The authenticator of the file whose metas `metas` reads; nil for a plain file.
    init?(_ metas: MetaCodec) {
        guard case .sealed(let sealed) = metas else { return nil }
        self.init(
            cipher: sealed.pageSealer.cipher, fileID: sealed.header.fileID, pageSize: sealed.pageSealer.pageSize)
    }

    /// Writes the tag of `bytes` to the ``tagSize`` bytes at `tag`.
    func sign(_ bytes: UnsafeRawBufferPointer, tag: UnsafeMutableRawPointer) throws(StorageError) {
        let failure: StorageError? = associated.withUnsafeBytes { associated -> StorageError? in
            do throws(StorageError) {
                try cipher.tag(of: bytes, associated: associated, into: tag)
                return nil
            } catch {
                return error
            }
        }
        if let failure { throw failure }
    }

    /// Whether `tag` is the tag of `bytes`. A failure of the cryptography counts as not authenticating.
    func verifies(_ bytes: UnsafeRawBufferPointer, tag: UnsafeRawPointer) -> Bool {
        associated.withUnsafeBytes { associated in
            (try? cipher.authenticates(bytes, associated: associated, tag: tag)) ?? false
        }
    }
}

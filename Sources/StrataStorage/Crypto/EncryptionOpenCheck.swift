/// Decides, from a file's first bytes and the options' key, whether an open may go ahead: before the open creates
/// a lock file, replays a log or writes anything, so that a missing, superfluous or wrong key fails with its own
/// error and leaves every file as it was.
enum EncryptionOpenCheck {
    /// Bytes read from the start of the file: an encrypted file's header, and a plain file's meta magic.
    private static let probeSize = max(EncryptedFileHeader.size, Meta.magicOffset + Meta.magic.count)

    /// Throws the error that opening `path` with `options` must fail with, or returns when the open may proceed.
    ///
    /// - a key of another length than 64 bytes: ``StorageError/invalidArgument(_:)``; the platform's cryptography
    ///   missing: ``StorageError/encryptionUnavailable(reason:)``;
    /// - an encrypted file without a key: ``StorageError/encryptionKeyRequired(path:)``; with another key:
    ///   ``StorageError/wrongEncryptionKey(path:)``; a plain file with a key: ``StorageError/notEncrypted(path:)``;
    ///   an encrypted file of a cipher suite this version does not know: ``StorageError/incompatibleFile(path:reason:)``.
    ///
    /// A missing, empty or foreign file is left to the open, which creates it or explains what is wrong.
    static func check(path: String, options: StoreOptions) throws(StorageError) {
        let cipher = try options.encryptionKey.map { (key) throws(StorageError) in
            try BlockCipher(key: key, suite: options.cipherSuite)
        }
        let file: DiskFile
        do throws(StorageError) {
            file = try DiskFile(path: path, writable: false, create: false)
        } catch .fileNotFound {
            return
        }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: probeSize, alignment: 8)
        defer { buffer.deallocate() }
        let read = try file.read(into: buffer, at: 0)
        let probe = Array(buffer)
        guard read == probeSize else { return }
        let header = probe.withUnsafeBytes { EncryptedFileHeader.decode($0) }
        if let header {
            guard let key = options.encryptionKey else { throw .encryptionKeyRequired(path: path) }
            let cipher = try BlockCipher(key: key, suite: try header.knownSuite(path: path))
            guard try header.accepts(cipher) else { throw .wrongEncryptionKey(path: path) }
        } else if cipher != nil, Array(probe[Meta.magicOffset..<Meta.magicOffset + Meta.magic.count]) == Meta.magic {
            throw .notEncrypted(path: path)
        }
    }

    /// Refuses a key for a store that has no file to encrypt (in memory, or over a test's page file).
    static func refuseKey(_ options: StoreOptions, for what: String) throws(StorageError) {
        guard let key = options.encryptionKey else { return }
        _ = try BlockCipher(key: key)
        throw .invalidArgument("\(what) cannot be encrypted: open it without an encryption key")
    }
}

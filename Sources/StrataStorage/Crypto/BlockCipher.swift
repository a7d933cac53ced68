/// Encryption with authentication of one block of a file (a page, a log record) under a 64-byte key, as the Realm
/// SDK's `encryptionKey` is: its first 32 bytes are the AES-256 key, its last 32 bytes the HMAC-SHA-256 key.
///
/// Encrypt-then-MAC: the block is encrypted with AES-256 in counter mode, its key stream starting at a 12-byte nonce
/// followed by a 32-bit block counter from zero; the tag is the HMAC-SHA-256 of the associated data's length (8
/// bytes, big-endian), the associated data (what binds the block to its place, such as its page number, so that a
/// block copied elsewhere in the file does not authenticate), the nonce and the ciphertext. Counter mode needs a
/// nonce that never repeats under one key: ``freshNonce()`` gives a 64-bit random prefix drawn per process and a
/// 32-bit counter (``NonceSequence``).
///
/// The primitives are the platform's (``CryptoPrimitives``). Creating a cipher checks that they are available, so a
/// key given where they are not fails when the file is opened, with ``StorageError/encryptionUnavailable(reason:)``.
package struct BlockCipher: Sendable {
    /// Bytes of an encryption key.
    package static let keySize = 64
    /// Bytes of a nonce.
    package static let nonceSize = 12
    /// Bytes of a tag.
    package static let tagSize = 32
    /// The largest block, in bytes: the counter has 32 bits of 16-byte AES blocks.
    package static let maximumBlockSize = (1 << 32) * 16

    /// The AES key, then the HMAC key.
    private let key: [UInt8]
    #if !canImport(CommonCrypto)
        /// Contexts keyed once per key in the process, reused by every call (see ``KeyedContexts``).
        private let contexts: KeyedContexts
    #endif

    /// A cipher under `key`, which must have ``keySize`` bytes.
    package init(key: [UInt8]) throws(StorageError) {
        guard key.count == Self.keySize else {
            throw .invalidArgument("an encryption key has \(Self.keySize) bytes, not \(key.count)")
        }
        try CryptoPrimitives.checkAvailable()
        self.key = key
        #if !canImport(CommonCrypto)
            contexts = KeyedContexts.shared(library: try LibCrypto.shared.get(), key: key)
        #endif
    }

    /// A fresh nonce, never given out before in this process (see ``NonceSequence``).
    package static func freshNonce() -> [UInt8] {
        NonceSequence.shared.next()
    }

    /// Encrypts `plaintext` into `ciphertext` (which may be the same memory, at least as long) and writes the tag
    /// of the result to the ``tagSize`` bytes at `tag`.
    package func seal(
        _ plaintext: UnsafeRawBufferPointer, into ciphertext: UnsafeMutableRawPointer, nonce: [UInt8],
        associated: UnsafeRawBufferPointer, tag: UnsafeMutableRawPointer
    ) throws(StorageError) {
        try crypt(plaintext, into: ciphertext, nonce: nonce)
        try authenticate(UnsafeRawBufferPointer(start: ciphertext, count: plaintext.count), nonce, associated, tag)
    }

    /// Checks `tag` against `ciphertext`, and only if it matches decrypts it into `plaintext` (which may be the
    /// same memory). Returns false, writing nothing, when it does not match: the key is wrong, or the block or its
    /// tag was damaged or changed.
    package func open(
        _ ciphertext: UnsafeRawBufferPointer, into plaintext: UnsafeMutableRawPointer, nonce: [UInt8],
        associated: UnsafeRawBufferPointer, tag: UnsafeRawBufferPointer
    ) throws(StorageError) -> Bool {
        precondition(tag.count == Self.tagSize, "a tag has \(Self.tagSize) bytes")
        var expected = [UInt8](repeating: 0, count: Self.tagSize)
        let failure: StorageError? = expected.withUnsafeMutableBytes { buffer -> StorageError? in
            do throws(StorageError) {
                try authenticate(ciphertext, nonce, associated, buffer.baseAddress!)
                return nil
            } catch {
                return error
            }
        }
        if let failure { throw failure }
        // Constant time: how many leading bytes matched must not show in how long the comparison took.
        var difference: UInt8 = 0
        for index in 0..<Self.tagSize { difference |= expected[index] ^ tag[index] }
        guard difference == 0 else { return false }
        try crypt(ciphertext, into: plaintext, nonce: nonce)
        return true
    }

    /// Decrypts `ciphertext` into `plaintext` (which may be the same memory) without checking its tag: only for a
    /// block whose tag, with this nonce, was checked already (``AuthenticatedPages``).
    package func decryptAuthenticated(
        _ ciphertext: UnsafeRawBufferPointer, into plaintext: UnsafeMutableRawPointer, nonce: [UInt8]
    ) throws(StorageError) {
        try crypt(ciphertext, into: plaintext, nonce: nonce)
    }

    /// Writes the ``tagSize``-byte tag of `data`, stored in the clear, to `tag`: the HMAC-SHA-256 of the associated
    /// data's length and bytes, then `data` (no nonce, nothing encrypted). For what only needs authenticating, such
    /// as a commit log record whose pages are sealed already; `associated` must tell it from a sealed block.
    package func tag(
        of data: UnsafeRawBufferPointer, associated: UnsafeRawBufferPointer, into tag: UnsafeMutableRawPointer
    ) throws(StorageError) {
        try authenticate(data, [], associated, tag)
    }

    /// Whether `tag` is the tag of `data` (see ``tag(of:associated:into:)``), compared in constant time.
    package func authenticates(
        _ data: UnsafeRawBufferPointer, associated: UnsafeRawBufferPointer, tag: UnsafeRawPointer
    ) throws(StorageError) -> Bool {
        var expected = [UInt8](repeating: 0, count: Self.tagSize)
        let failure: StorageError? = expected.withUnsafeMutableBytes { buffer -> StorageError? in
            do throws(StorageError) {
                try authenticate(data, [], associated, buffer.baseAddress!)
                return nil
            } catch {
                return error
            }
        }
        if let failure { throw failure }
        var difference: UInt8 = 0
        for index in 0..<Self.tagSize {
            difference |= expected[index] ^ tag.load(fromByteOffset: index, as: UInt8.self)
        }
        return difference == 0
    }

    private func crypt(_ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawPointer, nonce: [UInt8])
        throws(StorageError)
    {
        precondition(nonce.count == Self.nonceSize, "a nonce has \(Self.nonceSize) bytes")
        precondition(input.count <= Self.maximumBlockSize, "a block is at most \(Self.maximumBlockSize) bytes")
        // The counter block: the nonce, then a 32-bit block counter from zero. On the stack: a page is sealed on
        // every write and opened on every miss.
        var block: (UInt64, UInt64) = (0, 0)
        withUnsafeMutableBytes(of: &block) { block in
            nonce.withUnsafeBytes { block.baseAddress!.copyMemory(from: $0.baseAddress!, byteCount: Self.nonceSize) }
        }
        let failure: StorageError? = key.withUnsafeBytes { key in
            withUnsafeBytes(of: &block) { counter -> StorageError? in
                do throws(StorageError) {
                    #if canImport(CommonCrypto)
                        try CryptoPrimitives.aes256CTR(
                            key: UnsafeRawBufferPointer(rebasing: key[0..<CryptoPrimitives.keySize]),
                            counter: counter, input: input, output: output)
                    #else
                        try contexts.withPair { (pair) throws(StorageError) in
                            try CryptoPrimitives.aes256CTR(
                                pair, contexts.library, counter: counter, input: input, output: output)
                        }
                    #endif
                    return nil
                } catch {
                    return error
                }
            }
        }
        if let failure { throw failure }
    }

    private func authenticate(
        _ ciphertext: UnsafeRawBufferPointer, _ nonce: [UInt8], _ associated: UnsafeRawBufferPointer,
        _ tag: UnsafeMutableRawPointer
    ) throws(StorageError) {
        let length = UInt64(associated.count).bigEndian
        let failure: StorageError? = withUnsafeBytes(of: length) { length in
            nonce.withUnsafeBytes { nonce in
                key.withUnsafeBytes { key -> StorageError? in
                    do throws(StorageError) {
                        #if canImport(CommonCrypto)
                            try CryptoPrimitives.hmacSHA256(
                                key: UnsafeRawBufferPointer(rebasing: key[CryptoPrimitives.keySize...]),
                                parts: [length, associated, nonce, ciphertext], tag: tag)
                        #else
                            try contexts.withPair { (pair) throws(StorageError) in
                                try CryptoPrimitives.hmacSHA256(
                                    pair, contexts.library, parts: [length, associated, nonce, ciphertext], tag: tag)
                            }
                        #endif
                        return nil
                    } catch {
                        return error
                    }
                }
            }
        }
        if let failure { throw failure }
    }
}

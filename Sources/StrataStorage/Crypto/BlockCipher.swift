/// Encryption with authentication of one block of a file (a page, a log record) under a 64-byte key, as the Realm
/// SDK's `encryptionKey` is, in one of two suites (``CipherSuite``), the file's.
///
/// - ``CipherSuite/aes256CTRWithHMACSHA256`` (files created before AES-256-GCM): encrypt-then-MAC. The block is
///   encrypted with AES-256 in counter mode under the key's first 32 bytes, its key stream starting at a 12-byte
///   nonce followed by a 32-bit block counter from zero; the tag is the HMAC-SHA-256, under the key's last 32
///   bytes, of the associated data's length (8 bytes, big-endian), the associated data (what binds the block to
///   its place, such as its page number, so that a block copied elsewhere does not authenticate), the nonce and
///   the ciphertext.
/// - ``CipherSuite/aes256GCM``: AES-256 in Galois/counter mode under a 32-byte key derived from all 64 bytes (the
///   first block of HKDF-Expand, RFC 5869, with the key as its pseudorandom key: HMAC-SHA-256 of
///   `"strata aes-256-gcm key"` and a byte 1), the 12-byte nonce as GCM's IV, the associated data's length and
///   bytes as GCM's additional data; its 16-byte tag fills the first half of the ``tagSize``-byte tag field and the
///   second half is zero (checked on open), so pages keep their layout. GCM's key stream is AES-256 in counter mode
///   from the counter block nonce ‖ 00000002, which ``decryptAuthenticated(_:into:nonce:)`` uses.
///
/// Both need a nonce that never repeats under one key (for GCM a repeat would also reveal its authentication
/// key): ``freshNonce()`` gives a 64-bit random prefix drawn per process and a 32-bit counter (``NonceSequence``).
///
/// The primitives are the platform's (``CryptoPrimitives``). Creating a cipher checks that they are available, so a
/// key given where they are not fails when the file is opened, with ``StorageError/encryptionUnavailable(reason:)``.
package struct BlockCipher: Sendable {
    /// Bytes of an encryption key.
    package static let keySize = 64
    /// Bytes of a nonce.
    package static let nonceSize = 12
    /// Bytes of a tag field.
    package static let tagSize = 32
    /// Bytes of a Galois/counter mode tag, at the start of the tag field.
    package static let gcmTagSize = 16
    /// Bytes of a key check (``keyCheck(associated:)``).
    package static let keyCheckSize = 8
    /// The largest block, in bytes: the counter has 32 bits of 16-byte AES blocks (two of them GCM's own).
    package static let maximumBlockSize = ((1 << 32) - 2) * 16

    /// The suite this cipher encrypts and authenticates with.
    package let suite: CipherSuite
    #if canImport(CommonCrypto)
        /// The AES key of ``suite`` (the key's first half, or the key derived for GCM).
        private let aesKey: [UInt8]
        /// The HMAC key: the key's last half for counter mode with HMAC, the whole key for GCM's key check.
        private let hmacKey: [UInt8]
    #else
        /// Contexts keyed once per key and suite in the process, reused by every call (see ``KeyedContexts``).
        private let contexts: KeyedContexts
    #endif

    /// A cipher under `key`, which must have ``keySize`` bytes, for `suite`.
    package init(key: [UInt8], suite: CipherSuite = .newFiles) throws(StorageError) {
        guard key.count == Self.keySize else {
            throw .invalidArgument("an encryption key has \(Self.keySize) bytes, not \(key.count)")
        }
        try CryptoPrimitives.checkAvailable()
        self.suite = suite
        #if canImport(CommonCrypto)
            switch suite {
            case .aes256CTRWithHMACSHA256:
                aesKey = Array(key[0..<CryptoPrimitives.keySize])
                hmacKey = Array(key[CryptoPrimitives.keySize...])
            case .aes256GCM:
                aesKey = try Self.derivedGCMKey(key)
                hmacKey = key
            }
        #else
            contexts = KeyedContexts.shared(library: try LibCrypto.shared.get(), key: key, suite: suite)
        #endif
    }

    /// What GCM's key is derived from: the HKDF-Expand info, then HKDF's block counter 1.
    static let gcmKeyDerivationInput = Array("strata aes-256-gcm key".utf8) + [1]

    /// The AES-256-GCM key of the 64-byte `key`: HMAC-SHA-256 under `key` of ``gcmKeyDerivationInput``.
    static func derivedGCMKey(_ key: [UInt8]) throws(StorageError) -> [UInt8] {
        try withUnsafeTemporaryAllocation(byteCount: CryptoPrimitives.keySize, alignment: 8) {
            (derived) throws(StorageError) in
            try bytes(key) { (key) throws(StorageError) in
                try bytes(gcmKeyDerivationInput) { (input) throws(StorageError) in
                    try CryptoPrimitives.hmacSHA256(key: key, parts: [input], tag: derived.baseAddress!)
                }
            }
            return Array(UnsafeRawBufferPointer(derived))
        }
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
        precondition(nonce.count == Self.nonceSize, "a nonce has \(Self.nonceSize) bytes")
        try Self.bytes(nonce) { (nonce) throws(StorageError) in
            try seal(plaintext, into: ciphertext, nonce: nonce, associated: associated, tag: tag)
        }
    }

    /// ``seal(_:into:nonce:associated:tag:)`` with the nonce read from memory (a page's tail, where
    /// ``PageSealer`` draws it), so that sealing a page allocates nothing.
    package func seal(
        _ plaintext: UnsafeRawBufferPointer, into ciphertext: UnsafeMutableRawPointer, nonce: UnsafeRawBufferPointer,
        associated: UnsafeRawBufferPointer, tag: UnsafeMutableRawPointer
    ) throws(StorageError) {
        switch suite {
        case .aes256CTRWithHMACSHA256:
            try crypt(plaintext, into: ciphertext, nonce: nonce)
            try authenticate(
                UnsafeRawBufferPointer(start: ciphertext, count: plaintext.count), Array(nonce), associated, tag)
        case .aes256GCM:
            try gcm(seal: plaintext, into: ciphertext, nonce: nonce, associated: associated, tag: tag)
            (tag + Self.gcmTagSize).initializeMemory(
                as: UInt8.self, repeating: 0, count: Self.tagSize - Self.gcmTagSize)
        }
    }

    /// Checks `tag` against `ciphertext`, and only if it matches decrypts it into `plaintext` (which may be the
    /// same memory). Returns false, writing nothing, when it does not match: the key is wrong, or the block or its
    /// tag was damaged or changed.
    package func open(
        _ ciphertext: UnsafeRawBufferPointer, into plaintext: UnsafeMutableRawPointer, nonce: [UInt8],
        associated: UnsafeRawBufferPointer, tag: UnsafeRawBufferPointer
    ) throws(StorageError) -> Bool {
        precondition(tag.count == Self.tagSize, "a tag has \(Self.tagSize) bytes")
        switch suite {
        case .aes256CTRWithHMACSHA256:
            guard try hmacMatches(ciphertext, nonce, associated, tag: tag.baseAddress!) else { return false }
            try Self.bytes(nonce) { (nonce) throws(StorageError) in
                try crypt(ciphertext, into: plaintext, nonce: nonce)
            }
            return true
        case .aes256GCM:
            // The tag field's second half is zero: a changed byte there is a changed page too.
            var padding: UInt8 = 0
            for index in Self.gcmTagSize..<Self.tagSize { padding |= tag[index] }
            guard padding == 0 else { return false }
            return try Self.bytes(nonce) { (nonce) throws(StorageError) in
                try gcm(open: ciphertext, into: plaintext, nonce: nonce, associated: associated, tag: tag.baseAddress!)
            }
        }
    }

    /// Decrypts `ciphertext` into `plaintext` (which may be the same memory) without checking its tag: only for a
    /// block whose tag, with this nonce, was checked already (``AuthenticatedPages``). Counter mode in both suites
    /// (GCM's key stream starts at block counter 2).
    package func decryptAuthenticated(
        _ ciphertext: UnsafeRawBufferPointer, into plaintext: UnsafeMutableRawPointer, nonce: [UInt8]
    ) throws(StorageError) {
        try Self.bytes(nonce) { (nonce) throws(StorageError) in try crypt(ciphertext, into: plaintext, nonce: nonce) }
    }

    /// Writes the ``tagSize``-byte tag of `data`, stored in the clear, to `tag`: the HMAC-SHA-256 of the associated
    /// data's length and bytes, then `data` (no nonce, nothing encrypted); in the GCM suite a fresh nonce, then
    /// the GMAC (GCM over no plaintext) under it of the same bytes, then four zero bytes. For what only needs
    /// authenticating, such as a commit log record whose pages are sealed already; `associated` must tell it from
    /// a sealed block.
    package func tag(
        of data: UnsafeRawBufferPointer, associated: UnsafeRawBufferPointer, into tag: UnsafeMutableRawPointer
    ) throws(StorageError) {
        switch suite {
        case .aes256CTRWithHMACSHA256:
            try authenticate(data, [], associated, tag)
        case .aes256GCM:
            NonceSequence.shared.next(into: tag)
            try gcm(
                seal: UnsafeRawBufferPointer(start: nil, count: 0), into: tag,
                nonce: UnsafeRawBufferPointer(start: tag, count: Self.nonceSize), associated: associated, then: data,
                tag: tag + Self.nonceSize)
            let end = Self.nonceSize + Self.gcmTagSize
            (tag + end).initializeMemory(as: UInt8.self, repeating: 0, count: Self.tagSize - end)
        }
    }

    /// Whether `tag` is the tag of `data` (see ``tag(of:associated:into:)``), compared in constant time.
    package func authenticates(
        _ data: UnsafeRawBufferPointer, associated: UnsafeRawBufferPointer, tag: UnsafeRawPointer
    ) throws(StorageError) -> Bool {
        switch suite {
        case .aes256CTRWithHMACSHA256:
            return try hmacMatches(data, [], associated, tag: tag)
        case .aes256GCM:
            let nonce = UnsafeRawBufferPointer(start: tag, count: Self.nonceSize)
            let end = Self.nonceSize + Self.gcmTagSize
            guard (end..<Self.tagSize).allSatisfy({ tag.load(fromByteOffset: $0, as: UInt8.self) == 0 }) else {
                return false
            }
            return try withUnsafeTemporaryAllocation(byteCount: 1, alignment: 1) {
                (nothing) throws(StorageError) -> Bool in
                try gcm(
                    open: UnsafeRawBufferPointer(start: nil, count: 0), into: nothing.baseAddress!, nonce: nonce,
                    associated: associated, then: data, tag: tag + Self.nonceSize)
            }
        }
    }

    /// The key check of a file whose header's associated data is `associated` (``EncryptedFileHeader``): the first
    /// ``keyCheckSize`` bytes of a tag only this key gives. Counter mode with HMAC: the tag of an empty block
    /// sealed under a zero nonce (the suite's first files did so). GCM: HMAC-SHA-256 under the whole 64-byte key
    /// of the associated data's length and bytes, so that every byte of the key is checked and no GCM nonce is
    /// spent on it.
    package func keyCheck(associated: [UInt8]) throws(StorageError) -> [UInt8] {
        let zeroNonce = suite == .aes256GCM ? [] : [UInt8](repeating: 0, count: Self.nonceSize)
        return try withUnsafeTemporaryAllocation(byteCount: Self.tagSize, alignment: 8) {
            (tag) throws(StorageError) in
            try Self.bytes(associated) { (associated) throws(StorageError) in
                try authenticate(UnsafeRawBufferPointer(start: nil, count: 0), zeroNonce, associated, tag.baseAddress!)
            }
            return Array(UnsafeRawBufferPointer(rebasing: tag[0..<Self.keyCheckSize]))
        }
    }

    /// The counter mode pass of ``suite``: from block counter 0 (counter mode with HMAC) or 2 (GCM).
    private func crypt(
        _ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawPointer, nonce: UnsafeRawBufferPointer
    ) throws(StorageError) {
        precondition(nonce.count == Self.nonceSize, "a nonce has \(Self.nonceSize) bytes")
        precondition(input.count <= Self.maximumBlockSize, "a block is at most \(Self.maximumBlockSize) bytes")
        // The counter block: the nonce, then a 32-bit big-endian block counter. On the stack: a page is sealed on
        // every write and opened on every miss.
        var block: (UInt64, UInt64) = (0, 0)
        let first: UInt32 = suite == .aes256GCM ? 2 : 0
        withUnsafeMutableBytes(of: &block) { block in
            block.baseAddress!.copyMemory(from: nonce.baseAddress!, byteCount: Self.nonceSize)
            block.storeBytes(of: first.bigEndian, toByteOffset: Self.nonceSize, as: UInt32.self)
        }
        try withUnsafeBytes(of: &block) { (counter) throws(StorageError) in
            #if canImport(CommonCrypto)
                try Self.bytes(aesKey) { (key) throws(StorageError) in
                    try CryptoPrimitives.aes256CTR(key: key, counter: counter, input: input, output: output)
                }
            #else
                try contexts.withPair { (pair) throws(StorageError) in
                    try CryptoPrimitives.aes256CTR(
                        pair, contexts.library, counter: counter, input: input, output: output)
                }
            #endif
        }
    }

    /// Encrypts `input` into `output` with AES-256-GCM and writes its 16-byte tag to `tag`, authenticating the
    /// length of `associated`, `associated` and then `then` (a log record's bytes, authenticated but not sealed).
    private func gcm(
        seal input: UnsafeRawBufferPointer, into output: UnsafeMutableRawPointer, nonce: UnsafeRawBufferPointer,
        associated: UnsafeRawBufferPointer, then: UnsafeRawBufferPointer = UnsafeRawBufferPointer(start: nil, count: 0),
        tag: UnsafeMutableRawPointer
    ) throws(StorageError) {
        precondition(nonce.count == Self.nonceSize, "a nonce has \(Self.nonceSize) bytes")
        precondition(input.count <= Self.maximumBlockSize, "a block is at most \(Self.maximumBlockSize) bytes")
        try withAuthenticatedParts(associated, then) { (parts) throws(StorageError) in
            #if canImport(CommonCrypto)
                try Self.bytes(aesKey) { (key) throws(StorageError) in
                    try CryptoPrimitives.aes256GCMSeal(
                        key: key, nonce: nonce, associated: Array(parts), input: input, output: output, tag: tag)
                }
            #else
                try contexts.withPair { (pair) throws(StorageError) in
                    try CryptoPrimitives.aes256GCMSeal(
                        pair.gcm!, contexts.library, nonce: nonce, associated: parts, input: input, output: output,
                        tag: tag)
                }
            #endif
        }
    }

    /// Checks the 16-byte AES-256-GCM tag `tag` of `input` (authenticated as
    /// ``gcm(seal:into:nonce:associated:then:tag:)`` does) and only if it matches decrypts `input` into `output`.
    /// Decrypted in a private buffer first: GCM decrypts before it can tell whether the tag matches, and a block
    /// that does not authenticate must write nothing.
    private func gcm(
        open input: UnsafeRawBufferPointer, into output: UnsafeMutableRawPointer, nonce: UnsafeRawBufferPointer,
        associated: UnsafeRawBufferPointer, then: UnsafeRawBufferPointer = UnsafeRawBufferPointer(start: nil, count: 0),
        tag: UnsafeRawPointer
    ) throws(StorageError) -> Bool {
        precondition(nonce.count == Self.nonceSize, "a nonce has \(Self.nonceSize) bytes")
        precondition(input.count <= Self.maximumBlockSize, "a block is at most \(Self.maximumBlockSize) bytes")
        return try withUnsafeTemporaryAllocation(byteCount: max(input.count, 1), alignment: 16) {
            (scratch) throws(StorageError) -> Bool in
            let authentic = try withAuthenticatedParts(associated, then) { (parts) throws(StorageError) -> Bool in
                #if canImport(CommonCrypto)
                    try Self.bytes(aesKey) { (key) throws(StorageError) in
                        try CryptoPrimitives.aes256GCMOpen(
                            key: key, nonce: nonce, associated: Array(parts), input: input,
                            output: scratch.baseAddress!, tag: tag)
                    }
                #else
                    try contexts.withPair { (pair) throws(StorageError) in
                        try CryptoPrimitives.aes256GCMOpen(
                            pair.gcm!, contexts.library, nonce: nonce, associated: parts, input: input,
                            output: scratch.baseAddress!, tag: tag)
                    }
                #endif
            }
            guard authentic else { return false }
            if !input.isEmpty { output.copyMemory(from: scratch.baseAddress!, byteCount: input.count) }
            return true
        }
    }

    /// Runs `body` with what GCM authenticates, in order: the length of `associated` (8 bytes, big-endian),
    /// `associated`, then `then`. Laid out on the stack: every page seal and open passes here, and building the
    /// list as arrays cost more allocations than the rest of the call's bookkeeping. The length and a short
    /// `associated` (a page's or a record's: 20 or 24 bytes) go as one part: each part is one `EVP_EncryptUpdate`
    /// call, about 250 instructions of OpenSSL's bookkeeping whatever its size, and GCM authenticates the same
    /// stream of bytes however it is cut.
    private func withAuthenticatedParts<R>(
        _ associated: UnsafeRawBufferPointer, _ then: UnsafeRawBufferPointer,
        _ body: (UnsafeBufferPointer<UnsafeRawBufferPointer>) throws(StorageError) -> R
    ) throws(StorageError) -> R {
        let joined = 64
        guard associated.count <= joined - 8 else {
            return try withAssociatedLength(associated.count) { (length) throws(StorageError) in
                try withUnsafeTemporaryAllocation(of: UnsafeRawBufferPointer.self, capacity: 3) {
                    (parts) throws(StorageError) in
                    parts.initializeElement(at: 0, to: length)
                    parts.initializeElement(at: 1, to: associated)
                    parts.initializeElement(at: 2, to: then)
                    return try body(UnsafeBufferPointer(parts))
                }
            }
        }
        return try withUnsafeTemporaryAllocation(byteCount: joined, alignment: 8) { (prefix) throws(StorageError) in
            prefix.storeBytes(of: UInt64(associated.count).bigEndian, as: UInt64.self)
            if !associated.isEmpty {
                (prefix.baseAddress! + 8).copyMemory(from: associated.baseAddress!, byteCount: associated.count)
            }
            return try withUnsafeTemporaryAllocation(of: UnsafeRawBufferPointer.self, capacity: 2) {
                (parts) throws(StorageError) in
                parts.initializeElement(
                    at: 0, to: UnsafeRawBufferPointer(rebasing: prefix[0..<(8 + associated.count)]))
                parts.initializeElement(at: 1, to: then)
                return try body(UnsafeBufferPointer(parts))
            }
        }
    }

    /// `array.withUnsafeBytes`, keeping `body`'s error type (the array's method rethrows untyped).
    private static func bytes<R>(
        _ array: [UInt8], _ body: (UnsafeRawBufferPointer) throws(StorageError) -> R
    ) throws(StorageError) -> R {
        let result: Result<R, StorageError> = array.withUnsafeBytes { bytes in
            do throws(StorageError) { return .success(try body(bytes)) } catch { return .failure(error) }
        }
        return try result.get()
    }

    /// Runs `body` with the associated data's length as 8 big-endian bytes, which both suites authenticate first.
    private func withAssociatedLength<R>(
        _ count: Int, _ body: (UnsafeRawBufferPointer) throws(StorageError) -> R
    ) throws(StorageError) -> R {
        let length = UInt64(count).bigEndian
        return try withUnsafeBytes(of: length) { (length) throws(StorageError) in try body(length) }
    }

    /// Whether `tag` (``tagSize`` bytes) is the HMAC of these parts, compared in constant time: how many leading
    /// bytes matched must not show in how long the comparison took.
    private func hmacMatches(
        _ data: UnsafeRawBufferPointer, _ nonce: [UInt8], _ associated: UnsafeRawBufferPointer,
        tag: UnsafeRawPointer
    ) throws(StorageError) -> Bool {
        try withUnsafeTemporaryAllocation(byteCount: Self.tagSize, alignment: 8) {
            (expected) throws(StorageError) -> Bool in
            try authenticate(data, nonce, associated, expected.baseAddress!)
            var difference: UInt8 = 0
            for index in 0..<Self.tagSize {
                difference |= expected[index] ^ tag.load(fromByteOffset: index, as: UInt8.self)
            }
            return difference == 0
        }
    }

    /// The HMAC-SHA-256 of the associated data's length and bytes, the nonce and `data`, under the suite's HMAC key.
    private func authenticate(
        _ data: UnsafeRawBufferPointer, _ nonce: [UInt8], _ associated: UnsafeRawBufferPointer,
        _ tag: UnsafeMutableRawPointer
    ) throws(StorageError) {
        try withAssociatedLength(associated.count) { (length) throws(StorageError) in
            try Self.bytes(nonce) { (nonce) throws(StorageError) in
                #if canImport(CommonCrypto)
                    try Self.bytes(hmacKey) { (key) throws(StorageError) in
                        try CryptoPrimitives.hmacSHA256(key: key, parts: [length, associated, nonce, data], tag: tag)
                    }
                #else
                    try contexts.withPair { (pair) throws(StorageError) in
                        try CryptoPrimitives.hmacSHA256(
                            pair, contexts.library, parts: [length, associated, nonce, data], tag: tag)
                    }
                #endif
            }
        }
    }
}

#if !canImport(CommonCrypto)
    /// OpenSSL contexts already keyed with one ``BlockCipher``'s key for one ``CipherSuite``, kept for reuse.
    ///
    /// Making a cipher context and expanding the AES key schedule, and making an HMAC context and hashing its key
    /// into the inner and outer pads, is work of the same order as sealing a page; done once per context instead of
    /// once per call, a seal or open only resets the counter block or GCM's IV (`EVP_EncryptInit_ex` or
    /// `EVP_DecryptInit_ex` with just an IV) and the HMAC state (`HMAC_Init_ex` with no key, which keeps the
    /// previous one).
    ///
    /// Counter mode with HMAC: the counter mode context under the key's first half, the HMAC context under its
    /// second. GCM: the HMAC context under the whole key (it derives the GCM key, then serves the key check), and
    /// a GCM context and a counter mode context (``BlockCipher/decryptAuthenticated(_:into:nonce:)``) under the
    /// derived key.
    ///
    /// A small pool rather than one pair: threads sealing or opening pages at the same time each take a pair of
    /// their own (the pool grows to the number of threads that ever overlapped). Contexts are freed with the pool.
    final class KeyedContexts: @unchecked Sendable {
        // @unchecked: a pair is used by one thread at a time (taken from `pool` under its lock, put back after);
        // `library` holds only function pointers.

        /// A counter mode context, an HMAC context and (GCM suite only) a GCM context, all keyed.
        struct Pair {
            let cipher: OpaquePointer
            let hmac: OpaquePointer
            let gcm: OpaquePointer?
        }

        let library: LibCrypto
        private let key: [UInt8]
        let suite: CipherSuite
        private let pool = Locked<[Pair]>([])

        init(library: LibCrypto, key: [UInt8], suite: CipherSuite) {
            precondition(key.count == 2 * CryptoPrimitives.keySize, "an AES key and an HMAC key")
            self.library = library
            self.key = key
            self.suite = suite
        }

        /// How many keys' contexts the process keeps (``shared(library:key:suite:)``), a key and a suite each.
        static let keptKeys = 4
        /// The contexts of the keys used most recently, newest last.
        private static let recent = Locked<[KeyedContexts]>([])

        /// The process's contexts for `key` and `suite`: the ones made for them before, if they are among the
        /// ``keptKeys`` used most recently, else new ones (which then replace the least recently used).
        ///
        /// Every open of an encrypted file makes ciphers for its key (the key check, then the file's own), and
        /// making and keying a pair (OpenSSL 3 looks its algorithms up in its providers on the way) cost an open
        /// about as much as authenticating a page, twice. Kept across closes, so that opening the same file again,
        /// as apps do, finds them keyed. The contexts hold the key's schedule and HMAC pads in the process's memory
        /// after its files closed, as the open files' ciphers hold the key itself while open: memory is outside
        /// what the encryption protects (Documentation/Encryption.md's threat model).
        static func shared(library: LibCrypto, key: [UInt8], suite: CipherSuite) -> KeyedContexts {
            recent.withLock { recent in
                if let index = recent.firstIndex(where: { $0.suite == suite && $0.key == key }) {
                    let found = recent.remove(at: index)
                    recent.append(found)
                    return found
                }
                let made = KeyedContexts(library: library, key: key, suite: suite)
                if recent.count == keptKeys { recent.removeFirst() }
                recent.append(made)
                return made
            }
        }

        deinit {
            let library = library
            pool.withLock { pairs in
                for pair in pairs {
                    library.freeCipherContext(pair.cipher)
                    library.freeHMACContext(pair.hmac)
                    library.freeCipherContext(pair.gcm)
                }
            }
        }

        /// Runs `body` with a pair no other thread uses meanwhile.
        func withPair<R>(_ body: (Pair) throws(StorageError) -> R) throws(StorageError) -> R {
            let pair: Pair
            if let taken = pool.withLock({ $0.popLast() }) { pair = taken } else { pair = try makePair() }
            // Put back whatever happened: the next user resets both contexts before using them.
            defer { pool.withLock { $0.append(pair) } }
            return try body(pair)
        }

        private func makePair() throws(StorageError) -> Pair {
            guard let cipher = library.newCipherContext() else { throw failure("EVP_CIPHER_CTX_new") }
            guard let hmac = library.newHMACContext() else {
                library.freeCipherContext(cipher)
                throw failure("HMAC_CTX_new")
            }
            let gcm = suite == .aes256GCM ? library.newCipherContext() : nil
            func free() {
                library.freeCipherContext(cipher)
                library.freeHMACContext(hmac)
                library.freeCipherContext(gcm)
            }
            guard suite != .aes256GCM || gcm != nil else {
                free()
                throw failure("EVP_CIPHER_CTX_new")
            }
            guard key(cipher, hmac, gcm) else {
                free()
                throw failure("keying a cipher or HMAC context")
            }
            return Pair(cipher: cipher, hmac: hmac, gcm: gcm)
        }

        /// Keys the new contexts of a pair for ``suite``; false when a call fails.
        private func key(_ cipher: OpaquePointer, _ hmac: OpaquePointer, _ gcm: OpaquePointer?) -> Bool {
            let library = library
            switch suite {
            case .aes256CTRWithHMACSHA256:
                return key.withUnsafeBytes { key -> Bool in
                    let aes = key.baseAddress!.assumingMemoryBound(to: UInt8.self)
                    return library.encryptInit(cipher, library.aes256CTR(), nil, aes, nil) == 1
                        && library.hmacInit(
                            hmac, key.baseAddress! + CryptoPrimitives.keySize, Int32(CryptoPrimitives.keySize),
                            library.sha256(), nil) == 1
                }
            case .aes256GCM:
                guard
                    key.withUnsafeBytes({
                        library.hmacInit(hmac, $0.baseAddress!, Int32($0.count), library.sha256(), nil) == 1
                    })
                else { return false }
                // The derived key lives on the stack only while the contexts expand it, then is wiped.
                return withUnsafeTemporaryAllocation(byteCount: CryptoPrimitives.keySize, alignment: 8) { derived in
                    defer { derived.initializeMemory(as: UInt8.self, repeating: 0) }
                    let derivedKey = BlockCipher.gcmKeyDerivationInput.withUnsafeBytes { input in
                        (try? CryptoPrimitives.hmacSHA256(
                            Pair(cipher: cipher, hmac: hmac, gcm: gcm), library, parts: [input],
                            tag: derived.baseAddress!)) != nil
                    }
                    let aes = UnsafePointer(derived.baseAddress!.assumingMemoryBound(to: UInt8.self))
                    return derivedKey && library.encryptInit(cipher, library.aes256CTR(), nil, aes, nil) == 1
                        && library.keyGCM(gcm, key: aes)
                }
            }
        }

        private func failure(_ call: String) -> StorageError {
            .encryptionUnavailable(reason: "\(call) failed")
        }
    }

    extension CryptoPrimitives {
        /// ``aes256CTR(key:counter:input:output:)`` with `pair`'s keyed cipher context: only the counter block is
        /// set.
        static func aes256CTR(
            _ pair: KeyedContexts.Pair, _ library: LibCrypto, counter: UnsafeRawBufferPointer,
            input: UnsafeRawBufferPointer, output: UnsafeMutableRawPointer
        ) throws(StorageError) {
            precondition(counter.count == counterSize, "a 16-byte counter block")
            guard !input.isEmpty else { return }
            let counterBytes = counter.baseAddress!.assumingMemoryBound(to: UInt8.self)
            guard library.encryptInit(pair.cipher, nil, nil, nil, counterBytes) == 1 else {
                throw .encryptionUnavailable(reason: "EVP_EncryptInit_ex failed")
            }
            guard library.encryptInSlices(pair.cipher, input: input, output: output) else {
                throw .encryptionUnavailable(reason: "EVP_EncryptUpdate failed")
            }
        }

        /// Encrypts `input` into `output` with AES-256-GCM under `context` (keyed, its IV length 12) and the
        /// 12-byte `nonce`, authenticating the concatenation of `associated` first, and writes the 16-byte tag to
        /// `tag`. The parts come as a buffer, not an array: a page seal lays them out on the stack rather than
        /// allocate for them.
        static func aes256GCMSeal(
            _ context: OpaquePointer, _ library: LibCrypto, nonce: UnsafeRawBufferPointer,
            associated: UnsafeBufferPointer<UnsafeRawBufferPointer>, input: UnsafeRawBufferPointer,
            output: UnsafeMutableRawPointer, tag: UnsafeMutableRawPointer
        ) throws(StorageError) {
            guard
                library.encryptInit(context, nil, nil, nil, nonce.baseAddress!.assumingMemoryBound(to: UInt8.self))
                    == 1
            else { throw .encryptionUnavailable(reason: "EVP_EncryptInit_ex failed") }
            for part in associated where !part.isEmpty {
                guard library.update(library.encryptUpdate, context, input: part, output: nil) else {
                    throw .encryptionUnavailable(reason: "EVP_EncryptUpdate failed")
                }
            }
            guard library.update(library.encryptUpdate, context, input: input, output: output) else {
                throw .encryptionUnavailable(reason: "EVP_EncryptUpdate failed")
            }
            // GCM holds nothing back: the final call writes no bytes, it completes the tag.
            var last: (UInt64, UInt64) = (0, 0)
            var written: Int32 = 0
            let finished = withUnsafeMutableBytes(of: &last) {
                library.encryptFinal(context, $0.baseAddress!.assumingMemoryBound(to: UInt8.self), &written) == 1
            }
            guard finished, written == 0,
                library.cipherControl(context, LibCrypto.gcmGetTag, Int32(BlockCipher.gcmTagSize), tag) == 1
            else { throw .encryptionUnavailable(reason: "EVP_EncryptFinal_ex failed") }
        }

        /// Decrypts `input` into `output` with AES-256-GCM under `context` (keyed) and `nonce`, authenticating
        /// `associated` first, and returns whether the 16-byte `tag` matched. `output` holds the decryption either
        /// way: the caller keeps it private until the tag matched.
        static func aes256GCMOpen(
            _ context: OpaquePointer, _ library: LibCrypto, nonce: UnsafeRawBufferPointer,
            associated: UnsafeBufferPointer<UnsafeRawBufferPointer>, input: UnsafeRawBufferPointer,
            output: UnsafeMutableRawPointer, tag: UnsafeRawPointer
        ) throws(StorageError) -> Bool {
            guard
                library.decryptInit(context, nil, nil, nil, nonce.baseAddress!.assumingMemoryBound(to: UInt8.self))
                    == 1
            else { throw .encryptionUnavailable(reason: "EVP_DecryptInit_ex failed") }
            for part in associated where !part.isEmpty {
                guard library.update(library.decryptUpdate, context, input: part, output: nil) else {
                    throw .encryptionUnavailable(reason: "EVP_DecryptUpdate failed")
                }
            }
            guard library.update(library.decryptUpdate, context, input: input, output: output) else {
                throw .encryptionUnavailable(reason: "EVP_DecryptUpdate failed")
            }
            // OpenSSL copies the expected tag; it does not write through the pointer.
            guard
                library.cipherControl(
                    context, LibCrypto.gcmSetTag, Int32(BlockCipher.gcmTagSize), UnsafeMutableRawPointer(mutating: tag))
                    == 1
            else { throw .encryptionUnavailable(reason: "EVP_CIPHER_CTX_ctrl failed") }
            var last: (UInt64, UInt64) = (0, 0)
            var written: Int32 = 0
            // Fails (returns 0) exactly when the tag does not match.
            return withUnsafeMutableBytes(of: &last) {
                library.decryptFinal(context, $0.baseAddress!.assumingMemoryBound(to: UInt8.self), &written) == 1
            }
        }

        /// ``hmacSHA256(key:parts:tag:)`` with `pair`'s keyed HMAC context: its state is reset, its key kept.
        static func hmacSHA256(
            _ pair: KeyedContexts.Pair, _ library: LibCrypto, parts: [UnsafeRawBufferPointer],
            tag: UnsafeMutableRawPointer
        ) throws(StorageError) {
            guard library.hmacInit(pair.hmac, nil, 0, nil, nil) == 1 else {
                throw .encryptionUnavailable(reason: "HMAC_Init_ex failed")
            }
            for part in parts where !part.isEmpty {
                let bytes = part.baseAddress!.assumingMemoryBound(to: UInt8.self)
                guard library.hmacUpdate(pair.hmac, bytes, part.count) == 1 else {
                    throw .encryptionUnavailable(reason: "HMAC_Update failed")
                }
            }
            var length: UInt32 = 0
            guard library.hmacFinal(pair.hmac, tag.assumingMemoryBound(to: UInt8.self), &length) == 1,
                Int(length) == keySize
            else { throw .encryptionUnavailable(reason: "HMAC_Final failed") }
        }
    }
#endif

#if !canImport(CommonCrypto)
    /// OpenSSL contexts already keyed with one ``BlockCipher``'s key, kept for reuse.
    ///
    /// Making a cipher context and expanding the AES key schedule, and making an HMAC context and hashing its key
    /// into the inner and outer pads, is work of the same order as sealing a page; done once per context instead of
    /// once per call, a seal or open only resets the counter block (`EVP_EncryptInit_ex` with just an IV) and the
    /// HMAC state (`HMAC_Init_ex` with no key, which keeps the previous one).
    ///
    /// A small pool rather than one pair: threads sealing or opening pages at the same time each take a pair of
    /// their own (the pool grows to the number of threads that ever overlapped). Contexts are freed with the pool.
    final class KeyedContexts: @unchecked Sendable {
        // @unchecked: a pair is used by one thread at a time (taken from `pool` under its lock, put back after);
        // `library` holds only function pointers.

        /// A cipher context and an HMAC context, both keyed.
        struct Pair {
            let cipher: OpaquePointer
            let hmac: OpaquePointer
        }

        let library: LibCrypto
        private let key: [UInt8]
        private let pool = Locked<[Pair]>([])

        init(library: LibCrypto, key: [UInt8]) {
            precondition(key.count == 2 * CryptoPrimitives.keySize, "an AES key and an HMAC key")
            self.library = library
            self.key = key
        }

        /// How many keys' contexts the process keeps (``shared(library:key:)``).
        static let keptKeys = 4
        /// The contexts of the keys used most recently, newest last.
        private static let recent = Locked<[KeyedContexts]>([])

        /// The process's contexts for `key`: the ones made for it before, if it is among the ``keptKeys`` used most
        /// recently, else new ones (which then replace the least recently used).
        ///
        /// Every open of an encrypted file makes ciphers for its key (the key check, then the file's own), and
        /// making and keying a pair (OpenSSL 3 looks its algorithms up in its providers on the way) cost an open
        /// about as much as authenticating a page, twice. Kept across closes, so that opening the same file again,
        /// as apps do, finds them keyed. The contexts hold the key's schedule and HMAC pads in the process's memory
        /// after its files closed, as the open files' ciphers hold the key itself while open: memory is outside
        /// what the encryption protects (Documentation/Encryption.md's threat model).
        static func shared(library: LibCrypto, key: [UInt8]) -> KeyedContexts {
            recent.withLock { recent in
                if let index = recent.firstIndex(where: { $0.key == key }) {
                    let found = recent.remove(at: index)
                    recent.append(found)
                    return found
                }
                let made = KeyedContexts(library: library, key: key)
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
            let keyed = key.withUnsafeBytes { key -> Bool in
                let aes = key.baseAddress!.assumingMemoryBound(to: UInt8.self)
                return library.encryptInit(cipher, library.aes256CTR(), nil, aes, nil) == 1
                    && library.hmacInit(
                        hmac, key.baseAddress! + CryptoPrimitives.keySize, Int32(CryptoPrimitives.keySize),
                        library.sha256(), nil) == 1
            }
            guard keyed else {
                library.freeCipherContext(cipher)
                library.freeHMACContext(hmac)
                throw failure("keying a cipher or HMAC context")
            }
            return Pair(cipher: cipher, hmac: hmac)
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

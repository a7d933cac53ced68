#if canImport(CommonCrypto)
    import CommonCrypto
    import CryptoKit
    import Foundation
#endif

/// The primitives encryption at rest is built from, taken from the platform: AES-256 in counter mode and in
/// Galois/counter mode, and HMAC-SHA-256. CommonCrypto (and CryptoKit's `AES.GCM`) on Apple platforms; the
/// system's OpenSSL `libcrypto` on Linux, loaded at run time (see ``LibCrypto``). Strata carries no cipher of its
/// own.
enum CryptoPrimitives {
    /// Bytes of an AES-256 key, of an HMAC-SHA-256 key and of an HMAC-SHA-256 tag.
    static let keySize = 32
    /// Bytes of the initial counter block of AES in counter mode.
    static let counterSize = 16

    /// Whether the primitives can be used here; the error says why not.
    static func checkAvailable() throws(StorageError) {
        #if !canImport(CommonCrypto)
            _ = try LibCrypto.shared.get()
        #endif
    }

    /// Encrypts (or, the same operation, decrypts) `input` into `output` with AES-256 in counter mode: the key
    /// stream starts at the 16-byte big-endian counter block `counter`. `output` may be `input`'s own memory.
    static func aes256CTR(
        key: UnsafeRawBufferPointer, counter: UnsafeRawBufferPointer, input: UnsafeRawBufferPointer,
        output: UnsafeMutableRawPointer
    ) throws(StorageError) {
        precondition(key.count == keySize && counter.count == counterSize, "AES-256-CTR takes a 32-byte key")
        guard !input.isEmpty else { return }
        #if canImport(CommonCrypto)
            var cryptor: CCCryptorRef?
            let created = CCCryptorCreateWithMode(
                CCOperation(kCCEncrypt), CCMode(kCCModeCTR), CCAlgorithm(kCCAlgorithmAES), CCPadding(ccNoPadding),
                counter.baseAddress, key.baseAddress, key.count, nil, 0, 0, CCModeOptions(kCCModeOptionCTR_BE),
                &cryptor)
            guard created == CCCryptorStatus(kCCSuccess), let cryptor else { throw failure("CCCryptorCreateWithMode") }
            defer { CCCryptorRelease(cryptor) }
            var moved = 0
            let updated = CCCryptorUpdate(cryptor, input.baseAddress, input.count, output, input.count, &moved)
            guard updated == CCCryptorStatus(kCCSuccess), moved == input.count else {
                throw failure("CCCryptorUpdate")
            }
        #else
            let library = try LibCrypto.shared.get()
            guard let context = library.newCipherContext() else { throw failure("EVP_CIPHER_CTX_new") }
            defer { library.freeCipherContext(context) }
            let keyBytes = key.baseAddress!.assumingMemoryBound(to: UInt8.self)
            let counterBytes = counter.baseAddress!.assumingMemoryBound(to: UInt8.self)
            guard library.encryptInit(context, library.aes256CTR(), nil, keyBytes, counterBytes) == 1 else {
                throw failure("EVP_EncryptInit_ex")
            }
            guard library.encryptInSlices(context, input: input, output: output) else {
                throw failure("EVP_EncryptUpdate")
            }
        #endif
    }

    /// The HMAC-SHA-256 of the concatenation of `parts` under `key` (32 or 64 bytes), written to the 32 bytes at
    /// `tag`.
    static func hmacSHA256(key: UnsafeRawBufferPointer, parts: [UnsafeRawBufferPointer], tag: UnsafeMutableRawPointer)
        throws(StorageError)
    {
        precondition(key.count == keySize || key.count == 2 * keySize, "HMAC-SHA-256 is used with a 32 or 64-byte key")
        #if canImport(CommonCrypto)
            var context = CCHmacContext()
            CCHmacInit(&context, CCHmacAlgorithm(kCCHmacAlgSHA256), key.baseAddress, key.count)
            for part in parts where !part.isEmpty { CCHmacUpdate(&context, part.baseAddress, part.count) }
            CCHmacFinal(&context, tag)
        #else
            let library = try LibCrypto.shared.get()
            guard let context = library.newHMACContext() else { throw failure("HMAC_CTX_new") }
            defer { library.freeHMACContext(context) }
            guard library.hmacInit(context, key.baseAddress, Int32(key.count), library.sha256(), nil) == 1 else {
                throw failure("HMAC_Init_ex")
            }
            for part in parts where !part.isEmpty {
                let bytes = part.baseAddress!.assumingMemoryBound(to: UInt8.self)
                guard library.hmacUpdate(context, bytes, part.count) == 1 else { throw failure("HMAC_Update") }
            }
            var length: UInt32 = 0
            guard library.hmacFinal(context, tag.assumingMemoryBound(to: UInt8.self), &length) == 1,
                Int(length) == keySize
            else { throw failure("HMAC_Final") }
        #endif
    }

    /// Encrypts `input` into `output` with AES-256-GCM under the 32-byte `key` and the 12-byte `nonce`,
    /// authenticating the concatenation of `associated` first, and writes the 16-byte tag to `tag`. A context made
    /// for the call (``BlockCipher`` keeps keyed ones); CommonCrypto has no public GCM, so CryptoKit's on Apple
    /// platforms.
    static func aes256GCMSeal(
        key: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer, associated: [UnsafeRawBufferPointer],
        input: UnsafeRawBufferPointer, output: UnsafeMutableRawPointer, tag: UnsafeMutableRawPointer
    ) throws(StorageError) {
        precondition(key.count == keySize && nonce.count == BlockCipher.nonceSize, "a 32-byte key, a 12-byte nonce")
        #if canImport(CommonCrypto)
            do {
                let box = try AES.GCM.seal(
                    Data(input), using: SymmetricKey(data: Data(key)), nonce: try AES.GCM.Nonce(data: Data(nonce)),
                    authenticating: Data(associated.flatMap { Array($0) }))
                box.ciphertext.copyBytes(to: output.assumingMemoryBound(to: UInt8.self), count: input.count)
                box.tag.copyBytes(to: tag.assumingMemoryBound(to: UInt8.self), count: BlockCipher.gcmTagSize)
            } catch {
                throw failure("AES.GCM.seal")
            }
        #else
            try withGCMContext(key: key) { (context, library) throws(StorageError) in
                try associated.withUnsafeBufferPointer { (associated) throws(StorageError) in
                    try aes256GCMSeal(
                        context, library, nonce: nonce, associated: associated, input: input, output: output, tag: tag)
                }
            }
        #endif
    }

    /// Decrypts `input` into `output` with AES-256-GCM (see
    /// ``aes256GCMSeal(key:nonce:associated:input:output:tag:)``) and returns whether the 16-byte `tag` matched.
    /// `output` may hold the decryption even when it did not: the caller keeps it private until it did.
    static func aes256GCMOpen(
        key: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer, associated: [UnsafeRawBufferPointer],
        input: UnsafeRawBufferPointer, output: UnsafeMutableRawPointer, tag: UnsafeRawPointer
    ) throws(StorageError) -> Bool {
        precondition(key.count == keySize && nonce.count == BlockCipher.nonceSize, "a 32-byte key, a 12-byte nonce")
        #if canImport(CommonCrypto)
            let box: AES.GCM.SealedBox
            do {
                box = try AES.GCM.SealedBox(
                    nonce: try AES.GCM.Nonce(data: Data(nonce)), ciphertext: Data(input),
                    tag: Data(UnsafeRawBufferPointer(start: tag, count: BlockCipher.gcmTagSize)))
            } catch {
                throw failure("AES.GCM.SealedBox")
            }
            guard
                let plaintext = try? AES.GCM.open(
                    box, using: SymmetricKey(data: Data(key)), authenticating: Data(associated.flatMap { Array($0) }))
            else { return false }
            plaintext.copyBytes(to: output.assumingMemoryBound(to: UInt8.self), count: input.count)
            return true
        #else
            return try withGCMContext(key: key) { (context, library) throws(StorageError) in
                try associated.withUnsafeBufferPointer { (associated) throws(StorageError) in
                    try aes256GCMOpen(
                        context, library, nonce: nonce, associated: associated, input: input, output: output, tag: tag)
                }
            }
        #endif
    }

    #if !canImport(CommonCrypto)
        /// Runs `body` with a fresh libcrypto AES-256-GCM context keyed with the 32-byte `key`, freed after it: the
        /// one-shot functions' context (a file's seals use the contexts ``KeyedContexts`` keeps).
        private static func withGCMContext<R>(
            key: UnsafeRawBufferPointer, _ body: (OpaquePointer, LibCrypto) throws(StorageError) -> R
        ) throws(StorageError) -> R {
            let library = try LibCrypto.shared.get()
            guard let context = library.newCipherContext() else { throw failure("EVP_CIPHER_CTX_new") }
            defer { library.freeCipherContext(context) }
            guard library.keyGCM(context, key: key.baseAddress!.assumingMemoryBound(to: UInt8.self)) else {
                throw failure("EVP_EncryptInit_ex")
            }
            return try body(context, library)
        }
    #endif

    private static func failure(_ call: String) -> StorageError {
        .encryptionUnavailable(reason: "\(call) failed")
    }
}

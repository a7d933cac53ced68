#if canImport(Glibc) || canImport(Musl)
    #if canImport(Glibc)
        import Glibc
    #else
        import Musl
    #endif

    /// The system's OpenSSL `libcrypto` (1.1 or 3.x), loaded at run time with `dlopen`.
    ///
    /// Strata links nothing for cryptography: building needs no OpenSSL headers or library, and a machine without
    /// `libcrypto` only fails when an encryption key is used, with ``StorageError/encryptionUnavailable(reason:)``.
    /// The functions used exist with the same C signatures in OpenSSL 1.1 and 3.x: the `EVP` cipher interface for
    /// AES-256 in counter mode and in Galois/counter mode (both use the processor's AES and carry-less multiply
    /// instructions where it has them) and the `HMAC_CTX` interface for HMAC-SHA-256.
    struct LibCrypto: @unchecked Sendable {
        typealias NewContext = @convention(c) () -> OpaquePointer?
        typealias FreeContext = @convention(c) (OpaquePointer?) -> Void
        typealias Algorithm = @convention(c) () -> OpaquePointer?
        typealias EncryptInit =
            @convention(c) (
                OpaquePointer?, OpaquePointer?, OpaquePointer?, UnsafePointer<UInt8>?, UnsafePointer<UInt8>?
            ) -> Int32
        typealias EncryptUpdate =
            @convention(c) (
                OpaquePointer?, UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<Int32>?, UnsafePointer<UInt8>?,
                Int32
            ) -> Int32
        typealias CipherFinal =
            @convention(c) (OpaquePointer?, UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<Int32>?) -> Int32
        typealias CipherControl = @convention(c) (OpaquePointer?, Int32, Int32, UnsafeMutableRawPointer?) -> Int32
        typealias HMACInit =
            @convention(c) (OpaquePointer?, UnsafeRawPointer?, Int32, OpaquePointer?, OpaquePointer?) -> Int32
        typealias HMACUpdate = @convention(c) (OpaquePointer?, UnsafePointer<UInt8>?, Int) -> Int32
        typealias HMACFinal =
            @convention(c) (OpaquePointer?, UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<UInt32>?) -> Int32

        let newCipherContext: NewContext
        let freeCipherContext: FreeContext
        let aes256CTR: Algorithm
        let encryptInit: EncryptInit
        let encryptUpdate: EncryptUpdate
        let aes256GCM: Algorithm
        let encryptFinal: CipherFinal
        let decryptInit: EncryptInit
        let decryptUpdate: EncryptUpdate
        let decryptFinal: CipherFinal
        let cipherControl: CipherControl
        let newHMACContext: NewContext
        let freeHMACContext: FreeContext
        let sha256: Algorithm
        let hmacInit: HMACInit
        let hmacUpdate: HMACUpdate
        let hmacFinal: HMACFinal

        /// Encrypts (in counter mode: also decrypts) `input` into `output` with `context`, already keyed and given
        /// its counter block. `EVP_EncryptUpdate` takes an Int32 length, so large inputs go in slices; counter mode
        /// keeps its position between them. False when a call fails.
        func encryptInSlices(
            _ context: OpaquePointer?, input: UnsafeRawBufferPointer, output: UnsafeMutableRawPointer
        ) -> Bool {
            update(encryptUpdate, context, input: input, output: output)
        }

        /// `EVP_CIPHER_CTX_ctrl` commands of Galois/counter mode (the same numbers in OpenSSL 1.1 and 3.x).
        static let gcmSetIVLength: Int32 = 0x9
        static let gcmGetTag: Int32 = 0x10
        static let gcmSetTag: Int32 = 0x11

        /// Makes `context` an AES-256-GCM encryption context under the 32 bytes at `key`, with 12-byte IVs. False
        /// when a call fails.
        func keyGCM(_ context: OpaquePointer?, key: UnsafePointer<UInt8>) -> Bool {
            encryptInit(context, aes256GCM(), nil, nil, nil) == 1
                && cipherControl(context, Self.gcmSetIVLength, Int32(BlockCipher.nonceSize), nil) == 1
                && encryptInit(context, nil, nil, key, nil) == 1
        }

        /// Feeds `input` to `update` (`EVP_EncryptUpdate` or `EVP_DecryptUpdate`) in slices of at most 2³⁰ bytes
        /// (the functions take an Int32 length), writing to `output`, or only authenticating it (Galois/counter
        /// mode's associated data) when `output` is nil. False when a call fails.
        func update(
            _ update: EncryptUpdate, _ context: OpaquePointer?, input: UnsafeRawBufferPointer,
            output: UnsafeMutableRawPointer?
        ) -> Bool {
            var offset = 0
            while offset < input.count {
                let length = min(input.count - offset, 1 << 30)
                var written: Int32 = 0
                let source = (input.baseAddress! + offset).assumingMemoryBound(to: UInt8.self)
                let destination = output.map { ($0 + offset).assumingMemoryBound(to: UInt8.self) }
                guard update(context, destination, &written, source, Int32(length)) == 1, Int(written) == length
                else { return false }
                offset += length
            }
            return true
        }

        /// The library names tried in order: OpenSSL 3, then 1.1, then the development link.
        static let defaultNames = ["libcrypto.so.3", "libcrypto.so.1.1", "libcrypto.so"]

        /// The process's library, loaded on first use.
        static let shared: Result<LibCrypto, StorageError> = load(names: defaultNames)

        /// Loads the first of `names` that opens and has every function, or says why none did.
        static func load(names: [String]) -> Result<LibCrypto, StorageError> {
            var reasons: [String] = []
            for name in names {
                guard let handle = dlopen(name, RTLD_NOW | RTLD_LOCAL) else {
                    reasons.append("\(name): \(dlerror().map { String(cString: $0) } ?? "cannot be opened")")
                    continue
                }
                var missing: [String] = []
                func symbol<F>(_ symbolName: String, as type: F.Type) -> F? {
                    guard let pointer = dlsym(handle, symbolName) else {
                        missing.append(symbolName)
                        return nil
                    }
                    return unsafeBitCast(pointer, to: type)
                }
                let newCipherContext = symbol("EVP_CIPHER_CTX_new", as: NewContext.self)
                let freeCipherContext = symbol("EVP_CIPHER_CTX_free", as: FreeContext.self)
                let aes256CTR = symbol("EVP_aes_256_ctr", as: Algorithm.self)
                let encryptInit = symbol("EVP_EncryptInit_ex", as: EncryptInit.self)
                let encryptUpdate = symbol("EVP_EncryptUpdate", as: EncryptUpdate.self)
                let aes256GCM = symbol("EVP_aes_256_gcm", as: Algorithm.self)
                let encryptFinal = symbol("EVP_EncryptFinal_ex", as: CipherFinal.self)
                let decryptInit = symbol("EVP_DecryptInit_ex", as: EncryptInit.self)
                let decryptUpdate = symbol("EVP_DecryptUpdate", as: EncryptUpdate.self)
                let decryptFinal = symbol("EVP_DecryptFinal_ex", as: CipherFinal.self)
                let cipherControl = symbol("EVP_CIPHER_CTX_ctrl", as: CipherControl.self)
                let newHMACContext = symbol("HMAC_CTX_new", as: NewContext.self)
                let freeHMACContext = symbol("HMAC_CTX_free", as: FreeContext.self)
                let sha256 = symbol("EVP_sha256", as: Algorithm.self)
                let hmacInit = symbol("HMAC_Init_ex", as: HMACInit.self)
                let hmacUpdate = symbol("HMAC_Update", as: HMACUpdate.self)
                let hmacFinal = symbol("HMAC_Final", as: HMACFinal.self)
                if let newCipherContext, let freeCipherContext, let aes256CTR, let encryptInit, let encryptUpdate,
                    let aes256GCM, let encryptFinal, let decryptInit, let decryptUpdate, let decryptFinal,
                    let cipherControl, let newHMACContext, let freeHMACContext, let sha256, let hmacInit,
                    let hmacUpdate, let hmacFinal
                {
                    // Kept open for the life of the process: the function pointers point into it.
                    return .success(
                        LibCrypto(
                            newCipherContext: newCipherContext, freeCipherContext: freeCipherContext,
                            aes256CTR: aes256CTR, encryptInit: encryptInit, encryptUpdate: encryptUpdate,
                            aes256GCM: aes256GCM, encryptFinal: encryptFinal, decryptInit: decryptInit,
                            decryptUpdate: decryptUpdate, decryptFinal: decryptFinal, cipherControl: cipherControl,
                            newHMACContext: newHMACContext, freeHMACContext: freeHMACContext, sha256: sha256,
                            hmacInit: hmacInit, hmacUpdate: hmacUpdate, hmacFinal: hmacFinal))
                }
                reasons.append("\(name) lacks \(missing.joined(separator: ", "))")
                dlclose(handle)
            }
            return .failure(
                .encryptionUnavailable(
                    reason: "OpenSSL's libcrypto (1.1 or 3) was not found: \(reasons.joined(separator: "; "))"))
        }
    }
#endif

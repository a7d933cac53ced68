import Foundation
import Testing

@testable import StrataStorage

/// The cryptography encryption at rest is built on (issue 26): the platform's AES-256-CTR and HMAC-SHA-256 checked
/// against published test vectors, and ``BlockCipher``'s encrypt-then-MAC: a round trip, and every kind of damage
/// or wrong key refused without writing anything.
@Suite("Block cipher")
struct BlockCipherTests {
    @Test func aes256CounterModeMatchesNISTSP80038A() throws {
        // NIST SP 800-38A, F.5.5 CTR-AES256.Encrypt: four blocks, so the counter is seen to carry across blocks.
        let key = hexBytes("603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4")
        let counter = hexBytes("f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff")
        let plaintext = hexBytes(
            "6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e51"
                + "30c81c46a35ce411e5fbc1191a0a52eff69f2445df4f9b17ad2b417be66c3710")
        let expected = hexBytes(
            "601ec313775789a5b7a7f504bbf3d228f443e3ca4d62b59aca84e990cacaf5c5"
                + "2b0930daa23de94ce87017ba2d84988ddfc9c58db67aada613c2dd08457941a6")
        var output = [UInt8](repeating: 0, count: plaintext.count)
        try key.withUnsafeBytes { key in
            try counter.withUnsafeBytes { counter in
                try plaintext.withUnsafeBytes { input in
                    try output.withUnsafeMutableBytes { output in
                        try CryptoPrimitives.aes256CTR(
                            key: key, counter: counter, input: input, output: output.baseAddress!)
                    }
                }
            }
        }
        #expect(output == expected)
    }

    @Test func hmacSHA256MatchesRFC4231() throws {
        // RFC 4231, test case 2 (the key is shorter than the block; the text arrives in two parts here).
        var key = Array("Jefe".utf8)
        key += [UInt8](repeating: 0, count: 32 - key.count)  // HMAC pads a short key with zeros: same tag.
        let first = Array("what do ya want ".utf8)
        let second = Array("for nothing?".utf8)
        var tag = [UInt8](repeating: 0, count: 32)
        try key.withUnsafeBytes { key in
            try first.withUnsafeBytes { first in
                try second.withUnsafeBytes { second in
                    try tag.withUnsafeMutableBytes { tag in
                        try CryptoPrimitives.hmacSHA256(key: key, parts: [first, second], tag: tag.baseAddress!)
                    }
                }
            }
        }
        #expect(tag == hexBytes("5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"))
    }

    private let key = (0..<64).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
    private let page: [UInt8] = (0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 8) }

    /// Seals `page` as page 42 and returns the ciphertext, nonce and tag.
    private func sealed(_ cipher: BlockCipher) throws -> (ciphertext: [UInt8], nonce: [UInt8], tag: [UInt8]) {
        let nonce = BlockCipher.freshNonce()
        let (ciphertext, tag) = try cipher.sealed(page, nonce: nonce, associated: [0, 0, 0, 42])
        return (ciphertext, nonce, tag)
    }

    /// Opens `ciphertext` into a buffer of 0xEE bytes; returns whether it authenticated and the buffer.
    private func opened(
        _ cipher: BlockCipher, _ ciphertext: [UInt8], nonce: [UInt8], tag: [UInt8], page number: UInt8 = 42
    ) throws -> (Bool, [UInt8]) {
        var plaintext = [UInt8](repeating: 0xEE, count: ciphertext.count)
        let associated: [UInt8] = [0, 0, 0, number]
        let authentic = try ciphertext.withUnsafeBytes { ciphertext in
            try associated.withUnsafeBytes { associated in
                try tag.withUnsafeBytes { tag in
                    try plaintext.withUnsafeMutableBytes { plaintext in
                        try cipher.open(
                            ciphertext, into: plaintext.baseAddress!, nonce: nonce, associated: associated, tag: tag)
                    }
                }
            }
        }
        return (authentic, plaintext)
    }

    @Test(arguments: CipherSuite.allCases)
    func aSealedBlockOpensToItsPlaintext(suite: CipherSuite) throws {
        let cipher = try BlockCipher(key: key, suite: suite)
        let (ciphertext, nonce, tag) = try sealed(cipher)
        #expect(ciphertext != page)
        let (authentic, plaintext) = try opened(cipher, ciphertext, nonce: nonce, tag: tag)
        #expect(authentic && plaintext == page)
        // A fresh nonce per write: the same page sealed twice shares no key stream.
        let again = try sealed(cipher)
        #expect(again.nonce != nonce && again.ciphertext != ciphertext)
    }

    @Test(arguments: CipherSuite.allCases)
    func damageAWrongKeyOrAnotherPlaceIsRefusedAndWritesNothing(suite: CipherSuite) throws {
        let cipher = try BlockCipher(key: key, suite: suite)
        let (ciphertext, nonce, tag) = try sealed(cipher)
        let untouched = [UInt8](repeating: 0xEE, count: page.count)
        var flipped = ciphertext
        flipped[1234] ^= 0x01
        var badTag = tag
        badTag[31] ^= 0x80  // in GCM's suite, the zero half of the tag field
        var badTagStart = tag
        badTagStart[3] ^= 0x04
        var otherAESHalf = key
        otherAESHalf[3] ^= 0x01
        var otherNonce = nonce
        otherNonce[0] ^= 0xFF
        var otherKey = key
        otherKey[40] ^= 0x01  // the HMAC half
        var cases = [
            ("a flipped ciphertext bit", try opened(cipher, flipped, nonce: nonce, tag: tag)),
            ("a damaged tag", try opened(cipher, ciphertext, nonce: nonce, tag: badTag)),
            ("a damaged tag start", try opened(cipher, ciphertext, nonce: nonce, tag: badTagStart)),
            ("another nonce", try opened(cipher, ciphertext, nonce: otherNonce, tag: tag)),
            ("the block moved to page 43", try opened(cipher, ciphertext, nonce: nonce, tag: tag, page: 43)),
            (
                "a wrong key",
                try opened(try BlockCipher(key: otherKey, suite: suite), ciphertext, nonce: nonce, tag: tag)
            ),
            (
                "the other suite",
                try opened(
                    try BlockCipher(key: key, suite: suite == .aes256GCM ? .aes256CTRWithHMACSHA256 : .aes256GCM),
                    ciphertext, nonce: nonce, tag: tag)
            ),
        ]
        if suite == .aes256GCM {
            // GCM's key is derived from all 64 bytes; counter mode with HMAC authenticates with the last 32 only
            // (a wrong first half decrypts to noise that the page's checksum then rejects).
            cases.append(
                (
                    "a wrong AES half",
                    try opened(try BlockCipher(key: otherAESHalf, suite: suite), ciphertext, nonce: nonce, tag: tag)
                ))
        }
        for (name, result) in cases {
            #expect(result.0 == false, "\(name) authenticated")
            #expect(result.1 == untouched, "\(name) wrote plaintext")
        }
    }

    @Test func aKeyOfAnotherLengthIsATypedError() {
        for length in [0, 32, 63, 65] {
            #expect(throws: StorageError.invalidArgument("an encryption key has 64 bytes, not \(length)")) {
                try BlockCipher(key: [UInt8](repeating: 1, count: length))
            }
        }
    }

    /// A cipher reuses keyed contexts from call to call (``KeyedContexts`` on Linux): every seal must still give
    /// exactly what freshly keyed primitives give for its nonce, whatever the previous calls left in the contexts
    /// (blocks of different lengths, so a counter not reset would show). Counter mode with HMAC here; the GCM
    /// suite's in ``CipherSuiteTests``.
    @Test func successiveSealsMatchFreshlyKeyedPrimitives() throws {
        let key = (0..<64).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ 5) }
        let cipher = try BlockCipher(key: key, suite: .aes256CTRWithHMACSHA256)
        for round in 0..<6 {
            let plaintext = (0..<(37 + round * 1500)).map { UInt8(truncatingIfNeeded: $0 &+ round) }
            let nonce = BlockCipher.freshNonce()
            let associated: [UInt8] = [UInt8(round), 7, 9]
            let (sealed, tag) = try cipher.sealed(plaintext, nonce: nonce, associated: associated)
            var expected = [UInt8](repeating: 0, count: plaintext.count)
            var expectedTag = [UInt8](repeating: 0, count: BlockCipher.tagSize)
            let length = withUnsafeBytes(of: UInt64(associated.count).bigEndian) { Array($0) }
            try key.withUnsafeBytes { key in
                try (nonce + [0, 0, 0, 0]).withUnsafeBytes { counter in
                    try plaintext.withUnsafeBytes { input in
                        try expected.withUnsafeMutableBytes { output in
                            try CryptoPrimitives.aes256CTR(
                                key: UnsafeRawBufferPointer(rebasing: key[0..<32]), counter: counter, input: input,
                                output: output.baseAddress!)
                        }
                    }
                }
                try length.withUnsafeBytes { length in
                    try associated.withUnsafeBytes { associated in
                        try nonce.withUnsafeBytes { nonce in
                            try expected.withUnsafeBytes { ciphertext in
                                try expectedTag.withUnsafeMutableBytes { tag in
                                    try CryptoPrimitives.hmacSHA256(
                                        key: UnsafeRawBufferPointer(rebasing: key[32...]),
                                        parts: [length, associated, nonce, ciphertext], tag: tag.baseAddress!)
                                }
                            }
                        }
                    }
                }
            }
            #expect(sealed == expected, "round \(round): ciphertext")
            #expect(tag == expectedTag, "round \(round): tag")
        }
    }

    #if !canImport(CommonCrypto)
        @Test func aMissingLibcryptoIsATypedErrorNamingWhatWasTried() throws {
            let result = LibCrypto.load(names: ["libstrata-no-such-crypto.so.9"])
            guard case .failure(.encryptionUnavailable(let reason)) = result else {
                Issue.record("loading a missing library gave \(result)")
                return
            }
            #expect(reason.contains("libcrypto") && reason.contains("libstrata-no-such-crypto.so.9"))
            // The real one loads here (the test machines have OpenSSL).
            _ = try LibCrypto.shared.get()
        }
    #endif
}

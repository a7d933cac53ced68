import Foundation
import Testing

@testable import StrataStorage

/// AES-256-GCM, the cipher suite of new encrypted files, beside the suite files had before it (AES-256-CTR with
/// HMAC-SHA-256): the platform's GCM checked against the published vectors, ``BlockCipher``'s GCM (its derived key,
/// kept contexts, counter mode pass and log record tags) against the one-shot primitives, and files of each suite:
/// the suite recorded in the header, an older file opening, reading, taking commits and staying on its suite, a
/// copy re-keying it into the new suite, and an unknown suite number refused with a typed error.
@Suite("Cipher suites")
struct CipherSuiteTests {
    /// One-shot AES-256-GCM: the ciphertext and tag of `plaintext`.
    private func gcmSeal(key: [UInt8], nonce: [UInt8], associated: [UInt8], plaintext: [UInt8]) throws -> (
        [UInt8], [UInt8]
    ) {
        var ciphertext = [UInt8](repeating: 0, count: plaintext.count)
        var tag = [UInt8](repeating: 0, count: BlockCipher.gcmTagSize)
        try key.withUnsafeBytes { key in
            try nonce.withUnsafeBytes { nonce in
                try associated.withUnsafeBytes { associated in
                    try plaintext.withUnsafeBytes { input in
                        try ciphertext.withUnsafeMutableBytes { output in
                            try tag.withUnsafeMutableBytes { tag in
                                try CryptoPrimitives.aes256GCMSeal(
                                    key: key, nonce: nonce, associated: [associated], input: input,
                                    output: output.baseAddress!, tag: tag.baseAddress!)
                            }
                        }
                    }
                }
            }
        }
        return (ciphertext, tag)
    }

    /// One-shot AES-256-GCM decryption: the plaintext, or nil when the tag does not match.
    private func gcmOpen(key: [UInt8], nonce: [UInt8], associated: [UInt8], ciphertext: [UInt8], tag: [UInt8]) throws
        -> [UInt8]?
    {
        var plaintext = [UInt8](repeating: 0, count: max(ciphertext.count, 1))
        let authentic = try key.withUnsafeBytes { key in
            try nonce.withUnsafeBytes { nonce in
                try associated.withUnsafeBytes { associated in
                    try ciphertext.withUnsafeBytes { input in
                        try plaintext.withUnsafeMutableBytes { output in
                            try tag.withUnsafeBytes { tag in
                                try CryptoPrimitives.aes256GCMOpen(
                                    key: key, nonce: nonce, associated: [associated], input: input,
                                    output: output.baseAddress!, tag: tag.baseAddress!)
                            }
                        }
                    }
                }
            }
        }
        return authentic ? Array(plaintext[0..<ciphertext.count]) : nil
    }

    @Test func aes256GCMMatchesThePublishedVectors() throws {
        // The GCM specification's test cases 14 and 16 (also in NIST's validation vectors): AES-256, 96-bit IVs;
        // 16 with additional data and a plaintext that ends inside a block.
        let zero = try gcmSeal(
            key: [UInt8](repeating: 0, count: 32), nonce: [UInt8](repeating: 0, count: 12), associated: [],
            plaintext: [UInt8](repeating: 0, count: 16))
        #expect(zero.0 == hexBytes("cea7403d4d606b6e074ec5d3baf39d18"))
        #expect(zero.1 == hexBytes("d0d1c8a799996bf0265b98b5d48ab919"))

        let key = hexBytes("feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308")
        let nonce = hexBytes("cafebabefacedbaddecaf888")
        let associated = hexBytes("feedfacedeadbeeffeedfacedeadbeefabaddad2")
        let plaintext = hexBytes(
            "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72"
                + "1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39")
        let (ciphertext, tag) = try gcmSeal(key: key, nonce: nonce, associated: associated, plaintext: plaintext)
        #expect(
            ciphertext
                == hexBytes(
                    "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa"
                        + "8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662"))
        #expect(tag == hexBytes("76fc6ece0f4e1768cddf8853bb2d551b"))
        #expect(
            try gcmOpen(key: key, nonce: nonce, associated: associated, ciphertext: ciphertext, tag: tag) == plaintext)
        var badTag = tag
        badTag[15] ^= 0x01
        var badAssociated = associated
        badAssociated[0] ^= 0x01
        #expect(try gcmOpen(key: key, nonce: nonce, associated: associated, ciphertext: ciphertext, tag: badTag) == nil)
        #expect(
            try gcmOpen(key: key, nonce: nonce, associated: badAssociated, ciphertext: ciphertext, tag: tag) == nil)
    }

    private let key = (0..<64).map { UInt8(truncatingIfNeeded: $0 &* 29 &+ 3) }

    /// The GCM key ``BlockCipher`` derives: HMAC-SHA-256 under the whole key of the label and a byte 1.
    private func derivedKey() throws -> [UInt8] {
        var derived = [UInt8](repeating: 0, count: 32)
        let input = Array("strata aes-256-gcm key".utf8) + [1]
        try key.withUnsafeBytes { key in
            try input.withUnsafeBytes { input in
                try derived.withUnsafeMutableBytes { derived in
                    try CryptoPrimitives.hmacSHA256(key: key, parts: [input], tag: derived.baseAddress!)
                }
            }
        }
        return derived
    }

    /// Seals, opens and decrypts blocks of different lengths in turn with one GCM cipher (its kept contexts switch
    /// between encrypting, decrypting and counter mode): each seal is exactly the one-shot GCM of the block under
    /// the derived key, with the associated data's length before it; the tag field's second half is zero; an open
    /// and the counter mode pass from counter block 2 both give the block back.
    @Test func theGCMSuiteIsGCMUnderTheDerivedKeyWhateverTheContextsDidBefore() throws {
        let cipher = try BlockCipher(key: key, suite: .aes256GCM)
        let derived = try derivedKey()
        #expect(derived != Array(key[0..<32]) && derived != Array(key[32...]))
        for round in 0..<6 {
            let plaintext = (0..<(37 + round * 1500)).map { UInt8(truncatingIfNeeded: $0 &+ round) }
            let nonce = BlockCipher.freshNonce()
            let associated: [UInt8] = [UInt8(round), 7, 9]
            // The tag field starts as 0xAA bytes, so a seal that left its second half alone would show.
            let (sealed, tag) = try cipher.sealed(plaintext, nonce: nonce, associated: associated, tagFill: 0xAA)
            let length = withUnsafeBytes(of: UInt64(associated.count).bigEndian) { Array($0) }
            let expected = try gcmSeal(
                key: derived, nonce: nonce, associated: length + associated, plaintext: plaintext)
            #expect(sealed == expected.0, "round \(round): ciphertext")
            #expect(Array(tag[0..<16]) == expected.1, "round \(round): tag")
            #expect(tag[16...].allSatisfy { $0 == 0 }, "round \(round): the tag field's second half")

            var opened = [UInt8](repeating: 0, count: plaintext.count)
            var decrypted = [UInt8](repeating: 0, count: plaintext.count)
            let authentic = try sealed.withUnsafeBytes { input in
                try associated.withUnsafeBytes { associated in
                    try tag.withUnsafeBytes { tag in
                        try opened.withUnsafeMutableBytes { output in
                            try cipher.open(
                                input, into: output.baseAddress!, nonce: nonce, associated: associated, tag: tag)
                        }
                    }
                }
            }
            try sealed.withUnsafeBytes { input in
                try decrypted.withUnsafeMutableBytes { output in
                    try cipher.decryptAuthenticated(input, into: output.baseAddress!, nonce: nonce)
                }
            }
            #expect(authentic && opened == plaintext, "round \(round): open")
            #expect(decrypted == plaintext, "round \(round): counter mode from block 2")
        }
    }

    private func logTag(_ cipher: BlockCipher, _ data: [UInt8], associated: [UInt8] = Array("label".utf8)) throws
        -> [UInt8]
    {
        var tag = [UInt8](repeating: 0xAA, count: BlockCipher.tagSize)
        try data.withUnsafeBytes { data in
            try associated.withUnsafeBytes { associated in
                try tag.withUnsafeMutableBytes { tag in
                    try cipher.tag(of: data, associated: associated, into: tag.baseAddress!)
                }
            }
        }
        return tag
    }

    private func logTagVerifies(
        _ cipher: BlockCipher, _ data: [UInt8], _ tag: [UInt8], associated: [UInt8] = Array("label".utf8)
    ) throws -> Bool {
        try data.withUnsafeBytes { data in
            try associated.withUnsafeBytes { associated in
                try tag.withUnsafeBytes { tag in
                    try cipher.authenticates(data, associated: associated, tag: tag.baseAddress!)
                }
            }
        }
    }

    /// A log record's tag in the GCM suite: a fresh nonce, the GMAC of the record under it, four zero bytes. It
    /// verifies for its bytes only; each tag has its own nonce.
    @Test func aGMACRecordTagVerifiesItsBytesOnly() throws {
        let cipher = try BlockCipher(key: key, suite: .aes256GCM)
        let data = (0..<5000).map { UInt8(truncatingIfNeeded: $0 &* 3) }
        let tag = try logTag(cipher, data)
        #expect(tag[28...].allSatisfy { $0 == 0 })
        #expect(try logTagVerifies(cipher, data, tag))
        let again = try logTag(cipher, data)
        #expect(again[0..<12] != tag[0..<12] && again != tag)
        #expect(try logTagVerifies(cipher, data, again))
        var changedData = data
        changedData[4321] ^= 0x10
        #expect(try !logTagVerifies(cipher, changedData, tag))
        #expect(try !logTagVerifies(cipher, data, tag, associated: Array("lobel".utf8)))
        #expect(try !logTagVerifies(try BlockCipher(key: key, suite: .aes256CTRWithHMACSHA256), data, tag))
        for index in [0, 11, 12, 27, 28, 31] {
            var changed = tag
            changed[index] ^= 0x01
            #expect(try !logTagVerifies(cipher, data, changed), "byte \(index) of the tag field changed")
        }
    }

    // MARK: - Files

    private let otherKey = (0..<64).map { UInt8(truncatingIfNeeded: 91 &- $0 &* 5) }

    private func options(
        _ suite: CipherSuite = .newFiles, key: [UInt8]? = nil, durability: StoreOptions.Durability = .full
    )
        -> StoreOptions
    {
        var options = StoreOptions(durability: durability, encryptionKey: key ?? self.key)
        options.cipherSuite = suite
        return options
    }

    /// The suite number in the header of both meta slots of the file at `path`.
    private func suiteNumbers(_ path: String) throws -> [UInt32] {
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        return [0, 4096].map { slot in
            bytes[(slot + 12)..<(slot + 16)].withUnsafeBytes { UInt32(littleEndian: $0.loadUnaligned(as: UInt32.self)) }
        }
    }

    private func record(_ index: Int) -> ([UInt8], [UInt8]) {
        (Array(String(format: "key-%06d", index).utf8), Array(String(repeating: "value \(index) ", count: 9).utf8))
    }

    private func write(_ store: Store, _ range: Range<Int>) throws {
        try store.write { transaction in
            let tree = try #require(try transaction.tree(named: "records", create: .keyed))
            for index in range {
                let (key, value) = record(index)
                try transaction.put(key, value, in: tree)
            }
        }
    }

    private func expectRecords(_ store: Store, _ range: Range<Int>) throws {
        let tree = try #require(try store.read().tree(named: "records"))
        #expect(tree.count == range.count)
        for index in range {
            let (key, value) = record(index)
            #expect(try tree.get(key) == value, "record \(index)")
        }
    }

    @Test func newFilesRecordTheGCMSuite() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("new.strata")
        try write(try Store.open(path: path, options: StoreOptions(encryptionKey: key)), 0..<100)
        #expect(try suiteNumbers(path) == [1, 1])
        try expectRecords(try Store.open(path: path, options: StoreOptions(encryptionKey: key)), 0..<100)
    }

    /// A file of the older suite (made with the internal option): opens with default options, reads, takes
    /// commits (small ones through its log, signed with HMAC-SHA-256, and a large one), verifies, and keeps its
    /// suite; another key is still a wrong key.
    @Test func aFileOfTheOlderSuiteOpensReadsTakesCommitsAndKeepsItsSuite() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("older.strata")
        do {
            let store = try Store.open(path: path, options: options(.aes256CTRWithHMACSHA256))
            try write(store, 0..<1000)
        }
        #expect(try suiteNumbers(path) == [0, 0])
        do {
            let store = try Store.open(path: path, options: StoreOptions(encryptionKey: key))
            try expectRecords(store, 0..<1000)
            for index in 1000..<1010 { try write(store, index..<(index + 1)) }
            try write(store, 1010..<2000)
            try expectRecords(store, 0..<2000)
            let report = try store.verify()
            #expect(report.isValid, "\(report)")
        }
        #expect(try suiteNumbers(path) == [0, 0])
        try expectRecords(try Store.open(path: path, options: StoreOptions(encryptionKey: key)), 0..<2000)
        #expect(throws: StorageError.wrongEncryptionKey(path: path)) {
            try Store.open(path: path, options: StoreOptions(encryptionKey: otherKey))
        }
    }

    /// `compact(to:encryptionKey:)` (what `writeCopy` does) writes an older-suite file's data into a file of the new
    /// suite, under the same key or another.
    @Test func aCopyOfAnOlderSuiteFileIsOfTheNewSuite() throws {
        let directory = TemporaryDirectory()
        let older = directory.file("older.strata")
        try write(try Store.open(path: older, options: options(.aes256CTRWithHMACSHA256)), 0..<1500)
        let sameKey = directory.file("same-key.strata")
        try Store.open(path: older, options: StoreOptions(encryptionKey: key)).compact(to: sameKey)
        let rekeyed = directory.file("rekeyed.strata")
        try Store.open(path: older, options: StoreOptions(encryptionKey: key)).compact(
            to: rekeyed, encryptionKey: otherKey)
        #expect(try suiteNumbers(older) == [0, 0])
        #expect(try suiteNumbers(sameKey) == [1, 1])
        #expect(try suiteNumbers(rekeyed) == [1, 1])
        try expectRecords(try Store.open(path: sameKey, options: StoreOptions(encryptionKey: key)), 0..<1500)
        try expectRecords(try Store.open(path: rekeyed, options: StoreOptions(encryptionKey: otherKey)), 0..<1500)
        #expect(throws: StorageError.wrongEncryptionKey(path: rekeyed)) {
            try Store.open(path: rekeyed, options: StoreOptions(encryptionKey: key))
        }
    }

    /// A header whose suite number this version does not know: opening it with a key is an incompatible file that
    /// names the number, and nothing is written; without a key it still needs one.
    @Test(arguments: [UInt32(2), 7, 0xFFFF_FFFF])
    func anUnknownSuiteNumberIsAnIncompatibleFileAndChangesNothing(number: UInt32) throws {
        let directory = TemporaryDirectory()
        let path = directory.file("future.strata")
        try write(try Store.open(path: path, options: options()), 0..<50)
        var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        for slot in [0, 4096] {
            withUnsafeBytes(of: number.littleEndian) { bytes.replaceSubrange((slot + 12)..<(slot + 16), with: $0) }
        }
        try bytes.write(to: URL(fileURLWithPath: path))
        let before = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        for readOnly in [false, true] {
            var options = options()
            options.readOnly = readOnly
            do {
                _ = try Store.open(path: path, options: options)
                Issue.record("a file of suite \(number) opened")
            } catch .incompatibleFile(let errorPath, let reason) {
                #expect(errorPath == path)
                #expect(reason.contains("cipher suite \(number)"), "\(reason)")
            } catch {
                Issue.record("expected incompatibleFile, got \(error)")
            }
        }
        #expect(throws: StorageError.encryptionKeyRequired(path: path)) { try Store.open(path: path) }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == bytes)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() == before)
    }
}

/// The clear-text start of an encrypted file's meta pages: what tells an encrypted file from a plain one, and a
/// wrong key from a damaged file, before anything is decrypted.
///
/// ```
/// 0  8 bytes  magic "STRATAE\u{1}" (a plain file has its page checksum here, and its magic at byte 32)
/// 8  u32      page size
/// 12 u32      cipher suite (``CipherSuite``): 0 counter mode with HMAC-SHA-256 (this field was reserved and zero
///             before AES-256-GCM), 1 AES-256-GCM; any other number is a file this version cannot read
/// 16 16 bytes file id: random, chosen when the file is created; bound into every page's tag, so that a page
///             copied from another file encrypted with the same key does not authenticate
/// 32 8 bytes  key check (``BlockCipher/keyCheck(associated:)``) with "strata key check" and this file id as
///             associated data. A key that does not reproduce it is another key
/// ```
///
/// The key check reveals nothing about the key beyond letting someone test a guess, which the sealed pages allow
/// anyway; it spares decrypting to tell "wrong key" from "damaged file".
struct EncryptedFileHeader: Equatable {
    static let magic: [UInt8] = Array("STRATAE".utf8) + [0x01]
    static let size = 40
    static let pageSizeOffset = 8
    static let suiteOffset = 12
    static let fileIDOffset = 16
    static let fileIDSize = 16
    static let keyCheckOffset = 32
    static let keyCheckSize = 8

    let pageSize: Int
    /// The suite field as stored; ``suite`` is nil when this version does not know it.
    let suiteNumber: UInt32
    let fileID: [UInt8]
    let keyCheck: [UInt8]

    /// The file's cipher suite, or nil for a number this version of Strata does not know.
    var suite: CipherSuite? { CipherSuite(rawValue: suiteNumber) }

    /// A header for a new file under `cipher` (and its suite), with a fresh random file id.
    init(pageSize: Int, cipher: BlockCipher) throws(StorageError) {
        var generator = SystemRandomNumberGenerator()
        let fileID = (0..<Self.fileIDSize).map { _ in UInt8.random(in: 0...255, using: &generator) }
        self.init(
            pageSize: pageSize, suiteNumber: cipher.suite.rawValue, fileID: fileID,
            keyCheck: try Self.keyCheck(cipher, fileID: fileID))
    }

    private init(pageSize: Int, suiteNumber: UInt32, fileID: [UInt8], keyCheck: [UInt8]) {
        self.pageSize = pageSize
        self.suiteNumber = suiteNumber
        self.fileID = fileID
        self.keyCheck = keyCheck
    }

    /// The header at the start of `bytes`, or nil when they do not start with one. A header of an unknown suite
    /// decodes (``suite`` is nil): the open reports it (``knownSuite(path:)``).
    static func decode(_ bytes: UnsafeRawBufferPointer) -> EncryptedFileHeader? {
        guard bytes.count >= size, Array(bytes[0..<magic.count]) == magic else { return nil }
        let pageSize = Int(bytes.baseAddress!.u32(pageSizeOffset))
        return EncryptedFileHeader(
            pageSize: pageSize, suiteNumber: bytes.baseAddress!.u32(suiteOffset),
            fileID: Array(bytes[fileIDOffset..<fileIDOffset + fileIDSize]),
            keyCheck: Array(bytes[keyCheckOffset..<keyCheckOffset + keyCheckSize]))
    }

    /// The file's suite, or ``StorageError/incompatibleFile(path:reason:)`` naming the number when this version of
    /// Strata does not know it (a file written by a newer version, or a damaged header).
    func knownSuite(path: String) throws(StorageError) -> CipherSuite {
        guard let suite else {
            throw .incompatibleFile(
                path: path,
                reason: "it is encrypted with cipher suite \(suiteNumber), which this version of Strata does not know")
        }
        return suite
    }

    /// Writes the header into the first ``size`` bytes of `page`.
    func encode(into page: UnsafeMutableRawPointer) {
        for (index, byte) in Self.magic.enumerated() { page.setU8(index, byte) }
        page.setU32(Self.pageSizeOffset, UInt32(pageSize))
        page.setU32(Self.suiteOffset, suiteNumber)
        for (index, byte) in fileID.enumerated() { page.setU8(Self.fileIDOffset + index, byte) }
        for (index, byte) in keyCheck.enumerated() { page.setU8(Self.keyCheckOffset + index, byte) }
    }

    /// Whether `cipher`'s key is the one this file was encrypted with; `cipher` must be of the file's suite.
    func accepts(_ cipher: BlockCipher) throws(StorageError) -> Bool {
        precondition(cipher.suite.rawValue == suiteNumber, "a key check is made with the file's suite")
        return try Self.keyCheck(cipher, fileID: fileID) == keyCheck
    }

    private static func keyCheck(_ cipher: BlockCipher, fileID: [UInt8]) throws(StorageError) -> [UInt8] {
        try cipher.keyCheck(associated: Array("strata key check".utf8) + fileID)
    }
}

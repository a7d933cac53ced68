/// The clear-text start of an encrypted file's meta pages: what tells an encrypted file from a plain one, and a
/// wrong key from a damaged file, before anything is decrypted.
///
/// ```
/// 0  8 bytes  magic "STRATAE\u{1}" (a plain file has its page checksum here, and its magic at byte 32)
/// 8  u32      page size
/// 12 u32      reserved, zero
/// 16 16 bytes file id: random, chosen when the file is created; bound into every page's tag, so that a page
///             copied from another file encrypted with the same key does not authenticate
/// 32 8 bytes  key check: the first 8 bytes of the tag of an empty block sealed under the key with this file id
///             as associated data and a zero nonce. A key that does not reproduce it is another key
/// ```
///
/// The key check reveals nothing about the key beyond letting someone test a guess, which the sealed pages allow
/// anyway; it spares decrypting to tell "wrong key" from "damaged file".
struct EncryptedFileHeader: Equatable {
    static let magic: [UInt8] = Array("STRATAE".utf8) + [0x01]
    static let size = 40
    static let pageSizeOffset = 8
    static let fileIDOffset = 16
    static let fileIDSize = 16
    static let keyCheckOffset = 32
    static let keyCheckSize = 8

    let pageSize: Int
    let fileID: [UInt8]
    let keyCheck: [UInt8]

    /// A header for a new file under `cipher`, with a fresh random file id.
    init(pageSize: Int, cipher: BlockCipher) throws(StorageError) {
        var generator = SystemRandomNumberGenerator()
        let fileID = (0..<Self.fileIDSize).map { _ in UInt8.random(in: 0...255, using: &generator) }
        self.init(pageSize: pageSize, fileID: fileID, keyCheck: try Self.keyCheck(cipher, fileID: fileID))
    }

    private init(pageSize: Int, fileID: [UInt8], keyCheck: [UInt8]) {
        self.pageSize = pageSize
        self.fileID = fileID
        self.keyCheck = keyCheck
    }

    /// The header at the start of `bytes`, or nil when they do not start with one.
    static func decode(_ bytes: UnsafeRawBufferPointer) -> EncryptedFileHeader? {
        guard bytes.count >= size, Array(bytes[0..<magic.count]) == magic else { return nil }
        let pageSize = Int(bytes.baseAddress!.u32(pageSizeOffset))
        return EncryptedFileHeader(
            pageSize: pageSize, fileID: Array(bytes[fileIDOffset..<fileIDOffset + fileIDSize]),
            keyCheck: Array(bytes[keyCheckOffset..<keyCheckOffset + keyCheckSize]))
    }

    /// Writes the header into the first ``size`` bytes of `page`.
    func encode(into page: UnsafeMutableRawPointer) {
        for (index, byte) in Self.magic.enumerated() { page.setU8(index, byte) }
        page.setU32(Self.pageSizeOffset, UInt32(pageSize))
        page.setU32(Self.pageSizeOffset + 4, 0)
        for (index, byte) in fileID.enumerated() { page.setU8(Self.fileIDOffset + index, byte) }
        for (index, byte) in keyCheck.enumerated() { page.setU8(Self.keyCheckOffset + index, byte) }
    }

    /// Whether `cipher`'s key is the one this file was encrypted with.
    func accepts(_ cipher: BlockCipher) throws(StorageError) -> Bool {
        try Self.keyCheck(cipher, fileID: fileID) == keyCheck
    }

    private static func keyCheck(_ cipher: BlockCipher, fileID: [UInt8]) throws(StorageError) -> [UInt8] {
        var tag = [UInt8](repeating: 0, count: BlockCipher.tagSize)
        let associated = Array("strata key check".utf8) + fileID
        let failure: StorageError? = tag.withUnsafeMutableBytes { tag in
            associated.withUnsafeBytes { associated -> StorageError? in
                do throws(StorageError) {
                    try cipher.seal(
                        UnsafeRawBufferPointer(start: nil, count: 0), into: tag.baseAddress!,
                        nonce: [UInt8](repeating: 0, count: BlockCipher.nonceSize), associated: associated,
                        tag: tag.baseAddress!)
                    return nil
                } catch {
                    return error
                }
            }
        }
        if let failure { throw failure }
        return Array(tag[0..<keyCheckSize])
    }
}

/// StrataStorage on an encrypted file: the same workloads as ``StrataEngine``, with a 64-byte `encryptionKey`
/// (AES-256-GCM pages, the system's libcrypto), so that `strata-bench --encrypted` shows what
/// encryption costs beside the plain file, in the same run.
final class EncryptedStrataEngine: Engine {
    static let name = "Strata encrypted"
    static let slug = "strata-encrypted"
    static let settings =
        "as Strata, with `StoreOptions.encryptionKey` (64 bytes, fixed): every page sealed at commit, decrypted and authenticated once per page version into the process's decrypted-page cache; small commits through the commit log (sealed page images, records signed with the key)"

    /// A fixed key: the benchmark measures the cipher, not key handling.
    private static let key = (0..<64).map { UInt8(truncatingIfNeeded: $0 &* 29 &+ 7) }
    private let engine: StrataEngine

    init(directory: String) throws {
        engine = try StrataEngine(directory: directory, encryptionKey: Self.key)
    }

    func insertAll(_ keys: KeyTable) throws { try engine.insertAll(keys) }

    func getAll(_ keys: KeyTable, order: [Int]) throws -> Int { try engine.getAll(keys, order: order) }

    func scanAll() throws -> ScanSummary { try engine.scanAll() }

    func commitEach(_ keys: KeyTable, firstIndex: Int) throws { try engine.commitEach(keys, firstIndex: firstIndex) }

    static func openAndGet(directory: String, keys: KeyTable, index: Int) throws -> Bool {
        try StrataEngine.openAndGet(directory: directory, keys: keys, index: index, encryptionKey: key)
    }

    func entryCount() throws -> Int { try engine.entryCount() }
}

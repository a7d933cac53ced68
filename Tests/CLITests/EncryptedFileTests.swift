import Foundation
import Strata
import StrataTestSupport
import Testing

@testable import StrataStorage

/// `strata` on encrypted files (issue 26): the key comes from `STRATA_ENCRYPTION_KEY` or `--key-file` (raw or hex),
/// never an argument; `info`, `verify`, `dump` and `compact` work with it; a missing, wrong or malformed key exits
/// with status 2 and a message saying which, writing nothing; `compact` keeps the key, or writes plain with
/// `--decrypt`; `verify` reports a tampered page.
@Suite("CLI on encrypted files")
struct EncryptedFileTests {
    let directory = TemporaryDirectory()
    let path: String
    static let key = Data((0..<64).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ 5) })
    static let hexKey = key.map { String(format: "%02x", $0) }.joined()
    static let keyed = ["STRATA_ENCRYPTION_KEY": hexKey]

    /// An encrypted file with 200 gadgets.
    init() throws {
        path = directory.file("secret.strata")
        let realm = try Realm(
            configuration: Realm.Configuration(
                fileURL: URL(fileURLWithPath: path), encryptionKey: Self.key, objectTypes: [Gadget.self]))
        try realm.write {
            for index in 0..<200 { realm.create(Gadget.self, value: ["label": "gadget \(index)"]) }
        }
    }

    @Test func infoVerifyDumpAndCompactReadTheFileWithTheKeyFromTheEnvironment() throws {
        let info = try strata(arguments: ["info", path], environment: Self.keyed)
        #expect(info.status == 0, "\(info.errors)")
        #expect(info.output.contains("Gadget"), "\(info.output)")
        let verify = try strata(arguments: ["verify", path], environment: Self.keyed)
        #expect(verify.status == 0, "\(verify.output)\(verify.errors)")
        let dump = try strata(arguments: ["dump", path, "Gadget"], environment: Self.keyed)
        #expect(dump.status == 0, "\(dump.errors)")
        #expect(dump.lines.count == 200)
        #expect(dump.output.contains("gadget 199"))
        let copy = directory.file("copy.strata")
        let compact = try strata(arguments: ["compact", path, copy], environment: Self.keyed)
        #expect(compact.status == 0, "\(compact.errors)")
        #expect(throws: StorageError.encryptionKeyRequired(path: copy)) {
            try Store.open(path: copy, options: StoreOptions(readOnly: true))
        }
        let reopened = try Store.open(path: copy, options: StoreOptions(readOnly: true, encryptionKey: Array(Self.key)))
        #expect(try reopened.verify().isValid)
    }

    @Test func aKeyFileHoldsTheKeyRawOrAsHex() throws {
        let raw = directory.file("raw.key")
        try Self.key.write(to: URL(fileURLWithPath: raw))
        let hex = directory.file("hex.key")
        try Data((Self.hexKey + "\n").utf8).write(to: URL(fileURLWithPath: hex))
        for keyFile in [raw, hex] {
            let run = try strata("verify", path, "--key-file", keyFile)
            #expect(run.status == 0, "\(keyFile): \(run.errors)")
        }
        let short = directory.file("short.key")
        try Data(repeating: 1, count: 32).write(to: URL(fileURLWithPath: short))
        let refused = try strata("info", path, "--key-file", short)
        #expect(refused.status == 2)
        #expect(refused.errors.contains("64-byte key"), "\(refused.errors)")
    }

    @Test func aMissingWrongOrMalformedKeyExitsWithStatus2AndWritesNothing() throws {
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let copy = directory.file("copy.strata")
        let wrongKey = String(repeating: "ab", count: 64)
        let cases: [([String: String], String)] = [
            ([:], "is encrypted"),
            (["STRATA_ENCRYPTION_KEY": wrongKey], "another key"),
            (["STRATA_ENCRYPTION_KEY": "00ff"], "128 hex characters"),
        ]
        for (environment, message) in cases {
            for arguments in [["info", path], ["verify", path], ["dump", path, "Gadget"], ["compact", path, copy]] {
                let run = try strata(arguments: arguments, environment: environment)
                #expect(run.status == 2, "\(arguments) with \(environment)")
                #expect(run.errors.contains(message), "\(arguments): \(run.errors)")
                #expect(!FileManager.default.fileExists(atPath: copy))
            }
        }
        // A plain file with a key.
        let plain = directory.file("plain.strata")
        _ = try Store.open(path: plain, options: StoreOptions())
        let run = try strata(arguments: ["info", plain], environment: Self.keyed)
        #expect(run.status == 2)
        #expect(run.errors.contains("not encrypted"), "\(run.errors)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
    }

    @Test func compactWithDecryptWritesAPlainCopy() throws {
        let copy = directory.file("plain-copy.strata")
        let run = try strata(arguments: ["compact", path, copy, "--decrypt"], environment: Self.keyed)
        #expect(run.status == 0, "\(run.errors)")
        let dump = try strata("dump", copy, "Gadget")
        #expect(dump.status == 0, "\(dump.errors)")
        #expect(dump.lines.count == 200)
        let plain = directory.file("plain.strata")
        _ = try Store.open(path: plain, options: StoreOptions())
        let refused = try strata("compact", plain, directory.file("other.strata"), "--decrypt")
        #expect(refused.status == 2)
    }

    @Test func verifyReportsATamperedPage() throws {
        let store = try Store.open(path: path, options: StoreOptions(encryptionKey: Array(Self.key)))
        let before = Set(try store.reachablePages())
        // A last small commit, so the page damaged is not one the newest commit wrote (recovery would drop it).
        try store.write { transaction in
            let tree = try #require(try transaction.tree(named: "last", create: .keyed))
            try transaction.put(Array("k".utf8), Array("v".utf8), in: tree)
        }
        let page = try #require(try store.reachablePages().filter { $0 >= 2 && before.contains($0) }.last)
        var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        bytes[Int(page) * 4096 + 300] ^= 0x04
        let damaged = directory.file("damaged.strata")
        try bytes.write(to: URL(fileURLWithPath: damaged))
        let run = try strata(arguments: ["verify", damaged], environment: Self.keyed)
        #expect(run.status != 0)
        #expect((run.output + run.errors).contains("page \(page)"), "\(run.output)\(run.errors)")
    }

    @Test func helpTellsWhereTheKeyComesFrom() throws {
        let run = try strata("help")
        #expect(run.output.contains("STRATA_ENCRYPTION_KEY"))
        #expect(run.output.contains("--key-file"))
        #expect(try strata("help", "compact").output.contains("--decrypt"))
    }
}

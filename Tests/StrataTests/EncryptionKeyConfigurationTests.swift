import Foundation
import StrataStorage
import Testing

@testable import Strata

/// `Realm.Configuration.encryptionKey` (issue 26): a key that does not fit the file fails the open with
/// `Realm.Error.fileAccess` whose reason says why, as the SDK reports decryption failures, and writes nothing.
@Suite("Encryption key in the configuration")
struct EncryptionKeyConfigurationTests {
    private let key = Data((0..<64).map { UInt8($0) })

    /// The reason of the `fileAccess` error `open` throws, or nil (recording an issue) for anything else.
    private func fileAccessReason(_ open: () throws -> Void) -> String? {
        do {
            try open()
            Issue.record("the open succeeded")
        } catch Realm.Error.fileAccess(_, let reason) {
            return reason
        } catch {
            Issue.record("expected fileAccess, got \(error)")
        }
        return nil
    }

    @Test func aKeyOfAnotherLengthFailsTheOpenAndCreatesNothing() throws {
        let scratch = try Scratch()
        var configuration = scratch.configuration([Person.self])
        configuration.encryptionKey = Data(count: 32)
        let reason = fileAccessReason { _ = try Realm(configuration: configuration) }
        #expect(reason?.contains("64 bytes") == true, "\(reason ?? "")")
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.url.path).isEmpty)
    }

    @Test func aPlainRealmOpenedWithAKeySaysItIsNotEncrypted() throws {
        let scratch = try Scratch()
        let plain = scratch.configuration([Person.self])
        do {
            let realm = try Realm(configuration: plain)
            try realm.write { realm.create(Person.self, value: ["id": 1]) }
        }
        let path = plain.fileURL!.path
        let before = try Data(contentsOf: plain.fileURL!)
        var keyed = plain
        keyed.encryptionKey = key
        let reason = fileAccessReason { _ = try Realm(configuration: keyed) }
        #expect(reason?.contains("not encrypted") == true, "\(reason ?? "")")
        let schemaReason = fileAccessReason { _ = try Realm.schemaVersionAtURL(plain.fileURL!, encryptionKey: key) }
        #expect(schemaReason?.contains("not encrypted") == true, "\(schemaReason ?? "")")
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
        #expect(try Realm(configuration: plain).objects(Person.self).count == 1)
    }
}

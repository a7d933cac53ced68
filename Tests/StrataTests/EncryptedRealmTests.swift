import Foundation
import StrataStorage
import Testing

@testable import Strata

/// Realms on encrypted files (`Realm.Configuration.encryptionKey`, issue 26): objects written come back after a
/// reopen, the file holds none of their strings in clear, another key is refused as the SDK refuses it
/// (`fileAccess`), copies encrypt, decrypt and re-key, and compacting on launch compacts an encrypted Realm.
@Suite("Encrypted Realms")
struct EncryptedRealmTests {
    private let key = Data((0..<64).map { UInt8(truncatingIfNeeded: 255 &- $0 &* 3) })
    private static let marker = "Okapi-Tangerine-Lighthouse"

    private func configuration(_ scratch: Scratch) -> Realm.Configuration {
        var configuration = scratch.configuration([Person.self, Address.self])
        configuration.encryptionKey = key
        return configuration
    }

    @Test func objectsSurviveAReopenAndTheFileHoldsNoPlaintext() throws {
        let scratch = try Scratch()
        let configuration = configuration(scratch)
        do {
            let realm = try Realm(configuration: configuration)
            try realm.write {
                for id in 0..<2000 {
                    realm.create(
                        Person.self,
                        value: [
                            "id": id, "name": "\(Self.marker) \(id)", "age": id % 90,
                            "address": ["street": "\(id) Encrypted Lane"],
                        ])
                }
            }
        }
        let realm = try Realm(configuration: configuration)
        let people = realm.objects(Person.self)
        #expect(people.count == 2000)
        for id in stride(from: 0, to: 2000, by: 37) {
            let person = try #require(realm.object(ofType: Person.self, forPrimaryKey: id))
            #expect(person.name == "\(Self.marker) \(id)")
            #expect(person.age == id % 90)
            #expect(person.address?.street == "\(id) Encrypted Lane")
        }
        #expect(people.filter("age == 42").count == 2000 / 90 + (2000 % 90 > 42 ? 1 : 0))
        let bytes = try Data(contentsOf: configuration.fileURL!)
        for needle in [Self.marker, "Encrypted Lane", "Person"] {
            #expect(bytes.range(of: Data(needle.utf8)) == nil, "\(needle) is in the file in clear")
        }
    }

    @Test func anotherKeyOrNoKeyIsAFileAccessErrorAndChangesNothing() throws {
        let scratch = try Scratch()
        let configuration = configuration(scratch)
        do {
            let realm = try Realm(configuration: configuration)
            try realm.write { realm.create(Person.self, value: ["id": 1, "name": Self.marker]) }
        }
        let before = try Data(contentsOf: configuration.fileURL!)
        for other in [Data(repeating: 9, count: 64), nil] {
            var wrong = configuration
            wrong.encryptionKey = other
            do {
                _ = try Realm(configuration: wrong)
                Issue.record("opened with \(other == nil ? "no key" : "another key")")
            } catch Realm.Error.fileAccess(_, let reason) {
                #expect(reason.contains(other == nil ? "is encrypted" : "another key"), "\(reason)")
            } catch {
                Issue.record("expected fileAccess, got \(error)")
            }
        }
        #expect(try Data(contentsOf: configuration.fileURL!) == before)
        #expect(
            try Realm(configuration: configuration).object(ofType: Person.self, forPrimaryKey: 1)?.name == Self.marker)
    }

    /// Writes `count` people named with the marker.
    private func fill(_ realm: Realm, count: Int) throws {
        try realm.write {
            for id in 0..<count {
                realm.create(
                    Person.self,
                    value: ["id": id, "name": "\(Self.marker) \(id)", "address": ["street": "\(id) Copy Lane"]])
            }
        }
    }

    /// Whether the Realm at `configuration` holds exactly the people ``fill(_:count:)`` wrote.
    private func expectPeople(_ configuration: Realm.Configuration, count: Int) throws {
        let realm = try Realm(configuration: configuration)
        #expect(realm.objects(Person.self).count == count)
        for id in 0..<count {
            let person = try #require(realm.object(ofType: Person.self, forPrimaryKey: id))
            #expect(person.name == "\(Self.marker) \(id)")
            #expect(person.address?.street == "\(id) Copy Lane")
        }
    }

    /// `writeCopy(toFile:encryptionKey:)` and `writeCopy(configuration:)`: plain → encrypted → re-keyed → plain,
    /// every object equal; each encrypted copy opens only with its key (`fileAccess` saying which otherwise) and
    /// holds no plaintext; a key of another length is `fileAccess` and writes nothing.
    @Test func copiesEncryptDecryptAndRekey() throws {
        let scratch = try Scratch()
        var plain = configuration(scratch)
        plain.encryptionKey = nil
        try fill(try Realm(configuration: plain), count: 300)
        var encrypted = plain
        encrypted.fileURL = scratch.url.appendingPathComponent("encrypted.strata")
        encrypted.encryptionKey = key
        try Realm(configuration: plain).writeCopy(toFile: encrypted.fileURL!, encryptionKey: key)
        var rekeyed = encrypted
        rekeyed.fileURL = scratch.url.appendingPathComponent("rekeyed.strata")
        rekeyed.encryptionKey = Data(repeating: 7, count: 64)
        try Realm(configuration: encrypted).writeCopy(configuration: rekeyed)
        var decrypted = plain
        decrypted.fileURL = scratch.url.appendingPathComponent("decrypted.strata")
        try Realm(configuration: rekeyed).writeCopy(toFile: decrypted.fileURL!)

        for configuration in [encrypted, rekeyed, decrypted] { try expectPeople(configuration, count: 300) }
        for configuration in [encrypted, rekeyed] {
            let bytes = try Data(contentsOf: configuration.fileURL!)
            #expect(bytes.range(of: Data(Self.marker.utf8)) == nil, "\(configuration.fileURL!.path) holds plaintext")
        }
        for (wrongKey, expected) in [(key, "another key"), (nil, "is encrypted")] {
            var wrong = rekeyed
            wrong.encryptionKey = wrongKey
            do {
                _ = try Realm(configuration: wrong)
                Issue.record("the re-keyed copy opened with \(wrongKey == nil ? "no key" : "the old key")")
            } catch Realm.Error.fileAccess(_, let reason) {
                #expect(reason.contains(expected), "\(reason)")
            }
        }
        let refused = scratch.url.appendingPathComponent("refused.strata")
        do {
            try Realm(configuration: encrypted).writeCopy(toFile: refused, encryptionKey: Data(count: 32))
            Issue.record("a 32-byte key was accepted")
        } catch Realm.Error.fileAccess(_, let reason) {
            #expect(reason.contains("64 bytes"), "\(reason)")
        }
        #expect(!FileManager.default.fileExists(atPath: refused.path))
    }

    /// `shouldCompactOnLaunch` compacts an encrypted Realm, which stays encrypted.
    @Test func compactOnLaunchCompactsAnEncryptedRealm() throws {
        let scratch = try Scratch()
        var configuration = configuration(scratch)
        do {
            let realm = try Realm(configuration: configuration)
            try fill(realm, count: 1000)
            try realm.write { realm.delete(realm.objects(Person.self).filter("id >= 100")) }
        }
        let size = { try FileManager.default.attributesOfItem(atPath: configuration.fileURL!.path)[.size] as? Int }
        let before = try #require(try size())
        configuration.shouldCompactOnLaunch = { _, _ in true }
        try expectPeople(configuration, count: 100)
        #expect(try #require(try size()) < before)
        let bytes = try Data(contentsOf: configuration.fileURL!)
        #expect(bytes.range(of: Data(Self.marker.utf8)) == nil)
    }
}

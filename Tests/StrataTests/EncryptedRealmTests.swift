import Foundation
import StrataStorage
import Testing

@testable import Strata

/// Realms on encrypted files (`Realm.Configuration.encryptionKey`, issue 26): objects written come back after a
/// reopen, the file holds none of their strings in clear, another key is refused as the SDK refuses it
/// (`fileAccess`), and copying an encrypted Realm is refused until copies can be encrypted.
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

    @Test func writeCopyOfAnEncryptedRealmIsRefused() throws {
        let scratch = try Scratch()
        let realm = try Realm(configuration: configuration(scratch))
        try realm.write { realm.create(Person.self, value: ["id": 1, "name": Self.marker]) }
        let copy = scratch.url.appendingPathComponent("copy.strata")
        #expect(throws: (any Error).self) { try realm.writeCopy(toFile: copy) }
        #expect(!FileManager.default.fileExists(atPath: copy.path))
    }
}

import Foundation
import Testing

@testable import Strata

final class FileMemberBook: Object {
    @Persisted(primaryKey: true) var isbn = ""
    @Persisted var title = ""
}

/// The SDK's file members of the Realm handle, from its documentation: `Realm.schemaVersionAtURL(_:)`,
/// `writeCopy(configuration:)`, `Configuration.seedFilePath`, and `dynamicObject(ofType:forPrimaryKey:)`.
@Suite("Realm file members")
struct RealmFileMembersTests {
    private static func directory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("file-members-\(UUID())")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    private static func configuration(_ url: URL, version: UInt64 = 3) -> Realm.Configuration {
        Realm.Configuration(fileURL: url, schemaVersion: version, objectTypes: [FileMemberBook.self])
    }

    /// A file at schema version 3 holding one book.
    private static func bookFile(in directory: URL) throws -> URL {
        let url = directory.appendingPathComponent("books.strata")
        let realm = try Realm(configuration: configuration(url))
        try realm.write { realm.create(FileMemberBook.self, value: ["isbn": "1", "title": "Dune"]) }
        return url
    }

    @Test func schemaVersionAtURLReadsTheFileWithoutOpeningARealm() throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = try Self.bookFile(in: directory)
        #expect(try Realm.schemaVersionAtURL(url) == 3)
        let missing = directory.appendingPathComponent("missing.strata")
        #expect(throws: Realm.Error.fileNotFound(path: missing.path)) { try Realm.schemaVersionAtURL(missing) }
        #expect(!FileManager.default.fileExists(atPath: missing.path))
    }

    @Test func writeCopyWithAConfigurationOpensWithThatConfiguration() throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let realm = try Realm(configuration: Self.configuration(try Self.bookFile(in: directory)))
        let copyURL = directory.appendingPathComponent("copy.strata")
        try realm.writeCopy(configuration: Self.configuration(copyURL))
        let copy = try Realm(configuration: Self.configuration(copyURL))
        #expect(copy.objects(FileMemberBook.self).map(\.title) == ["Dune"])
        #expect(try Realm.schemaVersionAtURL(copyURL) == 3)
        // In-memory targets are an error, as in the SDK.
        let inMemory = Realm.Configuration(inMemoryIdentifier: "file-members-\(UUID())")
        #expect(throws: Realm.Error.self) { try realm.writeCopy(configuration: inMemory) }
    }

    @Test func aSeedFileIsCopiedOnFirstOpenOnly() throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let seed = try Self.bookFile(in: directory)
        let target = directory.appendingPathComponent("app.strata")
        var configuration = Self.configuration(target)
        configuration.seedFilePath = seed
        do {
            let realm = try Realm(configuration: configuration)
            #expect(realm.objects(FileMemberBook.self).map(\.title) == ["Dune"])
            try realm.write { realm.create(FileMemberBook.self, value: ["isbn": "2", "title": "Emma"]) }
        }
        // The file exists now: opening again keeps it (the seed does not overwrite it).
        let reopened = try Realm(configuration: configuration)
        #expect(reopened.objects(FileMemberBook.self).count == 2)
        // The initialiser takes it too, in the SDK's argument order.
        let other = Realm.Configuration(
            fileURL: directory.appendingPathComponent("other.strata"), schemaVersion: 3,
            objectTypes: [FileMemberBook.self], seedFilePath: seed)
        #expect(try Realm(configuration: other).objects(FileMemberBook.self).count == 1)
        // A missing seed file is a typed error.
        var missingSeed = Self.configuration(directory.appendingPathComponent("third.strata"))
        missingSeed.seedFilePath = directory.appendingPathComponent("no-seed.strata")
        #expect(throws: Realm.Error.fileNotFound(path: directory.appendingPathComponent("no-seed.strata").path)) {
            try Realm(configuration: missingSeed)
        }
    }

    @Test func dynamicObjectForPrimaryKey() throws {
        let directory = try Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let realm = try Realm(configuration: Self.configuration(try Self.bookFile(in: directory)))
        let book = try #require(realm.dynamicObject(ofType: "FileMemberBook", forPrimaryKey: "1"))
        #expect(book["title"] as? String == "Dune")
        #expect(book.className == "FileMemberBook")
        #expect(realm.dynamicObject(ofType: "FileMemberBook", forPrimaryKey: "2") == nil)
        try realm.write {
            realm.dynamicCreate("FileMemberBook", value: ["isbn": "2", "title": "Emma"], update: .error)
        }
        #expect(realm.dynamicObject(ofType: "FileMemberBook", forPrimaryKey: "2")?["title"] as? String == "Emma")
    }
}

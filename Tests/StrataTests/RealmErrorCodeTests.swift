import Foundation
import Testing

@testable import Strata

/// `Realm.Error` as the SDK's documentation uses it: `error.code` with `Realm.Error.Code`'s names, and `catch`
/// clauses that match by code (`catch Realm.Error.fileNotFound`, `catch Realm.Error.fileOperationFailed`,
/// `catch Realm.Error.Code.fileAccess`) next to Strata's own cases.
@Suite("Realm.Error codes")
struct RealmErrorCodeTests {
    private static func temporaryFile(_ name: String) -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("error-code-\(UUID())-\(name)")
    }

    private static func openReadOnly(_ url: URL) throws {
        _ = try Realm(configuration: Realm.Configuration(fileURL: url, readOnly: true))
    }

    @Test func aMissingFileIsCaughtByItsSDKName() throws {
        let url = Self.temporaryFile("missing.strata")
        var caught = false
        do {
            try Self.openReadOnly(url)
        } catch Realm.Error.fileNotFound {
            caught = true
        }
        #expect(caught)
        do {
            try Self.openReadOnly(url)
            Issue.record("opening a missing file read-only succeeded")
        } catch Realm.Error.Code.fileNotFound {
            // matched by code
        } catch {
            Issue.record("unexpected \(error)")
        }
        let error = try #require(throws: Realm.Error.self) { try Self.openReadOnly(url) }
        #expect(error.code == .fileNotFound)
        #expect(error.fileURL?.path == url.path)
    }

    @Test func aDamagedFileHasTheFileAccessCode() throws {
        let url = Self.temporaryFile("damaged.strata")
        try Data(repeating: 0x5A, count: 20_000).write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        var caught = false
        do {
            try Self.openReadOnly(url)
        } catch Realm.Error.Code.fileAccess {
            caught = true
        }
        #expect(caught)
    }

    @Test func writingACopyOverAFileHasTheFileExistsCode() throws {
        let realm = try Realm(configuration: Realm.Configuration(inMemoryIdentifier: "error-code-\(UUID())"))
        let url = Self.temporaryFile("copy.strata")
        try Data("taken".utf8).write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        var caught = false
        do {
            try realm.writeCopy(toFile: url)
        } catch Realm.Error.fileExists {
            caught = true
        }
        #expect(caught)
        #expect(try Data(contentsOf: url) == Data("taken".utf8))
    }

    @Test func ioFailuresMatchFileOperationFailed() {
        func fail(_ error: Realm.Error) throws { throw error }
        var caught: [Realm.Error.Code] = []
        for error in [
            Realm.Error.ioError(path: "/x", operation: "pwrite", code: EIO), .diskFull(path: "/x"),
            .ioError(path: "/x", operation: "open", code: EACCES),
        ] {
            do {
                try fail(error)
            } catch Realm.Error.fileOperationFailed {
                caught.append(.fileOperationFailed)
            } catch Realm.Error.filePermissionDenied {
                caught.append(.filePermissionDenied)
            } catch {
                Issue.record("unexpected \(error)")
            }
        }
        #expect(caught == [.fileOperationFailed, .fileOperationFailed, .filePermissionDenied])
    }

    @Test func codesOfStrataSOwnCases() {
        #expect(Realm.Error.notInWriteTransaction.code == .fail)
        #expect(Realm.Error.migrationRequired(fileVersion: 1, configuredVersion: 1).code == .schemaMismatch)
        #expect(Realm.Error.readerTableFull(path: "/x", capacity: 1).code == .incompatibleLockFile)
        #expect(Realm.Error.incompatibleFile(path: "/x", reason: "r").code == .fileAccess)
        #expect(Realm.Error.notInWriteTransaction.fileURL == nil)
        #expect(Realm.Error.Code.fileNotFound.description == "fileNotFound")
        // Another error type never matches a code.
        #expect(!(Realm.Error.Code.fail ~= CancellationError()))
    }
}

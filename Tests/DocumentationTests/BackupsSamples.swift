import Foundation
import Strata
import Testing

// Documentation/Backups.md: taking a backup while the app runs, and deleting files that are in use.

enum BackupsSample {
    final class Dog: Object {
        @Persisted var name = ""
    }

    /// The writeCopy sample: returns the Realm and where the copy went.
    static func writeCopy(in folder: URL) throws -> (Realm, URL) {
        let realm = try Realm(fileURL: folder.appendingPathComponent("dogs.strata"))
        try realm.write { realm.add(Dog(value: ["name": "Rex"])) }
        let backup = folder.appendingPathComponent("dogs-backup.strata")
        try realm.writeCopy(toFile: backup)
        try realm.write { realm.add(Dog(value: ["name": "Bo"])) }  // after the copy: not in it
        return (realm, backup)
    }

    /// Opens the copy read-only and counts its dogs.
    static func openCopy(_ backup: URL) throws -> Int {
        let restored = try Realm(configuration: Realm.Configuration(fileURL: backup, readOnly: true))
        print(restored.objects(Dog.self).count)  // what the Realm had when it made the copy
        return restored.objects(Dog.self).count
    }

    /// The byte-copy sample, holding the write lock.
    static func copyFiles(of realm: Realm, in folder: URL) throws {
        let files = folder.appendingPathComponent("dogs.strata")
        realm.beginWrite()
        defer { realm.cancelWrite() }
        for suffix in ["", ".log"] where FileManager.default.fileExists(atPath: files.path + suffix) {
            try FileManager.default.copyItem(atPath: files.path + suffix, toPath: files.path + ".bak" + suffix)
        }
    }

    /// The deleteFiles sample; returns whether the file was refused as in use.
    static func delete(_ configuration: Realm.Configuration) throws -> Bool {
        var refused = false
        do {
            try Realm.deleteFiles(for: configuration)
        } catch Realm.Error.fileInUse(let path) {
            print("\(path) is still open somewhere")  // release every Realm of it, then delete
            refused = true
        }
        return refused
    }
}

@Suite("Backups samples")
struct BackupsSampleTests {
    @Test func aCopyTakenWhileTheAppRunsIsOneConsistentFile() throws {
        let folder = TemporaryFolder()
        let (realm, backup) = try BackupsSample.writeCopy(in: folder.url)
        #expect(!FileManager.default.fileExists(atPath: backup.path + ".log"))
        #expect(!FileManager.default.fileExists(atPath: backup.path + ".lock"))
        #expect(try BackupsSample.openCopy(backup) == 1)
        #expect(realm.objects(BackupsSample.Dog.self).count == 2)
    }

    @Test func filesCopiedUnderTheWriteLockOpenWithEveryCommit() throws {
        let folder = TemporaryFolder()
        let (realm, _) = try BackupsSample.writeCopy(in: folder.url)
        try BackupsSample.copyFiles(of: realm, in: folder.url)
        #expect(!realm.isInWriteTransaction)
        let copy = Realm.Configuration(fileURL: folder.url.appendingPathComponent("dogs.strata.bak"))
        #expect(try Realm(configuration: copy).objects(BackupsSample.Dog.self).map(\.name).sorted() == ["Bo", "Rex"])
    }

    @Test func deletingFilesThatAreOpenIsRefused() throws {
        let folder = TemporaryFolder()
        let configuration = Realm.Configuration(fileURL: folder.url.appendingPathComponent("dogs.strata"))
        var realm: Realm? = try Realm(configuration: configuration)
        try realm!.write { realm!.add(BackupsSample.Dog()) }
        #expect(try BackupsSample.delete(configuration))
        realm = nil
        #expect(try !BackupsSample.delete(configuration))
        #expect(!Realm.fileExists(for: configuration))
    }
}

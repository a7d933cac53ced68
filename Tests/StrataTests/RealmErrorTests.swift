import Foundation
import Testing

@testable import Strata
@testable import StrataStorage

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A note with a payload large enough to make the file grow.
final class StorageFailureNote: Object {
    @Persisted var text = ""
    @Persisted var payload = Data()
}

/// Storage failures reach the object layer with their cause, and the error type reads well in logs.
@Suite("Realm errors keep their cause")
struct RealmErrorTests {
    /// An in-memory Realm over a simulated disk on which faults can be scheduled; the store keeps the file
    /// registered while the Realm uses it.
    private func realmOnSimulatedDisk() throws -> (realm: Realm, disk: FaultInjectingFile, store: Store) {
        let identifier = "simulated-disk-\(UUID())"
        let disk = FaultInjectingFile(name: identifier)
        let store = try Store.inMemory(identifier: identifier, over: disk)
        let realm = try Realm(
            configuration: Realm.Configuration(inMemoryIdentifier: identifier, objectTypes: [StorageFailureNote.self]))
        try realm.write { realm.add(StorageFailureNote(value: ["text": "kept"])) }
        return (realm, disk, store)
    }

    private func addLargeNote(_ realm: Realm) throws {
        try realm.write {
            realm.add(StorageFailureNote(value: ["text": "large", "payload": Data(count: 256 << 10)]))
        }
    }

    /// A write that needs more space than the disk has throws `Realm.Error.diskFull`, writes nothing, and the
    /// Realm writes again once space is freed.
    @Test func aFullDiskFailsTheWriteWithDiskFull() throws {
        let (realm, disk, store) = try realmOnSimulatedDisk()
        disk.schedule(.init(spaceLimit: 0))
        do {
            try addLargeNote(realm)
            Issue.record("the write succeeded on a full disk")
        } catch Realm.Error.diskFull(let path) {
            #expect(path == disk.path)
        }
        #expect(realm.objects(StorageFailureNote.self).map(\.text) == ["kept"])
        disk.schedule(.init())
        try addLargeNote(realm)
        #expect(realm.objects(StorageFailureNote.self).map(\.text).sorted() == ["kept", "large"])
        withExtendedLifetime(store) {}
    }

    /// A failing device (`EIO`) surfaces as `Realm.Error.ioError` with the call and its errno.
    @Test func anIOErrorKeepsItsErrno() throws {
        let (realm, disk, store) = try realmOnSimulatedDisk()
        disk.schedule(.init(failWrite: 1, code: EIO))
        #expect(throws: Realm.Error.ioError(path: disk.path, operation: "pwrite", code: EIO)) {
            try addLargeNote(realm)
        }
        #expect(realm.objects(StorageFailureNote.self).map(\.text) == ["kept"])
        withExtendedLifetime(store) {}
    }

    /// Each storage failure with a cause a service acts on keeps a case of its own.
    @Test func storageFailuresMapToCasesOfTheirOwn() {
        let path = "/data/app.strata"
        #expect(Realm.Error.storage(.diskFull(path: path), path: path) == .diskFull(path: path))
        #expect(
            Realm.Error.storage(.io(path: path, operation: "fdatasync", code: EIO), path: path)
                == .ioError(path: path, operation: "fdatasync", code: EIO))
        #expect(
            Realm.Error.storage(.readerTableFull(path: path, capacity: 126), path: path)
                == .readerTableFull(path: path, capacity: 126))
        #expect(Realm.Error.storage(.lockTimeout(path: path), path: path) == .lockTimeout(path: path))
    }

    /// Logs that print the error's type name it, and `localizedDescription` is the whole message (not "The
    /// operation could not be completed").
    @Test func theErrorReadsWellInLogs() throws {
        let missing = NSTemporaryDirectory() + "missing-\(UUID()).strata"
        var thrown: (any Error)?
        do {
            _ = try Realm(configuration: Realm.Configuration(fileURL: URL(fileURLWithPath: missing), readOnly: true))
        } catch {
            thrown = error
        }
        let error = try #require(thrown)
        #expect(String(describing: type(of: error)) == "RealmError")
        #expect(error.localizedDescription == "file not found: \(missing)")
        #expect("\(error)" == "file not found: \(missing)")

        let storage: any Error = StorageError.diskFull(path: missing)
        #expect(storage.localizedDescription == StorageError.diskFull(path: missing).description)
    }
}

import Foundation
import StrataStorage
import Testing

@testable import Strata

/// `Realm.deleteFiles(for:)` refuses a file that a Realm has open, as the Realm SDK does: deleting it would let the
/// open Realm commit into a file nobody can reach while a new Realm on the path saw an empty database.
@Suite("Deleting a Realm's files")
struct RealmFileDeletionTests {
    private func names(_ scratch: Scratch) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: scratch.url.path).sorted()
    }

    @Test func anOpenRealmsFileIsNotDeletedAndKeepsEveryCommit() throws {
        let scratch = try Scratch()
        let configuration = scratch.configuration([Person.self])
        let path = configuration.fileURL!.path
        var realm: Realm? = try Realm(configuration: configuration)
        try realm!.write { realm!.add(Person(value: ["id": 1, "name": "Ann"])) }
        let files = try names(scratch)
        let refusal = #expect(throws: Realm.Error.fileInUse(path: path)) { try Realm.deleteFiles(for: configuration) }
        #expect(refusal?.description.contains(path) == true)
        #expect(try names(scratch) == files, "nothing deleted")
        // The open Realm goes on committing into the file that the path names.
        try realm!.write { realm!.add(Person(value: ["id": 2, "name": "Bob"])) }
        // A frozen collection keeps the file open too.
        let frozen = realm!.objects(Person.self).freeze()
        realm = nil
        #expect(throws: Realm.Error.fileInUse(path: path)) { try Realm.deleteFiles(for: configuration) }
        #expect(frozen.count == 2)
        do {
            let reopened = try Realm(configuration: configuration)
            #expect(reopened.objects(Person.self).map(\.name).sorted() == ["Ann", "Bob"])
        }
        _ = consume frozen
        // Once nothing uses the file, it goes with its lock file and its log.
        #expect(try Realm.deleteFiles(for: configuration))
        #expect(try names(scratch).isEmpty)
        #expect(try Realm(configuration: configuration).isEmpty)
    }

    /// An actor's Realm with observers is watched by the file's notification coordinator; releasing it must
    /// release the file at once, not when the coordinator next looks.
    @Test func aReleasedObservedRealmLeavesItsFileFree() async throws {
        let scratch = try Scratch()
        let configuration = scratch.configuration([Person.self])
        let holder = ObservingHolder()
        try await holder.open(configuration)
        await holder.close()
        #expect(try Realm.deleteFiles(for: configuration))
        #expect(try names(scratch).isEmpty)
    }

    @Test func anOpenInMemoryRealmIsReportedInUse() throws {
        let configuration = Realm.Configuration(inMemoryIdentifier: "deletion-\(UUID())", objectTypes: [Person.self])
        var realm: Realm? = try Realm(configuration: configuration)
        try realm!.write { realm!.add(Person(value: ["id": 1])) }
        #expect(throws: Realm.Error.fileInUse(path: configuration.path)) { try Realm.deleteFiles(for: configuration) }
        #expect(realm!.objects(Person.self).count == 1)
        realm = nil
        #expect(try !Realm.deleteFiles(for: configuration), "no files, and its data went with its last Realm")
    }
}

/// Holds an actor-confined Realm with an observer, as a service's actor would.
private actor ObservingHolder {
    private var realm: Realm?
    private var token: NotificationToken?

    func open(_ configuration: Realm.Configuration) async throws {
        let realm = try await Realm(configuration: configuration, actor: self)
        try await realm.asyncWrite { realm.add(Person(value: ["id": 1])) }
        token = realm.objects(Person.self).observe { _ in }
        self.realm = realm
    }

    func close() {
        token?.invalidate()
        token = nil
        realm = nil
    }
}

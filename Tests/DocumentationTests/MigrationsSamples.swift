import Foundation
import Strata
import Testing

// Documentation/Migrations.md

/// The models of version 0 of the app.
enum MigrationsSampleV0 {
    final class Person: Object {
        @Persisted var firstName = ""
        @Persisted var lastName = ""
        @Persisted var yearsSinceBirth = 0
    }

    final class LegacyCache: Object {
        @Persisted var key = ""
    }
}

/// The models of version 2.
enum MigrationsSample {
    final class Person: Object {
        @Persisted var fullName = ""
        @Persisted var age = 0
    }

    final class Pet: Object {
        @Persisted var name = ""
    }
}

@Suite("Migrations")
struct MigrationsSampleTests {
    @Test func aMigrationRenamesFillsAndDeletes() throws {
        let folder = TemporaryFolder()
        let url = folder.url.appendingPathComponent("people.strata")
        do {
            let old = try Realm(
                configuration: Realm.Configuration(
                    fileURL: url, objectTypes: [MigrationsSampleV0.Person.self, MigrationsSampleV0.LegacyCache.self]))
            try old.write {
                old.create(
                    MigrationsSampleV0.Person.self,
                    value: ["firstName": "Ada", "lastName": "Lovelace", "yearsSinceBirth": 36])
                old.create(MigrationsSampleV0.LegacyCache.self, value: ["key": "stale"])
            }
        }
        typealias Person = MigrationsSample.Person
        typealias Pet = MigrationsSample.Pet

        var configuration = Realm.Configuration(schemaVersion: 2, objectTypes: [Person.self, Pet.self])
        configuration.fileURL = url
        configuration.migrationBlock = { migration, oldVersion in
            if oldVersion < 1 {
                migration.renameProperty(onType: "Person", from: "yearsSinceBirth", to: "age")
            }
            migration.enumerateObjects(ofType: "Person") { old, new in
                let first = old?["firstName"] as? String ?? ""
                let last = old?["lastName"] as? String ?? ""
                new?["fullName"] = "\(first) \(last)"
            }
            migration.deleteData(forType: "LegacyCache")
        }
        let realm = try Realm(configuration: configuration)

        let ada = try #require(realm.objects(Person.self).first)
        #expect(ada.fullName == "Ada Lovelace" && ada.age == 36)
        #expect(realm.schema[className: "LegacyCache"] == nil)
        #expect(realm.schema[className: "Person"]?.properties.map(\.name).sorted() == ["age", "fullName"])
    }

    @Test func aChangedModelWithoutAMigrationIsRefused() throws {
        let folder = TemporaryFolder()
        let url = folder.url.appendingPathComponent("people.strata")
        do {
            _ = try Realm(
                configuration: Realm.Configuration(fileURL: url, objectTypes: [MigrationsSampleV0.Person.self]))
        }
        do {
            _ = try Realm(configuration: Realm.Configuration(fileURL: url, objectTypes: [MigrationsSample.Person.self]))
            Issue.record("opened a file whose schema differs")
        } catch let error as Realm.Error {
            guard case .schemaMismatch(let differences) = error else { throw error }
            print(differences)  // ["Person.firstName: property removed", …]
            #expect(!differences.isEmpty)
        }
        var reset = Realm.Configuration(fileURL: url, objectTypes: [MigrationsSample.Person.self])
        reset.deleteRealmIfMigrationNeeded = true
        let realm = try Realm(configuration: reset)
        #expect(realm.objects(MigrationsSample.Person.self).isEmpty)
    }
}

import Foundation
import Strata
import Testing

/// A duplicate primary key fails the write with `Realm.Error.primaryKeyExists(type:value:)` (the SDK's shape), whose
/// message names the type, the value and the primary key property, and writes nothing.
@Suite("Duplicate primary key")
struct DuplicatePrimaryKeyTests {
    private func memoryRealm() throws -> Realm {
        try Realm(
            configuration: Realm.Configuration(
                inMemoryIdentifier: "duplicate-key-\(UUID())",
                objectTypes: [DuplicateKeyDog.self, DuplicateKeyTag.self]))
    }

    @Test func addNamesTypePropertyAndValue() throws {
        let realm = try memoryRealm()
        try realm.write { realm.add(DuplicateKeyDog(value: ["dogId": 1, "name": "Rex"])) }
        let expected = Realm.Error.primaryKeyExists(type: "DuplicateKeyDog", value: "1")
        #expect(throws: expected) {
            try realm.write { realm.add(DuplicateKeyDog(value: ["dogId": 1, "name": "Fido"])) }
        }
        #expect(
            expected.description
                == "Attempting to create an object of type 'DuplicateKeyDog' with an existing primary key value '1' "
                + "(primary key property 'dogId').")
        #expect(realm.objects(DuplicateKeyDog.self).map(\.name) == ["Rex"])
    }

    /// A duplicate found by the insert's single descent of the primary-key tree, after other objects of the same
    /// write (new keys, one of them the duplicate's): the write rolls back whole, and the next write can use every
    /// key the failed one tried, the object keys it drew included.
    @Test func aDuplicateInsideAWriteRollsTheWholeWriteBack() throws {
        let realm = try memoryRealm()
        try realm.write { realm.add(DuplicateKeyDog(value: ["dogId": 1, "name": "Rex"])) }
        #expect(throws: Realm.Error.primaryKeyExists(type: "DuplicateKeyDog", value: "3")) {
            try realm.write {
                realm.add(DuplicateKeyDog(value: ["dogId": 2, "name": "Ace"]))
                realm.add(DuplicateKeyDog(value: ["dogId": 3, "name": "Bo"]))
                realm.add(DuplicateKeyDog(value: ["dogId": 3, "name": "Cy"]))
            }
        }
        #expect(realm.objects(DuplicateKeyDog.self).map(\.name) == ["Rex"])
        #expect(realm.object(ofType: DuplicateKeyDog.self, forPrimaryKey: 2) == nil)
        try realm.write {
            realm.add(DuplicateKeyDog(value: ["dogId": 3, "name": "Di"]))
            realm.add(DuplicateKeyDog(value: ["dogId": 2, "name": "Ed"]))
        }
        #expect(realm.object(ofType: DuplicateKeyDog.self, forPrimaryKey: 2)?.name == "Ed")
        #expect(realm.object(ofType: DuplicateKeyDog.self, forPrimaryKey: 3)?.name == "Di")
        #expect(realm.objects(DuplicateKeyDog.self).count == 3)
    }

    @Test func createAndDynamicCreateNameThePropertyToo() throws {
        let realm = try memoryRealm()
        try realm.write { realm.create(DuplicateKeyTag.self, value: ["label": "red"]) }
        #expect(throws: Realm.Error.primaryKeyExists(type: "DuplicateKeyTag", value: "red")) {
            try realm.write { realm.create(DuplicateKeyTag.self, value: ["label": "red"]) }
        }
        let error = #expect(throws: Realm.Error.self) {
            try realm.write { realm.dynamicCreate("DuplicateKeyTag", value: ["label": "red"]) }
        }
        #expect(error == .primaryKeyExists(type: "DuplicateKeyTag", value: "red"))
        #expect(error?.description.hasSuffix("(primary key property 'label').") == true)
        #expect(realm.objects(DuplicateKeyTag.self).count == 1)
    }
}

final class DuplicateKeyDog: Object {
    @Persisted(primaryKey: true) var dogId: Int
    @Persisted var name: String
}

final class DuplicateKeyTag: Object {
    @Persisted(primaryKey: true) var label: String
}

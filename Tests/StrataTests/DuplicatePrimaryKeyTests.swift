import Foundation
import Strata
import Testing

/// A duplicate primary key fails the write with `Realm.Error.primaryKeyExists`, which names the type, the
/// primary key property and the value (the SDK's message names the type and the value), and writes nothing.
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
        let expected = Realm.Error.primaryKeyExists(type: "DuplicateKeyDog", property: "dogId", value: "1")
        #expect(throws: expected) {
            try realm.write { realm.add(DuplicateKeyDog(value: ["dogId": 1, "name": "Fido"])) }
        }
        #expect(
            expected.description
                == "Attempting to create an object of type 'DuplicateKeyDog' with an existing primary key value '1' "
                + "(primary key property 'dogId').")
        #expect(realm.objects(DuplicateKeyDog.self).map(\.name) == ["Rex"])
    }

    @Test func createAndDynamicCreateNameThePropertyToo() throws {
        let realm = try memoryRealm()
        try realm.write { realm.create(DuplicateKeyTag.self, value: ["label": "red"]) }
        #expect(throws: Realm.Error.primaryKeyExists(type: "DuplicateKeyTag", property: "label", value: "red")) {
            try realm.write { realm.create(DuplicateKeyTag.self, value: ["label": "red"]) }
        }
        let error = #expect(throws: Realm.Error.self) {
            try realm.write { realm.dynamicCreate("DuplicateKeyTag", value: ["label": "red"]) }
        }
        if case .primaryKeyExists(let type, let property, let value)? = error {
            #expect(type == "DuplicateKeyTag" && property == "label" && value == "red")
        } else {
            Issue.record("expected primaryKeyExists, got \(String(describing: error))")
        }
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

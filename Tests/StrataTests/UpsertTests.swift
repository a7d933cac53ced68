import Foundation
import Testing

@testable import Strata

final class UpsertItem: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var name = ""
    @Persisted var small: Int8 = 0
    @Persisted var score: Double?
    @Persisted(indexed: true) var tag = ""
    @Persisted var any: AnyRealmValue
    @Persisted var tags: List<String>
    @Persisted var friend: UpsertItem?
}

final class UpsertMapped: Object {
    @Persisted(primaryKey: true) var code = ""
    @Persisted var firstName = ""
    @Persisted var count = 0
    override class func propertiesMapping() -> [String: String] { ["firstName": "first_name"] }
}

/// `create(_:value:update:)` of an object whose primary key exists writes the plain properties given in one row
/// write and the others (links, collections, mixed values) through their setters: every form of value, every
/// kind of property, index upkeep and whole rollback of a bad value, as the SDK's upsert behaves.
@Suite("Upsert")
struct UpsertTests {
    private func stored() throws -> Realm {
        let realm = try Realm(
            configuration: Realm.Configuration(inMemoryIdentifier: "upsert-\(UUID())", objectTypes: [UpsertItem.self]))
        try realm.write {
            realm.create(UpsertItem.self, value: ["id": 1, "name": "one", "small": 1, "score": 1.5, "tag": "a"])
            realm.create(UpsertItem.self, value: ["id": 2, "name": "two", "tag": "b"])
        }
        return realm
    }

    @Test func aDictionaryUpdatesExactlyItsKeysOfEveryKind() throws {
        let realm = try stored()
        let two = try #require(realm.object(ofType: UpsertItem.self, forPrimaryKey: 2))
        let updated = try realm.write {
            realm.create(
                UpsertItem.self,
                value: [
                    "id": 1, "small": 7, "score": NSNull(), "tag": "z", "any": "mixed", "tags": ["x", "y"],
                    "friend": two,
                ], update: .modified)
        }
        let one = try #require(realm.object(ofType: UpsertItem.self, forPrimaryKey: 1))
        #expect(updated.realm === realm && updated.id == 1 && updated.isSameObject(as: one))
        #expect(one.name == "one")  // not given: kept
        #expect(one.small == 7 && one.score == nil && one.tag == "z" && one.any == .string("mixed"))
        #expect(Array(one.tags) == ["x", "y"] && one.friend?.id == 2)
        #expect(realm.objects(UpsertItem.self).count == 2)
        // The index follows: the new tag is found, the old one no longer.
        #expect(realm.objects(UpsertItem.self).filter("tag == 'z'").map(\.id) == [1])
        #expect(realm.objects(UpsertItem.self).filter("tag == 'a'").isEmpty)
    }

    @Test func arraysAndObjectsUpdateEveryPropertyTheyGive() throws {
        let realm = try stored()
        try realm.write {
            realm.create(UpsertItem.self, value: [2, "deux", 3, 2.5, "t"], update: .all)
        }
        let two = try #require(realm.object(ofType: UpsertItem.self, forPrimaryKey: 2))
        #expect(two.name == "deux" && two.small == 3 && two.score == 2.5 && two.tag == "t")
        let source = UpsertItem(value: ["id": 2, "name": "copied", "tags": ["c"]])
        try realm.write { realm.create(UpsertItem.self, value: source, update: .modified) }
        // An object gives every property: the ones it left at their defaults too.
        #expect(two.name == "copied" && two.small == 0 && two.score == nil && two.tag == "" && Array(two.tags) == ["c"])
        #expect(source.realm == nil)
    }

    /// The common case (a value of exactly the property's Swift type) is recognised by its type alone; a value
    /// wrapped in optionals or of another integer type still converts the general way.
    @Test func valuesOfAnotherFormConvertAsExactlyTypedOnesDo() throws {
        let realm = try stored()
        let wrappedName: String? = "wrapped"
        let doublyWrapped: Int?? = 9
        try realm.write {
            realm.create(
                UpsertItem.self,
                value: ["id": Int64(1), "name": wrappedName as Any, "small": doublyWrapped as Any, "tag": "t"],
                update: .modified)
            realm.create(UpsertItem.self, value: ["id": 2, "name": Optional("two") as Any], update: .modified)
        }
        let one = try #require(realm.object(ofType: UpsertItem.self, forPrimaryKey: 1))
        #expect(one.name == "wrapped" && one.small == 9 && one.tag == "t" && one.score == 1.5)
        #expect(realm.object(ofType: UpsertItem.self, forPrimaryKey: 2)?.name == "two")
        #expect(realm.objects(UpsertItem.self).count == 2)
    }

    @Test func aBadValueRollsTheWholeWriteBack() throws {
        let realm = try stored()
        let cases: [(value: [String: Any], error: Realm.Error)] = [
            (
                ["id": 1, "name": "changed", "small": 300],
                .invalidValue(type: "UpsertItem", property: "small", reason: "300 does not fit in Int8")
            ),
            (
                ["id": 1, "name": "changed", "score": "high"],
                .invalidValue(
                    type: "UpsertItem", property: "score", reason: "String is not a valid value for a double? property")
            ),
            (
                ["id": 1, "name": "changed", "colour": "red"],
                .invalidValue(type: "UpsertItem", property: "colour", reason: "no such property")
            ),
        ]
        for (value, error) in cases {
            #expect(throws: error) {
                try realm.write {
                    realm.create(UpsertItem.self, value: ["id": 2, "name": "also changed"], update: .modified)
                    realm.create(UpsertItem.self, value: value, update: .modified)
                }
            }
            #expect(realm.object(ofType: UpsertItem.self, forPrimaryKey: 1)?.name == "one")
            #expect(realm.object(ofType: UpsertItem.self, forPrimaryKey: 2)?.name == "two")
        }
    }

    /// A string primary key is looked up from its encoded array (an integer one from the stack), and a dictionary
    /// key that is not a Swift name is looked up by its persisted name; given both, the Swift name's value wins.
    @Test func aStringKeyAndPersistedNamesUpsertAsSwiftNamesDo() throws {
        let realm = try Realm(
            configuration: Realm.Configuration(
                inMemoryIdentifier: "upsert-mapped-\(UUID())", objectTypes: [UpsertMapped.self]))
        try realm.write {
            realm.create(UpsertMapped.self, value: ["code": "a", "first_name": "Ann", "count": 1])
            realm.create(UpsertMapped.self, value: ["code": "b", "firstName": "Bob"])
            realm.create(UpsertMapped.self, value: ["code": "a", "first_name": "Anne"], update: .modified)
        }
        let a = try #require(realm.object(ofType: UpsertMapped.self, forPrimaryKey: "a"))
        #expect(a.firstName == "Anne" && a.count == 1)
        try realm.write {
            realm.create(
                UpsertMapped.self, value: ["code": "a", "first_name": "ignored", "firstName": "Annie", "count": 2],
                update: .modified)
        }
        #expect(a.firstName == "Annie" && a.count == 2)
        #expect(realm.object(ofType: UpsertMapped.self, forPrimaryKey: "b")?.firstName == "Bob")
        #expect(realm.objects(UpsertMapped.self).count == 2)
        #expect(throws: Realm.Error.invalidValue(type: "UpsertMapped", property: "first", reason: "no such property")) {
            try realm.write { realm.create(UpsertMapped.self, value: ["code": "a", "first": "x"], update: .modified) }
        }
        #expect(a.firstName == "Annie")
    }

    @Test func aMissingPrimaryKeyInsertsAndTheSameValuesChangeNothing() throws {
        let realm = try stored()
        try realm.write {
            realm.create(UpsertItem.self, value: ["id": 3, "name": "three"], update: .modified)
            realm.create(UpsertItem.self, value: ["id": 1, "name": "one", "small": 1, "score": 1.5], update: .modified)
        }
        #expect(realm.objects(UpsertItem.self).count == 3)
        let one = try #require(realm.object(ofType: UpsertItem.self, forPrimaryKey: 1))
        #expect(one.name == "one" && one.small == 1 && one.score == 1.5 && one.tag == "a")
    }
}

import Foundation
import Testing

@testable import Strata

final class KVCWalker: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var name = ""
    @Persisted var nickname: String?
    @Persisted var age = 0
    @Persisted var pets: List<KVCBeagle>
    @Persisted var home: KVCHome?
}

final class KVCBeagle: Object {
    @Persisted var name = ""
    @Persisted var age = 0
    @Persisted(originProperty: "pets") var walkers: LinkingObjects<KVCWalker>
}

final class KVCHome: EmbeddedObject {
    @Persisted var city = ""
}

final class KVCRenamedWalker: Object {
    @Persisted var firstName = ""
    override class func propertiesMapping() -> [String: String] { ["firstName": "first_name"] }
}

/// The SDK's key-value coding and schema introspection, from its documentation: `value(forKey:)`,
/// `setValue(_:forKey:)`, `value(forKeyPath:)` on objects and collections, `Object.sharedSchema()`,
/// `Property.columnName`, `DynamicObject` members, `List.objects(at:)`.
@Suite("Key-value coding and schema introspection")
struct KeyValueCodingTests {
    private static func realm() throws -> Realm {
        try Realm(
            configuration: Realm.Configuration(
                inMemoryIdentifier: "kvc-\(UUID())", objectTypes: [KVCWalker.self, KVCBeagle.self, KVCHome.self]))
    }

    private static func walkers(_ realm: Realm) throws -> Results<KVCWalker> {
        try realm.write {
            realm.create(
                KVCWalker.self,
                value: [
                    "id": 1, "name": "Ann", "age": 30, "home": ["city": "Oslo"],
                    "pets": [["name": "Rex", "age": 3], ["name": "Bo", "age": 5]],
                ])
            realm.create(KVCWalker.self, value: ["id": 2, "name": "Bob", "nickname": "B", "age": 40])
        }
        return realm.objects(KVCWalker.self).sorted(byKeyPath: "id")
    }

    @Test func objectsReadAndWritePropertiesByName() throws {
        let realm = try Self.realm()
        let ann = try #require(Self.walkers(realm).first)
        #expect(ann.value(forKey: "name") as? String == "Ann")
        #expect(ann.value(forKey: "nickname") == nil)
        #expect(ann.value(forKeyPath: "home.city") as? String == "Oslo")
        #expect(ann.value(forKeyPath: "pets.name") as? [String] == ["Rex", "Bo"])
        #expect(ann.value(forKeyPath: "pets.@count") as? Int == 2)
        #expect(ann.value(forKeyPath: "pets.@max.age") as? Int == 5)
        #expect(ann.value(forKeyPath: "pets.@sum.age") as? Double == 8)
        try realm.write {
            ann.setValue("Anne", forKey: "name")
            ann.setValue(31, forKey: "age")
        }
        #expect(ann.name == "Anne")
        #expect(ann.age == 31)
        // Unmanaged objects too.
        let unmanaged = KVCWalker()
        unmanaged.setValue("Cy", forKey: "name")
        #expect(unmanaged.value(forKey: "name") as? String == "Cy")
    }

    @Test func collectionsReadAndWriteEveryElementsProperty() throws {
        let realm = try Self.realm()
        let walkers = try Self.walkers(realm)
        #expect(walkers.value(forKey: "name") as? [String] == ["Ann", "Bob"])
        #expect(walkers.value(forKey: "nickname") as? [String?] == [nil, "B"])
        #expect(walkers.value(forKeyPath: "@count") as? Int == 2)
        #expect(walkers.value(forKeyPath: "@avg.age") as? Double == 35)
        let pets = try #require(walkers.first?.pets)
        #expect(pets.value(forKey: "age") as? [Int] == [3, 5])
        try realm.write {
            walkers.setValue(50, forKey: "age")
            pets.setValue("Spot", forKey: "name")
        }
        #expect(walkers.map(\.age) == [50, 50])
        #expect(pets.map(\.name) == ["Spot", "Spot"])
        #expect(pets[0].walkers.value(forKey: "name") as? [String] == ["Ann"])
    }

    @Test func listObjectsAtIndexes() throws {
        let realm = try Self.realm()
        let pets = try #require(Self.walkers(realm).first?.pets)
        #expect(pets.objects(at: IndexSet([1])).map(\.name) == ["Bo"])
        #expect(pets.objects(at: IndexSet(0..<2)).map(\.name) == ["Rex", "Bo"])
        let numbers = List<Int>()
        numbers.append(objectsIn: [10, 20, 30, 40])
        #expect(numbers.objects(at: IndexSet([0, 2, 3])) == [10, 30, 40])
    }

    @Test func sharedSchemaAndColumnNames() throws {
        let schema = try #require(KVCWalker.sharedSchema())
        #expect(schema.className == "KVCWalker")
        #expect(schema.primaryKeyProperty?.name == "id")
        #expect(Object.sharedSchema() == nil)
        // Linking objects are computed properties, listed apart, as in the SDK.
        let beagle = try #require(KVCBeagle.sharedSchema())
        #expect(beagle.properties.map(\.name) == ["name", "age"])
        #expect(beagle.computedProperties.map(\.name) == ["walkers"])
        #expect(KVCBeagle().objectSchema == beagle)
        let renamed = try #require(KVCRenamedWalker.sharedSchema()?.properties.first)
        #expect(renamed.columnName == "first_name")
        #expect(renamed.swiftName == "firstName")
    }

    @Test func dynamicObjectsReadAndWritePropertiesAsMembers() throws {
        let realm = try Self.realm()
        _ = try Self.walkers(realm)
        let ann = try #require(realm.dynamicObjects("KVCWalker").first)
        #expect(ann.name as? String == "Ann")
        #expect(ann.age as? Int == 30)
        try realm.write { ann.name = "Anna" }
        #expect(ann["name"] as? String == "Anna")
        #expect(realm.object(ofType: KVCWalker.self, forPrimaryKey: 1)?.name == "Anna")
    }
}

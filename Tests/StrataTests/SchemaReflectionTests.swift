import Foundation
import Testing

@testable import Strata

final class ReflectedOwner: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var firstName = ""
    @Persisted var dogs: List<ReflectedDog>
    @Persisted var tags: MutableSet<String>
    @Persisted var scores: Map<String, Int>
    @Persisted var friends: MutableSet<ReflectedDog>
    @Persisted var dogsByName: Map<String, ReflectedDog?>

    override class func propertiesMapping() -> [String: String] { ["firstName": "first_name"] }
}

final class ReflectedDog: Object {
    @Persisted var name = ""
    @Persisted(originProperty: "dogs") var owners: LinkingObjects<ReflectedOwner>
}

/// Schema reflection and dynamic access as the SDK documents them: `Realm.schema` lists linking objects among
/// `computedProperties`; `Property.name` is the Swift name and `columnName` the persisted one; `value(forKey:)` of
/// a list, set or map property is the live collection; `DynamicObject.dynamicList(_:)`, `dynamicMutableSet(_:)`,
/// `dynamicMap(_:)`.
@Suite("Schema reflection and dynamic collections")
struct SchemaReflectionTests {
    private static func configuration() -> Realm.Configuration {
        Realm.Configuration(
            inMemoryIdentifier: "reflection-\(UUID())", objectTypes: [ReflectedOwner.self, ReflectedDog.self])
    }

    private static func ann(in realm: Realm) throws -> ReflectedOwner {
        try realm.write {
            realm.create(
                ReflectedOwner.self,
                value: [
                    "id": 1, "firstName": "Ann", "dogs": [["name": "Rex"], ["name": "Bo"]], "tags": ["calm"],
                    "scores": ["a": 1],
                ])
        }
    }

    @Test func realmSchemaListsLinkingObjectsAsComputedProperties() throws {
        let realm = try Realm(configuration: Self.configuration())
        let dog = try #require(realm.schema[className: "ReflectedDog"])
        #expect(dog.properties.map(\.name) == ["name"])
        #expect(dog.computedProperties.map(\.name) == ["owners"])
        #expect(dog.computedProperties.first?.type == .linkingObjects)
        #expect(dog == ReflectedDog.sharedSchema())
    }

    @Test func propertyNameIsTheSwiftNameAndColumnNameThePersistedName() throws {
        let realm = try Realm(configuration: Self.configuration())
        let owner = try #require(realm.schema[className: "ReflectedOwner"])
        let renamed = try #require(owner.properties.first { $0.name == "firstName" })
        #expect(renamed.columnName == "first_name")
        #expect(owner[propertyName: "firstName"] == renamed)
        #expect(owner[propertyName: "first_name"] == renamed)
        #expect(owner.properties.filter { $0.name != $0.columnName }.map(\.name) == ["firstName"])
        // The file and queries keep the persisted name.
        _ = try Self.ann(in: realm)
        #expect(realm.objects(ReflectedOwner.self).filter("first_name == 'Ann'").count == 1)
        let stored = try #require(realm.dynamicObjects("ReflectedOwner").first)
        #expect(stored["first_name"] as? String == "Ann")
    }

    @Test func valueForKeyOfACollectionPropertyIsTheLiveCollection() throws {
        let realm = try Realm(configuration: Self.configuration())
        let ann = try Self.ann(in: realm)
        let dogs = try #require(ann.value(forKey: "dogs") as? List<ReflectedDog>)
        let tags = try #require(ann.value(forKey: "tags") as? MutableSet<String>)
        let scores = try #require(ann.value(forKey: "scores") as? Map<String, Int>)
        #expect(dogs === ann.dogs)
        #expect(tags === ann.tags)
        #expect(scores === ann.scores)
        try realm.write {
            ann.dogs.append(ReflectedDog(value: ["name": "Cy"]))
            ann.tags.insert("brave")
            ann.scores["b"] = 2
        }
        #expect(dogs.map(\.name) == ["Rex", "Bo", "Cy"])
        #expect(tags.count == 2)
        #expect(scores["b"] == 2)
        // Key paths still follow collections as arrays.
        #expect(ann.value(forKeyPath: "dogs.name") as? [String] == ["Rex", "Bo", "Cy"])
        #expect(ann.value(forKeyPath: "dogs") as? List<ReflectedDog> === ann.dogs)
        // Unmanaged objects hand out their own collections.
        let unmanaged = ReflectedOwner()
        #expect(unmanaged.value(forKey: "tags") as? MutableSet<String> === unmanaged.tags)
    }

    @Test func dynamicObjectsHandOutLiveCollectionsOfDynamicObjects() throws {
        let realm = try Realm(configuration: Self.configuration())
        let ann = try Self.ann(in: realm)
        try realm.write {
            ann.friends.insert(ann.dogs[0])
            ann.dogsByName["rex"] = ann.dogs[0]
        }
        let owner = try #require(realm.dynamicObjects("ReflectedOwner").first)
        let dogs = owner.dynamicList("dogs")
        #expect(dogs.map { $0["name"] as? String } == ["Rex", "Bo"])
        #expect(owner.dynamicMutableSet("friends").map { $0["name"] as? String } == ["Rex"])
        let byName: Map<String, DynamicObject?> = owner.dynamicMap("dogsByName")
        #expect(byName["rex"]??["name"] as? String == "Rex")
        #expect(owner.value(forKey: "tags") as? MutableSet<String> != nil)
        #expect(owner.value(forKey: "scores") as? Map<String, Int> != nil)
        try realm.write { ann.dogs.append(ReflectedDog(value: ["name": "Cy"])) }
        #expect(dogs.count == 3)
        try realm.write { dogs.remove(at: 0) }
        #expect(ann.dogs.map(\.name) == ["Bo", "Cy"])
    }
}

import Foundation
import Strata
import Testing

final class DescribedToy: Object {
    @Persisted var brand = ""
}

final class DescribedDog: Object {
    @Persisted var name = ""
    @Persisted var toy: DescribedToy?
    @Persisted var tags: List<String>
    @Persisted var friends: MutableSet<DescribedDog>
    @Persisted var scores: Map<String, Int>
    @Persisted(originProperty: "friends") var befriendedBy: LinkingObjects<DescribedDog>
}

/// Collections and Realms compare and print as the SDK's do.
@Suite("Collection equality and description")
struct CollectionEqualityAndDescriptionTests {
    private func seeded() throws -> (Realm, DescribedDog) {
        let realm = try Realm(
            configuration: Realm.Configuration(
                inMemoryIdentifier: "described-\(UUID())", objectTypes: [DescribedDog.self, DescribedToy.self]))
        let dog = try realm.write {
            let dog = realm.create(
                DescribedDog.self, value: ["name": "Rex", "toy": ["brand": "Kong"], "tags": ["small", "brown"]])
            dog.friends.insert(dog)
            dog.scores["agility"] = 3
            return dog
        }
        return (realm, dog)
    }

    @Test func managedCollectionsAreEqualWhenTheyViewTheSameStoredCollection() throws {
        let (realm, dog) = try seeded()
        let again = try #require(realm.objects(DescribedDog.self).first)
        #expect(dog.tags == again.tags)
        #expect(dog.friends == again.friends)
        #expect(dog.scores == again.scores)
        #expect(dog.befriendedBy == again.befriendedBy)
        #expect(AnyRealmCollection(dog.tags) == AnyRealmCollection(again.tags))
        let results = realm.objects(DescribedDog.self)
        #expect(results == results)
        #expect(results != realm.objects(DescribedDog.self).filter("name == 'Rex'"))
        // Different collections with the same contents are not equal.
        let other = try realm.write {
            realm.create(DescribedDog.self, value: ["name": "Bo", "tags": ["small", "brown"]])
        }
        #expect(other.tags != dog.tags)
    }

    @Test func unmanagedCollectionsAreEqualOnlyToThemselves() {
        let first = List<Int>()
        let second = List<Int>()
        #expect(first == first)
        #expect(first != second)
        let map = Map<String, Int>()
        #expect(map == map && map != Map<String, Int>())
    }

    @Test func realmsAreEqualWhenTheSameFileConfinementAndFrozenVersion() throws {
        let (realm, _) = try seeded()
        #expect(realm == (try Realm(configuration: realm.configuration)))
        let frozen = realm.freeze()
        #expect(frozen != realm)
        #expect(frozen == realm.freeze())
        try realm.write { realm.create(DescribedToy.self) }
        #expect(frozen != realm.freeze())
    }

    @Test func resultsPrintInTheSDKsShape() throws {
        let (realm, _) = try seeded()
        let text = realm.objects(DescribedToy.self).description
        let pattern = #/Results<DescribedToy> <0x[0-9a-f]+> \(\n\t\[0\] DescribedToy \{\n\t\tbrand = Kong;\n\t\}\n\)/#
        #expect(text.wholeMatch(of: pattern) != nil, "\(text)")
    }

    @Test func nestedObjectsAndCollectionsAreIndented() throws {
        let (realm, dog) = try seeded()
        let text = realm.objects(DescribedDog.self).description
        #expect(text.hasPrefix("Results<DescribedDog> <0x"))
        #expect(
            text.contains(
                "\n\t[0] DescribedDog {\n\t\tname = Rex;\n\t\ttoy = DescribedToy {\n\t\t\tbrand = Kong;\n\t\t};"))
        #expect(text.contains("\n\t\ttags = List<string> <0x"))
        #expect(text.contains("(\n\t\t\t[0] small,\n\t\t\t[1] brown\n\t\t);"))
        // The dog is its own friend: the cycle ends at the depth limit.
        #expect(text.contains("<Maximum depth exceeded>"))
        #expect(
            dog.tags.description.wholeMatch(of: #/List<string> <0x[0-9a-f]+> \(\n\t\[0\] small,\n\t\[1\] brown\n\)/#)
                != nil)
        #expect(
            dog.scores.description.wholeMatch(of: #/Map<string, int> <0x[0-9a-f]+> \(\n\t\[agility\]: 3\n\)/#) != nil)
        #expect(AnyRealmCollection(dog.tags).description.hasPrefix("List<string> <0x"))
        #expect(dog.befriendedBy.description.hasPrefix("LinkingObjects<DescribedDog> <0x"))
        #expect(List<Int>().description.wholeMatch(of: #/List<int> <0x[0-9a-f]+> \(\n\n\)/#) != nil)
    }
}

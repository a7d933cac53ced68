import Foundation
import Strata
import Testing

/// As in the SDK, adding an object keeps its `List`, `MutableSet` and `Map` instances: a reference taken before
/// `add` is the managed collection afterwards.
@Suite("Collections kept by add")
struct CollectionsAfterAddTests {
    private func memoryRealm() throws -> Realm {
        try Realm(
            configuration: Realm.Configuration(
                inMemoryIdentifier: "collections-after-add-\(UUID())", objectTypes: [KeptCollectionsDog.self]))
    }

    @Test func aListTakenBeforeAddIsManagedAfterwards() throws {
        let realm = try memoryRealm()
        let dog = KeptCollectionsDog()
        dog.tags.append("small")
        let tags = dog.tags
        try realm.write {
            realm.add(dog)
            tags.append("brown")
        }
        #expect(tags.realm != nil)
        #expect(dog.tags === tags)
        #expect(Array(tags) == ["small", "brown"])
        let stored = try #require(realm.objects(KeptCollectionsDog.self).first)
        #expect(Array(stored.tags) == ["small", "brown"])
        // Live: a later write through another accessor shows in the kept instance.
        try realm.write { stored.tags.append("old") }
        #expect(Array(tags) == ["small", "brown", "old"])
    }

    @Test func aSetAndAMapTakenBeforeAddAreManagedAfterwards() throws {
        let realm = try memoryRealm()
        let dog = KeptCollectionsDog()
        dog.nicknames.insert("Rex")
        dog.scores["agility"] = 3
        let nicknames = dog.nicknames
        let scores = dog.scores
        try realm.write {
            realm.add(dog)
            nicknames.insert("Rexy")
            scores["obedience"] = 5
        }
        #expect(nicknames.realm != nil && scores.realm != nil)
        #expect(dog.nicknames === nicknames && dog.scores === scores)
        let stored = try #require(realm.objects(KeptCollectionsDog.self).first)
        #expect(Set(stored.nicknames) == ["Rex", "Rexy"])
        #expect(stored.scores["agility"] == 3 && stored.scores["obedience"] == 5)
        try realm.write { stored.scores["agility"] = 4 }
        #expect(scores["agility"] == 4)
    }

    @Test func updatingAnExistingObjectKeepsTheAddedObjectsList() throws {
        let realm = try memoryRealm()
        try realm.write { realm.add(KeptCollectionsDog(value: ["id": 1, "tags": ["first"]])) }
        let replacement = KeptCollectionsDog(value: ["id": 1, "tags": ["second"]])
        let tags = replacement.tags
        try realm.write {
            realm.add(replacement, update: .modified)
            tags.append("third")
        }
        let stored = try #require(realm.object(ofType: KeptCollectionsDog.self, forPrimaryKey: 1))
        #expect(Array(stored.tags) == ["second", "third"])
        #expect(Array(tags) == ["second", "third"])
    }

    @Test func aFailedAddLeavesNothingBehind() throws {
        let realm = try memoryRealm()
        try realm.write { realm.add(KeptCollectionsDog(value: ["id": 7])) }
        let duplicate = KeptCollectionsDog(value: ["id": 7, "tags": ["lost"]])
        let tags = duplicate.tags
        #expect(throws: Realm.Error.self) {
            try realm.write { realm.add(duplicate) }
        }
        #expect(Array(tags) == ["lost"])
        let stored = try #require(realm.object(ofType: KeptCollectionsDog.self, forPrimaryKey: 7))
        #expect(stored.tags.isEmpty)
    }
}

final class KeptCollectionsDog: Object {
    @Persisted(primaryKey: true) var id: Int
    @Persisted var tags: List<String>
    @Persisted var nicknames: MutableSet<String>
    @Persisted var scores: Map<String, Int?>
}

import Foundation
import StrataTestSupport
import Testing

@testable import Strata

final class Traveler: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var citiesVisited: MutableSet<String>
    @Persisted var scores: MutableSet<Int>
    @Persisted var friends: MutableSet<Pal>
}

final class Pal: Object {
    @Persisted(primaryKey: true) var name = ""
}

@Suite("MutableSet")
struct MutableSetTests {
    private func memoryRealm() throws -> Realm {
        try Realm(configuration: Realm.Configuration(inMemoryIdentifier: "set-\(UUID())"))
    }

    /// Applies one random operation to both `set` and `model`.
    private func randomStep(_ set: MutableSet<Int>, _ model: inout Set<Int>, _ generator: inout SeededGenerator) {
        let value = Int.random(in: -50...50, using: &generator)
        switch Int.random(in: 0..<6, using: &generator) {
        case 0, 1, 2:
            set.insert(value)
            model.insert(value)
        case 3, 4:
            set.remove(value)
            model.remove(value)
        default:
            let other = (0..<5).map { _ in Int.random(in: -50...50, using: &generator) }
            set.formUnion(other)
            model.formUnion(other)
        }
    }

    @Test func unmanagedAndManagedSetsAgreeWithSetThroughReopen() throws {
        let scratch = try Scratch()
        let configuration = scratch.configuration([Traveler.self])
        var generator = SeededGenerator(seed: 11)
        var model: Set<Int> = []
        let traveler = Traveler()
        traveler.id = 1
        for _ in 0..<200 { randomStep(traveler.scores, &model, &generator) }
        #expect(Set(traveler.scores) == model)
        #expect(traveler.scores.count == model.count)
        do {
            let realm = try Realm(configuration: configuration)
            try realm.write { realm.add(traveler) }
            let managed = try #require(realm.object(ofType: Traveler.self, forPrimaryKey: 1))
            #expect(Set(managed.scores) == model)
            for _ in 0..<20 {
                try realm.write {
                    for _ in 0..<25 { randomStep(managed.scores, &model, &generator) }
                }
                #expect(Set(managed.scores) == model)
                #expect(managed.scores.count == model.count)
                // Managed elements come in a stable (sorted) order.
                #expect(Array(managed.scores) == model.sorted())
                let probe = Int.random(in: -50...50, using: &generator)
                #expect(managed.scores.contains(probe) == model.contains(probe))
            }
            try realm.write {
                managed.scores.formIntersection([1, 2, 3, 4, 5])
                model.formIntersection([1, 2, 3, 4, 5])
                managed.scores.subtract([2])
                model.subtract([2])
            }
            #expect(Set(managed.scores) == model)
            #expect(managed.scores.isSubset(of: [1, 2, 3, 4, 5]))
            #expect(managed.scores.intersects([1, 3, 5]) == !model.isDisjoint(with: [1, 3, 5]))
        }
        let reopened = try Realm(configuration: configuration)
        #expect(Set(try #require(reopened.object(ofType: Traveler.self, forPrimaryKey: 1)).scores) == model)
    }

    @Test func theSeedsCitiesVisited() throws {
        let realm = try memoryRealm()
        let traveler = Traveler(value: ["id": 1])
        try realm.write { realm.add(traveler) }
        try realm.write {
            traveler.citiesVisited.insert(objectsIn: ["New York", "Toronto"])
            traveler.citiesVisited.insert("New York")
        }
        #expect(traveler.citiesVisited.count == 2)
        #expect(traveler.citiesVisited.contains("Toronto"))
        #expect(Array(traveler.citiesVisited) == ["New York", "Toronto"])
        try realm.write { traveler["citiesVisited"] = ["Oslo", "Oslo", "Lima"] }
        #expect(Set(traveler.citiesVisited) == ["Oslo", "Lima"])
        #expect(realm.schema[className: "Traveler"]?[propertyName: "citiesVisited"]?.isSet == true)
    }

    @Test func setsOfObjectsAreDistinctByObjectAndForgetDeletedOnes() throws {
        let realm = try memoryRealm()
        let ann = Pal(value: ["name": "Ann"])
        let traveler = Traveler(value: ["id": 1])
        traveler.friends.insert(ann)
        traveler.friends.insert(ann)
        #expect(traveler.friends.count == 1)
        try realm.write { realm.add(traveler) }
        let bob = Pal(value: ["name": "Bob"])
        try realm.write {
            traveler.friends.insert(bob)
            traveler.friends.insert(realm.object(ofType: Pal.self, forPrimaryKey: "Ann")!)
        }
        #expect(traveler.friends.count == 2)
        #expect(traveler.friends.contains(bob))
        #expect(!traveler.friends.contains(Pal(value: ["name": "Ann"])))  // unmanaged: not the stored one
        try realm.write { realm.delete(bob) }
        #expect(traveler.friends.map(\.name) == ["Ann"])
        try realm.write { realm.delete(traveler) }
        #expect(realm.rowCount(tree: TableNames.set("Traveler", "friends")) == 0)
        #expect(realm.objects(Pal.self).count == 1)
    }

    @Test func codableSets() throws {
        let set = MutableSet<String>()
        set.insert(objectsIn: ["b", "a", "b"])
        let decoded = try JSONDecoder().decode(MutableSet<String>.self, from: JSONEncoder().encode(set))
        #expect(Set(decoded) == ["a", "b"])
    }

    @Test func elementsLongerThanAKeyFailTheWriteAndAreNeverContained() throws {
        let realm = try memoryRealm()
        try realm.write { realm.add(Traveler(value: ["id": 1, "citiesVisited": ["Oslo"]])) }
        let traveler = try #require(realm.object(ofType: Traveler.self, forPrimaryKey: 1))
        let long = String(repeating: "x", count: realm.store.maxKeySize + 1)
        #expect(throws: Realm.Error.self) {
            try realm.write { traveler.citiesVisited.insert(long) }
        }
        #expect(!traveler.citiesVisited.contains(long))
        #expect(Array(traveler.citiesVisited) == ["Oslo"])
    }
}

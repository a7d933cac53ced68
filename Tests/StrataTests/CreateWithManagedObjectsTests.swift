import Foundation
import Strata
import Testing

final class ManagedValueDog: Object {
    @Persisted var name = ""
}

final class ManagedValueOwner: Object {
    @Persisted var name = ""
    @Persisted var dogs: List<ManagedValueDog>
    @Persisted var favourites: MutableSet<ManagedValueDog>
}

/// As in the SDK, the value of a `List` or `MutableSet` property given to `create(_:value:)` or `init(value:)` may
/// be any collection of already-managed objects: an array of them, `Results`, another object's `List`,
/// `LinkingObjects` or `AnyRealmCollection`. The new object links to those objects; none is copied.
@Suite("create(_:value:) with managed objects")
struct CreateWithManagedObjectsTests {
    private func seeded() throws -> (Realm, [ManagedValueDog]) {
        let realm = try Realm(
            configuration: Realm.Configuration(
                inMemoryIdentifier: "create-managed-\(UUID())",
                objectTypes: [ManagedValueDog.self, ManagedValueOwner.self]))
        try realm.write {
            for name in ["Rex", "Ace"] { realm.create(ManagedValueDog.self, value: ["name": name]) }
        }
        return (realm, Array(realm.objects(ManagedValueDog.self)))
    }

    @Test func anArrayOfManagedObjectsLinksThem() throws {
        let (realm, dogs) = try seeded()
        let owner = try realm.write {
            realm.create(ManagedValueOwner.self, value: ["name": "Ann", "dogs": dogs, "favourites": [dogs[1]]])
        }
        #expect(owner.dogs.map(\.name) == ["Rex", "Ace"])
        #expect(owner.favourites.map(\.name) == ["Ace"])
        #expect(owner.dogs[0] == dogs[0])
        #expect(realm.objects(ManagedValueDog.self).count == 2)
    }

    @Test func resultsAndOtherCollectionsOfManagedObjectsLinkThem() throws {
        let (realm, _) = try seeded()
        let all = realm.objects(ManagedValueDog.self)
        let first = try realm.write {
            realm.create(ManagedValueOwner.self, value: ["name": "Ann", "dogs": all, "favourites": all])
        }
        let second = try realm.write {
            realm.create(
                ManagedValueOwner.self,
                value: ["name": "Bob", "dogs": first.dogs, "favourites": AnyRealmCollection(first.favourites)])
        }
        let third = try realm.write {
            realm.create(ManagedValueOwner.self, value: ["Cy", all.filter("name == 'Ace'"), first.favourites])
        }
        #expect(first.dogs.map(\.name) == ["Rex", "Ace"])
        #expect(Set(first.favourites.map(\.name)) == ["Rex", "Ace"])
        #expect(second.dogs.map(\.name) == ["Rex", "Ace"])
        #expect(second.favourites.count == 2)
        #expect(third.dogs.map(\.name) == ["Ace"])
        #expect(realm.objects(ManagedValueDog.self).count == 2)
    }

    @Test func anUnmanagedObjectMadeFromManagedObjectsCanBeAdded() throws {
        let (realm, _) = try seeded()
        let owner = ManagedValueOwner(value: ["name": "Ann", "dogs": realm.objects(ManagedValueDog.self)])
        #expect(owner.dogs.count == 2)
        try realm.write { realm.add(owner) }
        #expect(owner.dogs.map(\.name) == ["Rex", "Ace"])
        #expect(realm.objects(ManagedValueDog.self).count == 2)
    }

    @Test func aValueThatIsNoCollectionIsStillRejected() throws {
        let (realm, _) = try seeded()
        #expect(throws: Realm.Error.self) {
            try realm.write { realm.create(ManagedValueOwner.self, value: ["name": "Ann", "dogs": 3]) }
        }
        #expect(realm.objects(ManagedValueOwner.self).isEmpty)
    }
}

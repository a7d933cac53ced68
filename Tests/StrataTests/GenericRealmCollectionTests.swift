import Foundation
import Strata
import Testing

final class GenericCollectionDog: Object {
    @Persisted var name = ""
    @Persisted var age = 0
    @Persisted var weight = 0.0
}

final class GenericCollectionOwner: Object {
    @Persisted var name = ""
    @Persisted var dogs: List<GenericCollectionDog>
    @Persisted var favourites: MutableSet<GenericCollectionDog>
    @Persisted var scores: Map<String, Int>
}

// Generic functions written as SDK users write them: against the protocol, never a concrete collection.

private func puppyNames<C: RealmCollection>(_ dogs: C) -> [String] where C.Element == GenericCollectionDog {
    dogs.filter("age < %@", 2).sorted(byKeyPath: "name").map(\.name)
}

private func typedQueries(_ dogs: some RealmCollection<GenericCollectionDog>) -> (String?, [String], [String]) {
    let older = dogs.where { $0.age >= 2 }.sorted(by: \.name, ascending: false).map(\.name)
    let byDescriptors = dogs.sorted(by: [SortDescriptor(keyPath: "age"), SortDescriptor(keyPath: "name")]).map(\.name)
    return (dogs.where { $0.age > 100 }.first?.name, older, byDescriptors)
}

private func aggregates<C: RealmCollection>(_ dogs: C) -> [Double?] where C.Element == GenericCollectionDog {
    let minAge: Int? = dogs.min(ofProperty: "age")
    let maxAge: Int? = dogs.max(ofProperty: "age")
    let sum: Int = dogs.sum(ofProperty: "age")
    let average: Double? = dogs.average(ofProperty: "age")
    return [
        minAge.map(Double.init), maxAge.map(Double.init), Double(sum), average, dogs.min(of: \.weight),
        dogs.max(of: \.weight), dogs.sum(of: \.weight), dogs.average(of: \.weight),
    ]
}

private func positions<C: RealmCollection>(_ dogs: C, of dog: GenericCollectionDog) -> [Int?]
where C.Element == GenericCollectionDog {
    [
        dogs.index(of: dog), dogs.index(matching: "name == %@", dog.name),
        dogs.index(matching: { $0.name == dog.name }),
    ]
}

private func frozenCount<C: RealmCollection>(_ collection: C) -> (Bool, Int, Bool, Int?) {
    let frozen = collection.freeze()
    let thawed = frozen.thaw()
    return (frozen.isFrozen, frozen.count, thawed?.isFrozen ?? true, thawed?.count)
}

private func reference<C: RealmCollection>(to collection: C) -> ThreadSafeReference<C> {
    ThreadSafeReference(to: collection)
}

private func keyedRoundTrip<M: RealmKeyedCollection>(_ map: M, key: M.Key, value: M.Value) throws -> (
    Int, M.Value?, Bool
) {
    try map.realm?.write { map.updateValue(value, forKey: key) }
    let frozen = map.freeze()
    return (frozen.count, frozen[key], frozen.thaw()?.isFrozen ?? true)
}

@Suite("Generic RealmCollection")
struct GenericRealmCollectionTests {
    private func seeded() throws -> (Realm, GenericCollectionOwner) {
        let realm = try Realm(
            configuration: Realm.Configuration(
                inMemoryIdentifier: "generic-collection-\(UUID())",
                objectTypes: [GenericCollectionDog.self, GenericCollectionOwner.self]))
        let owner = GenericCollectionOwner()
        try realm.write {
            realm.add(owner)
            for (name, age, weight) in [("Rex", 1, 10.0), ("Ace", 3, 20.0), ("Bo", 0, 4.0), ("Max", 5, 30.0)] {
                let dog = realm.create(GenericCollectionDog.self, value: ["name": name, "age": age, "weight": weight])
                owner.dogs.append(dog)
                owner.favourites.insert(dog)
            }
        }
        return (realm, owner)
    }

    @Test func stringQueriesWorkOnEveryKindOfCollection() throws {
        let (realm, owner) = try seeded()
        let results = realm.objects(GenericCollectionDog.self)
        #expect(puppyNames(results) == ["Bo", "Rex"])
        #expect(puppyNames(owner.dogs) == ["Bo", "Rex"])
        #expect(puppyNames(owner.favourites) == ["Bo", "Rex"])
        #expect(puppyNames(AnyRealmCollection(owner.dogs)) == ["Bo", "Rex"])
    }

    @Test func typedQueriesAndSortsWorkOnEveryKindOfCollection() throws {
        let (realm, owner) = try seeded()
        for outcome in [typedQueries(realm.objects(GenericCollectionDog.self)), typedQueries(owner.dogs)] {
            #expect(outcome.0 == nil)
            #expect(outcome.1 == ["Max", "Ace"])
            #expect(outcome.2 == ["Bo", "Rex", "Ace", "Max"])
        }
    }

    @Test func aggregatesByNameAndKeyPath() throws {
        let (realm, owner) = try seeded()
        let expected: [Double?] = [0, 5, 9, 2.25, 4, 30, 64, 16]
        #expect(aggregates(realm.objects(GenericCollectionDog.self)) == expected)
        #expect(aggregates(owner.dogs) == expected)
        #expect(aggregates(owner.favourites) == expected)
    }

    @Test func positionsOfAnObject() throws {
        let (realm, owner) = try seeded()
        let ace = try #require(realm.objects(GenericCollectionDog.self).filter("name == 'Ace'").first)
        #expect(positions(owner.dogs, of: ace) == [1, 1, 1])
        #expect(positions(AnyRealmCollection(owner.dogs), of: ace) == [1, 1, 1])
        let objects = AnyRealmCollection(owner.dogs).objects(at: IndexSet([0, 3])).map(\.name)
        #expect(objects == ["Rex", "Max"])
    }

    @Test func freezeAndThawThroughTheProtocol() throws {
        let (realm, owner) = try seeded()
        let expected = (true, 4, false, 4)
        for outcome in [
            frozenCount(realm.objects(GenericCollectionDog.self)), frozenCount(owner.dogs),
            frozenCount(owner.favourites), frozenCount(AnyRealmCollection(owner.dogs)),
        ] {
            #expect(outcome == expected)
        }
    }

    @Test func aThreadSafeReferenceOfAGenericCollectionResolves() throws {
        let (realm, owner) = try seeded()
        let resolved = try #require(realm.resolve(reference(to: owner.dogs)))
        #expect(resolved.map(\.name) == ["Rex", "Ace", "Bo", "Max"])
    }

    @Test func aMapThroughRealmKeyedCollection() throws {
        let (realm, owner) = try seeded()
        let outcome = try keyedRoundTrip(owner.scores, key: "agility", value: 7)
        #expect(outcome.0 == 1 && outcome.1 == 7)
        #expect(outcome.2 == false)
        #expect(realm.objects(GenericCollectionOwner.self).first?.scores["agility"] == 7)
        var changes = 0
        let token = observeKeyed(owner.scores) { changes += 1 }
        #expect(changes == 1)
        token.invalidate()
    }
}

private func observeKeyed<M: RealmKeyedCollection>(_ map: M, _ onChange: @escaping () -> Void) -> NotificationToken {
    map.observe { _ in onChange() }
}

import Foundation
import Strata
import Testing

final class MapQueryDog: Object {
    @Persisted var name = ""
    @Persisted var age = 0
    @Persisted var weight = 0.0
}

final class MapQueryKennel: Object {
    @Persisted var dogsByName: Map<String, MapQueryDog?>
}

/// A `Map` of objects is queried as the SDK's: `filter`, `where`, sorts and aggregates act on the map's objects
/// (keys holding nil skipped) and return `Results<Dog?>` or values, live after later writes.
@Suite("Map of objects queries")
struct MapObjectQueryTests {
    private func stored() throws -> (Realm, MapQueryKennel) {
        let realm = try Realm(
            configuration: Realm.Configuration(
                inMemoryIdentifier: "map-object-queries-\(UUID())",
                objectTypes: [MapQueryDog.self, MapQueryKennel.self]))
        let kennel = MapQueryKennel()
        for (name, age, weight) in [("rex", 5, 30.0), ("bo", 1, 8.0), ("max", 3, 20.0)] {
            let dog = MapQueryDog()
            dog.name = name
            dog.age = age
            dog.weight = weight
            kennel.dogsByName[name] = dog
        }
        try realm.write {
            realm.add(kennel)
            kennel.dogsByName["empty"] = .some(nil)
        }
        return (realm, kennel)
    }

    @Test func filterAndWhereReturnResultsOfTheObjects() throws {
        let (realm, kennel) = try stored()
        let grownUps: Results<MapQueryDog?> = kennel.dogsByName.filter("age >= $0", 3)
        #expect(grownUps.compactMap { $0?.name }.sorted() == ["max", "rex"])
        let young = kennel.dogsByName.where { $0.age < 3 }
        #expect(young.map { $0?.name } == ["bo"])
        // Live: a dog added to the map later shows in the same results.
        try realm.write {
            let dog = MapQueryDog()
            dog.name = "old"
            dog.age = 12
            kennel.dogsByName["old"] = dog
        }
        #expect(grownUps.count == 3)
    }

    @Test func sortsSkipNilValues() throws {
        let (_, kennel) = try stored()
        #expect(kennel.dogsByName.count == 4)
        #expect(kennel.dogsByName.sorted(byKeyPath: "age").map { $0?.name } == ["bo", "max", "rex"])
        #expect(kennel.dogsByName.sorted(by: \.age, ascending: false).map { $0?.name } == ["rex", "max", "bo"])
        let byName = kennel.dogsByName.sorted(by: [SortDescriptor(keyPath: "name")])
        #expect(byName.map { $0?.name } == ["bo", "max", "rex"])
    }

    @Test func aggregatesRunOverTheObjects() throws {
        let (_, kennel) = try stored()
        let oldest: Int? = kennel.dogsByName.max(ofProperty: "age")
        let youngest: Int? = kennel.dogsByName.min(ofProperty: "age")
        let total: Double = kennel.dogsByName.sum(ofProperty: "weight")
        let mean: Double? = kennel.dogsByName.average(ofProperty: "age")
        #expect(oldest == 5 && youngest == 1 && total == 58 && mean == 3)
        #expect(kennel.dogsByName.max(of: \.weight) == 30)
        #expect(kennel.dogsByName.min(of: \.age) == 1)
        #expect(kennel.dogsByName.sum(of: \.age) == 9)
        #expect(kennel.dogsByName.average(of: \.weight) == 58.0 / 3)
    }
}

import Foundation
import StrataTestSupport
import Testing

@testable import Strata

final class ParkDog: Object {
    @Persisted(primaryKey: true) var name = ""
    @Persisted var favoriteParksByCity: Map<String, String>
    @Persisted var counts: Map<String, Int?>
    @Persisted var walkers: Map<String, Walker?>
}

final class Walker: Object {
    @Persisted(primaryKey: true) var name = ""
}

@Suite("Map")
struct MapTests {
    private func memoryRealm() throws -> Realm {
        try Realm(configuration: Realm.Configuration(inMemoryIdentifier: "map-\(UUID())"))
    }

    /// Applies one random operation to both `map` and `model`.
    private func randomStep(
        _ map: Map<String, Int?>, _ model: inout [String: Int?], _ generator: inout SeededGenerator
    ) {
        let key = "k\(Int.random(in: 0..<40, using: &generator))"
        switch Int.random(in: 0..<6, using: &generator) {
        case 0, 1, 2:
            let value = Int.random(in: -100...100, using: &generator)
            map[key] = value
            model[key] = value
        case 3:
            map.updateValue(nil, forKey: key)
            model.updateValue(nil, forKey: key)
        default:
            map.removeObject(for: key)
            model.removeValue(forKey: key)
        }
    }

    private func contents(_ map: Map<String, Int?>) -> [String: Int?] {
        Dictionary(map.map { ($0.key, $0.value) }, uniquingKeysWith: { $1 })
    }

    @Test func unmanagedAndManagedMapsAgreeWithDictionaryThroughReopen() throws {
        let scratch = try Scratch()
        let configuration = scratch.configuration([ParkDog.self])
        var generator = SeededGenerator(seed: 13)
        var model: [String: Int?] = [:]
        let dog = ParkDog()
        dog.name = "Rex"
        for _ in 0..<200 { randomStep(dog.counts, &model, &generator) }
        #expect(contents(dog.counts) == model)
        do {
            let realm = try Realm(configuration: configuration)
            try realm.write { realm.add(dog) }
            let managed = try #require(realm.object(ofType: ParkDog.self, forPrimaryKey: "Rex"))
            #expect(contents(managed.counts) == model)
            for _ in 0..<20 {
                try realm.write {
                    for _ in 0..<25 { randomStep(managed.counts, &model, &generator) }
                }
                #expect(contents(managed.counts) == model)
                #expect(managed.counts.count == model.count)
                #expect(managed.counts.keys == model.keys.sorted())
                let probe = "k\(Int.random(in: 0..<40, using: &generator))"
                #expect(managed.counts[probe] == model[probe])
            }
        }
        let reopened = try Realm(configuration: configuration)
        #expect(contents(try #require(reopened.object(ofType: ParkDog.self, forPrimaryKey: "Rex")).counts) == model)
    }

    @Test func theSeedsFavoriteParksByCityAndTheKeyRule() throws {
        let realm = try memoryRealm()
        let dog = ParkDog(value: ["name": "Wolfie"])
        dog.favoriteParksByCity["New York"] = "Domino Park"
        dog.favoriteParksByCity["Chicago"] = "Wiggly Field"
        dog.favoriteParksByCity.merge(["Chicago": "Bark Park", "Berlin": "Tiergarten"]) { _, new in new }
        try realm.write { realm.add(dog) }
        #expect(dog.favoriteParksByCity["Chicago"] == "Bark Park")
        #expect(dog.favoriteParksByCity.keys == ["Berlin", "Chicago", "New York"])
        try realm.write { dog.favoriteParksByCity["New York"] = nil }
        #expect(dog.favoriteParksByCity["New York"] == nil)
        #expect(dog.favoriteParksByCity.count == 2)
        for bad in ["with.dot", "$dollar", ""] {
            #expect(throws: Realm.Error.self) {
                try realm.write { dog.favoriteParksByCity[bad] = "Nope" }
            }
        }
        #expect(dog.favoriteParksByCity.count == 2)
        #expect((dog["favoriteParksByCity"] as? [String: Any])?["Berlin"] as? String == "Tiergarten")
        try realm.write { dog["favoriteParksByCity"] = ["Oslo": "Frogner"] }
        #expect(dog.favoriteParksByCity.keys == ["Oslo"])
        #expect(realm.schema[className: "ParkDog"]?[propertyName: "walkers"]?.isMap == true)
    }

    @Test func mapsOfObjectsKeepTheirKeysWhenTheObjectIsDeleted() throws {
        let realm = try memoryRealm()
        let dog = ParkDog(value: ["name": "Rex"])
        dog.walkers["morning"] = Walker(value: ["name": "Ann"])
        dog.walkers["evening"] = Walker(value: ["name": "Bob"])
        try realm.write { realm.add(dog) }
        #expect(realm.objects(Walker.self).count == 2)
        #expect(dog.walkers["morning"]??.name == "Ann")
        let bob = try #require(realm.object(ofType: Walker.self, forPrimaryKey: "Bob"))
        try realm.write { realm.delete(bob) }
        #expect(dog.walkers.count == 2)
        #expect(dog.walkers["evening"].map { $0 == nil } == true)
        try realm.write { realm.delete(dog) }
        #expect(realm.rowCount(tree: TableNames.map("ParkDog", "walkers")) == 0)
    }

    @Test func codableMaps() throws {
        let map = Map<String, Int>()
        map["b"] = 2
        map["a"] = 1
        let decoded = try JSONDecoder().decode(Map<String, Int>.self, from: JSONEncoder().encode(map))
        #expect(decoded["a"] == 1)
        #expect(decoded["b"] == 2)
        #expect(decoded.count == 2)
    }

    @Test func keysLongerThanAKeyFailTheWrite() throws {
        let realm = try memoryRealm()
        let dog = ParkDog(value: ["name": "Rex", "favoriteParksByCity": ["Oslo": "Frogner"]])
        try realm.write { realm.add(dog) }
        let long = String(repeating: "k", count: realm.store.maxKeySize + 1)
        #expect(throws: Realm.Error.self) {
            try realm.write { dog.favoriteParksByCity[long] = "Nope" }
        }
        #expect(dog.favoriteParksByCity[long] == nil)
        #expect(dog.favoriteParksByCity.keys == ["Oslo"])
    }
}

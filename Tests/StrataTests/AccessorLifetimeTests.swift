import Foundation
import Testing

@testable import Strata

final class LifetimeTrail: Object {
    @Persisted(primaryKey: true) var name = ""
    @Persisted var stops: List<String>
    @Persisted var tags: MutableSet<String>
    @Persisted var lengths: Map<String, Int>
    @Persisted var neighbours: List<LifetimeTrail>
    @Persisted(originProperty: "neighbours") var linkedFrom: LinkingObjects<LifetimeTrail>
}

@Suite("Accessor lifetime")
struct AccessorLifetimeTests {
    /// Reading a collection property used to cache its accessor on the object while the accessor held the object:
    /// the pair, and through them the Realm with its file, log and mapping, stayed alive until the process ended.
    @Test func readingCollectionsLeavesObjectsAndTheirRealmFreeToGo() throws {
        weak var released: Realm?
        weak var releasedTrail: LifetimeTrail?
        try {
            let realm = try Realm(configuration: Realm.Configuration(inMemoryIdentifier: "lifetime-\(UUID())"))
            try realm.write {
                let trail = LifetimeTrail(value: ["name": "ridge", "stops": ["a", "b"], "tags": ["steep"]])
                trail.lengths["a"] = 3
                trail.neighbours.append(LifetimeTrail(value: ["name": "valley"]))
                realm.add(trail)
            }
            let trail = try #require(realm.object(ofType: LifetimeTrail.self, forPrimaryKey: "ridge"))
            #expect(trail.stops.count == 2 && trail.tags.count == 1 && trail.lengths.count == 1)
            #expect(trail.neighbours.first?.linkedFrom.count == 1)
            // The same accessor is handed out while it is held.
            let stops = trail.stops
            #expect(stops === trail.stops)
            released = realm
            releasedTrail = trail
        }()
        #expect(releasedTrail == nil)
        #expect(released == nil)
    }

    /// A collection that outlives the object it was read from keeps working.
    @Test func aCollectionOutlivesTheObjectItWasReadFrom() throws {
        let realm = try Realm(configuration: Realm.Configuration(inMemoryIdentifier: "lifetime-\(UUID())"))
        try realm.write { realm.add(LifetimeTrail(value: ["name": "ridge", "stops": ["a", "b"]])) }
        let stops = try #require(realm.object(ofType: LifetimeTrail.self, forPrimaryKey: "ridge")).stops
        try realm.write { stops.append("c") }
        #expect(Array(stops) == ["a", "b", "c"])
    }
}

import Foundation
import Testing

@testable import Strata

final class Kite: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var color = ""
}

/// `realm.invalidate()` as the Realm SDK documents it: "all objects … obtained from this Realm before the call are
/// invalidated". The trap when reading one is checked in the integration tests (it stops the process).
@Suite("Realm.invalidate()")
struct InvalidateTests {
    private static func realmWithKite() throws -> (Realm, Kite) {
        let realm = try Realm(
            configuration: Realm.Configuration(inMemoryIdentifier: "invalidate-\(UUID())", objectTypes: [Kite.self]))
        let kite = try realm.write { realm.create(Kite.self, value: ["id": 1, "color": "red"]) }
        return (realm, kite)
    }

    @Test func objectsReadBeforeInvalidateAreInvalidated() throws {
        let (realm, kite) = try Self.realmWithKite()
        let queried = try #require(realm.objects(Kite.self).first)
        #expect(!kite.isInvalidated)
        realm.invalidate()
        #expect(kite.isInvalidated)
        #expect(queried.isInvalidated)
        // Read again, the same stored object is valid and unchanged.
        let again = try #require(realm.object(ofType: Kite.self, forPrimaryKey: 1))
        #expect(!again.isInvalidated)
        #expect(again.color == "red")
        // A later write does not bring the old accessors back.
        try realm.write { realm.create(Kite.self, value: ["id": 2, "color": "blue"]) }
        #expect(kite.isInvalidated)
        #expect(realm.objects(Kite.self).count == 2)
    }

    @Test func writingAnInvalidatedObjectFailsTheWriteAsInvalidated() throws {
        let (realm, kite) = try Self.realmWithKite()
        realm.invalidate()
        #expect(throws: Realm.Error.invalidatedObject) {
            try realm.write {
                realm.create(Kite.self, value: ["id": 2, "color": "blue"])
                kite.color = "green"
            }
        }
        #expect(throws: Realm.Error.invalidatedObject) { try realm.write { realm.delete(kite) } }
        // Nothing of either write was applied.
        #expect(realm.objects(Kite.self).map(\.color) == ["red"])
    }

    @Test func frozenObjectsStayReadable() throws {
        let (realm, kite) = try Self.realmWithKite()
        let frozen = kite.freeze()
        realm.invalidate()
        #expect(!frozen.isInvalidated)
        #expect(frozen.color == "red")
    }
}

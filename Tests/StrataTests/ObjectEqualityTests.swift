import Foundation
import Testing

@testable import Strata

final class Terrier: Object {
    @Persisted var name = ""
    @Persisted var friends: List<Terrier>
    @Persisted var collar: Collar?
}

final class Collar: EmbeddedObject {
    @Persisted var color = ""
}

/// Objects are `Equatable` and `Hashable` as the Realm SDK's are: managed objects are equal when they are the same
/// stored object in the same Realm, unmanaged objects only to themselves.
@Suite("Object equality and hashing")
struct ObjectEqualityTests {
    private static func realm() throws -> Realm {
        try Realm(
            configuration: Realm.Configuration(
                inMemoryIdentifier: "equality-\(UUID())", objectTypes: [Terrier.self, Collar.self]))
    }

    private static func kennel(_ realm: Realm) throws -> (rex: Terrier, fido: Terrier) {
        try realm.write {
            let rex = realm.create(Terrier.self, value: ["name": "Rex", "collar": ["color": "red"]])
            let fido = realm.create(Terrier.self, value: ["name": "Fido", "collar": ["color": "blue"]])
            rex.friends.append(objectsIn: [fido, rex])
            return (rex, fido)
        }
    }

    @Test func twoAccessorsOfOneStoredObjectAreEqualAndHashAlike() throws {
        let realm = try Self.realm()
        let (rex, fido) = try Self.kennel(realm)
        let rexAgain = try #require(realm.objects(Terrier.self).where { $0.name == "Rex" }.first)
        #expect(rex !== rexAgain)
        #expect(rex == rexAgain)
        #expect(rex.hashValue == rexAgain.hashValue)
        #expect(rex != fido)
        // Embedded objects too.
        let collar = try #require(rex.collar)
        #expect(collar == realm.objects(Terrier.self).where { $0.name == "Rex" }.first?.collar)
        #expect(collar != fido.collar)
    }

    @Test func setsAndSearchesFindTheStoredObject() throws {
        let realm = try Self.realm()
        let (rex, fido) = try Self.kennel(realm)
        let all = realm.objects(Terrier.self)
        let seen = Set(all)  // a fresh accessor per element
        #expect(seen.count == 2)
        #expect(seen.contains(rex))
        #expect(Set([rex, fido, all[0], all[1]]).count == 2)
        #expect(all.contains(fido))
        #expect(Array(all).firstIndex(of: fido) == 1)
        #expect(rex.friends.contains(rex))
        #expect(rex.friends.firstIndex(of: rex) == 1)
        #expect(Array(rex.friends) == [fido, rex])
    }

    @Test func unmanagedObjectsAreEqualOnlyToThemselves() throws {
        let a = Terrier(value: ["name": "Rex"])
        let b = Terrier(value: ["name": "Rex"])
        #expect(a == a)
        #expect(a != b)
        #expect(Set([a, b, a]).count == 2)
        // An unmanaged object is not equal to a stored one with the same values.
        let realm = try Self.realm()
        let (rex, _) = try Self.kennel(realm)
        #expect(a != rex)
        #expect(rex != a)
    }

    @Test func objectsOfOtherRealmsAreNotEqual() throws {
        let configuration = Realm.Configuration(
            inMemoryIdentifier: "equality-\(UUID())", objectTypes: [Terrier.self, Collar.self])
        let realm = try Realm(configuration: configuration)
        let (rex, _) = try Self.kennel(realm)
        let other = try Realm.independent(configuration)
        let rexThere = try #require(other.objects(Terrier.self).first)
        #expect(rex.isSameObject(as: rex))
        #expect(rex != rexThere)
    }

    @Test func frozenObjectsOfOneVersionAreEqual() throws {
        let realm = try Self.realm()
        let (rex, fido) = try Self.kennel(realm)
        #expect(rex.freeze() == rex.freeze())
        #expect(rex.freeze().hashValue == rex.freeze().hashValue)
        #expect(rex.freeze() != fido.freeze())
        // A frozen snapshot is not the live object, and another version is another snapshot.
        let before = rex.freeze()
        #expect(before != rex)
        try realm.write { rex.name = "Rex II" }
        #expect(before != rex.freeze())
    }

    @Test func aDeletedObjectIsEqualOnlyToItself() throws {
        let realm = try Self.realm()
        let (rex, _) = try Self.kennel(realm)
        let rexAgain = try #require(realm.objects(Terrier.self).first)
        try realm.write { realm.delete(rex) }
        #expect(rex == rex)
        #expect(rex != rexAgain)
    }
}

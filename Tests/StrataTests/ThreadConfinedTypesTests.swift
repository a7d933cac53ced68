import Foundation
import Testing

@testable import Strata

final class TypedPet: Object {
    @Persisted var name = ""
    @Persisted var tags: List<String>
    @Persisted var nicknames: MutableSet<String>
    @Persisted var scores: Map<String, Int>
    @Persisted var anyValue: AnyRealmValue
    @Persisted(originProperty: "buddy") var buddies: LinkingObjects<TypedPet>
    @Persisted var buddy: TypedPet?
}

final class TypedPetCard: Projection<TypedPet> {
    @Projected(\TypedPet.name) var name
}

/// The Realm Swift SDK's static types: `freeze()`/`thaw()` return the receiver's own type (optional for thaw,
/// except a Realm's), and an object held as `Object` in an `AnyRealmValue` is observed with the change type its
/// closure names.
@Suite("SDK types of freeze, thaw and AnyRealmValue object observation")
struct ThreadConfinedTypesTests {
    private func realm() throws -> (Realm, TypedPet) {
        let realm = try Realm(
            configuration: Realm.Configuration(
                inMemoryIdentifier: "typed-\(UUID())", objectTypes: [TypedPet.self]))
        let pet = try realm.write { () -> TypedPet in
            let rex = realm.create(TypedPet.self, value: ["name": "Rex", "tags": ["a"], "scores": ["x": 1]])
            let bo = realm.create(
                TypedPet.self, value: ["name": "Bo", "buddy": rex, "anyValue": AnyRealmValue.object(rex)])
            bo.nicknames.insert("b")
            return bo
        }
        return (realm, pet)
    }

    @Test func freezeAndThawReturnTheReceiversType() throws {
        let (realm, pet) = try realm()
        let frozenPet: TypedPet = pet.freeze()
        let thawedPet: TypedPet? = frozenPet.thaw()
        let results: Results<TypedPet>? = realm.objects(TypedPet.self).freeze().thaw()
        let list: List<String>? = pet.buddy!.tags.freeze().thaw()
        let set: MutableSet<String>? = pet.nicknames.freeze().thaw()
        let map: Map<String, Int>? = pet.buddy!.scores.freeze().thaw()
        let linking: LinkingObjects<TypedPet>? = pet.buddy!.buddies.freeze().thaw()
        let card: TypedPetCard? = TypedPetCard(projecting: pet).freeze().thaw()
        let erased: AnyRealmCollection<TypedPet>? = AnyRealmCollection(realm.objects(TypedPet.self)).freeze().thaw()
        let thawedRealm: Realm = realm.freeze().thaw()
        #expect(frozenPet.isFrozen && thawedPet?.isFrozen == false && thawedPet?.name == "Bo")
        #expect(results?.count == 2 && list.map(Array.init) == ["a"] && set?.count == 1 && map?["x"] == 1)
        #expect(linking?.first?.name == "Bo" && card?.name == "Bo" && erased?.count == 2 && !thawedRealm.isFrozen)
    }

    @Test func anObjectInAMixedValueIsObservedAsItsClass() throws {
        let (realm, pet) = try realm()
        guard case .object(let object) = pet.anyValue else {
            Issue.record("no object in the mixed value")
            return
        }
        var names: [String] = []
        let token = object.observe { (change: ObjectChange<TypedPet>) in
            if case .change(let rex, _) = change { names.append(rex.name) }
        }
        defer { token.invalidate() }
        var asObject: [[String]] = []
        let objectToken = object.observe { (change: ObjectChange<Object>) in
            if case .change(_, let properties) = change { asObject.append(properties.map(\.name)) }
        }
        defer { objectToken.invalidate() }
        try realm.write { pet.buddy!.name = "Max" }
        #expect(names == ["Max"])
        #expect(asObject == [["name"]])
        // The unannotated form still takes the receiver's type.
        let plain = pet.observe { change in
            if case .change(let bo, _) = change { names.append(bo.name) }
        }
        try realm.write { pet.name = "Bea" }
        plain.invalidate()
        #expect(names == ["Max", "Bea"])
    }
}

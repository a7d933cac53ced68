import Foundation
import StrataStorage
import Testing

@testable import Strata

/// The models that wrote the file; the writes under test know only the classes stored in it.
enum DynamicWriteModels {
    final class Kennel: Object {
        @Persisted(primaryKey: true) var id = 0
        @Persisted var name = ""
        @Persisted var address: KennelAddress?
        @Persisted var rooms: List<KennelAddress>
        @Persisted var annexes: Map<String, KennelAddress?>
        @Persisted var dogs: List<Pup>
        @Persisted var favourites: MutableSet<Pup>
        @Persisted var byName: Map<String, Pup?>
        @Persisted var best: Pup?
        @Persisted var extra: AnyRealmValue
        @Persisted var scores: List<Int>
    }

    final class KennelAddress: EmbeddedObject {
        @Persisted var street = ""
        @Persisted var gate: KennelGate?
        @Persisted var keeper: Pup?
    }

    final class KennelGate: EmbeddedObject {
        @Persisted var code = 0
    }

    /// No primary key: its objects are named by object key.
    final class Pup: Object {
        @Persisted var name = ""
        @Persisted(originProperty: "dogs") var kennels: LinkingObjects<Kennel>
    }
}

@Suite("Dynamic writes (dynamicCreate)")
struct DynamicWriteTests {
    let scratch: Scratch

    init() throws { scratch = try Scratch() }

    /// A file whose schema holds the kennel classes, and a Realm on it with no model types bound: every write goes
    /// through the classes stored in the file, as a tool without the app's models does it.
    private func dynamicRealm() throws -> (Realm, URL) {
        let url = scratch.url.appendingPathComponent("kennels.strata")
        _ = try Realm(
            configuration: .init(
                fileURL: url, objectTypes: [DynamicWriteModels.Kennel.self, DynamicWriteModels.Pup.self]))
        return (try Realm(configuration: .init(fileURL: url)), url)
    }

    @Test func createsObjectsWithLinksEmbeddedObjectsCollectionsAndMixedValues() throws {
        let (realm, url) = try dynamicRealm()
        try realm.write {
            let rex = realm.dynamicCreate("Pup", value: ["name": "Rex"])
            let fido = realm.dynamicCreate("Pup", value: ["name": "Fido"])
            realm.dynamicCreate(
                "Kennel",
                value: [
                    "id": 1, "name": "North",
                    "address": ["street": "1 Bark Rd", "gate": ["code": 42], "keeper": rex] as [String: Any],
                    "rooms": [["street": "room A"], ["street": "room B", "gate": ["code": 7]]],
                    "annexes": ["east": ["street": "annex"], "west": NSNull()] as [String: Any],
                    "dogs": [rex, fido, rex], "favourites": [fido], "byName": ["rex": rex, "none": NSNull()],
                    "best": fido, "extra": AnyRealmValue.fromArray([.int(1), .object(rex)]), "scores": [3, 1, 2],
                ])
        }
        // Read back through the model classes.
        let typed = try Realm(
            configuration: .init(
                fileURL: url, objectTypes: [DynamicWriteModels.Kennel.self, DynamicWriteModels.Pup.self]))
        let kennel = try #require(typed.object(ofType: DynamicWriteModels.Kennel.self, forPrimaryKey: 1))
        #expect(kennel.name == "North")
        #expect(kennel.address?.street == "1 Bark Rd" && kennel.address?.gate?.code == 42)
        #expect(kennel.address?.keeper?.name == "Rex")
        #expect(kennel.rooms.map(\.street) == ["room A", "room B"] && kennel.rooms[1].gate?.code == 7)
        #expect(kennel.annexes["east"]??.street == "annex" && kennel.annexes.keys.sorted() == ["east", "west"])
        #expect(kennel.dogs.map(\.name) == ["Rex", "Fido", "Rex"])
        #expect(kennel.favourites.map(\.name) == ["Fido"])
        #expect(kennel.byName["rex"]??.name == "Rex" && kennel.byName.keys.sorted() == ["none", "rex"])
        #expect(kennel.byName["none"].map { $0 == nil } == true)
        #expect(kennel.best?.name == "Fido")
        #expect(kennel.extra.listValue?[1].object(DynamicWriteModels.Pup.self)?.name == "Rex")
        #expect(Array(kennel.scores) == [3, 1, 2])
        // Backlinks count the dynamic links: Rex is in the list twice, as a typed write would count him.
        #expect(typed.objects(DynamicWriteModels.Pup.self).first { $0.name == "Rex" }?.kennels.count == 2)
        #expect(typed.objects(DynamicWriteModels.Pup.self).first { $0.name == "Fido" }?.kennels.count == 1)
        // Four embedded addresses (the map's nil holds none), and the file checks out.
        let store = try Store.open(path: url.path)
        #expect(try store.statistics().trees.first { $0.name == "o:KennelAddress" }?.count == 4)
        #expect(try store.verify().isValid)
    }

    @Test func aDuplicatePrimaryKeyFailsTheWriteUnlessUpdating() throws {
        let (realm, _) = try dynamicRealm()
        try realm.write { realm.dynamicCreate("Kennel", value: ["id": 1, "name": "North"]) }
        #expect(throws: Realm.Error.primaryKeyExists(type: "Kennel", value: "1")) {
            try realm.write { realm.dynamicCreate("Kennel", value: ["id": 1, "name": "Again"]) }
        }
        try realm.write { realm.dynamicCreate("Kennel", value: ["id": 1, "name": "Updated"], update: .modified) }
        #expect(realm.dynamicObjects("Kennel").map { $0["name"] as? String } == ["Updated"])
    }

    @Test func badInputFailsTheWholeWriteWithATypedError() throws {
        let (realm, _) = try dynamicRealm()
        let cases: [(value: [String: Any], className: String, reason: String)] = [
            (["name": "x"], "Nope", "the file has no class of this name"),
            (["street": "x"], "KennelAddress", "embedded objects are created by setting them on their parent"),
            (["name": "no key"], "Kennel", "the primary key needs a value"),
            (["id": 2, "colour": "red"], "Kennel", "no such property"),
            (["id": 2, "name": 5], "Kennel", "is not a valid value"),
            (["id": 2, "rooms": ["not a dictionary"]], "Kennel", "takes dictionaries"),
        ]
        for (value, className, reason) in cases {
            do {
                try realm.write {
                    realm.dynamicCreate("Pup", value: ["name": "lost with the write"])
                    realm.dynamicCreate(className, value: value)
                }
                Issue.record("\(className) \(value) was accepted")
            } catch let error as Realm.Error {
                #expect("\(error)".contains(reason), "\(error)")
            }
        }
        #expect(realm.dynamicObjects("Pup").isEmpty)
        #expect(realm.dynamicObjects("Kennel").isEmpty)
    }

    @Test func aLinkMustBeAStoredObjectOfTheTargetClass() throws {
        let (realm, _) = try dynamicRealm()
        #expect(throws: Realm.Error.self) {
            try realm.write {
                let kennel = realm.dynamicCreate("Kennel", value: ["id": 1])
                realm.dynamicCreate("Kennel", value: ["id": 2, "dogs": [kennel]])
            }
        }
        #expect(realm.dynamicObjects("Kennel").isEmpty)
    }
}

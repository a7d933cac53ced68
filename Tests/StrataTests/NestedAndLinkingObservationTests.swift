import Foundation
import Testing

@testable import Strata

final class MixedBox: Object {
    @Persisted var anyValue: AnyRealmValue
    @Persisted var label = ""
}

final class LinkedPet: Object {
    @Persisted var name = ""
    @Persisted var age = 0
    @Persisted(originProperty: "pets") var owners: LinkingObjects<LinkedKeeper>
}

final class LinkedKeeper: Object {
    @Persisted var name = ""
    @Persisted var pets: List<LinkedPet>
}

/// Observation edge cases of the Realm Swift SDK's documentation: collections nested in an `AnyRealmValue`, and
/// key paths through `LinkingObjects`.
@Suite("Observing nested mixed collections and key paths through LinkingObjects")
struct NestedAndLinkingObservationTests {
    private func realm() throws -> Realm {
        try Realm(
            configuration: Realm.Configuration(
                inMemoryIdentifier: "nested-linking-\(UUID())",
                objectTypes: [MixedBox.self, LinkedPet.self, LinkedKeeper.self]))
    }

    @Test func aListNestedInAMixedValueIsObserved() throws {
        let realm = try realm()
        let box = try realm.write {
            realm.create(MixedBox.self, value: ["anyValue": AnyRealmValue.fromArray([.int(1), .string("two")])])
        }
        let list = try #require(box.anyValue.listValue)
        var updates: [(deletions: [Int], insertions: [Int])] = []
        var initial = 0
        let token = list.observe { change in
            switch change {
            case .initial(let values): initial = values.count
            case .update(_, let deletions, let insertions, _): updates.append((deletions, insertions))
            case .error(let error): Issue.record("\(error)")
            }
        }
        defer { token.invalidate() }
        #expect(initial == 2)
        try realm.write { list.append(.bool(true)) }
        #expect(updates.count == 1 && updates.last?.insertions == [2])
        try realm.write { list.remove(at: 0) }
        #expect(updates.last?.deletions == [0] && updates.last?.insertions == [])
        try realm.write { box.label = "other property" }  // the list did not change: nothing delivered
        #expect(updates.count == 2)
        // Replacing the mixed value drops the nested list: its last elements are reported gone.
        try realm.write { box.anyValue = .int(5) }
        #expect(updates.last?.deletions == [0, 1])
    }

    @Test func aDictionaryNestedInAMixedValueIsObserved() throws {
        let realm = try realm()
        let box = try realm.write {
            realm.create(MixedBox.self, value: ["anyValue": AnyRealmValue.fromDictionary(["a": .int(1)])])
        }
        let dictionary = try #require(box.anyValue.dictionaryValue)
        var updates: [(deletions: [String], insertions: [String], modifications: [String])] = []
        let token = dictionary.observe { change in
            if case .update(_, let deletions, let insertions, let modifications) = change {
                updates.append((deletions, insertions, modifications))
            }
        }
        defer { token.invalidate() }
        try realm.write {
            dictionary["b"] = .string("new")
            dictionary["a"] = .int(2)
        }
        #expect(updates.count == 1)
        #expect(updates.last?.insertions == ["b"] && updates.last?.modifications == ["a"])
        try realm.write { dictionary["a"] = nil }
        #expect(updates.last?.deletions == ["a"])
    }

    @Test func keyPathsThroughLinkingObjectsCountTheLinkingObjectsChanges() throws {
        let realm = try realm()
        try realm.write {
            let rex = realm.create(LinkedPet.self, value: ["name": "Rex"])
            let bo = realm.create(LinkedPet.self, value: ["name": "Bo"])
            realm.create(LinkedKeeper.self, value: ["name": "Ann", "pets": [rex]])
            realm.create(LinkedKeeper.self, value: ["name": "Tom", "pets": [bo]])
        }
        let pets = realm.objects(LinkedPet.self)
        var modified: [[Int]] = []
        let token = pets.observe(keyPaths: ["owners.name"]) { change in
            if case .update(_, _, _, let modifications) = change { modified.append(modifications) }
        }
        defer { token.invalidate() }
        try realm.write { realm.objects(LinkedKeeper.self).filter("name == 'Tom'").first!.name = "Tim" }
        #expect(modified == [[1]])  // Bo, Tom's pet
        try realm.write { pets[0].age = 3 }  // not a key path observed
        #expect(modified == [[1]])

        var owners: [[Int]] = []
        let ownersToken = pets.observe(keyPaths: ["owners"]) { change in
            if case .update(_, _, _, let modifications) = change { owners.append(modifications) }
        }
        defer { ownersToken.invalidate() }
        try realm.write { realm.objects(LinkedKeeper.self).filter("name == 'Ann'").first!.pets.append(pets[1]) }
        // Bo gained Ann as an owner. Rex, already Ann's, counts too: Ann's linking list changed and the backlinks
        // are read in the new version only (see Notifications.md, Limits).
        #expect(owners == [[0, 1]])

        let rex = pets[0]
        var changed: [[String]] = []
        let objectToken = rex.observe(keyPaths: ["owners.name"]) { change in
            if case .change(_, let properties) = change { changed.append(properties.map(\.name)) }
        }
        defer { objectToken.invalidate() }
        try realm.write { realm.objects(LinkedKeeper.self).filter("name == 'Ann'").first!.name = "Anna" }
        #expect(changed == [["owners"]])
    }
}

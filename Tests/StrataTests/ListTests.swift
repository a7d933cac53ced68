import Foundation
import StrataTestSupport
import Testing

@testable import Strata

final class Owner: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var numbers: List<Int>
    @Persisted var tags: List<String?>
    @Persisted var pets: List<Pet>
}

final class Pet: Object {
    @Persisted(primaryKey: true) var name = ""
    @Persisted var age = 0
}

@Suite("List")
struct ListTests {
    private func memoryRealm() throws -> Realm {
        try Realm(configuration: Realm.Configuration(inMemoryIdentifier: "list-\(UUID())"))
    }

    /// Applies one random operation to both `list` and `model`.
    private func randomStep(_ list: List<Int>, _ model: inout [Int], _ generator: inout SeededGenerator) {
        let value = Int.random(in: -1000...1000, using: &generator)
        switch Int.random(in: 0..<10, using: &generator) {
        case 0...3:
            list.append(value)
            model.append(value)
        case 4, 5:
            let index = Int.random(in: 0...model.count, using: &generator)
            list.insert(value, at: index)
            model.insert(value, at: index)
        case 6 where !model.isEmpty, 7 where !model.isEmpty:
            let index = Int.random(in: 0..<model.count, using: &generator)
            list.remove(at: index)
            model.remove(at: index)
        case 8 where !model.isEmpty:
            let index = Int.random(in: 0..<model.count, using: &generator)
            list[index] = value
            model[index] = value
        case 9 where model.count > 1:
            let from = Int.random(in: 0..<model.count, using: &generator)
            let to = Int.random(in: 0..<model.count, using: &generator)
            list.move(from: from, to: to)
            let element = model.remove(at: from)
            model.insert(element, at: to)
        default:
            list.append(value)
            model.append(value)
        }
    }

    @Test func unmanagedAndManagedListsAgreeWithArrayThroughReopen() throws {
        let scratch = try Scratch()
        let configuration = scratch.configuration([Owner.self])
        var generator = SeededGenerator(seed: 7)
        var model: [Int] = []
        // Unmanaged first.
        let owner = Owner()
        owner.id = 1
        for _ in 0..<200 { randomStep(owner.numbers, &model, &generator) }
        #expect(Array(owner.numbers) == model)
        do {
            let realm = try Realm(configuration: configuration)
            try realm.write { realm.add(owner) }
            let managed = try #require(realm.object(ofType: Owner.self, forPrimaryKey: 1))
            #expect(Array(managed.numbers) == model)
            // Managed: every step checked against the model, in batches of transactions.
            for _ in 0..<20 {
                try realm.write {
                    for _ in 0..<25 { randomStep(managed.numbers, &model, &generator) }
                }
                #expect(Array(managed.numbers) == model)
                #expect(managed.numbers.count == model.count)
            }
        }
        let reopened = try Realm(configuration: configuration)
        #expect(Array(try #require(reopened.object(ofType: Owner.self, forPrimaryKey: 1)).numbers) == model)
    }

    @Test func listsOfObjectsAddTheirElementsAndForgetDeletedOnes() throws {
        let realm = try memoryRealm()
        let owner = Owner(value: ["id": 1, "pets": [["name": "Rex", "age": 3], ["name": "Tom", "age": 5]]])
        try realm.write { realm.add(owner) }
        #expect(realm.objects(Pet.self).count == 2)
        let stored = try #require(realm.object(ofType: Owner.self, forPrimaryKey: 1))
        #expect(stored.pets.map(\.name) == ["Rex", "Tom"])
        let tom = try #require(realm.object(ofType: Pet.self, forPrimaryKey: "Tom"))
        try realm.write {
            stored.pets.append(tom)
            stored.pets.append(Pet(value: ["name": "Ada"]))
        }
        #expect(stored.pets.map(\.name) == ["Rex", "Tom", "Tom", "Ada"])
        #expect(stored.pets.index(of: tom) == 1)
        try realm.write { realm.delete(tom) }
        #expect(stored.pets.map(\.name) == ["Rex", "Ada"])
        try realm.write { realm.delete(realm.objects(Pet.self)) }
        #expect(stored.pets.isEmpty)
    }

    @Test func optionalElementsAssignmentAndDynamicAccess() throws {
        let realm = try memoryRealm()
        let owner = Owner(value: ["id": 1, "tags": ["a", NSNull(), "c"], "numbers": [1, 2, 3]])
        #expect(Array(owner.tags) == ["a", nil, "c"])
        try realm.write { realm.add(owner) }
        let stored = try #require(realm.object(ofType: Owner.self, forPrimaryKey: 1))
        #expect(Array(stored.tags) == ["a", nil, "c"])
        #expect(stored["numbers"] as? [Any] != nil)
        try realm.write {
            stored.numbers = List()
            stored["tags"] = ["x"]
        }
        #expect(stored.numbers.isEmpty)
        #expect(Array(stored.tags) == ["x"])
        // A copy gets its own list.
        let copy = Owner(value: stored)
        copy.tags.append("y")
        #expect(Array(stored.tags) == ["x"])
        #expect(Array(copy.tags) == ["x", "y"])
        #expect(realm.schema[className: "Owner"]?[propertyName: "pets"]?.isArray == true)
    }

    @Test func listRulesFailTheWriteAndDeletingTheOwnerDeletesItsLists() throws {
        let realm = try memoryRealm()
        try realm.write { realm.add(Owner(value: ["id": 1, "numbers": [1, 2], "tags": ["a"]])) }
        let stored = try #require(realm.object(ofType: Owner.self, forPrimaryKey: 1))
        #expect(throws: Realm.Error.self) {
            try realm.write {
                stored.numbers.append(3)
                stored["numbers"] = ["not a number"]
            }
        }
        #expect(Array(stored.numbers) == [1, 2])
        try realm.write { realm.delete(stored) }
        #expect(realm.rowCount(tree: TableNames.list("Owner", "numbers")) == 0)
        #expect(realm.rowCount(tree: TableNames.list("Owner", "tags")) == 0)
    }

    @Test func codableLists() throws {
        let list = List<Int>()
        list.append(objectsIn: [3, 1, 2])
        let data = try JSONEncoder().encode(list)
        #expect(String(decoding: data, as: UTF8.self) == "[3,1,2]")
        #expect(Array(try JSONDecoder().decode(List<Int>.self, from: data)) == [3, 1, 2])
    }
}

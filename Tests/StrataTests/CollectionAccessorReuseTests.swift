import Foundation
import Testing

@testable import Strata

/// Collection accessors are handed out without reading the owner's row and kept per property index (see
/// `ManagedObject.collection(property:as:)` and `PropertySlots`): appends and sets through a new accessor each time
/// land in the right collection of the right object, and an accessor still held is the one handed out again.
@Suite("Collection accessor reuse")
struct CollectionAccessorReuseTests {
    private func memoryRealm() throws -> Realm {
        try Realm(configuration: Realm.Configuration(inMemoryIdentifier: "accessor-reuse-\(UUID())"))
    }

    @Test func appendsThroughNewAccessorsLandInTheirOwnLists() throws {
        let realm = try memoryRealm()
        try realm.write {
            realm.add(Owner(value: ["id": 1]))
            realm.add(Owner(value: ["id": 2]))
        }
        let first = try #require(realm.object(ofType: Owner.self, forPrimaryKey: 1))
        let second = try #require(realm.object(ofType: Owner.self, forPrimaryKey: 2))
        try realm.write {
            for value in 0..<50 {
                first.numbers.append(value)
                first.tags.append("t\(value)")
                second.numbers.append(-value)
            }
        }
        #expect(Array(first.numbers) == Array(0..<50))
        #expect(Array(first.tags) == (0..<50).map { "t\($0)" })
        #expect(Array(second.numbers) == (0..<50).map { -$0 })
        // An append after a positional insert still goes to the end.
        try realm.write {
            first.numbers.insert(100, at: 0)
            first.numbers.append(101)
        }
        #expect(first.numbers.first == 100)
        #expect(first.numbers.last == 101)
        #expect(first.numbers.count == 52)
    }

    @Test func aHeldAccessorIsHandedOutAgain() throws {
        let realm = try memoryRealm()
        try realm.write { realm.add(Owner(value: ["id": 1])) }
        let owner = try #require(realm.object(ofType: Owner.self, forPrimaryKey: 1))
        let numbers = owner.numbers
        try realm.write { numbers.append(7) }
        #expect(owner.numbers === numbers)
        #expect(owner.tags !== numbers as AnyObject)
        #expect(Array(owner.numbers) == [7])
    }

    @Test func anObjectKeepsTheAccessorItHandedOut() throws {
        let realm = try memoryRealm()
        try realm.write { realm.add(Owner(value: ["id": 1])) }
        let owner = try #require(realm.object(ofType: Owner.self, forPrimaryKey: 1))
        weak var numbers: List<Int>?
        numbers = owner.numbers
        // Nobody but the object holds it: it is still the one handed out, and appends through it land.
        #expect(numbers != nil)
        try realm.write {
            owner.numbers.append(1)
            numbers?.append(2)
        }
        #expect(owner.numbers === numbers)
        #expect(Array(owner.numbers) == [1, 2])
    }

    @Test func aKeptAccessorGoesWithItsObject() throws {
        let realm = try memoryRealm()
        try realm.write { realm.add(Owner(value: ["id": 1])) }
        weak var numbers: List<Int>?
        weak var object: Owner?
        do {
            let owner = try #require(realm.object(ofType: Owner.self, forPrimaryKey: 1))
            try realm.write { owner.numbers.append(3) }
            numbers = owner.numbers
            object = owner
        }
        // The accessor holds the object's managed state, not the object: no cycle keeps either alive.
        #expect(object == nil)
        #expect(numbers == nil)
        let again = try #require(realm.object(ofType: Owner.self, forPrimaryKey: 1))
        #expect(Array(again.numbers) == [3])
    }
}

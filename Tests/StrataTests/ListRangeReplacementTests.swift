import Foundation
import Strata
import Testing

final class RangeListOwner: Object {
    @Persisted var names: List<String>
}

/// `List`'s SDK members modelled on `RangeReplaceableCollection` and SwiftUI's offsets, on managed and unmanaged
/// lists alike.
@Suite("List range replacement")
struct ListRangeReplacementTests {
    private func managed(_ names: [String]) throws -> (Realm, RangeListOwner) {
        let realm = try Realm(
            configuration: Realm.Configuration(
                inMemoryIdentifier: "list-range-\(UUID())", objectTypes: [RangeListOwner.self]))
        let owner = RangeListOwner()
        owner.names.append(objectsIn: names)
        try realm.write { realm.add(owner) }
        return (realm, owner)
    }

    private func unmanaged(_ names: [String]) -> List<String> {
        let list = List<String>()
        list.append(objectsIn: names)
        return list
    }

    @Test func replaceSubrangeWithMoreFewerAndNoElements() throws {
        let (realm, owner) = try managed(["a", "b", "c", "d"])
        try realm.write { owner.names.replaceSubrange(1..<3, with: ["x", "y", "z"]) }
        #expect(Array(owner.names) == ["a", "x", "y", "z", "d"])
        try realm.write { owner.names.replaceSubrange(0...3, with: ["q"]) }
        #expect(Array(owner.names) == ["q", "d"])
        try realm.write { owner.names.replaceSubrange(2..<2, with: ["e"]) }
        #expect(Array(owner.names) == ["q", "d", "e"])

        let list = unmanaged(["a", "b", "c"])
        list.replaceSubrange(..<2, with: EmptyCollection())
        #expect(Array(list) == ["c"])
    }

    @Test func removeSubrangeFirstAndLast() throws {
        let (realm, owner) = try managed(["a", "b", "c", "d", "e", "f", "g"])
        try realm.write {
            owner.names.removeSubrange(1..<3)
            owner.names.removeFirst()
            owner.names.removeLast()
        }
        #expect(Array(owner.names) == ["d", "e", "f"])
        try realm.write {
            owner.names.removeFirst(2)
        }
        #expect(Array(owner.names) == ["f"])
        try realm.write { owner.names.removeLast(1) }
        #expect(owner.names.isEmpty)

        let list = unmanaged(["a", "b", "c", "d"])
        list.removeLast(2)
        list.removeSubrange(0...0)
        #expect(Array(list) == ["b"])
    }

    @Test func insertContentsOfAtAPosition() throws {
        let (realm, owner) = try managed(["a", "d"])
        try realm.write { owner.names.insert(contentsOf: ["b", "c"], at: 1) }
        #expect(Array(owner.names) == ["a", "b", "c", "d"])
        let list = unmanaged(["z"])
        list.insert(contentsOf: ["x", "y"], at: 0)
        #expect(Array(list) == ["x", "y", "z"])
    }

    @Test func removeAtOffsets() throws {
        let (realm, owner) = try managed(["a", "b", "c", "d", "e"])
        try realm.write { owner.names.remove(atOffsets: IndexSet([0, 2, 4])) }
        #expect(Array(owner.names) == ["b", "d"])
    }

    @Test func moveFromOffsetsAsTheSDKDoes() throws {
        let (realm, owner) = try managed(["a", "b", "c", "d"])
        try realm.write { owner.names.move(fromOffsets: IndexSet(integer: 0), toOffset: 2) }
        #expect(Array(owner.names) == ["b", "c", "a", "d"])
        // A destination at the end moves the element to the last position.
        try realm.write { owner.names.move(fromOffsets: IndexSet(integer: 0), toOffset: 4) }
        #expect(Array(owner.names) == ["c", "a", "d", "b"])
    }

    @Test func removingMoreThanTheListHoldsFailsTheWriteAndKeepsTheList() throws {
        let (realm, owner) = try managed(["a", "b"])
        #expect(throws: Realm.Error.self) { try realm.write { owner.names.removeFirst(3) } }
        #expect(throws: Realm.Error.self) { try realm.write { owner.names.removeLast(3) } }
        #expect(throws: Realm.Error.self) { try realm.write { owner.names.removeSubrange(1..<5) } }
        #expect(throws: Realm.Error.self) {
            try realm.write { owner.names.replaceSubrange(0..<3, with: ["z"]) }
        }
        #expect(Array(owner.names) == ["a", "b"])
    }

    @Test func theRangeErrorNamesTheListAndTheCounts() throws {
        let (realm, owner) = try managed(["a"])
        do {
            try realm.write { owner.names.removeFirst(2) }
            Issue.record("removeFirst(2) on a list of one did not fail")
        } catch {
            #expect("\(error)".contains("RangeListOwner"))
            #expect("\(error)".contains("names"))
            #expect("\(error)".contains("remove 2 elements from a list that holds 1"))
        }
    }
}

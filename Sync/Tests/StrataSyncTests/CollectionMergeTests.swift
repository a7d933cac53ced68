import Testing

@testable import StrataSync

/// The merge rules of collections, without PostgreSQL: every order of the same operations gives the same
/// contents.
@Suite struct CollectionMergeTests {
    let a0 = HybridTimestamp(wallMilliseconds: 10, counter: 0, replica: "a")
    let a1 = HybridTimestamp(wallMilliseconds: 11, counter: 0, replica: "a")
    let b1 = HybridTimestamp(wallMilliseconds: 11, counter: 0, replica: "b")
    let c2 = HybridTimestamp(wallMilliseconds: 12, counter: 0, replica: "c")

    private func list(_ operations: [ListOperation]) -> [SyncValue] {
        var state = ListState()
        for operation in operations { _ = state.apply(operation) }
        return state.values
    }

    @Test func concurrentInsertsAtOnePlaceAreBothKeptInOneOrderEverywhere() {
        let first: ListOperation = .insert(id: a0, after: nil, value: .string("x"))
        let fromA: ListOperation = .insert(id: a1, after: a0, value: .string("a"))
        let fromB: ListOperation = .insert(id: b1, after: a0, value: .string("b"))
        let expected: [SyncValue] = [.string("x"), .string("b"), .string("a")]
        #expect(list([first, fromA, fromB]) == expected)
        #expect(list([first, fromB, fromA]) == expected)
        #expect(list([fromB, first, fromA, fromA]) == expected)
    }

    @Test func aRemovedElementStaysAPlaceForInsertsAfterIt() {
        let x: ListOperation = .insert(id: a0, after: nil, value: .string("x"))
        let y: ListOperation = .insert(id: b1, after: a0, value: .string("y"))
        let removeX: ListOperation = .remove(id: a0)
        #expect(list([x, removeX, y]) == [.string("y")])
        #expect(list([x, y, removeX]) == [.string("y")])
    }

    @Test func aClearHidesOnlyWhatWasInsertedBeforeIt() {
        let old: ListOperation = .insert(id: a0, after: nil, value: .int(1))
        let concurrent: ListOperation = .insert(id: c2, after: nil, value: .int(2))
        let clear: ListOperation = .clear(at: b1)
        #expect(list([old, clear, concurrent]) == [.int(2)])
        #expect(list([concurrent, clear, old]) == [.int(2)])
    }

    @Test func mapKeysAreLastWriterWinsEachOnTheirOwn() {
        func map(_ operations: [MapOperation]) -> [String: SyncValue] {
            var state = MapState()
            for operation in operations { _ = state.apply(operation) }
            return state.values
        }
        let operations: [MapOperation] = [
            .set(key: "k", value: .int(1), at: a1), .set(key: "k", value: .int(2), at: b1),
            .set(key: "j", value: .int(3), at: a0), .set(key: "j", value: nil, at: c2),
        ]
        #expect(map(operations) == ["k": .int(2)])
        #expect(map(operations.reversed()) == ["k": .int(2)])
    }

    @Test func anAddWinsOverAConcurrentRemove() {
        func set(_ operations: [SetOperation]) -> [SyncValue] {
            var state = SetState()
            for operation in operations { _ = state.apply(operation) }
            return state.values
        }
        let add: SetOperation = .add(value: .string("red"), tag: a0)
        let concurrentAdd: SetOperation = .add(value: .string("red"), tag: c2)
        let remove: SetOperation = .remove(value: .string("red"), observedTags: [a0])
        #expect(set([add, remove]) == [])
        #expect(set([add, concurrentAdd, remove]) == [.string("red")])
        #expect(set([add, remove, concurrentAdd]) == [.string("red")])
        #expect(set([remove, add]) == [])
    }
}

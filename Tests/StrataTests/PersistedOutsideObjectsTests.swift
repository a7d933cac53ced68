import Foundation
import Testing

@testable import Strata

/// A `@Persisted` property outside a model class, as a plain type holds it.
private struct DraftScores {
    @Persisted var scores: List<Int>
    @Persisted var title = "draft"
}

/// `@Persisted` outside model classes (local variables, plain types) and decodings that fail leave property
/// storage on the thread's box stack that no object claims. These tests pin that such orphans never reach the
/// objects created after them and do not pile up. Every test is synchronous: the stack is per thread.
@Suite("Persisted outside objects")
struct PersistedOutsideObjectsTests {
    /// Creates an object whose boxes are claimed from the stack, and checks it got its own.
    private func createKeeper(named name: String) throws -> Keeper {
        let keeper = Keeper(value: ["name": name, "age": 7])
        let declared = TableSchema.persistedBoxes(of: keeper).map { ObjectIdentifier($0.1) }
        #expect(declared.count == 2)
        #expect(keeper.boxes.map(ObjectIdentifier.init) == declared)
        return keeper
    }

    @Test func aLocalThatHasGoneIsDroppedByTheNextObject() throws {
        do {
            @Persisted var gone = 3
            gone += 1
            #expect(gone == 4)
        }
        #expect(!BoxStack.local.value.boxes.isEmpty)
        _ = try createKeeper(named: "after")
        #expect(BoxStack.local.value.boxes.isEmpty)
    }

    @Test func objectsCreatedWhileALocalLivesKeepTheirOwnStorage() throws {
        let realm = try Realm(configuration: Realm.Configuration(inMemoryIdentifier: "outside-\(UUID())"))
        do {
            @Persisted var living: List<Int>
            living.append(1)
            let keeper = try createKeeper(named: "during")
            keeper.age = 8
            #expect(keeper.age == 8)
            #expect(Array(living) == [1])
            // The living local's box stays (it may be claimed by nothing, but it is not an orphan yet); the
            // keeper's are gone from the stack.
            let stack = BoxStack.local.value.boxes
            #expect(stack.last === _living.box)
            #expect(!stack.contains { box in keeper.boxes.contains { $0 === box } })
            try realm.write { realm.add(keeper) }
            #expect(realm.object(ofType: Keeper.self, forPrimaryKey: "during")?.age == 8)
            living.append(2)
            #expect(Array(living) == [1, 2])
        }
        _ = try createKeeper(named: "after the local")
        #expect(BoxStack.local.value.boxes.isEmpty)
    }

    @Test func plainTypesHoldIndependentValues() throws {
        var drafts = (0..<3).map { index in
            let draft = DraftScores()
            draft.scores.append(index)
            return draft
        }
        drafts[1].title = "second"
        #expect(drafts.map(\.title) == ["draft", "second", "draft"])
        #expect(drafts.map { Array($0.scores) } == [[0], [1], [2]])
        drafts.removeAll()
        _ = try createKeeper(named: "plain")
        #expect(BoxStack.local.value.boxes.isEmpty)
    }

    @Test func aFailedDecodingLeavesNothingBehind() throws {
        let broken = Data(#"{"id": 1, "name": "Half", "keeper": {"name": 5}}"#.utf8)
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(Kennel.self, from: broken) }
        let json = Data(#"{"id": 2, "name": "Whole", "keeper": {"name": "Di", "age": 3}}"#.utf8)
        let decoded = try JSONDecoder().decode(Kennel.self, from: json)
        #expect(decoded.name == "Whole")
        #expect(decoded.keeper?.name == "Di")
        _ = try createKeeper(named: "later")
        #expect(BoxStack.local.value.boxes.isEmpty)
    }
}

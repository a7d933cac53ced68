import Foundation
import Testing

@testable import Strata

@Suite("Notification: changes computed off the actor")
struct OffActorChangeTests {
    /// Another Realm's commits reach an actor's `for await` loop over a filtered, sorted query whose new state was
    /// computed off the actor (on a frozen view of the new version); each change set applied to the previous state
    /// reproduces the new one.
    @Test func queriesOfObservedResultsRunOffTheActor() async throws {
        let configuration = Realm.Configuration(inMemoryIdentifier: "off-actor-\(UUID())")
        // Small queries normally stay on the actor (handing them over costs more than running them).
        alwaysOffActor.withLock { $0 += 1 }
        defer { alwaysOffActor.withLock { $0 -= 1 } }
        let before = preparedIdentitiesUsed.withLock { $0 }
        let probe = OffActorProbe()
        let outcome = try await probe.run(configuration: configuration, commits: 6)
        #expect(outcome.states.last == outcome.expected)
        #expect(outcome.updates.count == outcome.states.count - 1 && !outcome.updates.isEmpty)
        for (index, update) in outcome.updates.enumerated() {
            var rebuilt = outcome.states[index]
            let new = outcome.states[index + 1]
            for position in update.deletions.sorted(by: >) { rebuilt.remove(at: position) }
            for position in update.insertions.sorted() { rebuilt.insert(new[position], at: position) }
            #expect(rebuilt == new)
        }
        #expect(preparedIdentitiesUsed.withLock { $0 } > before)
    }
}

actor OffActorProbe {
    struct Outcome: Sendable {
        var states: [[Int]] = []
        var updates: [(deletions: [Int], insertions: [Int])] = []
        var expected: [Int] = []
    }

    func run(configuration: Realm.Configuration, commits: Int) async throws -> Outcome {
        let realm = try await Realm(configuration: configuration, actor: self)
        try await realm.asyncWrite {
            for id in 0..<20 { realm.add(NtfDog(value: ["id": id, "age": id % 7])) }
        }
        let young = realm.objects(NtfDog.self).filter("age < 4").sorted(byKeyPath: "age")
        var outcome = Outcome()
        var changes = young.changes.makeAsyncIterator()
        if case .initial(let dogs)? = await changes.next(isolation: self) { outcome.states.append(dogs.map(\.id)) }
        let writer = OffActorWriter()
        for round in 0..<commits {
            try await writer.commit(round: round, configuration: configuration)
            guard case .update(let dogs, let deletions, let insertions, _)? = await changes.next(isolation: self)
            else { break }
            outcome.states.append(dogs.map(\.id))
            outcome.updates.append((deletions, insertions))
        }
        outcome.expected = try await writer.expected(configuration: configuration)
        return outcome
    }
}

actor OffActorWriter {
    private var realm: Realm?

    private func open(_ configuration: Realm.Configuration) async throws -> Realm {
        if let realm { return realm }
        let opened = try await Realm(configuration: configuration, actor: self)
        realm = opened
        return opened
    }

    /// Moves some dogs in or out of the observed range and adds one.
    func commit(round: Int, configuration: Realm.Configuration) async throws {
        let realm = try await open(configuration)
        try await realm.asyncWrite {
            for dog in realm.objects(NtfDog.self) where (dog.id + round) % 5 == 0 { dog.age = (dog.age + 3) % 7 }
            realm.add(NtfDog(value: ["id": 100 + round, "age": round % 4]))
        }
    }

    /// The ids the observed query has now.
    func expected(configuration: Realm.Configuration) async throws -> [Int] {
        let realm = try await open(configuration)
        realm.refresh()
        return realm.objects(NtfDog.self).filter("age < 4").sorted(byKeyPath: "age").map(\.id)
    }
}

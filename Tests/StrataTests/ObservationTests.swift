import Foundation
import Observation
import Strata
import Synchronization
import Testing

final class ObsDog: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var name = ""
    @Persisted var age = 0
}

/// Counts how often a tracking's `onChange` ran (it runs on the Realm's isolation, whichever thread that is).
final class ObservationFireCount: Sendable {
    private let count = Mutex(0)
    var value: Int { count.withLock { $0 } }
    func fire() { count.withLock { $0 += 1 } }
}

private func memoryConfiguration() -> Realm.Configuration {
    Realm.Configuration(inMemoryIdentifier: "observation-\(UUID())", objectTypes: [ObsDog.self])
}

/// Tracks `read` with `withObservationTracking`; the returned count goes up each time `onChange` runs.
private func track(_ read: () -> Void) -> ObservationFireCount {
    let fired = ObservationFireCount()
    withObservationTracking(read) { fired.fire() }
    return fired
}

@Suite("Swift Observation")
struct ObservationTests {
    /// A commit of this Realm that changes the tracked property fires `onChange` exactly once, even when the
    /// property is set twice in the transaction and again in a later one (a tracking is one-shot).
    @Test func aCommitOfThisRealmChangingTheTrackedPropertyFiresOnce() throws {
        let realm = try Realm(configuration: memoryConfiguration())
        let dog = ObsDog()
        try realm.write { realm.add(dog) }
        let fired = track { _ = dog.name }
        #expect(fired.value == 0)
        try realm.write {
            dog.name = "Rex"
            dog.name = "Max"
        }
        #expect(fired.value == 1)
        try realm.write { dog.name = "Fido" }
        #expect(fired.value == 1)
    }

    /// Changing another property of the tracked object does not fire.
    @Test func anotherPropertyDoesNotFire() throws {
        let realm = try Realm(configuration: memoryConfiguration())
        let dog = ObsDog()
        try realm.write { realm.add(dog) }
        let fired = track { _ = dog.name }
        try realm.write { dog.age = 4 }
        #expect(fired.value == 0)
        try realm.write { dog.name = "Rex" }
        #expect(fired.value == 1)
    }

    /// Changing the same property of another object does not fire; another accessor for the tracked object (a
    /// query's) is the same stored object and does.
    @Test func anotherObjectDoesNotFire() throws {
        let realm = try Realm(configuration: memoryConfiguration())
        let first = ObsDog(value: ["id": 1])
        let second = ObsDog(value: ["id": 2])
        try realm.write { realm.add([first, second]) }
        let fired = track { _ = first.name }
        try realm.write { second.name = "Other" }
        #expect(fired.value == 0)
        let sameStored = try #require(realm.object(ofType: ObsDog.self, forPrimaryKey: 1))
        try realm.write { sameStored.name = "Rex" }
        #expect(fired.value == 1)
    }

    /// A tracked read of an object fetched by a query fires too (accessors the Realm creates).
    @Test func anObjectReadFromAQueryFires() throws {
        let realm = try Realm(configuration: memoryConfiguration())
        try realm.write { realm.add(ObsDog(value: ["id": 1])) }
        let dog = try #require(realm.objects(ObsDog.self).first)
        let fired = track { _ = dog.name }
        try realm.write { dog.name = "Rex" }
        #expect(fired.value == 1)
    }

    /// Deleting the tracked object fires.
    @Test func deletingTheObjectFires() throws {
        let realm = try Realm(configuration: memoryConfiguration())
        let dog = ObsDog()
        try realm.write { realm.add(dog) }
        let fired = track { _ = dog.name }
        try realm.write { realm.delete(dog) }
        #expect(fired.value == 1)
    }

    /// An unmanaged object fires when the tracked property is set, like SwiftData's `@Model`, and not for others.
    @Test func settingAnUnmanagedPropertyFires() {
        let dog = ObsDog()
        let name = track { _ = dog.name }
        let age = track { _ = dog.age }
        dog.name = "Rex"
        #expect(name.value == 1)
        #expect(age.value == 0)
    }

    /// An object tracked while unmanaged and added to a Realm since fires for its Realm's commits.
    @Test func anObjectTrackedBeforeItWasAddedFiresForCommits() throws {
        let realm = try Realm(configuration: memoryConfiguration())
        let dog = ObsDog()
        _ = track { _ = dog.name }
        try realm.write { realm.add(dog) }
        let fired = track { _ = dog.name }
        try realm.write { dog.name = "Rex" }
        #expect(fired.value == 1)
    }

    /// A frozen object never changes, so it never fires; the live object it was frozen from does.
    @Test func aFrozenObjectNeverFires() throws {
        let realm = try Realm(configuration: memoryConfiguration())
        let dog = ObsDog()
        try realm.write { realm.add(dog) }
        let frozen = dog.freeze()
        let frozenFired = track { _ = frozen.name }
        let liveFired = track { _ = dog.name }
        try realm.write { dog.name = "Rex" }
        #expect(liveFired.value == 1)
        #expect(frozenFired.value == 0)
    }

    /// A commit of another actor's Realm fires the tracking of an actor-confined Realm's object once that Realm
    /// refreshes (automatically, after the commit), and `onChange` runs on that Realm's actor.
    @MainActor @Test func anotherActorsCommitFiresOnTheTrackingRealmsActor() async throws {
        let configuration = memoryConfiguration()
        let writer = try await Realm(configuration: configuration, actor: MainActor.shared)
        try await writer.asyncWrite { writer.add(ObsDog(value: ["id": 1])) }
        let watcher = ObservationActor()
        let fired = try await watcher.trackName(configuration: configuration)
        try await writer.asyncWrite { writer.object(ofType: ObsDog.self, forPrimaryKey: 1)?.name = "Rex" }
        // The deadline is a failure guard only: the change normally arrives within milliseconds.
        let deadline = ContinuousClock.now + .seconds(20)
        while await watcher.firedOnActor == 0 && ContinuousClock.now < deadline { await Task.yield() }
        #expect(await watcher.firedOnActor == 1)
        #expect(fired.value == 1)
    }
}

/// An actor whose Realm's object is tracked; `onChange` checks it runs isolated to this actor.
actor ObservationActor {
    private var realm: Realm?
    private var dog: ObsDog?
    var firedOnActor = 0

    func trackName(configuration: Realm.Configuration) async throws -> ObservationFireCount {
        let realm = try await Realm(configuration: configuration, actor: self)
        let dog = try #require(realm.object(ofType: ObsDog.self, forPrimaryKey: 1))
        self.realm = realm
        self.dog = dog
        let fired = ObservationFireCount()
        withObservationTracking {
            _ = dog.name
        } onChange: { [self] in
            fired.fire()
            // Traps (failing the run) unless the change is delivered on this actor.
            self.assumeIsolated { $0.firedOnActor += 1 }
        }
        return fired
    }
}

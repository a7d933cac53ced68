import Foundation
import Observation
import Strata
import Testing

final class ObsPet: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var name = ""
    @Persisted var age = 0
    @Persisted(originProperty: "pets") var owners: LinkingObjects<ObsKeeper>
}

final class ObsKeeper: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var name = ""
    @Persisted var pets: List<ObsPet>
    @Persisted var tags: MutableSet<String>
    @Persisted var scores: Map<String, Int>
}

private func memoryConfiguration() -> Realm.Configuration {
    Realm.Configuration(
        inMemoryIdentifier: "observation-collections-\(UUID())", objectTypes: [ObsPet.self, ObsKeeper.self])
}

/// Tracks `read` with `withObservationTracking`; the returned count goes up each time `onChange` runs.
private func track(_ read: () -> Void) -> ObservationFireCount {
    let fired = ObservationFireCount()
    withObservationTracking(read) { fired.fire() }
    return fired
}

/// A Realm with one keeper (id 1) and pets 1...3 (ages 1, 2, 3), pets 1 and 2 in the keeper's list.
private func keeperRealm() throws -> (Realm, ObsKeeper) {
    let realm = try Realm(configuration: memoryConfiguration())
    let keeper = ObsKeeper(value: ["id": 1, "name": "Ann"])
    try realm.write {
        realm.add(keeper)
        for id in 1...3 { realm.add(ObsPet(value: ["id": id, "name": "pet \(id)", "age": id])) }
        keeper.pets.append(objectsIn: realm.objects(ObsPet.self).where { $0.id < 3 })
        keeper.tags.insert("calm")
        keeper.scores["walks"] = 1
    }
    return (realm, keeper)
}

@Suite("Swift Observation of collections")
struct ObservationCollectionTests {
    /// `Results.count` fires once for a commit that inserts a matching object; a tracking is one-shot.
    @Test func resultsCountFiresOnceForAnInsert() throws {
        let (realm, _) = try keeperRealm()
        let pets = realm.objects(ObsPet.self)
        let fired = track { _ = pets.count }
        try realm.write { realm.add(ObsPet(value: ["id": 4])) }
        #expect(fired.value == 1)
        try realm.write { realm.add(ObsPet(value: ["id": 5])) }
        #expect(fired.value == 1)
    }

    /// A query's count does not fire for commits that leave its matches alone (another type, an object that
    /// does not match and still does not), and fires for a deletion of a match.
    @Test func aQueryFiresOnlyWhenItsMatchesChange() throws {
        let (realm, keeper) = try keeperRealm()
        let old = realm.objects(ObsPet.self).where { $0.age >= 2 }
        let fired = track { _ = old.count }
        try realm.write { keeper.name = "Bea" }
        try realm.write { realm.object(ofType: ObsPet.self, forPrimaryKey: 1)?.name = "young" }
        #expect(fired.value == 0)
        try realm.write { realm.delete(realm.object(ofType: ObsPet.self, forPrimaryKey: 3)!) }
        #expect(fired.value == 1)
    }

    /// Iterating results (without reading any property) registers them: a matching object modified fires.
    @Test func iteratingResultsFiresForAModifiedMatch() throws {
        let (realm, _) = try keeperRealm()
        let pets = realm.objects(ObsPet.self).where { $0.age >= 2 }
        let fired = track {
            for _ in pets {}
        }
        try realm.write { realm.object(ofType: ObsPet.self, forPrimaryKey: 2)?.name = "renamed" }
        #expect(fired.value == 1)
    }

    /// Subscripting results registers them too.
    @Test func subscriptingResultsFiresForAnInsert() throws {
        let (realm, _) = try keeperRealm()
        let fired = track { _ = realm.objects(ObsPet.self)[0] }
        try realm.write { realm.add(ObsPet(value: ["id": 9])) }
        #expect(fired.value == 1)
    }

    /// `List.count` fires when the list's contents change, not for a change of another property of its object
    /// or of an object it holds. (The list is read before the tracking: reading `keeper.pets` inside it would
    /// register the object's property too.)
    @Test func listCountFiresForItsContentsOnly() throws {
        let (realm, keeper) = try keeperRealm()
        let pets = keeper.pets
        let fired = track { _ = pets.count }
        try realm.write { keeper.name = "Bea" }
        try realm.write { keeper.pets[0].name = "renamed" }
        try realm.write { keeper.tags.insert("loud") }
        #expect(fired.value == 0)
        try realm.write { keeper.pets.append(realm.object(ofType: ObsPet.self, forPrimaryKey: 3)!) }
        #expect(fired.value == 1)
    }

    /// Iterating a list registers it: reordering its elements fires.
    @Test func iteratingAListFiresForAMove() throws {
        let (realm, keeper) = try keeperRealm()
        let pets = keeper.pets
        let fired = track {
            for _ in pets {}
        }
        try realm.write { keeper.pets.move(from: 0, to: 1) }
        #expect(fired.value == 1)
    }

    /// `MutableSet.count` and `Map.count` fire when their contents change.
    @Test func setAndMapCountsFireForTheirContents() throws {
        let (realm, keeper) = try keeperRealm()
        let tags = keeper.tags
        let scores = keeper.scores
        let set = track { _ = tags.count }
        let map = track { _ = scores.count }
        try realm.write { keeper.pets.removeAll() }
        #expect(set.value == 0)
        #expect(map.value == 0)
        try realm.write { keeper.tags.insert("loud") }
        #expect(set.value == 1)
        #expect(map.value == 0)
        try realm.write { keeper.scores["walks"] = 2 }
        #expect(map.value == 1)
    }

    /// `LinkingObjects.count` fires when a link to the object is added, not for other links.
    @Test func linkingObjectsCountFiresForNewLinks() throws {
        let (realm, keeper) = try keeperRealm()
        let owners = try #require(realm.object(ofType: ObsPet.self, forPrimaryKey: 3)).owners
        let fired = track { _ = owners.count }
        try realm.write { keeper.pets.remove(at: 0) }
        #expect(fired.value == 0)
        try realm.write { keeper.pets.append(realm.object(ofType: ObsPet.self, forPrimaryKey: 3)!) }
        #expect(fired.value == 1)
    }

    /// A frozen collection never changes: its reads are not tracked, and commits do not fire; the live
    /// collections it was frozen from do.
    @Test func frozenCollectionsNeverFire() throws {
        let (realm, keeper) = try keeperRealm()
        let frozenPets = realm.objects(ObsPet.self).freeze()
        let liveList = keeper.pets
        let frozenList = liveList.freeze()
        let frozenResults = track { _ = frozenPets.count }
        let frozenListFired = track { _ = frozenList.count }
        let liveResultsFired = track { _ = realm.objects(ObsPet.self).count }
        let liveListFired = track { _ = liveList.count }
        try realm.write {
            realm.add(ObsPet(value: ["id": 4]))
            keeper.pets.removeAll()
        }
        #expect(frozenResults.value == 0)
        #expect(frozenListFired.value == 0)
        #expect(liveResultsFired.value == 1)
        #expect(liveListFired.value == 1)
    }

    /// An unmanaged list fires when it is mutated, like an unmanaged object's property.
    @Test func anUnmanagedListFiresWhenMutated() {
        let keeper = ObsKeeper()
        let fired = track { _ = keeper.pets.count }
        keeper.pets.append(ObsPet())
        #expect(fired.value == 1)
        let iterated = track {
            for _ in keeper.pets {}
        }
        keeper.pets.remove(at: 0)
        #expect(iterated.value == 1)
    }

    /// A change handler that tracks the count again is told of the next change too.
    @Test func trackingAgainInTheChangeHandlerFollowsTheNextChange() throws {
        let (realm, _) = try keeperRealm()
        // `onChange` runs on the Realm's isolation (this thread), as its other notifications do.
        let box = UncheckedPets(pets: realm.objects(ObsPet.self))
        let fired = ObservationFireCount()
        @Sendable func follow() {
            fired.fire()
            withObservationTracking {
                _ = box.pets.count
            } onChange: {
                follow()
            }
        }
        withObservationTracking {
            _ = box.pets.count
        } onChange: {
            follow()
        }
        try realm.write { realm.add(ObsPet(value: ["id": 4])) }
        try realm.write { realm.add(ObsPet(value: ["id": 5])) }
        #expect(fired.value == 2)
    }

    /// A tracked collection does not keep its Realm open: releasing the Realm while trackings still wait for
    /// a change releases it.
    @Test func aTrackedCollectionDoesNotKeepItsRealm() throws {
        weak var released: Realm?
        do {
            let (realm, keeper) = try keeperRealm()
            released = realm
            let waiting = track { _ = realm.objects(ObsPet.self).where { $0.age > 1 }.count }
            let pets = keeper.pets
            let tags = keeper.tags
            _ = track { _ = pets.count }
            let fired = track { _ = tags.count }
            try realm.write { keeper.tags.insert("loud") }
            #expect(fired.value == 1)
            #expect(waiting.value == 0)
        }
        #expect(released == nil)
    }

    /// A commit of another actor's Realm fires the tracking of an actor-confined Realm's results once that Realm
    /// refreshes (automatically, after the commit), and `onChange` runs on that Realm's actor.
    @MainActor @Test func anotherActorsCommitFiresOnTheTrackingRealmsActor() async throws {
        let configuration = memoryConfiguration()
        let writer = try await Realm(configuration: configuration, actor: MainActor.shared)
        let watcher = CollectionObservationActor()
        let fired = try await watcher.trackCount(configuration: configuration)
        try await writer.asyncWrite { writer.add(ObsPet(value: ["id": 1])) }
        // The deadline is a failure guard only: the change normally arrives within milliseconds.
        let deadline = ContinuousClock.now + .seconds(20)
        while await watcher.firedOnActor == 0 && ContinuousClock.now < deadline { await Task.yield() }
        #expect(await watcher.firedOnActor == 1)
        #expect(fired.value == 1)
    }
}

/// Results handed to a `@Sendable` change handler that runs on the Realm's own isolation (the test's thread).
private struct UncheckedPets: @unchecked Sendable {
    let pets: Results<ObsPet>
}

/// An actor whose Realm's results are tracked; `onChange` checks it runs isolated to this actor.
actor CollectionObservationActor {
    private var realm: Realm?
    var firedOnActor = 0

    func trackCount(configuration: Realm.Configuration) async throws -> ObservationFireCount {
        let realm = try await Realm(configuration: configuration, actor: self)
        self.realm = realm
        let pets = realm.objects(ObsPet.self)
        let fired = ObservationFireCount()
        withObservationTracking {
            _ = pets.count
        } onChange: { [self] in
            fired.fire()
            // Traps (failing the run) unless the change is delivered on this actor.
            self.assumeIsolated { $0.firedOnActor += 1 }
        }
        return fired
    }
}

import Dispatch
import Foundation
import Strata
import Testing

/// `observe(on: queue)` as the Realm SDK documents it: the block runs on the queue (the initial call included),
/// with values read by a Realm confined to that queue, after each commit.
@Suite("Notification: observe(on: queue) delivers on the queue")
struct NotificationQueueDeliveryTests {
    let configuration = Realm.Configuration(
        inMemoryIdentifier: "observe-on-queue-\(UUID())", objectTypes: [QueueDog.self, QueueOwner.self])

    /// Results, List, MutableSet, Map and an object of a task's Realm, observed on one queue: each block's
    /// initial state and its change after a commit arrive on the queue, read there.
    @Test(.timeLimit(.minutes(1))) func everyObservableKindDeliversOnTheQueue() async throws {
        let realm = try Realm(configuration: configuration)
        let owner = try realm.write { realm.create(QueueOwner.self, value: ["name": "Ann"]) }
        let queue = MarkedQueue("observe-on")
        let (deliveries, sink) = AsyncStream.makeStream(of: QueueDelivery.self)
        func report(_ what: String) { sink.yield(QueueDelivery(onQueue: queue.isCurrent, what: what)) }
        var tokens: [NotificationToken] = []
        tokens.append(
            realm.objects(QueueDog.self).observe(on: queue.queue) { change in
                switch change {
                case .initial(let dogs): report("results initial \(dogs.count)")
                case .update(let dogs, _, let insertions, _): report("results update \(dogs.count) \(insertions)")
                case .error(let error): report("results error \(error)")
                }
            })
        tokens.append(
            owner.dogs.observe(on: queue.queue) { change in
                switch change {
                case .initial(let dogs): report("list initial \(dogs.count)")
                case .update(let dogs, _, let insertions, _): report("list update \(dogs.map(\.name)) \(insertions)")
                case .error(let error): report("list error \(error)")
                }
            })
        tokens.append(
            owner.tags.observe(on: queue.queue) { change in
                switch change {
                case .initial(let tags): report("set initial \(tags.count)")
                case .update(let tags, _, _, _): report("set update \(Array(tags))")
                case .error(let error): report("set error \(error)")
                }
            })
        tokens.append(
            owner.scores.observe(on: queue.queue) { change in
                switch change {
                case .initial(let scores): report("map initial \(scores.count)")
                case .update(let scores, _, _, _): report("map update \(scores["a"] ?? -1)")
                case .error(let error): report("map error \(error)")
                }
            })
        tokens.append(
            owner.observe(keyPaths: ["name"], on: queue.queue) { change in
                switch change {
                case .change(let owner, let properties): report("object \(owner.name) \(properties.map(\.name))")
                case .deleted: report("object deleted")
                case .error(let error): report("object error \(error)")
                }
            })
        var iterator = deliveries.makeAsyncIterator()
        var initial: [QueueDelivery] = []
        for _ in 0..<4 { initial.append(await iterator.next()!) }
        #expect(initial.allSatisfy { $0.onQueue })
        #expect(
            Set(initial.map(\.what)) == ["results initial 0", "list initial 0", "set initial 0", "map initial 0"])
        try await realm.asyncWrite {
            owner.name = "Bea"
            owner.dogs.append(QueueDog(value: ["name": "Rex"]))
            owner.tags.insert("good")
            owner.scores["a"] = 7
        }
        var updates: [QueueDelivery] = []
        for _ in 0..<5 { updates.append(await iterator.next()!) }
        #expect(updates.allSatisfy { $0.onQueue })
        #expect(
            Set(updates.map(\.what)) == [
                "results update 1 [0]", "list update [\"Rex\"] [0]", "set update [\"good\"]", "map update 7",
                "object Bea [\"name\"]",
            ])
        for token in tokens { token.invalidate() }
    }

    /// With a nil queue the block is called as by `observe(keyPaths:_:)`: the initial call before it returns.
    @Test func aNilQueueObservesInPlace() throws {
        let realm = try Realm(configuration: configuration)
        var initial = false
        let token = realm.objects(QueueDog.self).observe(on: nil) { change in
            if case .initial = change { initial = true }
        }
        #expect(initial)
        token.invalidate()
    }

    /// A token invalidated before the queue started the observation: the block is never called.
    @Test(.timeLimit(.minutes(1))) func aTokenInvalidatedBeforeTheQueueStartsStopsTheObservation() async throws {
        let realm = try Realm(configuration: configuration)
        let queue = MarkedQueue("held")
        let calls = QueueLocal<Int>()
        let release = DispatchSemaphore(value: 0)
        queue.queue.async { release.wait() }  // holds the queue until the token is invalidated
        let token = realm.objects(QueueDog.self).observe(on: queue.queue) { _ in calls.value = (calls.value ?? 0) + 1 }
        token.invalidate()
        release.signal()
        try realm.write { realm.add(QueueDog()) }
        // Blocks of a serial queue run in order: by this one, the observation's block has run (and not started).
        let count = try await queue.run { calls.value ?? 0 }
        #expect(count == 0)
    }
}

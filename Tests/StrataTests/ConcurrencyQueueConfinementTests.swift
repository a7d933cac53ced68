import Dispatch
import Foundation
import Strata
import Testing

final class QueueDog: Object {
    @Persisted var name = ""
    @Persisted var age = 0
}

final class QueueOwner: Object {
    @Persisted var name = ""
    @Persisted var dogs: List<QueueDog>
    @Persisted var tags: MutableSet<String>
    @Persisted var scores: Map<String, Int>
}

/// A serial queue that its blocks can recognise (`isCurrent`), without `dispatchPrecondition`'s trap.
final class MarkedQueue: Sendable {
    let queue: DispatchQueue
    private static let key = DispatchSpecificKey<String>()
    private let label: String

    init(_ label: String) {
        self.label = label
        queue = DispatchQueue(label: label)
        queue.setSpecific(key: Self.key, value: label)
    }

    var isCurrent: Bool { DispatchQueue.getSpecific(key: Self.key) == label }

    /// Runs `body` on the queue and returns what it returned.
    func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result { try body() }) }
        }
    }
}

/// Something kept between blocks of one queue (a Realm, a token); only that queue touches it.
final class QueueLocal<Value>: @unchecked Sendable {
    var value: Value?
}

/// What an observation delivered, and whether it ran on the queue it was meant for.
struct QueueDelivery: Sendable, Equatable {
    let onQueue: Bool
    let what: String
}

@Suite("Concurrency: Realms confined to a DispatchQueue")
struct ConcurrencyQueueConfinementTests {
    let configuration = Realm.Configuration(
        inMemoryIdentifier: "queue-\(UUID())", objectTypes: [QueueDog.self, QueueOwner.self])

    /// `Realm(configuration:queue:)` on its queue: one instance per queue (as the SDK caches per queue), another
    /// for another queue; called off the queue it throws `wrongThread` instead of trapping.
    @Test func aQueueHasOneRealmPerFileAndOpeningOffTheQueueThrows() async throws {
        let keep = try Realm(configuration: configuration)  // keeps the in-memory file alive
        let first = MarkedQueue("first")
        let second = MarkedQueue("second")
        let configuration = configuration
        let realms = QueueLocal<Realm>()
        let same = try await first.run {
            let realm = try Realm(configuration: configuration, queue: first.queue)
            realms.value = realm
            return try Realm(configuration: configuration, queue: first.queue) === realm
        }
        #expect(same)
        let other = try await second.run {
            let realm = try Realm(configuration: configuration, queue: second.queue)
            return ObjectIdentifier(realm)
        }
        let firstRealm = try await first.run { ObjectIdentifier(realms.value!) }
        #expect(other != firstRealm)
        #expect(throws: Realm.Error.wrongThread) { try Realm(configuration: configuration, queue: first.queue) }
        let inAnotherBlock = try await second.run {
            do {
                _ = try Realm(configuration: configuration, queue: first.queue)
                return false
            } catch Realm.Error.wrongThread {
                return true
            }
        }
        #expect(inAnotherBlock)
        withExtendedLifetime(keep) {}
    }

    /// A queue-confined Realm used in another queue's block (or outside any) throws `wrongThread` where the call
    /// can throw; on its own queue it writes and reads, from any of the queue's blocks.
    @Test func aQueueRealmUsedOffItsQueueThrowsWrongThread() async throws {
        let keep = try Realm(configuration: configuration)
        let owner = MarkedQueue("owner")
        let intruder = MarkedQueue("intruder")
        let configuration = configuration
        let realm = QueueLocal<Realm>()
        try await owner.run {
            realm.value = try Realm(configuration: configuration, queue: owner.queue)
            try realm.value!.write { realm.value!.add(QueueDog(value: ["name": "Rex"])) }
        }
        let elsewhere = try await intruder.run {
            do {
                try realm.value!.write { realm.value!.add(QueueDog()) }
                return "wrote"
            } catch let error as Realm.Error {
                return "\(error == .wrongThread)"
            }
        }
        #expect(elsewhere == "true")
        let count = try await owner.run { realm.value!.objects(QueueDog.self).count }
        #expect(count == 1)
        try await owner.run { realm.value = nil }
        withExtendedLifetime(keep) {}
    }

    /// Observers of a queue-confined Realm (its collections' and the Realm's own) are delivered on its queue
    /// after another Realm's commit, with the Realm refreshed there to the committed version.
    @Test(.timeLimit(.minutes(1))) func aQueueRealmsObserversAreDeliveredOnItsQueue() async throws {
        let writer = try Realm(configuration: configuration)
        let queue = MarkedQueue("observer")
        let configuration = configuration
        let (deliveries, sink) = AsyncStream.makeStream(of: QueueDelivery.self)
        let tokens = QueueLocal<[NotificationToken]>()
        try await queue.run {
            let realm = try Realm(configuration: configuration, queue: queue.queue)
            let dogs = realm.objects(QueueDog.self)
            tokens.value = [
                dogs.observe { change in
                    if case .update(let dogs, _, let insertions, _) = change {
                        sink.yield(QueueDelivery(onQueue: queue.isCurrent, what: "dogs \(dogs.count) \(insertions)"))
                    }
                },
                realm.observe { _, realm in
                    let count = realm.objects(QueueDog.self).count
                    sink.yield(QueueDelivery(onQueue: queue.isCurrent, what: "realm \(count)"))
                },
            ]
        }
        try await writer.asyncWrite { writer.add(QueueDog(value: ["name": "Rex"])) }
        var iterator = deliveries.makeAsyncIterator()
        let first = await iterator.next()
        let second = await iterator.next()
        #expect(first == QueueDelivery(onQueue: true, what: "dogs 1 [0]"))
        #expect(second == QueueDelivery(onQueue: true, what: "realm 1"))
        try await queue.run { tokens.value = nil }
    }
}

@Suite("Concurrency: thawing in a queue's block")
struct ConcurrencyQueueThawTests {
    /// A frozen object thawed in a block of a queue that has a Realm of the file open becomes live in that
    /// Realm (not in a Realm of whichever worker thread runs the block, which the next block may not run on).
    @Test func aFrozenObjectThawsIntoTheQueuesRealm() async throws {
        let configuration = Realm.Configuration(
            inMemoryIdentifier: "queue-thaw-\(UUID())", objectTypes: [QueueDog.self, QueueOwner.self])
        let realm = try Realm(configuration: configuration)
        let rex = try realm.write { realm.create(QueueDog.self, value: ["name": "Rex"]) }
        let frozen = Frozen(rex)
        let queue = MarkedQueue("thaw")
        let thawedHere = try await queue.run { () -> Bool in
            let queueRealm = try Realm(configuration: configuration, queue: queue.queue)
            let live = frozen.value.thaw()
            return live?.realm === queueRealm && live?.name == "Rex"
        }
        #expect(thawedHere)
    }
}

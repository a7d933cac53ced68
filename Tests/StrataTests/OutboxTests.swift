import Foundation
import StrataStorage
import Testing

@testable import Strata

final class SensorReading: AsymmetricObject {
    @Persisted var value = 0
    @Persisted var label = ""
    @Persisted var spot: ReadingSpot?
    @Persisted var tags: List<String>
    @Persisted var extra: AnyRealmValue
}

final class ReadingSpot: EmbeddedObject {
    @Persisted var name = ""
    @Persisted var samples: List<Int>
}

final class LinkingReading: AsymmetricObject {
    @Persisted var owner: Person?
}

@Suite("Asymmetric outbox")
struct OutboxTests {
    /// Opens the file, creates readings `values` in one write, and returns the outbox (Realms are confined to
    /// a thread, so each use opens its own in a synchronous function).
    @discardableResult
    private func create(_ values: [Int], in configuration: Realm.Configuration) throws -> Outbox<SensorReading> {
        let realm = try Realm(configuration: configuration)
        try realm.write {
            for value in values {
                realm.create(
                    SensorReading.self,
                    value: [
                        "value": value, "label": "r\(value)", "spot": ["name": "s\(value)", "samples": [value, 1]],
                        "tags": ["t\(value)"], "extra": AnyRealmValue.fromArray([.int(value), .string("x")]),
                    ])
            }
        }
        return realm.outbox(SensorReading.self)
    }

    private func stored(_ configuration: Realm.Configuration) throws -> Int {
        let store = try Store.open(path: configuration.fileURL!.path)
        return try store.read().tree(named: "o:SensorReading")?.count ?? 0
    }

    private func take(_ count: Int, from outbox: Outbox<SensorReading>, acknowledging: Bool = false) async throws
        -> [OutboxDelivery<SensorReading>]
    {
        var taken: [OutboxDelivery<SensorReading>] = []
        for try await delivery in outbox {
            if acknowledging { try await delivery.acknowledge() }
            taken.append(delivery)
            if taken.count == count { break }
        }
        return taken
    }

    @Test func deliversInCommitOrderOnceAndRemovesOnAcknowledgement() async throws {
        let scratch = try Scratch()
        let configuration = scratch.configuration()
        try create([1, 2, 3], in: configuration)
        let outbox = try create([4, 5], in: configuration)
        let deliveries = try await take(5, from: outbox)
        #expect(deliveries.map(\.object.value) == [1, 2, 3, 4, 5])
        #expect(deliveries.map(\.sequenceNumber) == deliveries.map(\.sequenceNumber).sorted())
        // Each delivery is a complete, self-contained copy.
        let third = deliveries[2].object
        #expect(third.realm == nil)
        #expect(third.label == "r3" && third.spot?.name == "s3" && Array(third.spot?.samples ?? List()) == [3, 1])
        #expect(Array(third.tags) == ["t3"])
        #expect(third.extra.listValue.map { Array($0) } == [.int(3), .string("x")])
        #expect(try stored(configuration) == 5)
        try await deliveries[0].acknowledge()
        try await deliveries[0].acknowledge()
        try await OutboxDelivery.acknowledge(Array(deliveries[1...]))
        #expect(try stored(configuration) == 0)
        // Nested trees (the embedded spot, the lists, the mixed list) went with the objects.
        let store = try Store.open(path: configuration.fileURL!.path)
        let snapshot = try store.read()
        for name in try snapshot.treeNames() where name != "$schema" {
            #expect(try snapshot.tree(named: name)?.count == 0, "\(name) is not empty")
        }
    }

    /// Acknowledging in a task cancelled before the write starts throws `CancellationError` and removes nothing;
    /// the delivery can be acknowledged again.
    @Test func acknowledgingInACancelledTaskRemovesNothing() async throws {
        let scratch = try Scratch()
        let configuration = scratch.configuration()
        let outbox = try create([7], in: configuration)
        let delivery = try #require(try await take(1, from: outbox).first)
        let cancelled = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await delivery.acknowledge()
        }
        await #expect(throws: CancellationError.self) { try await cancelled.value }
        #expect(try stored(configuration) == 1)
        try await delivery.acknowledge()
        #expect(try stored(configuration) == 0)
    }

    @Test func unacknowledgedObjectsAreDeliveredAgainToTheNextConsumer() async throws {
        let scratch = try Scratch()
        let configuration = scratch.configuration()
        let outbox = try create([10, 20, 30], in: configuration)
        let first = try await take(2, from: outbox)
        #expect(first.map(\.object.value) == [10, 20])
        try await first[0].acknowledge()
        // The first consumer ended without acknowledging 20: the next one receives it again, then 30.
        let second = try await take(2, from: outbox)
        #expect(second.map(\.object.value) == [20, 30])
        #expect(second[0].sequenceNumber == first[1].sequenceNumber)
    }

    @Test func concurrentConsumersShareTheWork() async throws {
        let scratch = try Scratch()
        let configuration = scratch.configuration()
        let outbox = try create(Array(0..<40), in: configuration)
        // Each consumer acknowledges what it handled before asking for more, as a service would.
        async let a = take(20, from: outbox, acknowledging: true)
        async let b = take(20, from: outbox, acknowledging: true)
        let (left, right) = try await (a, b)
        let values = (left + right).map(\.object.value)
        #expect(values.sorted() == Array(0..<40))
        #expect(left.map(\.object.value) == left.map(\.object.value).sorted())
        #expect(try stored(configuration) == 0)
    }

    @Test func aWaitingConsumerReceivesLaterCommits() async throws {
        let scratch = try Scratch()
        let configuration = scratch.configuration()
        let outbox = try create([], in: configuration)
        let consumer = Task { try await take(3, from: outbox).map(\.object.value) }
        try create([7], in: configuration)
        try create([8, 9], in: configuration)
        #expect(try await consumer.value == [7, 8, 9])
    }

    @Test func cancellingTheConsumerEndsTheSequence() async throws {
        let scratch = try Scratch()
        let configuration = scratch.configuration()
        let outbox = try create([], in: configuration)
        let consumer = Task { try await take(1, from: outbox).count }
        consumer.cancel()
        #expect(try await consumer.value == 0)
    }

    @Test func asymmetricObjectsCannotBeQueriedDeletedOrLinkToObjects() throws {
        let scratch = try Scratch()
        #expect(throws: Realm.Error.self) {
            _ = try Realm(configuration: scratch.configuration([LinkingReading.self]))
        }
        let realm = try Realm(configuration: scratch.configuration([SensorReading.self]))
        #expect(realm.schema[className: "SensorReading"]?.isAsymmetric == true)
        #expect(throws: Realm.Error.self) {
            try realm.write {
                realm.create(SensorReading.self, value: ["extra": AnyRealmValue.object(Person(value: ["id": 1]))])
            }
        }
        #expect(throws: Realm.Error.self) {
            try realm.write { realm.delete(SensorReading()) }
        }
        #expect(throws: Realm.Error.self) {
            try realm.write { realm.create(SensorReading.self, value: ["nope": 1]) }
        }
        #expect(try stored(scratch.configuration()) == 0)
    }
}

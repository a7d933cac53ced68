import Foundation
@_spi(StrataSync) import Strata
import Testing

@_spi(StrataSync) @testable import StrataSync

/// `MutableSet` properties through the sync client against a real PostgreSQL: an observed-remove set in which an
/// add wins over a concurrent remove (the remove takes away only the adds its replica had seen).
@Suite struct SyncClientSetTests {
    private static let classes: [ObjectBase.Type] = [ClientDog.self, ClientPerson.self, ClientBag.self]

    /// Runs `body` with `count` replicas of this suite's classes on a fresh PostgreSQL schema.
    private func withReplicas(
        _ count: Int, _ body: ([ClientReplica], TestDatabase) async throws -> Void
    ) async throws {
        try await withCollectionReplicas(count, classes: Self.classes, body)
    }

    @Test func aSetEditIsQueuedWithTheTagsOfItsAddsAndTheTagsItsRemovesSaw() async throws {
        try await withReplicas(1) { replicas, _ in
            let a = replicas[0]
            try a.write { realm in realm.create(ClientBag.self, value: ["id": 1, "colors": ["red"]]) }
            try a.write { realm in
                let bag = try bag(realm)
                bag.colors.remove("red")
                bag.colors.insert("blue")
            }
            let entries = try Realm(configuration: a.configuration).syncQueue()
            guard case .set(let added, let removed)? = entries.first?.changes.first?.collections["colors"],
                case .set(let addedLater, let removedLater)? = entries.last?.changes.first?.collections["colors"]
            else {
                Issue.record("no set changes queued: \(entries)")
                return
            }
            #expect(added.map(\.value) == [.string("red")] && removed.isEmpty)
            // The remove names the tag of the add it saw; the new add has a tag of its own, later.
            #expect(removedLater == [CapturedSetElement(value: .string("red"), tags: added[0].tags)])
            #expect(addedLater.map(\.value) == [.string("blue")])
            let first = try #require(HybridTimestamp(added[0].tags[0]))
            let second = try #require(HybridTimestamp(addedLater[0].tags[0]))
            #expect(first < second)
        }
    }

    @Test func anAddWinsOverAConcurrentRemoveOfTheSameValue() async throws {
        try await withReplicas(3) { replicas, database in
            let (a, b, c) = (replicas[0], replicas[1], replicas[2])
            try a.write { realm in realm.create(ClientBag.self, value: ["id": 1, "colors": ["red", "green"]]) }
            try await a.sync.syncOnce()
            for replica in [b, c] { try await replica.sync.downloadPending() }
            // Concurrently: a removes red and green; b adds red again (a new add a has not seen) and adds blue.
            // b's clock is even earlier than a's: add-wins does not depend on time.
            a.wall.withLock { $0 += 20 }
            b.wall.withLock { $0 += 10 }
            try a.write { realm in
                let bag = try bag(realm)
                bag.colors.remove("red")
                bag.colors.remove("green")
            }
            try b.write { realm in try bag(realm).colors.remove("red") }
            try b.write { realm in
                let bag = try bag(realm)
                bag.colors.insert("red")
                bag.colors.insert("blue")
            }
            try await a.sync.uploadPending()
            try await b.sync.uploadPending()
            for replica in replicas { try await replica.sync.downloadPending() }
            for replica in replicas { #expect(try replica.bagColors(1) == ["blue", "red"], "replica \(replica.id)") }
            let rows = try await database.rows("SELECT colors::text FROM \"ClientBag\" WHERE id = 1")
            #expect(rows.count == 1)
            let server = try JSONDecoder().decode([String].self, from: Data((rows.first?.first ?? "[]")!.utf8))
            #expect(Set(server) == ["red", "blue"])
        }
    }

    @Test func aRemoveThatSawEveryAddRemovesTheValueEverywhere() async throws {
        try await withReplicas(2) { replicas, _ in
            let (a, b) = (replicas[0], replicas[1])
            try a.write { realm in realm.create(ClientBag.self, value: ["id": 1, "colors": ["red"]]) }
            try await a.sync.syncOnce()
            try await b.sync.syncOnce()
            // b removed red and added it again (a new tag), and a learned of that before removing: its remove takes
            // the tag it saw.
            try b.write { realm in try bag(realm).colors.remove("red") }
            try b.write { realm in try bag(realm).colors.insert("red") }
            try await b.sync.syncOnce()
            try await a.sync.downloadPending()
            try a.write { realm in try bag(realm).colors.remove("red") }
            try await a.sync.syncOnce()
            try await b.sync.downloadPending()
            #expect(try a.bagColors(1) == [])
            #expect(try b.bagColors(1) == [])
        }
    }
}

import Foundation
@_spi(StrataSync) import Strata
import Testing

@_spi(StrataSync) @testable import StrataSync

/// `List` properties through the sync client against a real PostgreSQL: a replicated growable array, so
/// concurrent inserts at one place are both kept (the later first), and a removal leaves a tombstone that later
/// inserts after it still find.
@Suite struct SyncClientListTests {
    private static let classes: [ObjectBase.Type] = [ClientDog.self, ClientPerson.self, ClientBag.self]

    /// Runs `body` with `count` replicas of this suite's classes on a fresh PostgreSQL schema.
    private func withReplicas(
        _ count: Int, _ body: ([ClientReplica], TestDatabase) async throws -> Void
    ) async throws {
        try await withCollectionReplicas(count, classes: Self.classes, body)
    }

    @Test func aListEditIsQueuedAsRemovalsAndInsertsByElementID() async throws {
        try await withReplicas(1) { replicas, _ in
            let a = replicas[0]
            try a.write { realm in realm.create(ClientBag.self, value: ["id": 1, "tricks": ["sit", "roll"]]) }
            try a.write { realm in
                let bag = try bag(realm)
                bag.tricks.insert("paw", at: 1)
                bag.tricks.remove(at: 0)
            }
            let entries = try Realm(configuration: a.configuration).syncQueue()
            let first = try #require(entries.first)
            let second = try #require(entries.last)
            let t1 = first.timestamp
            let t2 = second.timestamp
            #expect(
                first.changes.first?.collections["tricks"]
                    == .list([
                        .clear(at: t1), .insert(id: "\(t1)#1", after: nil, value: .string("sit")),
                        .insert(id: "\(t1)#2", after: "\(t1)#1", value: .string("roll")),
                    ]))
            #expect(
                second.changes.first?.collections["tricks"]
                    == .list([.remove(id: "\(t1)#1"), .insert(id: "\(t2)#1", after: nil, value: .string("paw"))]))
        }
    }

    @Test func concurrentInsertsAtOnePlaceAreBothKeptTheLaterFirst() async throws {
        try await withReplicas(3) { replicas, database in
            let (a, b, c) = (replicas[0], replicas[1], replicas[2])
            try a.write { realm in realm.create(ClientBag.self, value: ["id": 1, "tricks": ["x", "z"]]) }
            try await a.sync.syncOnce()
            for replica in [b, c] { try await replica.sync.downloadPending() }
            // Both insert right after x without having seen the other's insert; b's is later.
            a.wall.withLock { $0 += 10 }
            b.wall.withLock { $0 += 20 }
            try a.write { realm in try bag(realm).tricks.insert("a", at: 1) }
            try b.write { realm in try bag(realm).tricks.insert("b", at: 1) }
            try await b.sync.uploadPending()
            try await a.sync.uploadPending()
            for replica in replicas { try await replica.sync.downloadPending() }
            for replica in replicas {
                #expect(try replica.bagTricks(1) == ["x", "b", "a", "z"], "replica \(replica.id)")
            }
            let rows = try await database.rows("SELECT tricks::text FROM \"ClientBag\" WHERE id = 1")
            #expect(rows == [[#"["x", "b", "a", "z"]"#]])
        }
    }

    @Test func anInsertAfterAConcurrentlyRemovedElementKeepsItsPlace() async throws {
        try await withReplicas(2) { replicas, _ in
            let (a, b) = (replicas[0], replicas[1])
            try a.write { realm in realm.create(ClientBag.self, value: ["id": 1, "tricks": ["w", "x", "y"]]) }
            try await a.sync.syncOnce()
            try await b.sync.downloadPending()
            // a removes x; b, not knowing, inserts after x and moves w to the end (a removal and an insert).
            try a.write { realm in try bag(realm).tricks.remove(at: 1) }
            try b.write { realm in
                let bag = try bag(realm)
                bag.tricks.insert("new", at: 2)
                bag.tricks.move(from: 0, to: 3)
            }
            try await a.sync.uploadPending()
            // b downloads a's removal with its own edits still pending: they keep their places.
            try await b.sync.downloadPending()
            #expect(try b.bagTricks(1) == ["new", "y", "w"])
            try await b.sync.uploadPending()
            try await a.sync.downloadPending()
            #expect(try a.bagTricks(1) == ["new", "y", "w"])
        }
    }
}

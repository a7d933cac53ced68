import Foundation
@_spi(StrataSync) import Strata
import Testing

@_spi(StrataSync) @testable import StrataSync

/// `Map` properties through the sync client against a real PostgreSQL: each key is a last-writer-wins register
/// of its own, so concurrent edits of different keys of one map all survive, and of one key the later wins.
@Suite struct SyncClientMapTests {
    private static let classes: [ObjectBase.Type] = [ClientDog.self, ClientPerson.self, ClientBag.self]

    /// Runs `body` with `count` replicas of this suite's classes on a fresh PostgreSQL schema.
    private func withReplicas(
        _ count: Int, _ body: ([ClientReplica], TestDatabase) async throws -> Void
    ) async throws {
        try await withCollectionReplicas(count, classes: Self.classes, body)
    }

    @Test func aMapEditIsQueuedAsPerKeySetsAndRemovals() async throws {
        try await withReplicas(1) { replicas, _ in
            let a = replicas[0]
            try a.write { realm in
                realm.create(ClientBag.self, value: ["id": 1, "scores": ["speed": 1, "size": 2]])
            }
            try a.write { realm in
                let bag = try bag(realm)
                bag.scores["speed"] = 5
                bag.scores.removeObject(for: "size")
                bag.scores["age"] = 3
            }
            let realm = try Realm(configuration: a.configuration)
            let entries = try realm.syncQueue()
            #expect(entries.count == 2)
            #expect(
                entries.first?.changes.first?.collections["scores"]
                    == .map(set: ["speed": .int(1), "size": .int(2)], removed: []))
            #expect(
                entries.last?.changes.first?.collections["scores"]
                    == .map(set: ["speed": .int(5), "age": .int(3)], removed: ["size"]))
            #expect(entries.last?.changes.first?.values.isEmpty == true)
        }
    }

    @Test func concurrentEditsOfOneMapConvergeKeyByKey() async throws {
        try await withReplicas(3) { replicas, database in
            let (a, b, c) = (replicas[0], replicas[1], replicas[2])
            try a.write { realm in
                realm.create(ClientPerson.self, value: ["name": "Ann", "city": "Oslo"])
                realm.create(ClientBag.self, value: ["id": 1, "scores": ["speed": 1, "size": 2]])
            }
            try await a.sync.syncOnce()
            for replica in [b, c] { try await replica.sync.downloadPending() }
            #expect(try b.bagMaps(1) == "size=2 speed=1 |")
            // Concurrently: a changes speed, removes size and links a friend; b changes speed later and adds age.
            a.wall.withLock { $0 += 10 }
            b.wall.withLock { $0 += 20 }
            try a.write { realm in
                let bag = try bag(realm)
                bag.scores["speed"] = 5
                bag.scores.removeObject(for: "size")
                bag.friends["best"] = realm.object(ofType: ClientPerson.self, forPrimaryKey: "Ann")
            }
            try b.write { realm in
                let bag = try bag(realm)
                bag.scores["speed"] = 7
                bag.scores["age"] = 3
            }
            // b uploads first: a's older speed loses on the server; its removal and its friend (nobody else
            // wrote those keys) win.
            try await b.sync.uploadPending()
            try await a.sync.uploadPending()
            for replica in replicas { try await replica.sync.downloadPending() }
            let expected = "age=3 speed=7 | best=Ann"
            for replica in replicas { #expect(try replica.bagMaps(1) == expected, "replica \(replica.id)") }
            let rows = try await database.rows("SELECT scores::text FROM \"ClientBag\" WHERE id = 1")
            #expect(rows == [[#"{"age": 3, "speed": 7}"#]])
        }
    }

    @Test func aPendingLocalKeyWriteLaterThanADownloadedOneKeepsItsValue() async throws {
        try await withReplicas(2) { replicas, _ in
            let (a, b) = (replicas[0], replicas[1])
            try a.write { realm in realm.create(ClientBag.self, value: ["id": 1, "scores": ["speed": 1]]) }
            try await a.sync.syncOnce()
            try await b.sync.downloadPending()
            b.wall.withLock { $0 += 10 }
            a.wall.withLock { $0 += 20 }
            try b.write { realm in try bag(realm).scores["speed"] = 2 }
            try a.write { realm in try bag(realm).scores["speed"] = 3 }
            try await b.sync.uploadPending()
            // a downloads b's older write before uploading its own: its own later value stays.
            try await a.sync.downloadPending()
            #expect(try a.bagMaps(1) == "speed=3 |")
            try await a.sync.uploadPending()
            try await b.sync.downloadPending()
            #expect(try b.bagMaps(1) == "speed=3 |")
        }
    }

    @Test func aReCreatedObjectsMapLosesTheKeysOfItsPreviousLife() async throws {
        try await withReplicas(2) { replicas, _ in
            let (a, b) = (replicas[0], replicas[1])
            try a.write { realm in realm.create(ClientBag.self, value: ["id": 1, "scores": ["old": 1]]) }
            try await a.sync.syncOnce()
            try await b.sync.downloadPending()
            try b.write { realm in realm.delete(try bag(realm)) }
            try await b.sync.syncOnce()
            try await a.sync.downloadPending()
            #expect(try a.bagMaps(1) == nil)
            try a.write { realm in realm.create(ClientBag.self, value: ["id": 1, "scores": ["new": 2]]) }
            try await a.sync.syncOnce()
            try await b.sync.downloadPending()
            #expect(try a.bagMaps(1) == "new=2 |")
            #expect(try b.bagMaps(1) == "new=2 |")
        }
    }
}

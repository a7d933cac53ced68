import Foundation
@_spi(StrataSync) import Strata
import Testing

@_spi(StrataSync) @testable import StrataSync

/// The classic offline-edit divergence cases of sync systems, in the orders of reconnection that SyncClientTests
/// and the collection suites do not take: the device whose edit is later reconnects last and uploads before it
/// downloads the earlier edit (which the log holds before its own); a delete reconnecting after the edit; two
/// devices writing one map key and one set element offline. (Already covered elsewhere: two devices editing one
/// object, the later one reconnecting first, in SyncClientTests; delete against edit, the editor reconnecting
/// first, in SyncClientTests; concurrent list inserts at one index in SyncClientListTests.)
@Suite struct OfflineEditTests {
    private static let classes: [ObjectBase.Type] = [ClientDog.self, ClientPerson.self, ClientBag.self]

    @Test func twoDevicesEditOneObjectOfflineAndTheLaterReconnectsLast() async throws {
        try await withCollectionReplicas(3, classes: Self.classes) { replicas, database in
            let (a, b, c) = (replicas[0], replicas[1], replicas[2])
            try a.write { realm in realm.create(ClientDog.self, value: ["id": 1, "name": "Rex", "age": 3]) }
            try await a.sync.syncOnce()
            for replica in [b, c] { try await replica.sync.downloadPending() }
            // Both offline: a renames Rex and sets his age; b, later, sets his age only.
            a.wall.withLock { $0 += 10 }
            b.wall.withLock { $0 += 20 }
            try a.write { realm in
                let rex = try #require(realm.object(ofType: ClientDog.self, forPrimaryKey: 1))
                rex.name = "Max"
                rex.age = 4
            }
            try b.write { realm in try #require(realm.object(ofType: ClientDog.self, forPrimaryKey: 1)).age = 5 }
            // a reconnects first; b reconnects after it: b uploads its later age, then downloads a's entry, which
            // the log holds before b's own. b must keep its age: it is the later write.
            try await a.sync.syncOnce()
            try await b.sync.syncOnce()
            for replica in replicas { try await replica.sync.syncOnce() }
            for replica in replicas { #expect(try replica.dogs() == ["1 Max 5 -"], "replica \(replica.id)") }
            let rows = try await database.rows(#"SELECT name, age::text FROM "ClientDog" WHERE id = 1"#)
            #expect(rows == [["Max", "5"]])
        }
    }

    @Test func aDeleteReconnectingAfterAnEditStillWins() async throws {
        try await withCollectionReplicas(2, classes: Self.classes) { replicas, _ in
            let (a, b) = (replicas[0], replicas[1])
            try a.write { realm in realm.create(ClientDog.self, value: ["id": 1, "name": "Rex"]) }
            try await a.sync.syncOnce()
            try await b.sync.downloadPending()
            // b edits offline (later by its clock) and reconnects first; a's delete arrives after the edit.
            b.wall.withLock { $0 += 50 }
            try a.write { realm in realm.delete(try #require(realm.object(ofType: ClientDog.self, forPrimaryKey: 1))) }
            try b.write { realm in try #require(realm.object(ofType: ClientDog.self, forPrimaryKey: 1)).name = "Max" }
            try await b.sync.syncOnce()
            try await a.sync.syncOnce()
            try await b.sync.syncOnce()
            #expect(try a.dogs() == [])
            #expect(try b.dogs() == [])
        }
    }

    @Test func twoDevicesWriteOneMapKeyAndOneSetElementOffline() async throws {
        try await withCollectionReplicas(2, classes: Self.classes) { replicas, _ in
            let (a, b) = (replicas[0], replicas[1])
            try a.write { realm in
                realm.create(ClientBag.self, value: ["id": 1, "scores": ["speed": 1], "colors": ["red"]])
            }
            try await a.sync.syncOnce()
            try await b.sync.downloadPending()
            // Offline: a sets speed (earlier) and removes red; b sets speed later and adds blue.
            a.wall.withLock { $0 += 10 }
            b.wall.withLock { $0 += 20 }
            try a.write { realm in
                let bag = try bag(realm)
                bag.scores["speed"] = 2
                bag.colors.remove("red")
            }
            try b.write { realm in
                let bag = try bag(realm)
                bag.scores["speed"] = 3
                bag.colors.insert("blue")
            }
            try await a.sync.syncOnce()
            try await b.sync.syncOnce()
            try await a.sync.syncOnce()
            for replica in replicas {
                #expect(try replica.bagMaps(1) == "speed=3 |", "replica \(replica.id)")
                #expect(try replica.bagColors(1) == ["blue"], "replica \(replica.id)")
            }
        }
    }

    @Test func aDeleteOlderThanAConcurrentCreateLeavesTheObjectEverywhere() async throws {
        try await withCollectionReplicas(3, classes: Self.classes) { replicas, database in
            let (a, b, c) = (replicas[0], replicas[1], replicas[2])
            try a.write { realm in realm.create(ClientDog.self, value: ["id": 1, "name": "Rex"]) }
            try await a.sync.syncOnce()
            try await c.sync.downloadPending()
            // c deletes Rex; b, which never saw him, creates dog 1 later by its clock. b's create reaches the
            // server first: the later create keeps the object live, so c's older delete must delete it nowhere.
            c.wall.withLock { $0 += 10 }
            b.wall.withLock { $0 += 20 }
            try c.write { realm in realm.delete(try #require(realm.object(ofType: ClientDog.self, forPrimaryKey: 1))) }
            try b.write { realm in realm.create(ClientDog.self, value: ["id": 1, "name": "Max"]) }
            try await b.sync.uploadPending()
            try await c.sync.uploadPending()
            for replica in replicas { try await replica.sync.syncOnce() }
            for replica in replicas { #expect(try replica.dogs() == ["1 Max nil -"], "replica \(replica.id)") }
            let rows = try await database.rows(#"SELECT name, _strata_deleted::text FROM "ClientDog" WHERE id = 1"#)
            #expect(rows == [["Max", "false"]])
        }
    }

    @Test func aReCreatedObjectsSetStartsEmptyEverywhere() async throws {
        try await withCollectionReplicas(2, classes: Self.classes) { replicas, database in
            let (a, b) = (replicas[0], replicas[1])
            try a.write { realm in realm.create(ClientBag.self, value: ["id": 1, "colors": ["red"]]) }
            try await a.sync.syncOnce()
            try await b.sync.syncOnce()
            try b.write { realm in try bag(realm).colors.insert("green") }
            try await b.sync.syncOnce()
            try await a.sync.syncOnce()
            try a.write { realm in realm.delete(try bag(realm)) }
            try await a.sync.syncOnce()
            try await b.sync.syncOnce()
            // b saw the delete; its new bag 1 has only blue: red and green belonged to the previous one.
            try b.write { realm in realm.create(ClientBag.self, value: ["id": 1, "colors": ["blue"]]) }
            try await b.sync.syncOnce()
            try await a.sync.syncOnce()
            for replica in replicas { #expect(try replica.bagColors(1) == ["blue"], "replica \(replica.id)") }
            let rows = try await database.rows(#"SELECT colors::text FROM "ClientBag" WHERE id = 1"#)
            #expect(rows == [[#"["blue"]"#]])
        }
    }
    /// A deletes Rex; B, offline, renames him later by its clock than C's re-create, which comes after C saw the
    /// delete. B's write reaches the server while Rex is deleted (kept with its clock), then C's create revives
    /// him: the row holds B's name and C's age (and B's later map key and list insert beside C's). The log entry of
    /// the revive carries the whole row, so A (which deleted him), B (which applied the delete) and C (the
    /// creator) all end with it.
    @Test func aRevivedObjectKeepsTheLaterWritesMadeWhileItWasDeleted() async throws {
        try await withCollectionReplicas(3, classes: Self.classes) { replicas, database in
            let (a, b, c) = (replicas[0], replicas[1], replicas[2])
            try a.write { realm in
                realm.create(ClientBag.self, value: ["id": 1, "scores": ["speed": 1], "tricks": ["sit"]])
                realm.create(ClientDog.self, value: ["id": 1, "name": "Rex", "age": 3])
            }
            try await a.sync.syncOnce()
            for replica in [b, c] { try await replica.sync.downloadPending() }
            a.wall.withLock { $0 += 10 }
            try a.write { realm in
                realm.delete(try #require(realm.object(ofType: ClientDog.self, forPrimaryKey: 1)))
                realm.delete(try bag(realm))
            }
            try await a.sync.syncOnce()
            try await c.sync.downloadPending()
            // b, offline, writes later (by its clock) than c's re-create; it uploads while the objects are deleted.
            b.wall.withLock { $0 += 50 }
            try b.write { realm in
                try #require(realm.object(ofType: ClientDog.self, forPrimaryKey: 1)).name = "Max"
                let bag = try bag(realm)
                bag.scores["speed"] = 9
                bag.tricks.append("roll")
            }
            try await b.sync.uploadPending()
            c.wall.withLock { $0 += 20 }
            try c.write { realm in
                realm.create(ClientDog.self, value: ["id": 1, "name": "Fido", "age": 5])
                realm.create(ClientBag.self, value: ["id": 1, "scores": ["speed": 2, "jump": 4], "tricks": ["beg"]])
            }
            try await c.sync.syncOnce()
            for replica in [a, b, c] { try await replica.sync.syncOnce() }

            let rows = try await database.rows(
                #"SELECT name, age::text, _strata_deleted::text FROM "ClientDog" WHERE id = 1"#)
            #expect(rows == [["Max", "5", "false"]])
            let bags = try await database.rows(#"SELECT scores::text, tricks::text FROM "ClientBag" WHERE id = 1"#)
            #expect(bags == [[#"{"jump": 4, "speed": 9}"#, #"["beg", "roll"]"#]])
            for replica in replicas {
                #expect(try replica.dogs() == ["1 Max 5 -"], "replica \(replica.id)")
                #expect(try replica.bagMaps(1) == "jump=4 speed=9 |", "replica \(replica.id)")
                #expect(try replica.bagTricks(1) == ["beg", "roll"], "replica \(replica.id)")
            }
            // The revive's entry carries the whole row: what a replica that deleted the dog needs.
            let log = try await database.merge(Self.classes).pull(scope: "main", after: 0)
            let revive = try #require(log.last { $0.clientID == "c" }?.changes.first { $0.objectType == "ClientDog" })
            #expect(revive.isWholeState)
            guard case .value(let name, _)? = revive.properties["name"] else {
                Issue.record("the revive carries no name: \(revive)")
                return
            }
            #expect(name == .string("Max"))
        }
    }
    /// B writes Rex offline, later by its clock than C's re-create, and downloads A's delete and C's re-create
    /// before it uploads: the delete removes Rex here with B's pending writes, the revive's whole state brings him
    /// back and B's pending writes with him (the server will take them, being later), so B's own entry, which
    /// only moves its checkpoint, leaves B equal to the others.
    @Test func pendingWritesOfADeletedObjectComeBackWithItsRevive() async throws {
        try await withCollectionReplicas(3, classes: Self.classes) { replicas, database in
            let (a, b, c) = (replicas[0], replicas[1], replicas[2])
            try a.write { realm in
                realm.create(ClientBag.self, value: ["id": 1, "scores": ["speed": 1]])
                realm.create(ClientDog.self, value: ["id": 1, "name": "Rex", "age": 3])
            }
            try await a.sync.syncOnce()
            for replica in [b, c] { try await replica.sync.downloadPending() }
            b.wall.withLock { $0 += 50 }
            try b.write { realm in
                try #require(realm.object(ofType: ClientDog.self, forPrimaryKey: 1)).name = "Max"
                try bag(realm).scores["speed"] = 9
            }
            a.wall.withLock { $0 += 10 }
            try a.write { realm in
                realm.delete(try #require(realm.object(ofType: ClientDog.self, forPrimaryKey: 1)))
                realm.delete(try bag(realm))
            }
            try await a.sync.syncOnce()
            try await c.sync.downloadPending()
            c.wall.withLock { $0 += 20 }
            try c.write { realm in
                realm.create(ClientDog.self, value: ["id": 1, "name": "Fido", "age": 5])
                realm.create(ClientBag.self, value: ["id": 1, "scores": ["speed": 2, "jump": 4]])
            }
            try await c.sync.syncOnce()
            try await b.sync.downloadPending()
            #expect(try b.dogs() == ["1 Max 5 -"])
            #expect(try b.bagMaps(1) == "jump=4 speed=9 |")
            for replica in [b, a, c, b] { try await replica.sync.syncOnce() }
            let rows = try await database.rows(#"SELECT name, age::text FROM "ClientDog" WHERE id = 1"#)
            #expect(rows == [["Max", "5"]])
            for replica in replicas {
                #expect(try replica.dogs() == ["1 Max 5 -"], "replica \(replica.id)")
                #expect(try replica.bagMaps(1) == "jump=4 speed=9 |", "replica \(replica.id)")
            }
        }
    }
}

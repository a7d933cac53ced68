import Foundation
import PostgresNIO
@_spi(StrataSync) import Strata
import Synchronization
import Testing

@_spi(StrataSync) @testable import StrataSync

/// The sync client against a real PostgreSQL: replicas are separate Strata files in this process, each with its
/// own client; the tests decide when each one uploads and downloads (`uploadPending`, `downloadPending`), which
/// is how they make writes concurrent (made before either replica saw the other's).
@Suite struct SyncClientTests {
    private static let classes: [ObjectBase.Type] = [ClientDog.self, ClientPerson.self]

    /// Runs `body` with `count` replicas named a, b, c, … on a fresh PostgreSQL schema.
    private func withReplicas(
        _ count: Int, maximumChangesPerApply: Int = 10_000, _ body: ([ClientReplica], TestDatabase) async throws -> Void
    ) async throws {
        try await TestDatabase.with { database in
            let schema = try await database.migratedSchema(Self.classes)
            let directory = try ReplicaDirectory()
            let replicas = try ["a", "b", "c"].prefix(count).map {
                // b pulls in small batches: catching up takes several pulls.
                try ClientReplica(
                    $0, in: directory.url, database: database, schema: schema, batchSize: $0 == "b" ? 7 : 200,
                    maximumChangesPerApply: maximumChangesPerApply)
            }
            defer { for replica in replicas { replica.configuration.stopSyncCapture() } }
            try await body(replicas, database)
            withExtendedLifetime(directory) {}
        }
    }

    @Test func replicasConvergeAfterConcurrentEditsOfOneObjectPropertyByProperty() async throws {
        try await withReplicas(3) { replicas, _ in
            let (a, b, c) = (replicas[0], replicas[1], replicas[2])
            try a.write { realm in
                realm.create(ClientPerson.self, value: ["name": "Ann", "city": "Oslo"])
                realm.create(ClientDog.self, value: ["id": 1, "name": "Rex", "age": 3])
            }
            try await a.sync.syncOnce()
            for replica in [b, c] { try await replica.sync.downloadPending() }
            #expect(try b.dogs() == ["1 Rex 3 -"])
            // Concurrently (neither has seen the other's write): a renames Rex, b changes his age and owner later.
            a.wall.withLock { $0 += 10 }
            b.wall.withLock { $0 += 20 }
            try a.write { realm in
                let rex = try #require(realm.object(ofType: ClientDog.self, forPrimaryKey: 1))
                rex.name = "Max"
                rex.age = 4
            }
            try b.write { realm in
                let rex = try #require(realm.object(ofType: ClientDog.self, forPrimaryKey: 1))
                rex.age = 5
                rex.owner = realm.object(ofType: ClientPerson.self, forPrimaryKey: "Ann")
            }
            // b uploads first; a's older age loses on the server, its name (nobody else wrote it) wins.
            try await b.sync.uploadPending()
            try await a.sync.uploadPending()
            for replica in replicas { try await replica.sync.downloadPending() }
            let expected = ["1 Max 5 Ann"]
            for replica in replicas { #expect(try replica.dogs() == expected, "replica \(replica.id)") }
        }
    }

    @Test func aPendingLocalWriteLaterThanADownloadedOneKeepsItsValue() async throws {
        try await withReplicas(2) { replicas, _ in
            let (a, b) = (replicas[0], replicas[1])
            try a.write { realm in realm.create(ClientDog.self, value: ["id": 1, "name": "Rex", "age": 1]) }
            try await a.sync.syncOnce()
            try await b.sync.downloadPending()
            // b renames Rex first; a renames him later, and downloads b's rename before uploading its own.
            b.wall.withLock { $0 += 10 }
            a.wall.withLock { $0 += 20 }
            try b.write { realm in try #require(realm.object(ofType: ClientDog.self, forPrimaryKey: 1)).name = "Older" }
            try a.write { realm in try #require(realm.object(ofType: ClientDog.self, forPrimaryKey: 1)).name = "Newer" }
            try await b.sync.uploadPending()
            try await a.sync.downloadPending()
            #expect(try a.dogs() == ["1 Newer 1 -"])
            try await a.sync.uploadPending()
            try await b.sync.downloadPending()
            #expect(try b.dogs() == ["1 Newer 1 -"])
        }
    }

    @Test func aRunningClientUploadsAndAppliesWithoutBeingAsked() async throws {
        try await withReplicas(2) { replicas, _ in
            let (a, b) = (replicas[0], replicas[1])
            let running = [Task { await a.sync.run() }, Task { await b.sync.run() }]
            defer { for task in running { task.cancel() } }
            // Only a guard against a hang if delivery is broken (the test then fails on what it saw).
            let waiting = Task {
                let realm = try Realm(configuration: b.configuration)
                for await change in realm.objects(ClientDog.self).changes {
                    switch change {
                    case .initial(let dogs) where dogs.count == 1: return dogs[0].name
                    case .update(let dogs, _, _, _) where dogs.count == 1: return dogs[0].name
                    default: continue
                    }
                }
                return "cancelled"
            }
            let guardTask = Task {
                try? await Task.sleep(for: .seconds(60))
                waiting.cancel()
            }
            defer { guardTask.cancel() }
            try a.write { realm in realm.create(ClientDog.self, value: ["id": 1, "name": "Rex"]) }
            #expect(try await waiting.value == "Rex")
        }
    }

    /// A's wake-ups are all lost (``WakeUpsLostServer``): after `run()`'s first round, which brings B's first
    /// dog, only the fallback round (every 200 ms here) can bring B's second one, and it does.
    @Test func aRunningClientWhoseWakeUpsAreLostDownloadsInTheFallbackRound() async throws {
        try await TestDatabase.with { database in
            let schema = try await database.migratedSchema(Self.classes)
            let directory = try ReplicaDirectory()
            let b = try ClientReplica("b", in: directory.url, database: database, schema: schema)
            let configuration = Realm.Configuration(
                fileURL: directory.url.appendingPathComponent("a.strata"), objectTypes: Self.classes)
            let server = WakeUpsLostServer(
                base: PostgresSyncServer(schema: schema, client: database.client, logger: database.logger))
            let a = try SyncClient(
                configuration: configuration, schema: schema, server: server, scope: "main", clientID: "a",
                logger: database.logger)
            defer { for configuration in [configuration, b.configuration] { configuration.stopSyncCapture() } }
            #expect(await a.fallbackDownloadInterval == SyncClient.defaultFallbackDownloadInterval)
            await a.setFallbackDownloadInterval(.milliseconds(200))

            try b.write { realm in realm.create(ClientDog.self, value: ["id": 1, "name": "Rex"]) }
            try await b.sync.syncOnce()
            let running = Task { await a.run() }
            defer { running.cancel() }
            #expect(try await Self.dogNames(in: configuration, count: 1) == ["Rex"])  // the first round
            try b.write { realm in realm.create(ClientDog.self, value: ["id": 2, "name": "Fido"]) }
            try await b.sync.syncOnce()
            #expect(try await Self.dogNames(in: configuration, count: 2) == ["Fido", "Rex"])  // a fallback round
            withExtendedLifetime(directory) {}
        }
    }

    /// The names of the dogs in the file of `configuration` once it holds `count` of them (observed through the
    /// Realm's notifications; empty if that takes longer than two minutes, which only a broken build does).
    private static func dogNames(in configuration: Realm.Configuration, count: Int) async throws -> [String] {
        let waiting = Task {
            let realm = try Realm(configuration: configuration)
            for await change in realm.objects(ClientDog.self).changes {
                switch change {
                case .initial(let dogs) where dogs.count == count, .update(let dogs, _, _, _) where dogs.count == count:
                    return dogs.map(\.name).sorted()
                default: continue
                }
            }
            return []
        }
        let watchdog = Task {
            try? await Task.sleep(for: .seconds(120))
            waiting.cancel()
        }
        defer { watchdog.cancel() }
        return try await waiting.value
    }

    @Test func aDeleteOnOneReplicaWinsOverAnEditOnAnother() async throws {
        try await withReplicas(2) { replicas, _ in
            let (a, b) = (replicas[0], replicas[1])
            try a.write { realm in realm.create(ClientDog.self, value: ["id": 1, "name": "Rex"]) }
            try await a.sync.syncOnce()
            try await b.sync.downloadPending()
            // b's edit is later by its clock, but was made without seeing the delete: the delete wins.
            b.wall.withLock { $0 += 50 }
            try a.write { realm in realm.delete(try #require(realm.object(ofType: ClientDog.self, forPrimaryKey: 1))) }
            try b.write { realm in try #require(realm.object(ofType: ClientDog.self, forPrimaryKey: 1)).name = "Max" }
            try await b.sync.uploadPending()
            try await a.sync.uploadPending()
            for replica in replicas { try await replica.sync.downloadPending() }
            #expect(try a.dogs() == [])
            #expect(try b.dogs() == [])
        }
    }

    @Test func aCreateAfterADeleteBringsTheObjectBackEverywhere() async throws {
        try await withReplicas(2) { replicas, _ in
            let (a, b) = (replicas[0], replicas[1])
            try a.write { realm in realm.create(ClientDog.self, value: ["id": 1, "name": "Rex", "age": 3]) }
            try await a.sync.syncOnce()
            try await b.sync.downloadPending()
            try a.write { realm in realm.delete(try #require(realm.object(ofType: ClientDog.self, forPrimaryKey: 1))) }
            try await a.sync.syncOnce()
            try await b.sync.downloadPending()
            #expect(try b.dogs() == [])
            // b saw the delete; its new Rex comes after it.
            try b.write { realm in realm.create(ClientDog.self, value: ["id": 1, "name": "Rex II"]) }
            try await b.sync.syncOnce()
            try await a.sync.downloadPending()
            #expect(try a.dogs() == ["1 Rex II nil -"])
            #expect(try b.dogs() == ["1 Rex II nil -"])
        }
    }

    @Test func anOfflineReplicaCatchesUpAndItsOfflineWritesArrive() async throws {
        try await withReplicas(2) { replicas, database in
            let (a, b) = (replicas[0], replicas[1])
            // b is offline (it neither uploads nor downloads) while a makes 30 transactions.
            for id in 1...30 {
                try a.write { realm in realm.create(ClientDog.self, value: ["id": id, "name": "Dog \(id)"]) }
            }
            try b.write { realm in realm.create(ClientDog.self, value: ["id": 100, "name": "Offline"]) }
            #expect(try await a.sync.uploadPending() == 30)
            #expect(try a.queued() == 0)
            // b comes back: it catches up in small pulls (a checkpoint after each entry) and sends its write.
            try await b.sync.syncOnce()
            try await a.sync.downloadPending()
            #expect(try b.dogs().count == 31)
            #expect(try a.dogs() == b.dogs())
            let checkpoint = try Realm(configuration: b.configuration).syncCheckpoint(scope: "main")
            #expect(checkpoint == 31)
            let rows = try await database.rows(#"SELECT count(*)::text FROM "ClientDog" WHERE NOT _strata_deleted"#)
            #expect(rows == [["31"]])
        }
    }

    @Test func anUploadRetriedAfterALostAcknowledgementAppliesOnce() async throws {
        try await withReplicas(2) { replicas, database in
            let (a, b) = (replicas[0], replicas[1])
            try a.write { realm in realm.create(ClientDog.self, value: ["id": 1, "name": "Rex"]) }
            // The upload reaches the server, but the client dies before removing the entry from its queue: the
            // next client of the file sends it again with the same number.
            let entry = try #require(try Realm(configuration: a.configuration).syncQueue().first)
            let merge = ServerMerge(
                schema: try await database.migratedSchema(Self.classes), client: database.client,
                logger: database.logger)
            _ = try await merge.apply(
                UploadBatch(
                    scope: "main", clientID: "a", clientSequence: entry.sequence,
                    changes: try entry.objectChanges(schema: merge.schema)))
            #expect(try a.queued() == 1)
            try await a.sync.syncOnce()
            #expect(try a.queued() == 0)
            let log = try await database.rows("SELECT count(*)::text FROM strata_change_log")
            #expect(log == [["1"]])
            try await b.sync.downloadPending()
            #expect(try b.dogs() == ["1 Rex nil -"])
        }
    }

    @Test func aDownloadedServerTransactionIsOneLocalCommitWithItsCheckpoint() async throws {
        // At most 3 object changes per local commit: the entries of 3 and 1 changes cannot share one.
        try await withReplicas(2, maximumChangesPerApply: 3) { replicas, _ in
            let (a, b) = (replicas[0], replicas[1])
            try a.write { realm in
                for id in 1...3 { realm.create(ClientDog.self, value: ["id": id, "name": "Dog \(id)"]) }
            }
            try a.write { realm in realm.create(ClientDog.self, value: ["id": 4, "name": "Dog 4"]) }
            try await a.sync.uploadPending()
            // An observer of b's dogs, on a Realm of this task: it must see 0, then 3, then 4 dogs, never a part
            // of a server transaction.
            let (realm, dogs, seen, token) = try observeDogCounts(b.configuration)
            defer { token.invalidate() }
            let before = b.commits.value
            #expect(try await b.sync.downloadPending() == 2)
            // Two log entries that do not fit one commit: two commits of b's file, each entry applied whole with
            // its checkpoint.
            #expect(b.commits.value - before == 2)
            realm.refresh()
            #expect(dogs.count == 4)
            #expect(seen.counts.allSatisfy { $0 == 3 || $0 == 4 }, "observed \(seen.counts)")
            #expect(try realm.syncCheckpoint(scope: "main") == 2)
            // Applied changes are not captured: nothing goes back to the server.
            #expect(try b.queued() == 0)
        }
    }
}

extension SyncClientTests {
    @Test func severalDownloadedServerTransactionsShareOneLocalCommitWhole() async throws {
        try await withReplicas(2, maximumChangesPerApply: 5) { replicas, _ in
            let (a, b) = (replicas[0], replicas[1])
            // Five server transactions of two dogs each: at most five changes per commit makes commits of two
            // entries (four changes), two entries, and one entry — never an entry cut in two.
            for first in stride(from: 1, through: 9, by: 2) {
                try a.write { realm in
                    for id in first...first + 1 {
                        realm.create(ClientDog.self, value: ["id": id, "name": "Dog \(id)"])
                    }
                }
            }
            try await a.sync.uploadPending()
            let (realm, dogs, seen, token) = try observeDogCounts(b.configuration)
            defer { token.invalidate() }
            let before = b.commits.value
            #expect(try await b.sync.downloadPending() == 5)
            #expect(b.commits.value - before == 3)
            realm.refresh()
            #expect(dogs.count == 10)
            #expect(seen.counts.allSatisfy { [4, 8, 10].contains($0) }, "observed \(seen.counts)")
            #expect(try realm.syncCheckpoint(scope: "main") == 5)
            #expect(try b.queued() == 0)
        }
    }

    @Test func applyGroupsKeepEntriesWholeAndInOrder() {
        func entry(_ sequence: Int64, changes: Int) -> ChangeLogEntry {
            ChangeLogEntry(
                scope: "main", sequence: sequence, clientID: "a", clientSequence: sequence,
                changes: (0..<changes).map { ObjectChange(objectType: "ClientDog", primaryKey: .int(Int64($0))) })
        }
        let entries = [
            entry(1, changes: 2), entry(2, changes: 2), entry(3, changes: 7), entry(4, changes: 0),
            entry(5, changes: 1),
        ]
        let groups = SyncClient.applyGroups(entries, maximumChanges: 4)
        // The entry of 7 changes, more than the bound, is applied alone; an empty entry joins the next run.
        #expect(groups.map { $0.map(\.sequence) } == [[1, 2], [3], [4, 5]])
        #expect(SyncClient.applyGroups([], maximumChanges: 4).isEmpty)
    }
}

/// Counts an observer saw (callbacks run on the observing Realm's isolation; the lock keeps the compiler happy).
/// A Realm of this task on `configuration`, its dogs, and the count of dogs its observer saw at each update (to
/// check that a replica only ever shows whole server transactions).
func observeDogCounts(_ configuration: Realm.Configuration) throws -> (
    realm: Realm, dogs: Results<ClientDog>, seen: SeenCounts, token: NotificationToken
) {
    let realm = try Realm(configuration: configuration)
    let dogs = realm.objects(ClientDog.self)
    let seen = SeenCounts()
    let token = dogs.observe { change in
        if case .update(let dogs, _, _, _) = change { seen.append(dogs.count) }
    }
    return (realm, dogs, seen, token)
}

final class SeenCounts: Sendable {
    private let state = Mutex<[Int]>([])
    func append(_ count: Int) { state.withLock { $0.append(count) } }
    var counts: [Int] { state.withLock { $0 } }
}

import Foundation
@_spi(StrataSync) import Strata
import Testing

@_spi(StrataSync) @testable import StrataSync

/// Log trimming and bootstrap from a snapshot against a real PostgreSQL: a pull after the trim horizon is a
/// typed error; a new replica of a trimmed scope, and a replica offline past a trim, bootstrap and then equal
/// the others; the offline replica's queued writes keep the rules (later wins, delete wins); collections and
/// mixed and embedded values survive; the checkpoint is set only by the last write of a bootstrap.
@Suite struct SyncBootstrapTests {
    private static let classes: [ObjectBase.Type] = [
        ClientDog.self, ClientPerson.self, ClientBag.self, WholeThing.self, WholeAddress.self, WholeGeo.self,
    ]

    /// Runs `body` with replicas a, b and c (c applies at most `maximumChangesPerApply` objects per write).
    private func withReplicas(
        maximumChangesPerApply: Int = 10_000, _ body: ([ClientReplica], TestDatabase, ServerMerge) async throws -> Void
    ) async throws {
        try await TestDatabase.with { database in
            let schema = try await database.migratedSchema(Self.classes)
            let directory = try ReplicaDirectory()
            let replicas = try ["a", "b", "c"].map {
                try ClientReplica(
                    $0, in: directory.url, database: database, schema: schema,
                    maximumChangesPerApply: $0 == "c" ? maximumChangesPerApply : 10_000, objectTypes: Self.classes)
            }
            defer { for replica in replicas { replica.configuration.stopSyncCapture() } }
            try await body(
                replicas, database, ServerMerge(schema: schema, client: database.client, logger: database.logger))
            withExtendedLifetime(directory) {}
        }
    }

    /// The scope's last sequence.
    private func lastSequence(_ database: TestDatabase) async throws -> Int64 {
        try await integer(database, "SELECT last_seq::text FROM strata_scope WHERE scope = 'main'")
    }

    /// The integer in the first column of the first row of `sql`.
    private func integer(_ database: TestDatabase, _ sql: String) async throws -> Int64 {
        let text = try await database.rows(sql).first?.first ?? nil
        return try #require(text.flatMap { Int64($0) })
    }

    @Test func aPullAfterTheTrimHorizonIsATypedErrorAndLaterPullsStillWork() async throws {
        try await withReplicas { replicas, database, merge in
            let a = replicas[0]
            for id in 1...3 {
                try a.write { realm in realm.create(ClientDog.self, value: ["id": id, "name": "Dog\(id)"]) }
                try await a.sync.uploadPending()
            }
            #expect(try await merge.trimHorizon(scope: "main") == 0)
            #expect(try await merge.trimLog(scope: "main", through: 2) == 2)
            #expect(try await merge.trimHorizon(scope: "main") == 2)
            await #expect(throws: SyncError.historyTrimmed(scope: "main", after: 0, trimmedThrough: 2)) {
                try await merge.pull(scope: "main", after: 0)
            }
            await #expect(throws: SyncError.historyTrimmed(scope: "main", after: 1, trimmedThrough: 2)) {
                try await merge.pull(scope: "main", after: 1)
            }
            #expect(try await merge.pull(scope: "main", after: 2).map(\.sequence) == [3])
            // Trimming past the end stops at the last sequence; trimming backwards changes nothing.
            #expect(try await merge.trimLog(scope: "main", through: 99) == 1)
            #expect(try await merge.trimLog(scope: "main", through: 1) == 0)
            #expect(try await merge.trimHorizon(scope: "main") == 3)
            #expect(try await merge.pull(scope: "main", after: 3).isEmpty)
            // A retried upload whose entry was trimmed away is still recognised as applied.
            let first = try await integer(database, "SELECT client_seq::text FROM strata_upload WHERE seq = 1")
            let retry = UploadBatch(
                scope: "main", clientID: "a", clientSequence: first,
                changes: [ObjectChange(objectType: "ClientDog", primaryKey: .int(1), properties: [:])])
            let results = try await merge.apply([retry])
            #expect(results.map(\.wasAlreadyApplied) == [true])
        }
    }

    @Test func aNewReplicaBootstrapsFromATrimmedLogInOneWriteAndEqualsTheOthers() async throws {
        try await withReplicas { replicas, database, merge in
            let (a, b, c) = (replicas[0], replicas[1], replicas[2])
            try a.write { realm in
                let ann = realm.create(ClientPerson.self, value: ["name": "Ann", "city": "Oslo"])
                for id in 1...5 {
                    realm.create(ClientDog.self, value: ["id": id, "name": "Dog\(id)", "age": id, "owner": ann])
                }
            }
            try await a.sync.syncOnce()
            try await b.sync.syncOnce()
            try b.write { realm in
                realm.delete(try #require(realm.object(ofType: ClientDog.self, forPrimaryKey: 2)))
                try #require(realm.object(ofType: ClientDog.self, forPrimaryKey: 3)).age = nil
            }
            try await b.sync.syncOnce()
            try await a.sync.syncOnce()
            let last = try await lastSequence(database)
            try await merge.trimLog(scope: "main", through: last)
            #expect(try c.dogs().isEmpty)  // creates c's file (a commit of its own)
            let commitsBefore = c.commits.value
            try await c.sync.syncOnce()
            #expect(c.commits.value - commitsBefore == 1, "the whole bootstrap is one write")
            let expected = ["1 Dog1 1 Ann", "3 Dog3 nil Ann", "4 Dog4 4 Ann", "5 Dog5 5 Ann"]
            for replica in replicas { #expect(try replica.dogs() == expected, "replica \(replica.id)") }
            let realm = try Realm(configuration: c.configuration)
            #expect(try realm.syncCheckpoint(scope: "main") == last)
            // After the bootstrap c follows the log again, both ways.
            try c.write { realm in try #require(realm.object(ofType: ClientDog.self, forPrimaryKey: 4)).name = "Rex" }
            try await c.sync.syncOnce()
            try a.write { realm in realm.create(ClientDog.self, value: ["id": 6, "name": "Dog6"]) }
            try await a.sync.syncOnce()
            try await c.sync.syncOnce()
            try await b.sync.syncOnce()
            let after = ["1 Dog1 1 Ann", "3 Dog3 nil Ann", "4 Rex 4 Ann", "5 Dog5 5 Ann", "6 Dog6 nil -"]
            for replica in replicas { #expect(try replica.dogs() == after, "replica \(replica.id)") }
        }
    }

    @Test func aReplicaOfflinePastATrimRebootstrapsAndItsOfflineWritesKeepTheRules() async throws {
        try await withReplicas { replicas, database, merge in
            let (a, b) = (replicas[0], replicas[1])
            try a.write { realm in
                for id in 1...4 { realm.create(ClientDog.self, value: ["id": id, "name": "Dog\(id)", "age": 1]) }
            }
            try await a.sync.syncOnce()
            try await b.sync.syncOnce()
            // b goes offline. a: an early rename of 1, a late age of 2, deletes 3 and 4.
            a.wall.withLock { $0 += 10 }
            try a.write { realm in
                try #require(realm.object(ofType: ClientDog.self, forPrimaryKey: 1)).name = "A-early"
                for id in [3, 4] { realm.delete(try #require(realm.object(ofType: ClientDog.self, forPrimaryKey: id))) }
            }
            a.wall.withLock { $0 += 20 }
            try a.write { realm in try #require(realm.object(ofType: ClientDog.self, forPrimaryKey: 2)).age = 30 }
            try await a.sync.syncOnce()
            // b, offline: a later rename of 1, an earlier age of 2, an edit of 3 (deleted on the server), a new 5.
            b.wall.withLock { $0 += 20 }
            try b.write { realm in
                try #require(realm.object(ofType: ClientDog.self, forPrimaryKey: 1)).name = "B-late"
                try #require(realm.object(ofType: ClientDog.self, forPrimaryKey: 3)).name = "B-edit"
                realm.create(ClientDog.self, value: ["id": 5, "name": "B-new"])
            }
            b.wall.withLock { $0 -= 15 }
            try b.write { realm in try #require(realm.object(ofType: ClientDog.self, forPrimaryKey: 2)).age = 5 }
            try await merge.trimLog(scope: "main", through: try await lastSequence(database))
            // Back online, b finds its checkpoint behind the horizon and bootstraps before uploading: its queued
            // writes still take part (later ones win locally, the delete wins over its edit).
            await #expect(throws: SyncError.self) { try await b.sync.downloadPending() }
            try await b.sync.bootstrap()
            #expect(try b.queued() > 0)
            #expect(try b.dogs() == ["1 B-late 1 -", "2 Dog2 30 -", "5 B-new nil -"])
            try await b.sync.syncOnce()
            try await a.sync.syncOnce()
            try await replicas[2].sync.syncOnce()
            let expected = ["1 B-late 1 -", "2 Dog2 30 -", "5 B-new nil -"]
            for replica in replicas { #expect(try replica.dogs() == expected, "replica \(replica.id)") }
            let rows = try await database.rows(
                #"SELECT id::text, name FROM "ClientDog" WHERE NOT _strata_deleted ORDER BY id"#)
            #expect(rows == [["1", "B-late"], ["2", "Dog2"], ["5", "B-new"]])
        }
    }

    /// b removes red from a bag, offline, and bootstraps before uploading: the snapshot still holds red's add,
    /// which b had seen and removed. The add stays out (b's remove will take it away on the server too).
    @Test func aSetElementRemovedOfflineStaysRemovedThroughABootstrap() async throws {
        try await withReplicas { replicas, database, merge in
            let (a, b) = (replicas[0], replicas[1])
            try a.write { realm in realm.create(ClientBag.self, value: ["id": 1, "colors": ["red", "blue"]]) }
            try await a.sync.syncOnce()
            try await b.sync.syncOnce()
            try b.write { realm in try bag(realm).colors.remove("red") }
            try await merge.trimLog(scope: "main", through: try await lastSequence(database))
            try await b.sync.bootstrap()
            #expect(try b.bagColors(1) == ["blue"])
            for replica in [b, a, b] { try await replica.sync.syncOnce() }
            for replica in [a, b] { #expect(try replica.bagColors(1) == ["blue"], "replica \(replica.id)") }
            let rows = try await database.rows(#"SELECT colors::text FROM "ClientBag" WHERE id = 1"#)
            #expect(rows == [[#"["blue"]"#]])
        }
    }

    @Test func collectionsAndMixedAndEmbeddedValuesSurviveABootstrap() async throws {
        try await withReplicas { replicas, database, merge in
            let (a, c) = (replicas[0], replicas[2])
            try a.write { realm in
                let ann = realm.create(ClientPerson.self, value: ["name": "Ann", "city": "Oslo"])
                let bag = realm.create(ClientBag.self, value: ["id": 1])
                bag.scores["x"] = 1
                bag.scores["y"] = 2
                bag.friends["best"] = ann
                bag.colors.insert(objectsIn: ["red", "green", "blue"])
                bag.tricks.append(objectsIn: ["sit", "roll", "beg"])
                let thing = realm.create(WholeThing.self, value: ["id": 1])
                thing.value = .fromArray([.int(1), .string("x"), .fromDictionary(["k": .bool(true)])])
                thing.home = WholeAddress(
                    value: [
                        "street": "Main", "city": "Oslo", "zip": 150, "geo": ["lat": 59.9, "lon": 10.7],
                        "notes": ["gate", "door"],
                    ])
            }
            try await a.sync.syncOnce()
            try a.write { realm in
                let bag = try #require(realm.object(ofType: ClientBag.self, forPrimaryKey: 1))
                bag.scores.removeObject(for: "y")
                bag.colors.remove("green")
                bag.tricks.remove(at: 1)
                bag.tricks.insert("stay", at: 0)
            }
            try await a.sync.syncOnce()
            try await merge.trimLog(scope: "main", through: try await lastSequence(database))
            try await c.sync.syncOnce()
            for replica in [a, c] {
                #expect(try replica.bagMaps(1) == "x=1 | best=Ann", "replica \(replica.id)")
                #expect(try replica.bagColors(1) == ["blue", "red"], "replica \(replica.id)")
                #expect(try replica.bagTricks(1) == ["stay", "sit", "beg"], "replica \(replica.id)")
                #expect(
                    try replica.thingSummary()
                        == "[1, x, [k: true]] Main Oslo 150 59.9 10.7 [gate, door]", "replica \(replica.id)")
            }
            // The collections' merge state came too: c's edits after the bootstrap merge with a's.
            try c.write { realm in
                let bag = try #require(realm.object(ofType: ClientBag.self, forPrimaryKey: 1))
                bag.tricks.append("jump")
                bag.colors.remove("red")
                bag.scores["x"] = 7
            }
            try await c.sync.syncOnce()
            try await a.sync.syncOnce()
            for replica in [a, c] {
                #expect(try replica.bagMaps(1) == "x=7 | best=Ann", "replica \(replica.id)")
                #expect(try replica.bagColors(1) == ["blue"], "replica \(replica.id)")
                #expect(try replica.bagTricks(1) == ["stay", "sit", "beg", "jump"], "replica \(replica.id)")
            }
        }
    }

    @Test func aLargeBootstrapWritesInBatchesAndSetsTheCheckpointOnlyInTheLast() async throws {
        try await withReplicas(maximumChangesPerApply: 2) { replicas, database, merge in
            let (a, c) = (replicas[0], replicas[2])
            try a.write { realm in
                for id in 1...5 { realm.create(ClientDog.self, value: ["id": id, "name": "Dog\(id)"]) }
            }
            try await a.sync.syncOnce()
            let last = try await lastSequence(database)
            try await merge.trimLog(scope: "main", through: last)
            // A local object the server never had, not in the queue (written while capture was off): it goes.
            c.configuration.stopSyncCapture()
            try c.write { realm in realm.create(ClientDog.self, value: ["id": 9, "name": "Stray"]) }
            let commitsBefore = c.commits.value
            let applied = try await c.sync.bootstrap()
            #expect(applied == 5)
            #expect(c.commits.value - commitsBefore == 3, "2 + 2 objects, then the last with the checkpoint")
            #expect(try Realm(configuration: c.configuration).syncCheckpoint(scope: "main") == last)
            #expect(try c.dogs() == (1...5).map { "\($0) Dog\($0) nil -" })
            // Run again over the applied state (as after a kill -9 part-way): the same result.
            try await c.sync.bootstrap()
            #expect(try c.dogs() == (1...5).map { "\($0) Dog\($0) nil -" })
        }
    }
}

extension ClientReplica {
    /// Thing 1 as `value home-street city zip lat lon [notes]` (mixed list elements without kinds).
    fileprivate func thingSummary() throws -> String {
        let realm = try Realm(configuration: configuration)
        realm.refresh()
        let thing = try #require(realm.object(ofType: WholeThing.self, forPrimaryKey: 1))
        func plain(_ value: AnyRealmValue) -> String {
            switch value {
            case .int(let value): return "\(value)"
            case .string(let value): return value
            case .bool(let value): return "\(value)"
            case .list(let list): return "[" + list.map(plain).joined(separator: ", ") + "]"
            case .dictionary(let map):
                var entries: [String] = []
                for (key, element) in map { entries.append("\(key): \(plain(element))") }
                return "[" + entries.sorted().joined(separator: ", ") + "]"
            default: return "?"
            }
        }
        let home = try #require(thing.home)
        let geo = try #require(home.geo)
        return "\(plain(thing.value)) \(home.street) \(home.city) \(home.zip.map(String.init) ?? "nil") "
            + "\(geo.lat) \(geo.lon) [\(home.notes.joined(separator: ", "))]"
    }
}

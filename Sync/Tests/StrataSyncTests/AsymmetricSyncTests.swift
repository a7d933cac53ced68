import Foundation
import PostgresNIO
@_spi(StrataSync) import Strata
import Testing

@_spi(StrataSync) @testable import StrataSync

/// An upload-only reading: plain values, an optional, a date, an embedded object, a list, a map and a mixed value.
final class SyncReading: AsymmetricObject {
    @Persisted var sensor: String
    @Persisted var value: Int
    @Persisted var note: String?
    @Persisted var at: Date
    @Persisted var spot: SyncSpot?
    @Persisted var tags: List<String>
    @Persisted var counts: Map<String, Int>
    @Persisted var extra: AnyRealmValue
}

/// Where a reading was taken: embedded in it.
final class SyncSpot: EmbeddedObject {
    @Persisted var lat: Double
    @Persisted var lon: Double
}

/// Asymmetric objects against a real PostgreSQL: they leave the outbox as rows of their type's table, once.
@Suite struct AsymmetricSyncTests {
    private static let classes: [ObjectBase.Type] = [SyncReading.self, SyncSpot.self]

    /// Runs `body` with `count` replicas (separate files) of the reading types on a fresh, migrated PostgreSQL
    /// schema; `migrate` false leaves PostgreSQL without the readings' table.
    private func withReplicas(
        _ count: Int, batchSize: Int = 200, migrate: Bool = true,
        _ body: ([ClientReplica], ServerSchema, TestDatabase) async throws -> Void
    ) async throws {
        try await TestDatabase.with { database in
            // The namespace exists either way: the dogs' tables are always there.
            _ = try await database.migratedSchema([ClientDog.self, ClientPerson.self])
            let schema = try ServerSchema(namespace: database.namespace, classes: Self.classes)
            if migrate { try await schema.migrate(database.client, logger: database.logger) }
            let directory = try ReplicaDirectory()
            let replicas = try (0..<count).map {
                try ClientReplica(
                    "r\($0)", in: directory.url, database: database, schema: schema, batchSize: batchSize,
                    objectTypes: Self.classes)
            }
            defer { for replica in replicas { replica.configuration.stopSyncCapture() } }
            try await body(replicas, schema, database)
            withExtendedLifetime(directory) {}
        }
    }

    /// Creates readings `values` on `replica`, `perWrite` to a write transaction.
    private func createReadings(_ replica: ClientReplica, _ values: some Sequence<Int>, perWrite: Int = 1_000) throws {
        var pending = Array(values)[...]
        while !pending.isEmpty {
            let chunk = pending.prefix(perWrite)
            pending = pending.dropFirst(chunk.count)
            try replica.write { realm in
                for value in chunk {
                    realm.create(
                        SyncReading.self,
                        value: ["sensor": replica.id, "value": value, "at": Date(timeIntervalSince1970: 1_764_000_000)])
                }
            }
        }
    }

    /// How many objects wait in `replica`'s outbox of readings.
    private func outboxCount(_ replica: ClientReplica) throws -> Int {
        let realm = try Realm(configuration: replica.configuration)
        realm.refresh()
        return try realm.syncOutbox(className: "SyncReading", limit: .max).count
    }

    @Test func readingsBecomeRowsAndLeaveTheOutbox() async throws {
        try await withReplicas(1) { replicas, _, database in
            let a = replicas[0]
            try a.write { realm in
                realm.create(
                    SyncReading.self,
                    value: [
                        "sensor": "t1", "value": 21, "note": "calibrated",
                        "at": Date(timeIntervalSince1970: 1_764_000_000),
                        "spot": ["lat": 1.5, "lon": -2.25], "tags": ["indoor", "north"], "counts": ["ok": 3],
                        "extra": AnyRealmValue.int(7),
                    ])
                realm.create(SyncReading.self, value: ["sensor": "t2", "value": 22])
            }
            #expect(try outboxCount(a) == 2)
            #expect(try await a.sync.uploadPending() == 2)
            #expect(try outboxCount(a) == 0)
            let rows = try await database.rows(
                """
                SELECT _strata_scope, _strata_client_id, _strata_client_seq::text, sensor, value::text, note,
                    extract(epoch FROM at)::bigint::text, spot::text, tags::text, counts::text, extra::text
                FROM "SyncReading" ORDER BY _strata_client_seq
                """)
            #expect(
                rows == [
                    [
                        "main", "r0", "1", "t1", "21", "calibrated", "1764000000", #"{"lat": 1.5, "lon": -2.25}"#,
                        #"["indoor", "north"]"#, #"{"ok": 3}"#, #"{"int": 7}"#,
                    ],
                    ["main", "r0", "2", "t2", "22", nil, "978307200", nil, "[]", "{}", #"{"null": true}"#],
                ])
            // Upload-only: nothing in the change log for other replicas to download.
            #expect(try await database.rows("SELECT count(*)::text FROM strata_change_log") == [["0"]])
        }
    }

    @Test func aResendAfterALostAcknowledgementInsertsNothingTwice() async throws {
        try await withReplicas(1) { replicas, schema, database in
            let a = replicas[0]
            try createReadings(a, 1...50)
            // PostgreSQL commits the objects, but the client dies before removing them from its outbox.
            let objects = try Realm(configuration: a.configuration).syncOutbox(className: "SyncReading", limit: 30)
            let merge = ServerMerge(schema: schema, client: database.client, logger: database.logger)
            let upload = AsymmetricUpload(
                scope: "main", clientID: "r0", objectType: "SyncReading",
                objects: objects.map {
                    .init(clientSequence: $0.sequence, values: $0.values.mapValues(AsymmetricValue.init))
                })
            #expect(try await merge.insert(upload) == 30)
            #expect(try outboxCount(a) == 50)
            // The next client of the file sends all 50 again: the 30 delivered ones are recognised.
            #expect(try await a.sync.uploadPending() == 50)
            #expect(try outboxCount(a) == 0)
            #expect(try await merge.insert(upload) == 0)
            let rows = try await database.rows(#"SELECT count(*)::text, sum(value)::text FROM "SyncReading""#)
            #expect(rows == [["50", "\(50 * 51 / 2)"]])
        }
    }

    @Test func anOfflineClientKeepsItsOutboxAndDeliversLater() async throws {
        try await withReplicas(1) { replicas, schema, database in
            let a = replicas[0]
            try createReadings(a, 1...20)
            #expect(try await a.sync.uploadPending() == 20)
            // Offline: the client is stopped and the file written for a while; nothing is uploaded.
            await a.sync.stop()
            try createReadings(a, 21...60, perWrite: 7)
            #expect(try outboxCount(a) == 40)
            #expect(try await database.rows(#"SELECT count(*)::text FROM "SyncReading""#) == [["20"]])
            // Back online (a new client of the same file): every reading arrives, once.
            let again = try SyncClient(
                configuration: a.configuration, schema: schema, client: database.client, scope: "main",
                clientID: "r0", batchSize: 16, logger: database.logger)
            #expect(try await again.uploadPending() == 40)
            #expect(try outboxCount(a) == 0)
            let rows = try await database.rows(
                #"SELECT count(*)::text, sum(value)::text, max(_strata_client_seq)::text FROM "SyncReading""#)
            #expect(rows == [["60", "\(60 * 61 / 2)", "60"]])
        }
    }

    @Test func fourReplicasIngestEveryObjectExactlyOnce() async throws {
        let soak = ProcessInfo.processInfo.environment["STRATA_SOAK"] != nil
        let perReplica = soak ? 25_000 : 2_500
        try await withReplicas(4, batchSize: 1_000) { replicas, _, database in
            for (index, replica) in replicas.enumerated() {
                try createReadings(replica, (index * 1_000_000 + 1)...(index * 1_000_000 + perReplica))
            }
            let started = ContinuousClock.now
            // All four upload at once, one of them twice over (two uploads of one file race: both send the same
            // objects, and each counts only those it removed from the outbox).
            try await withThrowingTaskGroup(of: Int.self) { group in
                for replica in replicas { group.addTask { try await replica.sync.uploadPending() } }
                group.addTask { try await replicas[0].sync.uploadPending() }
                var total = 0
                for try await uploaded in group { total += uploaded }
                #expect(total == 4 * perReplica)
            }
            let elapsed = ContinuousClock.now - started
            print("asymmetric ingest: \(4 * perReplica) objects from 4 replicas in \(elapsed)")
            for replica in replicas { #expect(try outboxCount(replica) == 0) }
            var expectedSum = 0
            for index in 0..<4 {
                expectedSum += (1...perReplica).reduce(0) { $0 + index * 1_000_000 + $1 }
            }
            let rows = try await database.rows(
                """
                SELECT count(*)::text, sum(value)::text, count(DISTINCT value)::text,
                    count(DISTINCT _strata_client_id)::text FROM "SyncReading"
                """)
            #expect(rows == [["\(4 * perReplica)", "\(expectedSum)", "\(4 * perReplica)", "4"]])
        }
    }

    @Test func aTypeWithoutATableIsATypedErrorAndKeepsTheOutbox() async throws {
        try await withReplicas(1, migrate: false) { replicas, _, _ in
            let a = replicas[0]
            try createReadings(a, 1...5)
            let error = await #expect(throws: SyncError.self) { try await a.sync.uploadPending() }
            guard case .incompatibleSchema(let type, _, _)? = error else {
                Issue.record("expected incompatibleSchema, got \(String(describing: error))")
                return
            }
            #expect(type == "SyncReading")
            #expect(try outboxCount(a) == 5)
        }
    }

    @Test func aRefusedOutboxHoldsUpNeitherDirectionOfTheObjectsSync() async throws {
        try await TestDatabase.with { database in
            let classes: [ObjectBase.Type] = [ClientDog.self, ClientPerson.self] + Self.classes
            let schema = try await database.migratedSchema(classes)
            _ = try await database.rows(#"DROP TABLE "SyncReading""#)
            let directory = try ReplicaDirectory()
            let (a, b) = (
                try ClientReplica("a", in: directory.url, database: database, schema: schema, objectTypes: classes),
                try ClientReplica("b", in: directory.url, database: database, schema: schema, objectTypes: classes)
            )
            defer { for replica in [a, b] { replica.configuration.stopSyncCapture() } }
            try a.write { realm in realm.create(ClientDog.self, value: ["id": 1, "name": "Rex"]) }
            try createReadings(a, 1...3)
            try b.write { realm in realm.create(ClientDog.self, value: ["id": 2, "name": "Fido"]) }
            try await b.sync.syncOnce()
            // a's readings have no table: its round fails, after its dog went up and b's came down.
            await #expect(throws: SyncError.self) { try await a.sync.syncOnce() }
            #expect(try a.dogs() == ["1 Rex nil -", "2 Fido nil -"])
            try await b.sync.syncOnce()
            #expect(try b.dogs() == ["1 Rex nil -", "2 Fido nil -"])
            #expect(try outboxCount(a) == 3)
            withExtendedLifetime(directory) {}
        }
    }

    @Test func aTableThatNoLongerFitsIsATypedErrorAndKeepsTheOutbox() async throws {
        try await withReplicas(1) { replicas, schema, database in
            let a = replicas[0]
            try createReadings(a, 1...5)
            _ = try await database.rows(#"ALTER TABLE "SyncReading" DROP COLUMN note"#)
            await #expect(throws: SyncError.self) { try await a.sync.uploadPending() }
            #expect(try outboxCount(a) == 5)
            _ = try await database.rows(#"ALTER TABLE "SyncReading" ADD COLUMN note text"#)
            _ = try await database.rows(#"ALTER TABLE "SyncReading" ALTER COLUMN value TYPE boolean USING value <> 0"#)
            await #expect(throws: SyncError.self) { try await a.sync.uploadPending() }
            #expect(try outboxCount(a) == 5)
            // migrate names the column that does not fit, and changes nothing.
            await #expect(throws: SyncError.self) { try await schema.migrate(database.client, logger: database.logger) }
            #expect(try await database.rows(#"SELECT count(*)::text FROM "SyncReading""#) == [["0"]])
        }
    }

    @Test func aClassThatChangedKindIsRefusedByTheMigration() async throws {
        try await TestDatabase.with { database in
            // An object type's table of the same name (as an earlier schema created it).
            let objects = try await database.migratedSchema([ClientDog.self, ClientPerson.self])
            _ = try await database.rows(
                #"CREATE TABLE "SyncReading" (_strata_scope text NOT NULL, id bigint NOT NULL, PRIMARY KEY (_strata_scope, id))"#
            )
            let schema = try ServerSchema(namespace: objects.namespace, classes: Self.classes)
            await #expect(throws: SyncError.self) { try await schema.migrate(database.client, logger: database.logger) }
        }
    }

    /// An upload of one object holding `values` of `type`, from client `x`.
    private func upload(_ values: [String: AsymmetricValue], type: String = "SyncReading", sequence: Int64 = 1)
        -> AsymmetricUpload
    {
        AsymmetricUpload(
            scope: "main", clientID: "x", objectType: type, objects: [.init(clientSequence: sequence, values: values)])
    }

    @Test func anUploadThatDoesNotFitTheTypeIsRefusedWithATypedError() async throws {
        try await withReplicas(1) { _, schema, database in
            let merge = ServerMerge(schema: schema, client: database.client, logger: database.logger)
            let values: [String: AsymmetricValue] = [
                "sensor": .value(.string("t")), "value": .value(.int(1)), "note": .value(.null),
                "at": .value(.date(0)), "spot": .value(.null), "tags": .list([]), "counts": .map([:]),
                "extra": .value(.null),
            ]
            var wrongKind = values
            wrongKind["value"] = .value(.string("one"))
            await #expect(
                throws: SyncError.valueTypeMismatch(
                    type: "SyncReading", property: "value", expected: "int", found: "string")
            ) { try await merge.insert(upload(wrongKind)) }
            var missing = values
            missing["note"] = nil
            await #expect(throws: SyncError.self) { try await merge.insert(upload(missing)) }
            var unknown = values
            unknown["colour"] = .value(.string("red"))
            await #expect(throws: SyncError.unknownProperty(type: "SyncReading", property: "colour")) {
                try await merge.insert(upload(unknown))
            }
            var embedded = values
            embedded["extra"] = .list([.embedded(["lat": .value(.double(1))])])
            await #expect(throws: SyncError.self) { try await merge.insert(upload(embedded)) }
            await #expect(throws: SyncError.unknownType("ClientDog")) {
                try await merge.insert(upload(values, type: "ClientDog"))
            }
            // Nothing was inserted by the refused uploads; the object as it should be goes in.
            let refused = try await database.rows(#"SELECT count(*)::text FROM "SyncReading""#)
            #expect(refused == [["0"]])
            #expect(try await merge.insert(upload(values)) == 1)
            // A mixed value holding a nested list and dictionary goes in whole, in its tagged form.
            var nested = values
            nested["extra"] = .list([.value(.int(1)), .map(["k": .value(.string("v"))])])
            #expect(try await merge.insert(upload(nested, sequence: 2)) == 1)
            let extra = try await database.rows(
                #"SELECT extra::text FROM "SyncReading" WHERE _strata_client_seq = 2"#)
            #expect(extra == [[#"{"list": [{"int": 1}, {"dictionary": {"k": {"string": "v"}}}]}"#]])
        }
    }

    @Test func theSchemaKeepsAsymmetricTypesApartFromObjectTypes() throws {
        let schema = try ServerSchema(classes: [ClientDog.self, ClientPerson.self] + Self.classes)
        #expect(schema.types.keys.sorted() == ["ClientDog", "ClientPerson"])
        #expect(schema.asymmetricTypes.keys.sorted() == ["SyncReading"])
        #expect(
            schema.asymmetricTypes["SyncReading"]?.columns.map(\.sqlType) == [
                "text", "bigint", "text", "timestamp with time zone", "jsonb", "jsonb", "jsonb", "jsonb",
            ])
    }
}

import Foundation
import PostgresNIO
import Strata
import Testing

@testable import StrataSync

/// Writes made by other programs through plain SQL reach the change log as changes of the replica `server`.
@Suite struct CaptureTriggerTests {
    @Test func anInsertUpdateAndDeleteThroughSQLBecomeLogEntries() async throws {
        try await TestDatabase.with { database in
            let merge = try await database.merge()
            _ = try await database.rows(
                #"INSERT INTO "SyncPerson" (_strata_scope, name, age) VALUES ('main', 'Ann', 3)"#)
            _ = try await database.rows(#"UPDATE "SyncPerson" SET age = 4 WHERE name = 'Ann'"#)
            _ = try await database.rows(#"UPDATE "SyncPerson" SET age = 4 WHERE name = 'Ann'"#)  // no change, no entry
            _ = try await database.rows(#"DELETE FROM "SyncPerson" WHERE name = 'Ann'"#)
            let entries = try await merge.pull(scope: "main", after: 0)
            #expect(entries.map(\.sequence) == [1, 2, 3])
            #expect(entries.allSatisfy { $0.clientID == nil && $0.changes.count == 1 })
            let create = try #require(entries.first?.changes.first)
            #expect(create.objectType == "SyncPerson" && create.primaryKey == .string("Ann"))
            let created = try #require(create.created)
            #expect(created.replica == "server")
            #expect(create.properties == ["age": .value(.int(3), at: created)])
            let update = try #require(entries[1].changes.first)
            guard case .value(.int(4), let updatedAt) = update.properties["age"] else {
                Issue.record("the update carries age 4: \(update)")
                return
            }
            #expect(updatedAt > created)
            #expect(try #require(entries[2].changes.first?.deleted) > updatedAt)
            // The delete is a marker: the row stays, not live.
            #expect(
                try await database.rows(#"SELECT name, age::text, _strata_deleted::text FROM "SyncPerson""#) == [
                    ["Ann", "4", "true"]
                ])
        }
    }

    @Test func aClientWriteOlderThanTheSQLWriteLosesAndANewerOneWins() async throws {
        try await TestDatabase.with { database in
            let merge = try await database.merge()
            _ = try await database.rows(
                #"INSERT INTO "SyncPerson" (_strata_scope, name, age) VALUES ('main', 'Ann', 3)"#)
            let sqlWrite = try #require(try await merge.pull(scope: "main", after: 0).first?.changes.first?.created)
            let older = Replica("old", wallMilliseconds: sqlWrite.wallMilliseconds - 1)
            let lost = try await merge.apply(older.batch([older.updatePerson("Ann", age: 10)]))
            #expect(lost.entry.changes.isEmpty)
            let newer = Replica("new", wallMilliseconds: sqlWrite.wallMilliseconds + 1)
            _ = try await merge.apply(newer.batch([newer.updatePerson("Ann", age: 20)]))
            #expect(try await database.rows(#"SELECT age::text FROM "SyncPerson""#) == [["20"]])
            // Merges are not captured a second time: one entry per upload.
            #expect(try await database.rows("SELECT count(*)::text FROM strata_change_log") == [["3"]])
        }
    }

    @Test func everyCapturedKindDecodesAsTheClientsWouldSendIt() async throws {
        try await TestDatabase.with { database in
            let merge = try await database.merge()
            _ = try await database.rows(
                """
                INSERT INTO "SyncDog" (_strata_scope, id, name, age, weight, "isGoodBoy", birthday, photo, chip, owner,
                    extra)
                VALUES ('main', 7, 'Rex', 3, 'NaN', true, to_timestamp(1700000000.25), '\\xdead',
                    'e621e1f8-c36c-495a-93fc-0c247a3e6e5f', 'Ann', '{"string": "x"}')
                """)
            let change = try #require(try await merge.pull(scope: "main", after: 0).first?.changes.first)
            let at = try #require(change.created)
            func value(_ name: String) -> SyncValue? {
                if case .value(let value, at) = change.properties[name] { return value }
                return nil
            }
            #expect(change.primaryKey == .int(7))
            #expect(value("name") == .string("Rex"))
            #expect(value("nickname") == .null)
            #expect(value("isGoodBoy") == .bool(true))
            #expect(value("birthday") == .date(1_700_000_000.25))
            #expect(value("photo") == .data(Data([0xDE, 0xAD])))
            #expect(value("chip") == .uuid(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!))
            #expect(value("owner") == .link(.string("Ann")))
            #expect(value("extra") == .string("x"))
            guard case .double(let weight) = value("weight") else {
                Issue.record("weight is a double")
                return
            }
            #expect(weight.isNaN)
            // Collections the INSERT does not give start empty: a list and a map with a clear (a create's form), a
            // set with nothing.
            #expect(change.properties["tricks"] == .list([.clear(at: at)]))
            #expect(change.properties["scores"] == .map([.clear(at: at)]))
            #expect(change.properties["colors"] == nil)
        }
    }

    /// A deletes Rex and his bag; B applies the delete, C is offline and still holds them. A program brings both
    /// back through plain SQL — an UPDATE clearing `_strata_deleted` and changing one column, an INSERT … ON
    /// CONFLICT DO UPDATE — and the re-create's entry carries the whole row (the form a snapshot gives), so A, B
    /// and C all end with PostgreSQL's rows: the unchanged name and the row's collections included.
    @Test func aReCreateThroughSQLBringsTheWholeRowToEveryReplica() async throws {
        let classes: [ObjectBase.Type] = [ClientDog.self, ClientPerson.self, ClientBag.self]
        try await withCollectionReplicas(3, classes: classes) { replicas, database in
            let (a, b, c) = (replicas[0], replicas[1], replicas[2])
            try a.write { realm in
                realm.create(ClientDog.self, value: ["id": 1, "name": "Rex", "age": 3])
                realm.create(
                    ClientBag.self,
                    value: ["id": 1, "scores": ["speed": 1], "colors": ["blue"], "tricks": ["sit", "roll"]])
            }
            try await a.sync.syncOnce()
            for replica in [b, c] { try await replica.sync.downloadPending() }
            a.wall.withLock { $0 += 10 }
            try a.write { realm in
                realm.delete(try #require(realm.object(ofType: ClientDog.self, forPrimaryKey: 1)))
                realm.delete(try bag(realm))
            }
            try await a.sync.syncOnce()
            try await b.sync.downloadPending()
            #expect(try b.dogs().isEmpty)

            _ = try await database.rows(#"UPDATE "ClientDog" SET _strata_deleted = false, age = 7 WHERE id = 1"#)
            _ = try await database.rows(
                """
                INSERT INTO "ClientBag" (_strata_scope, id) VALUES ('main', 1)
                ON CONFLICT (_strata_scope, id) DO UPDATE SET _strata_deleted = false
                """)
            for replica in replicas { try await replica.sync.syncOnce() }

            let dogs = try await database.rows(
                #"SELECT name, age::text, _strata_deleted::text FROM "ClientDog" WHERE id = 1"#)
            #expect(dogs == [["Rex", "7", "false"]])
            let bags = try await database.rows(
                #"SELECT scores::text, colors::text, tricks::text, _strata_deleted::text FROM "ClientBag" WHERE id = 1"#
            )
            #expect(bags == [[#"{"speed": 1}"#, #"["blue"]"#, #"["sit", "roll"]"#, "false"]])
            for replica in replicas {
                #expect(try replica.dogs() == ["1 Rex 7 -"], "replica \(replica.id)")
                #expect(try replica.bagMaps(1) == "speed=1 |", "replica \(replica.id)")
                #expect(try replica.bagColors(1) == ["blue"], "replica \(replica.id)")
                #expect(try replica.bagTricks(1) == ["sit", "roll"], "replica \(replica.id)")
            }

            // Each statement logged one entry (the ON CONFLICT's INSERT none), holding exactly what a snapshot of
            // the row would: RowState.snapshotChange of its merge state and values.
            let log = try await database.merge(classes).pull(scope: "main", after: 0).filter { $0.clientID == nil }
            #expect(log.count == 2)
            let states = try await database.rows(
                """
                SELECT 'ClientDog', _strata_state::text FROM "ClientDog" WHERE id = 1
                UNION ALL SELECT 'ClientBag', _strata_state::text FROM "ClientBag" WHERE id = 1
                """)
            let values: [String: [String: SyncValue]] = [
                "ClientDog": ["name": .string("Rex"), "age": .int(7), "owner": .null], "ClientBag": [:],
            ]
            for (entry, row) in zip(log, states) {
                let state = try SyncJSON.decode(RowState.self, from: try #require(row[1]))
                let type = try #require(row[0])
                let expected = state.snapshotChange(type: type, key: .int(1), values: values[type] ?? [:])
                #expect(entry.changes == [expected])
                #expect(entry.changes.first?.isWholeState == true)
            }
        }
    }

    /// The INSERT of an INSERT … ON CONFLICT whose row exists logs nothing: DO NOTHING writes nothing, and DO
    /// UPDATE is logged once, as the update it is.
    @Test func anInsertOnConflictOfALiveRowLogsOnlyWhatItChanges() async throws {
        try await TestDatabase.with { database in
            let merge = try await database.merge()
            _ = try await database.rows(
                #"INSERT INTO "SyncPerson" (_strata_scope, name, age) VALUES ('main', 'Ann', 3)"#)
            _ = try await database.rows(
                #"INSERT INTO "SyncPerson" (_strata_scope, name, age) VALUES ('main', 'Ann', 9) ON CONFLICT DO NOTHING"#
            )
            _ = try await database.rows(
                """
                INSERT INTO "SyncPerson" (_strata_scope, name, age) VALUES ('main', 'Ann', 5)
                ON CONFLICT (_strata_scope, name) DO UPDATE SET age = excluded.age
                """)
            let entries = try await merge.pull(scope: "main", after: 0)
            #expect(entries.count == 2)
            let update = try #require(entries.last?.changes.first)
            #expect(update.created == nil && !update.isWholeState)
            guard case .value(.int(5), _)? = update.properties["age"], update.properties.count == 1 else {
                Issue.record("the update carries age 5 only: \(update)")
                return
            }
            #expect(try await database.rows(#"SELECT age::text FROM "SyncPerson""#) == [["5"]])
        }
    }
}

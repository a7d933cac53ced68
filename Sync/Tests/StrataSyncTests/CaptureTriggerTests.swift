import Foundation
import PostgresNIO
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
            #expect(change.properties["tricks"] == nil)  // collections written through SQL are not captured
        }
    }
}

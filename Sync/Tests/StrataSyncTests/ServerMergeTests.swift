import Foundation
import PostgresNIO
import Strata
import Testing

@testable import StrataSync

@Suite struct ServerMergeTests {
    /// The live people of the test's tables: name, age, deleted.
    private func people(_ database: TestDatabase) async throws -> [[String?]] {
        try await database.rows(#"SELECT name, age::text, _strata_deleted::text FROM "SyncPerson" ORDER BY name"#)
    }

    @Test func everyPropertyTakesTheLatestWriteWhateverTheArrivalOrder() async throws {
        var results: [[[String?]]] = []
        for reversed in [false, true] {
            try await TestDatabase.with { database in
                let merge = try await database.merge()
                let a = Replica("a")
                let b = Replica("b")
                _ = try await merge.apply(a.batch([a.createPerson("Ann", age: 1)]))
                // Both edit Ann offline: b's write is later (its wall clock is 5 ms ahead).
                b.wall.withLock { $0 += 5 }
                let fromA = a.batch([a.updatePerson("Ann", age: 30)])
                let fromB = b.batch([b.updatePerson("Ann", age: 40)])
                let uploads = reversed ? [fromB, fromA] : [fromA, fromB]
                for upload in uploads { _ = try await merge.apply(upload) }
                results.append(try await people(database))
            }
        }
        #expect(results[0] == [["Ann", "40", "false"]])
        #expect(results[1] == results[0])
    }

    @Test func aDeleteWinsOverAConcurrentUpdateInBothOrders() async throws {
        for reversed in [false, true] {
            try await TestDatabase.with { database in
                let merge = try await database.merge()
                let a = Replica("a")
                let b = Replica("b")
                _ = try await merge.apply(a.batch([a.createPerson("Ann", age: 1)]))
                // b's update is later than a's delete, yet it was made without seeing the delete: the delete wins.
                let delete = a.batch([a.deletePerson("Ann")])
                b.wall.withLock { $0 += 50 }
                let update = b.batch([b.updatePerson("Ann", age: 99)])
                for upload in reversed ? [update, delete] : [delete, update] { _ = try await merge.apply(upload) }
                let rows = try await database.rows(#"SELECT _strata_deleted::text FROM "SyncPerson""#)
                #expect(rows == [["true"]], "reversed: \(reversed)")
            }
        }
    }

    @Test func aCreateAfterTheDeleteBringsTheObjectBack() async throws {
        try await TestDatabase.with { database in
            let merge = try await database.merge()
            let a = Replica("a")
            let b = Replica("b")
            _ = try await merge.apply(a.batch([a.createPerson("Ann", age: 1)]))
            let delete = try await merge.apply(a.batch([a.deletePerson("Ann")]))
            // b pulls the delete, then creates Ann again: causally after, so its timestamp is greater.
            for change in delete.entry.changes { try b.clock.receive(try #require(change.deleted)) }
            let recreate = try await merge.apply(b.batch([b.createPerson("Ann", age: 2)]))
            #expect(recreate.entry.changes.first?.created != nil)
            #expect(try await people(database) == [["Ann", "2", "false"]])
            // A stale update from before the re-create loses to the create's values.
            let stale = ObjectChange(
                objectType: "SyncPerson", primaryKey: .string("Ann"),
                properties: ["age": .value(.int(5), at: HybridTimestamp(wallMilliseconds: 1, counter: 0, replica: "c"))]
            )
            let result = try await merge.apply(Replica("c").batch([stale]))
            #expect(result.entry.changes.isEmpty)
            #expect(try await people(database) == [["Ann", "2", "false"]])
        }
    }

    @Test func aRetriedUploadIsAppliedOnce() async throws {
        try await TestDatabase.with { database in
            let merge = try await database.merge()
            let a = Replica("a")
            let list = ObjectChange(
                objectType: "SyncDog", primaryKey: .int(1),
                properties: ["tricks": .list([.insert(id: a.clock.now(), after: nil, value: .string("sit"))])])
            let upload = a.batch([a.createPerson("Ann", age: 1), list])
            let first = try await merge.apply(upload)
            let retry = try await merge.apply(upload)
            #expect(!first.wasAlreadyApplied)
            #expect(retry.wasAlreadyApplied)
            #expect(retry.entry == first.entry)
            #expect(try await database.rows("SELECT last_seq::text FROM strata_scope") == [["1"]])
            #expect(try await database.rows("SELECT count(*)::text FROM strata_change_log") == [["1"]])
            #expect(try await database.rows(#"SELECT tricks::text FROM "SyncDog""#) == [[#"["sit"]"#]])
        }
    }

    @Test func concurrentUploadsGetAGapFreeSequenceWithoutDuplicates() async throws {
        try await TestDatabase.with { database in
            let merge = try await database.merge()
            let uploadsPerTask = ProcessInfo.processInfo.environment["STRATA_SOAK"] == "1" ? 500 : 50
            let sequences = try await withThrowingTaskGroup(of: [Int64].self) { group in
                for task in 0..<4 {
                    group.addTask {
                        let replica = Replica("r\(task)")
                        var sequences: [Int64] = []
                        for upload in 0..<uploadsPerTask {
                            // All tasks write the same object too, so that their row locks meet.
                            let changes = [
                                replica.updatePerson("Shared", age: Int64(upload)),
                                replica.createPerson("P\(task)-\(upload)", age: 0),
                            ]
                            sequences.append(try await merge.apply(replica.batch(changes)).entry.sequence)
                        }
                        return sequences
                    }
                }
                return try await group.reduce(into: []) { $0 += $1 }
            }
            #expect(sequences.sorted() == Array(1...Int64(4 * uploadsPerTask)))
            let logged = try await database.rows("SELECT seq::text AS number FROM strata_change_log ORDER BY seq")
            #expect(logged.map { Int64($0[0]!)! } == Array(1...Int64(4 * uploadsPerTask)))
        }
    }

    @Test func aPullAfterACheckpointReturnsTheLaterEntriesInOrder() async throws {
        try await TestDatabase.with { database in
            let merge = try await database.merge()
            let a = Replica("a")
            for age in 1...5 { _ = try await merge.apply(a.batch([a.createPerson("P\(age)", age: Int64(age))])) }
            _ = try await merge.apply(a.batch([a.createPerson("Other", age: 0)], scope: "other"))
            let afterTwo = try await merge.pull(scope: "main", after: 2)
            #expect(afterTwo.map(\.sequence) == [3, 4, 5])
            #expect(afterTwo.map(\.clientSequence) == [3, 4, 5])
            #expect(afterTwo.first?.changes.first?.primaryKey == .string("P3"))
            #expect(try await merge.pull(scope: "main", after: 2, limit: 1).map(\.sequence) == [3])
            #expect(try await merge.pull(scope: "main", after: 5).isEmpty)
            #expect(try await merge.pull(scope: "other", after: 0).map(\.sequence) == [1])
        }
    }

    @Test func anInvalidUploadChangesNothing() async throws {
        try await TestDatabase.with { database in
            let merge = try await database.merge()
            let a = Replica("a")
            let wrongKind = ObjectChange(
                objectType: "SyncPerson", primaryKey: .string("Ann"),
                properties: ["age": .value(.string("old"), at: a.clock.now())])
            await #expect(
                throws: SyncError.valueTypeMismatch(
                    type: "SyncPerson", property: "age", expected: "int", found: "string")
            ) {
                try await merge.apply(a.batch([a.createPerson("Bob", age: 1), wrongKind]))
            }
            let unknown = ObjectChange(
                objectType: "SyncPerson", primaryKey: .string("Ann"),
                properties: ["height": .value(.int(1), at: a.clock.now())])
            await #expect(throws: SyncError.unknownProperty(type: "SyncPerson", property: "height")) {
                try await merge.apply(a.batch([unknown]))
            }
            await #expect(throws: SyncError.self) {
                try await merge.apply(a.batch([a.createPerson("Bob", age: 1)], scope: "bad scope"))
            }
            #expect(try await people(database).isEmpty)
            #expect(try await database.rows("SELECT count(*)::text FROM strata_change_log") == [["0"]])
        }
    }

    @Test func everyValueKindLandsInItsTypedColumn() async throws {
        try await TestDatabase.with { database in
            let merge = try await database.merge()
            let a = Replica("a")
            let t = a.clock.now()
            let dog = ObjectChange(
                objectType: "SyncDog", primaryKey: .int(7), created: t,
                properties: [
                    "name": .value(.string("Rex"), at: t), "age": .value(.int(3), at: t),
                    "nickname": .value(.null, at: t),
                    "weight": .value(.double(12.5), at: t), "isGoodBoy": .value(.bool(true), at: t),
                    "birthday": .value(.date(1_700_000_000.25), at: t),
                    "photo": .value(.data(Data([0xDE, 0xAD])), at: t),
                    "chip": .value(.uuid(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!), at: t),
                    "owner": .value(.link(.string("Ann")), at: t),
                    "address": .value(.embedded(["city": .string("Oslo")]), at: t),
                    "extra": .value(.int(5), at: t),
                    "tricks": .list([.clear(at: t), .insert(id: a.clock.now(), after: nil, value: .string("sit"))]),
                    "scores": .map([.clear(at: t), .set(key: "speed", value: .int(9), at: t)]),
                    "colors": .set([.add(value: .string("brown"), tag: a.clock.now())]),
                ])
            _ = try await merge.apply(a.batch([dog]))
            let row = try await database.rows(
                """
                SELECT id::text, name, age::text, nickname, weight::text, "isGoodBoy"::text,
                    extract(epoch FROM birthday)::text, encode(photo, 'hex'), chip::text, owner, address::text,
                    extra::text, tricks::text, scores::text, colors::text, _strata_deleted::text, _strata_created_at
                FROM "SyncDog"
                """)
            #expect(
                row == [
                    [
                        "7", "Rex", "3", nil, "12.5", "true", "1700000000.250000", "dead",
                        "e621e1f8-c36c-495a-93fc-0c247a3e6e5f",
                        "Ann", #"{"city": "Oslo"}"#, #"{"int": 5}"#, #"["sit"]"#, #"{"speed": 9}"#, #"["brown"]"#,
                        "false",
                        t.description,
                    ]
                ])
        }
    }

    /// The upsert passes each column's values (the primary key's too) as a JSON array of texts: characters that
    /// JSON escapes, and several rows in one statement, must come out of it unchanged.
    @Test func textsThatJSONEscapesLandUnchangedInOneMultiRowWrite() async throws {
        try await TestDatabase.with { database in
            let merge = try await database.merge()
            let a = Replica("a")
            let names = ["quote \" and \\ backslash", "line\nbreak\ttab / slash", "Zoë 🐕 ünïcode", "null"]
            let changes = names.enumerated().map { index, name in
                let t = a.clock.now()
                return ObjectChange(
                    objectType: "SyncPerson", primaryKey: .string(name), created: t,
                    properties: ["age": .value(.int(Int64(index)), at: t)])
            }
            _ = try await merge.apply(a.batch(changes))
            let rows = try await database.rows(#"SELECT name, age::text FROM "SyncPerson" ORDER BY age"#)
            #expect(rows == names.enumerated().map { [$1, String($0)] })
        }
    }

    @Test func aMergeWakesListenersAfterItsCommit() async throws {
        try await TestDatabase.with { database in
            let merge = try await database.merge()
            let a = Replica("a")
            let scope = "wake_" + database.namespace.suffix(12)
            let payload = try await database.client.withConnection { connection in
                // Channels belong to the database, not to a PostgreSQL schema: a scope of its own.
                try await connection.listen(on: "strata_\(scope)") { notifications in
                    _ = try await merge.apply(a.batch([a.createPerson("Ann", age: 1)], scope: scope))
                    var iterator = notifications.makeAsyncIterator()
                    return try await iterator.next()?.payload
                }
            }
            #expect(payload == "1")
        }
    }
}

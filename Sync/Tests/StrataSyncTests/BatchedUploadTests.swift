import Foundation
import PostgresNIO
import Testing

@testable import StrataSync

/// Several uploads of one client merged in one PostgreSQL transaction (`ServerMerge.apply(_: [UploadBatch])`):
/// the same rows, log and upload records as merging them one by one, each upload still one log entry.
@Suite struct BatchedUploadTests {
    /// What the merge left in PostgreSQL: the objects with their merge state, the log, the upload records and
    /// the scope's last sequence.
    private func everything(_ database: TestDatabase) async throws -> [[String?]] {
        try await database.rows(
            #"SELECT name, age::text, _strata_state::text, _strata_deleted::text FROM "SyncPerson" ORDER BY name"#)
            + database.rows(
                #"SELECT id::text, name, tricks::text, _strata_state::text, _strata_deleted::text FROM "SyncDog" ORDER BY id"#
            )
            + database.rows(
                "SELECT seq::text, client_id, client_seq::text, changes::text FROM strata_change_log ORDER BY seq")
            + database.rows("SELECT client_id, client_seq::text, seq::text FROM strata_upload ORDER BY client_seq")
            + database.rows("SELECT scope, last_seq::text FROM strata_scope")
    }

    /// A full create of dog `id` (every property), stamped `at`.
    private func createDog(_ id: Int64, name: String, at: HybridTimestamp, trick: HybridTimestamp) -> ObjectChange {
        ObjectChange(
            objectType: "SyncDog", primaryKey: .int(id), created: at,
            properties: [
                "name": .value(.string(name), at: at), "age": .value(.int(1), at: at),
                "nickname": .value(.null, at: at),
                "weight": .value(.double(1), at: at), "isGoodBoy": .value(.bool(true), at: at),
                "birthday": .value(.date(0), at: at), "photo": .value(.data(Data()), at: at),
                "chip": .value(.uuid(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!), at: at),
                "owner": .value(.link(.string("Ann")), at: at), "address": .value(.null, at: at),
                "extra": .value(.null, at: at),
                "tricks": .list([.clear(at: at), .insert(id: trick, after: nil, value: .string("sit"))]),
                "scores": .map([.clear(at: at)]), "colors": .set([]),
            ])
    }

    /// Uploads of one replica that touch the same objects again and again and mix types: creates, updates, a
    /// delete and a re-create, list inserts after one another.
    private func uploads(of a: Replica) -> [UploadBatch] {
        // The create's clear comes before its tricks: elements inserted before a clear go.
        let created = a.clock.now()
        let first = a.clock.now()
        let second = a.clock.now()
        return [
            a.batch([a.createPerson("Ann", age: 1), createDog(1, name: "Rex", at: created, trick: first)]),
            a.batch([a.updatePerson("Ann", age: 2), a.createPerson("Bob", age: 5)]),
            a.batch([
                a.updatePerson("Ann", age: 3),
                ObjectChange(
                    objectType: "SyncDog", primaryKey: .int(1),
                    properties: [
                        "tricks": .list([.insert(id: second, after: first, value: .string("roll"))]),
                        "name": .value(.string("Max"), at: a.clock.now()),
                    ]),
            ]),
            a.batch([a.deletePerson("Bob")]),
            a.batch([a.createPerson("Bob", age: 9), a.updatePerson("Ann", age: 4)]),
        ]
    }

    @Test func aBatchOfEntriesTouchingTheSameObjectsEqualsMergingThemOneByOne() async throws {
        var states: [[[String?]]] = []
        for together in [false, true] {
            try await TestDatabase.with { database in
                let merge = try await database.merge()
                let batches = uploads(of: Replica("a"))
                if together {
                    let results = try await merge.apply(batches)
                    #expect(results.map(\.entry.sequence) == [1, 2, 3, 4, 5])
                    #expect(results.map(\.entry.clientSequence) == [1, 2, 3, 4, 5])
                    #expect(results.allSatisfy { !$0.wasAlreadyApplied })
                } else {
                    for batch in batches { _ = try await merge.apply(batch) }
                }
                states.append(try await everything(database))
            }
        }
        #expect(states[1] == states[0])
        // Ann has her last age; Bob is back with his re-create's; Rex was renamed and has both tricks in order.
        let people = states[1].prefix(2).map { [$0[0], $0[1], $0[3]] }
        #expect(people == [["Ann", "4", "false"], ["Bob", "9", "false"]])
        #expect(states[1][2][1] == "Max")
        #expect(states[1][2][2] == #"["sit", "roll"]"#)
    }

    @Test func aBatchRetriedAfterALostAcknowledgementIsAppliedExactlyOnce() async throws {
        try await TestDatabase.with { database in
            let merge = try await database.merge()
            let a = Replica("a")
            let batches = uploads(of: a)
            let first = try await merge.apply(Array(batches.prefix(3)))
            let afterFirst = try await everything(database)
            // The acknowledgement was lost: the client sends the same batches again — and then with the rest.
            let retry = try await merge.apply(Array(batches.prefix(3)))
            #expect(retry.map(\.wasAlreadyApplied) == [true, true, true])
            #expect(retry.map(\.entry) == first.map(\.entry))
            #expect(try await everything(database) == afterFirst)
            let rest = try await merge.apply(batches)
            #expect(rest.map(\.wasAlreadyApplied) == [true, true, true, false, false])
            #expect(rest.map(\.entry.sequence) == [1, 2, 3, 4, 5])
            #expect(try await database.rows("SELECT last_seq::text FROM strata_scope") == [["5"]])
            #expect(try await database.rows("SELECT count(*)::text FROM strata_upload") == [["5"]])
            #expect(try await database.rows("SELECT count(*)::text FROM strata_change_log") == [["5"]])
        }
    }

    @Test func batchesBeyondTheBoundsGoInSeveralTransactionsWithOneGapFreeLog() async throws {
        var states: [[[String?]]] = []
        for (entries, bytes) in [(500, 4 << 20), (2, 4 << 20), (500, 1)] {
            try await TestDatabase.with { database in
                var merge = try await database.merge()
                merge.maximumBatchesPerTransaction = entries
                merge.maximumBytesPerTransaction = bytes
                let results = try await merge.apply(uploads(of: Replica("a")))
                #expect(results.map(\.entry.sequence) == [1, 2, 3, 4, 5])
                states.append(try await everything(database))
            }
        }
        #expect(states[1] == states[0])
        #expect(states[2] == states[0])
    }

    @Test func anInvalidBatchAmongOthersChangesNothing() async throws {
        try await TestDatabase.with { database in
            let merge = try await database.merge()
            let a = Replica("a")
            var batches = uploads(of: a)
            batches.append(
                a.batch([
                    ObjectChange(
                        objectType: "SyncPerson", primaryKey: .string("Ann"),
                        properties: ["height": .value(.int(1), at: a.clock.now())])
                ]))
            await #expect(throws: SyncError.unknownProperty(type: "SyncPerson", property: "height")) {
                try await merge.apply(batches)
            }
            let b = Replica("b")
            await #expect(throws: SyncError.self) {
                try await merge.apply([
                    a.batch([a.createPerson("Cy", age: 1)]), b.batch([b.createPerson("Di", age: 1)]),
                ])
            }
            let twice = a.batch([a.createPerson("Cy", age: 1)])
            await #expect(throws: SyncError.self) { try await merge.apply([twice, twice]) }
            #expect(try await database.rows("SELECT count(*)::text FROM strata_change_log") == [["0"]])
            #expect(try await database.rows(#"SELECT count(*)::text FROM "SyncPerson""#) == [["0"]])
            #expect(try await merge.apply([UploadBatch]()).isEmpty)
        }
    }
}

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
            // The positional edits in the order they were made: "paw" follows "sit", which is then removed.
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
                    == .list([.insert(id: "\(t2)#1", after: "\(t1)#1", value: .string("paw")), .remove(id: "\(t1)#1")]))
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

    /// Random positional edits (append, insert, replace, remove, move, swap, remove all) on two replicas, some
    /// while the other's edits are not yet seen, in one or several transactions: after everything synced, every
    /// replica holds the server's list.
    @Test(arguments: [UInt64(11), 12, 13])
    func randomPositionalEditsOnTwoReplicasConvergeToTheServersList(seed: UInt64) async throws {
        try await withReplicas(3) { replicas, database in
            let (a, b, c) = (replicas[0], replicas[1], replicas[2])
            var generator = ListEditGenerator(seed: seed)
            var counter = 0
            try a.write { realm in realm.create(ClientBag.self, value: ["id": 1, "tricks": ["p", "q", "r"]]) }
            try await a.sync.syncOnce()
            try await b.sync.downloadPending()
            for round in 0..<12 {
                for replica in [a, b] {
                    replica.wall.withLock { $0 += Int64.random(in: 1...5, using: &generator) }
                    for _ in 0..<Int.random(in: 1...2, using: &generator) {
                        let edits = Int.random(in: 1...(round % 4 == 0 ? 14 : 3), using: &generator)
                        try replica.write { realm in
                            let tricks = try bag(realm).tricks
                            for _ in 0..<edits { randomEdit(tricks, &generator, &counter) }
                        }
                    }
                    // Now and then a replica syncs in between, so the other edits without having seen it.
                    if Bool.random(using: &generator) { try await replica.sync.syncOnce() }
                }
            }
            for replica in [a, b, a, b, c] { try await replica.sync.syncOnce() }
            let expected = try #require(try a.bagTricks(1))
            for replica in replicas { #expect(try replica.bagTricks(1) == expected, "replica \(replica.id)") }
            let rows = try await database.rows("SELECT tricks::text FROM \"ClientBag\" WHERE id = 1")
            #expect(rows == [["[" + expected.map { "\"\($0)\"" }.joined(separator: ", ") + "]"]])
        }
    }

    /// One random edit of `tricks`.
    private func randomEdit(_ tricks: List<String>, _ generator: inout ListEditGenerator, _ counter: inout Int) {
        counter += 1
        let value = "v\(counter)"
        let count = tricks.count
        switch Int.random(in: 0..<20, using: &generator) {
        case 0..<5: tricks.append(value)
        case 5..<9: tricks.insert(value, at: Int.random(in: 0...count, using: &generator))
        case 9..<11 where count > 0: tricks[Int.random(in: 0..<count, using: &generator)] = value
        case 11..<15 where count > 0: tricks.remove(at: Int.random(in: 0..<count, using: &generator))
        case 15..<17 where count > 0:
            tricks.move(
                from: Int.random(in: 0..<count, using: &generator), to: Int.random(in: 0..<count, using: &generator))
        case 17..<19 where count > 1:
            tricks.swapAt(Int.random(in: 0..<count, using: &generator), Int.random(in: 0..<count, using: &generator))
        case 19: tricks.removeAll()
        default: tricks.insert(value, at: 0)
        }
    }
}

/// A deterministic generator (SplitMix64), so that a failing random test reproduces from its seed.
struct ListEditGenerator: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

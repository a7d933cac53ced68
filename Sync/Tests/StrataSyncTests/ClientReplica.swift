import Foundation
import Logging
@_spi(StrataSync) import Strata
import Synchronization
import Testing

@testable import StrataSync

/// A dog of the client tests: plain values, an optional, and a link to another synced type.
final class ClientDog: Object {
    @Persisted(primaryKey: true) var id: Int
    @Persisted var name: String
    @Persisted var age: Int?
    @Persisted var owner: ClientPerson?
}

/// A link target with a string primary key.
final class ClientPerson: Object {
    @Persisted(primaryKey: true) var name: String
    @Persisted var city: String
}

/// A synced type with collections: maps of values and of links, a set and a list.
final class ClientBag: Object {
    @Persisted(primaryKey: true) var id: Int
    @Persisted var scores: Map<String, Int>
    @Persisted var friends: Map<String, ClientPerson?>
    @Persisted var colors: MutableSet<String>
    @Persisted var tricks: List<String>
}

/// One replica of the client tests: a Strata file of its own (in `directory`), its sync client (on PostgreSQL, or
/// through the HTTP gateway at `gateway.url` with `gateway.token`), and a wall clock the test moves.
final class ClientReplica: Sendable {
    let id: String
    let configuration: Realm.Configuration
    let sync: SyncClient
    let wall: ManualWallClock
    /// Commits of this replica's file in this process (its configuration's events).
    let commits: CommitCounter

    init(
        _ id: String, in directory: URL, database: TestDatabase, schema: ServerSchema, batchSize: Int = 200,
        maximumChangesPerApply: Int = 10_000, objectTypes: [ObjectBase.Type] = [ClientDog.self, ClientPerson.self],
        gateway: (url: URL, token: String)? = nil
    ) throws {
        self.id = id
        let wall = ManualWallClock(1_764_000_000_000)
        self.wall = wall
        let commits = CommitCounter()
        self.commits = commits
        var configuration = Realm.Configuration(
            fileURL: directory.appendingPathComponent("\(id).strata"), objectTypes: objectTypes)
        configuration.events = { event in
            if case .committed = event { commits.increment() }
        }
        self.configuration = configuration
        let clock = HybridLogicalClock(replica: id, wallClock: { wall.withLock { $0 } })
        if let gateway {
            // A device: only the gateway's address and a token, no PostgreSQL client.
            sync = try SyncClient(
                configuration: configuration, schema: schema, gateway: gateway.url, token: gateway.token,
                scope: "main", clientID: id, clock: clock, batchSize: batchSize,
                maximumChangesPerApply: maximumChangesPerApply, logger: database.logger)
        } else {
            sync = try SyncClient(
                configuration: configuration, schema: schema, client: database.client, scope: "main", clientID: id,
                clock: clock, batchSize: batchSize, maximumChangesPerApply: maximumChangesPerApply,
                logger: database.logger)
        }
    }

    /// Runs `body` in a write transaction of a Realm opened on this thread for the replica's file.
    @discardableResult
    func write<Result>(_ body: (Realm) throws -> Result) throws -> Result {
        let realm = try Realm(configuration: configuration)
        return try realm.write { try body(realm) }
    }

    /// The replica's dogs as `id name age owner` lines, sorted: what the convergence tests compare.
    func dogs() throws -> [String] {
        let realm = try Realm(configuration: configuration)
        realm.refresh()
        return realm.objects(ClientDog.self).map {
            "\($0.id) \($0.name) \($0.age.map(String.init) ?? "nil") \($0.owner?.name ?? "-")"
        }.sorted()
    }

    /// Bag `id` as `scores` and `friends` lines (`key=value`, sorted), nil when it is not there.
    func bagMaps(_ id: Int) throws -> String? {
        let realm = try Realm(configuration: configuration)
        realm.refresh()
        guard let bag = realm.object(ofType: ClientBag.self, forPrimaryKey: id) else { return nil }
        let scores = bag.scores.map { "\($0.key)=\($0.value)" }.sorted()
        let friends = bag.friends.map { "\($0.key)=\($0.value?.name ?? "nil")" }.sorted()
        return (scores + ["|"] + friends).joined(separator: " ")
    }

    /// Bag `id`'s colors, sorted; nil when the bag is not there.
    func bagColors(_ id: Int) throws -> [String]? {
        let realm = try Realm(configuration: configuration)
        realm.refresh()
        return realm.object(ofType: ClientBag.self, forPrimaryKey: id).map { Array($0.colors).sorted() }
    }

    /// Bag `id`'s tricks in list order; nil when the bag is not there.
    func bagTricks(_ id: Int) throws -> [String]? {
        let realm = try Realm(configuration: configuration)
        realm.refresh()
        return realm.object(ofType: ClientBag.self, forPrimaryKey: id).map { Array($0.tricks) }
    }

    /// How many entries wait in the replica's upload queue.
    func queued() throws -> Int {
        let realm = try Realm(configuration: configuration)
        realm.refresh()
        return try realm.syncQueue().count
    }
}

/// Runs `body` with `count` replicas named a, b, c, … of `classes` on a fresh PostgreSQL schema (the collection
/// suites' setup: every replica pulls in batches of 200).
func withCollectionReplicas(
    _ count: Int, classes: [ObjectBase.Type], _ body: ([ClientReplica], TestDatabase) async throws -> Void
) async throws {
    try await TestDatabase.with { database in
        let schema = try await database.migratedSchema(classes)
        let directory = try ReplicaDirectory()
        let replicas = try ["a", "b", "c"].prefix(count).map {
            try ClientReplica($0, in: directory.url, database: database, schema: schema, objectTypes: classes)
        }
        defer { for replica in replicas { replica.configuration.stopSyncCapture() } }
        try await body(replicas, database)
        withExtendedLifetime(directory) {}
    }
}

/// The `ClientBag` with primary key `id` in `realm`; fails the test if there is none.
func bag(_ realm: Realm, _ id: Int = 1) throws -> ClientBag {
    try #require(realm.object(ofType: ClientBag.self, forPrimaryKey: id))
}

/// A directory for the replicas' files, removed when released.
final class ReplicaDirectory {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("strata-sync-client-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }
}

/// Counts commits reported by a configuration's events.
final class CommitCounter: Sendable {
    private let count = Mutex(0)
    func increment() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}

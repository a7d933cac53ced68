import Foundation
import PostgresNIO
import Strata
import SyncConvergence
import Testing

@testable import StrataSync

/// Lists, maps and sets written through plain SQL: the capture trigger logs them as collection operations and
/// updates the row's merge state as merging those operations would, so replicas, later merges and bootstraps all
/// agree with PostgreSQL.
@Suite struct CaptureTriggerCollectionTests {
    private static let bagClasses: [ObjectBase.Type] = [ClientDog.self, ClientPerson.self, ClientBag.self]

    /// Every kind of collection of the convergence model (strings, ints, links by key, optional links), written
    /// by one UPDATE: every replica ends equal to the tables, the entry holds only what changed, and merging it
    /// into the row's merge state from before gives the state the trigger stored.
    @Test func sqlWritesOfListsMapsAndSetsReachEveryReplicaAndEqualTheTables() async throws {
        try await withCollectionReplicas(3, classes: convergenceClasses) { replicas, database in
            setClocksBehindPostgreSQL(replicas)
            let a = replicas[0]
            try a.write { realm in
                for name in convergencePeople {
                    realm.create(ConvergencePerson.self, value: ["name": name, "city": "-"])
                }
                let ann = try #require(realm.object(ofType: ConvergencePerson.self, forPrimaryKey: "ann"))
                realm.create(
                    ConvergenceItem.self,
                    value: [
                        "id": 1, "label": "one", "tags": ["t1", "t2", "t3"], "visitors": [ann],
                        "scores": ["a": 1, "b": 2], "friends": ["x": ann], "colors": ["red", "blue"],
                        "lucky": [7, 8],
                    ])
            }
            for replica in replicas { try await replica.sync.syncOnce() }
            let before = try await itemState(database)
            let lastBefore = try await lastSequence(database)

            _ = try await database.rows(
                """
                UPDATE "ConvergenceItem" SET tags = '["t2", "new", "t1"]', visitors = '["bob", "ann", "bob"]',
                    scores = '{"b": 2, "c": 3}', friends = '{"x": null, "y": "cyd"}', colors = '["green", "red"]',
                    lucky = '[8, 9, 8]'
                WHERE id = 1
                """)
            for replica in replicas { try await replica.sync.syncOnce() }

            let tables = try await PostgresDump(database: database).lines()
            for replica in replicas {
                let realm = try Realm(configuration: replica.configuration)
                realm.refresh()
                #expect(canonicalDump(realm) == tables, "replica \(replica.id)")
                let item = try #require(realm.object(ofType: ConvergenceItem.self, forPrimaryKey: 1))
                #expect(Array(item.tags) == ["t2", "new", "t1"])
                #expect(item.visitors.map(\.name) == ["bob", "ann", "bob"])
                #expect(item.scores.map { "\($0.key)=\($0.value)" }.sorted() == ["b=2", "c=3"])
                #expect(item.friends.map { "\($0.key)=\($0.value?.name ?? "nil")" }.sorted() == ["x=nil", "y=cyd"])
                #expect(Array(item.colors).sorted() == ["green", "red"])
                #expect(Array(item.lucky).sorted() == [8, 9])
            }
            // The set columns hold each value once, in the set's order (the earliest live tag first).
            let sets = try await database.rows(#"SELECT colors::text, lucky::text FROM "ConvergenceItem""#)
            #expect(sets == [[#"["red", "green"]"#, "[8, 9]"]])

            let entries = try await database.merge(convergenceClasses).pull(scope: "main", after: lastBefore)
            #expect(entries.count == 1 && entries.first?.clientID == nil)
            let change = try #require(entries.first?.changes.first)
            let at = try #require(Self.mapStamp(change.properties["scores"]))
            #expect(at.replica == "server")
            // Only the map keys that changed; the list replaced; the set's new value added, the gone one removed.
            #expect(
                change.properties["scores"]
                    == .map([.set(key: "c", value: .int(3), at: at), .set(key: "a", value: nil, at: at)]))
            guard case .list(let tagOperations)? = change.properties["tags"] else {
                Issue.record("tags are written as list operations: \(change)")
                return
            }
            // A longest common subsequence (t1) stays: t2 and t3 removed, t2 and new inserted before t1.
            #expect(tagOperations.count == 4 && !tagOperations.contains(.clear(at: at)))
            guard case .set(let colorOperations)? = change.properties["colors"] else {
                Issue.record("colors are written as set operations: \(change)")
                return
            }
            #expect(colorOperations.count == 2)
            var merged = before
            let schema = try ServerSchema(namespace: database.namespace, classes: convergenceClasses)
            _ = RowMerge(change, into: &merged, type: try schema.type("ConvergenceItem"))
            #expect(try await itemState(database) == merged)
        }
    }

    /// Mixed values (tagged) and embedded objects (plain JSON, nested ones included) as collection elements, in
    /// an INSERT and an UPDATE: every replica gets them.
    @Test func mixedAndEmbeddedElementsWrittenThroughSQLReachEveryReplica() async throws {
        let classes: [ObjectBase.Type] = [
            WholeThing.self, WholeAddress.self, WholeGeo.self, ClientPerson.self, WholeBox.self, WholeRoute.self,
        ]
        try await withCollectionReplicas(2, classes: classes) { replicas, database in
            setClocksBehindPostgreSQL(replicas)
            try replicas[0].write { realm in realm.create(ClientPerson.self, value: ["name": "Ann", "city": "Oslo"]) }
            try await replicas[0].sync.syncOnce()
            _ = try await database.rows(
                """
                INSERT INTO "WholeBox" (_strata_scope, id, items, tags, fields) VALUES ('main', 1,
                    '[{"int": 1}, {"string": "x"}, {"typedLink": {"type": "ClientPerson", "key": {"string": "Ann"}}}]',
                    '[{"int": 1}, {"bool": true}, {"int": 1}]', '{"k": {"double": 2.5}, "n": {"null": true}}')
                """)
            _ = try await database.rows(
                """
                INSERT INTO "WholeRoute" (_strata_scope, id, stops, places) VALUES ('main', 1,
                    '[{"street": "Main", "city": "Oslo", "notes": ["n1"], "geo": {"lat": 1.5, "lon": 2.5}}]',
                    '{"home": {"street": "Dock", "city": "Bergen"}, "none": null}')
                """)
            _ = try await database.rows(
                #"UPDATE "WholeBox" SET items = '[{"date": 1700000000.5}, {"uuid": "e621e1f8-c36c-495a-93fc-0c247a3e6e5f"}]' WHERE id = 1"#
            )
            for replica in replicas {
                try await replica.sync.syncOnce()
                let realm = try Realm(configuration: replica.configuration)
                realm.refresh()
                let box = try #require(realm.object(ofType: WholeBox.self, forPrimaryKey: 1))
                #expect(
                    Array(box.items) == [
                        .date(Date(timeIntervalSince1970: 1_700_000_000.5)),
                        .uuid(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!),
                    ])
                let tags = Array(box.tags)
                #expect(tags.count == 2 && tags.contains(.int(1)) && tags.contains(.bool(true)))
                #expect(box.fields["k"] == .double(2.5) && box.fields["n"] == .some(AnyRealmValue.none))
                let route = try #require(realm.object(ofType: WholeRoute.self, forPrimaryKey: 1))
                let stop = try #require(route.stops.first)
                #expect(route.stops.count == 1 && stop.street == "Main" && stop.city == "Oslo")
                #expect(Array(stop.notes) == ["n1"] && stop.geo?.lat == 1.5 && stop.geo?.lon == 2.5)
                #expect(route.places["home"]??.city == "Bergen")
                #expect(route.places.keys.sorted() == ["home", "none"])
            }
            // The mixed list before the UPDATE held a link: the first INSERT's elements reached the log too.
            let first = try await database.merge(classes).pull(scope: "main", after: 1).first?.changes.first
            guard case .list(let operations)? = first?.properties["items"] else {
                Issue.record("the INSERT's items are list operations: \(String(describing: first))")
                return
            }
            #expect(
                operations.dropFirst().map { operation -> SyncValue? in
                    if case .insert(_, _, let value) = operation { return value }
                    return nil
                } == [.int(1), .string("x"), .typedLink(type: "ClientPerson", key: .string("Ann"))])
        }
    }

    /// B and C append offline, B with a clock later than a SQL write that replaces the list, C with an earlier
    /// one: both inserts stay, after the SQL contents (they follow an element the SQL write removed), the later
    /// first — the rule of concurrent list edits. Later SQL writes are logged as the fewest edits that keep a
    /// longest common subsequence: one insert, one removal, then an edit in three places.
    @Test func aSQLListWriteMergesWithConcurrentInsertsAsAClientEditWould() async throws {
        try await withCollectionReplicas(3, classes: Self.bagClasses) { replicas, database in
            setClocksBehindPostgreSQL(replicas)
            let (a, b, c) = (replicas[0], replicas[1], replicas[2])
            try a.write { realm in realm.create(ClientBag.self, value: ["id": 1, "tricks": ["sit", "roll"]]) }
            try await a.sync.syncOnce()
            for replica in [b, c] { try await replica.sync.syncOnce() }
            b.wall.withLock { $0 += 720_000 }
            try b.write { realm in try bag(realm).tricks.append("beg") }
            try c.write { realm in try bag(realm).tricks.append("old") }

            _ = try await database.rows(#"UPDATE "ClientBag" SET tricks = '["x", "y"]' WHERE id = 1"#)
            for replica in [c, b, a, c, b] { try await replica.sync.syncOnce() }

            let merged = ["x", "y", "beg", "old"]
            #expect(
                try await database.rows(#"SELECT tricks::text FROM "ClientBag""#) == [[#"["x", "y", "beg", "old"]"#]])
            for replica in replicas { #expect(try replica.bagTricks(1) == merged, "replica \(replica.id)") }

            // One element inserted in the middle, then one removed: one operation each.
            let last = try await lastSequence(database)
            _ = try await database.rows(#"UPDATE "ClientBag" SET tricks = '["x", "mid", "y", "beg", "old"]'"#)
            _ = try await database.rows(#"UPDATE "ClientBag" SET tricks = '["x", "mid", "y", "old"]'"#)
            let entries = try await database.merge(Self.bagClasses).pull(scope: "main", after: last)
            let operations = entries.compactMap { entry -> [ListOperation]? in
                guard case .list(let operations)? = entry.changes.first?.properties["tricks"] else { return nil }
                return operations
            }
            guard operations.count == 2, operations[0].count == 1, operations[1].count == 1,
                case .insert(_, let after?, .string("mid")) = operations[0][0], case .remove = operations[1][0]
            else {
                Issue.record("one insert, then one removal: \(entries)")
                return
            }
            #expect(after.replica.hasPrefix("server#"))  // after x, which the first SQL write inserted
            for replica in replicas {
                try await replica.sync.syncOnce()
                #expect(try replica.bagTricks(1) == ["x", "mid", "y", "old"], "replica \(replica.id)")
            }
            // Edits in three places, nothing shared at the start or the end: the longest common subsequence (x, mid,
            // old) stays, so two inserts and one removal.
            let before = try await lastSequence(database)
            _ = try await database.rows(#"UPDATE "ClientBag" SET tricks = '["new", "x", "mid", "old", "end"]'"#)
            let threePlaces = try await database.merge(Self.bagClasses).pull(scope: "main", after: before)
            guard case .list(let edits)? = threePlaces.first?.changes.first?.properties["tricks"] else {
                Issue.record("list operations: \(threePlaces)")
                return
            }
            let values = edits.compactMap { edit -> String? in
                switch edit {
                case .insert(_, _, .string(let value)): return "+" + value
                case .remove: return "-"
                default: return nil
                }
            }
            #expect(values == ["+new", "-", "+end"])
            for replica in replicas {
                try await replica.sync.syncOnce()
                #expect(try replica.bagTricks(1) == ["new", "x", "mid", "old", "end"], "replica \(replica.id)")
            }
        }
    }

    /// A replica edits each collection after downloading a SQL write of it: its operations name the ids and tags
    /// the trigger made, so they merge on top of the SQL contents everywhere.
    @Test func clientEditsAfterASQLCollectionWriteMergeOnTopOfIt() async throws {
        try await withCollectionReplicas(2, classes: Self.bagClasses) { replicas, database in
            setClocksBehindPostgreSQL(replicas)
            let (a, b) = (replicas[0], replicas[1])
            try a.write { realm in
                realm.create(
                    ClientBag.self, value: ["id": 1, "tricks": ["sit"], "scores": ["a": 1], "colors": ["red"]])
            }
            try await a.sync.syncOnce()
            try await b.sync.syncOnce()
            _ = try await database.rows(
                """
                UPDATE "ClientBag" SET tricks = '["x", "y", "z"]', scores = '{"a": 5, "b": 2}',
                    colors = '["red", "green"]' WHERE id = 1
                """)
            try await a.sync.syncOnce()
            #expect(try a.bagTricks(1) == ["x", "y", "z"] && a.bagColors(1) == ["green", "red"])
            try a.write { realm in
                let bag = try bag(realm)
                bag.tricks.insert("between", at: 1)
                bag.tricks.remove(at: 2)
                bag.scores.removeObject(for: "b")
                bag.colors.remove("green")
                bag.colors.insert("blue")
            }
            try await a.sync.syncOnce()
            try await b.sync.syncOnce()

            for replica in replicas {
                #expect(try replica.bagTricks(1) == ["x", "between", "z"], "replica \(replica.id)")
                #expect(try replica.bagMaps(1) == "a=5 |", "replica \(replica.id)")
                #expect(try replica.bagColors(1) == ["blue", "red"], "replica \(replica.id)")
            }
            let columns = try await database.rows(#"SELECT tricks::text, scores::text, colors::text FROM "ClientBag""#)
            #expect(columns == [[#"["x", "between", "z"]"#, #"{"a": 5}"#, #"["red", "blue"]"#]])
        }
    }

    /// A SQL UPDATE of a row's collections and a SQL INSERT of a new row, then the log trimmed past them: a new
    /// replica's bootstrap (the snapshot reads `_strata_state`) and an old replica's re-bootstrap give the SQL
    /// contents.
    @Test func aBootstrapAfterSQLCollectionWritesGivesTheSQLContents() async throws {
        try await withCollectionReplicas(3, classes: Self.bagClasses) { replicas, database in
            setClocksBehindPostgreSQL(replicas)
            let (a, c) = (replicas[0], replicas[2])
            try a.write { realm in
                realm.create(
                    ClientBag.self, value: ["id": 1, "tricks": ["sit"], "scores": ["a": 1], "colors": ["red"]])
            }
            try await a.sync.syncOnce()
            _ = try await database.rows(
                """
                UPDATE "ClientBag" SET tricks = '["x", "y"]', scores = '{"b": 2}', colors = '["blue", "red"]'
                WHERE id = 1
                """)
            _ = try await database.rows(
                """
                INSERT INTO "ClientBag" (_strata_scope, id, tricks, scores, colors)
                VALUES ('main', 2, '["p", "q"]', '{"k": 9}', '["green"]')
                """)
            let merge = try await database.merge(Self.bagClasses)
            try await merge.trimLog(scope: "main", through: try await lastSequence(database))
            for replica in [a, c] {
                try await replica.sync.syncOnce()
                #expect(try replica.bagTricks(1) == ["x", "y"], "replica \(replica.id)")
                #expect(try replica.bagMaps(1) == "b=2 |", "replica \(replica.id)")
                #expect(try replica.bagColors(1) == ["blue", "red"], "replica \(replica.id)")
                #expect(try replica.bagTricks(2) == ["p", "q"], "replica \(replica.id)")
                #expect(try replica.bagMaps(2) == "k=9 |", "replica \(replica.id)")
                #expect(try replica.bagColors(2) == ["green"], "replica \(replica.id)")
            }
        }
    }

    /// A collection column given another JSON shape than its own, or an element of another kind, fails the
    /// statement with SQLSTATE 22023: the row and the log stay as they were.
    @Test func malformedCollectionWritesFailWith22023AndLogNothing() async throws {
        let classes: [ObjectBase.Type] = [
            SyncDog.self, SyncPerson.self, SyncAddress.self, ClientPerson.self, WholeBox.self,
        ]
        try await TestDatabase.with { database in
            _ = try await database.migratedSchema(classes)
            _ = try await database.rows(
                """
                INSERT INTO "SyncDog" (_strata_scope, id, name, tricks, scores, colors)
                VALUES ('main', 1, 'Rex', '["sit"]', '{"a": 1}', '["red"]')
                """)
            _ = try await database.rows(#"INSERT INTO "WholeBox" (_strata_scope, id) VALUES ('main', 1)"#)
            let statements = [
                #"UPDATE "SyncDog" SET tricks = '"sit"'"#,  // not an array
                #"UPDATE "SyncDog" SET tricks = '{"a": "sit"}'"#,
                #"UPDATE "SyncDog" SET tricks = '[null]'"#,  // null in a list of non-optional strings
                #"UPDATE "SyncDog" SET tricks = '["sit", 5]'"#,
                #"UPDATE "SyncDog" SET scores = '[1]'"#,  // not an object
                #"UPDATE "SyncDog" SET scores = '{"a": "x"}'"#,
                #"UPDATE "SyncDog" SET scores = '{"a": 1.5}'"#,
                #"UPDATE "SyncDog" SET colors = '[true]'"#,
                #"UPDATE "SyncDog" SET colors = '{"red": true}'"#,
                #"INSERT INTO "SyncDog" (_strata_scope, id, name, tricks) VALUES ('main', 2, 'Bo', '[1]')"#,
                #"UPDATE "WholeBox" SET items = '[5]'"#,  // a mixed element is tagged
                #"UPDATE "WholeBox" SET items = '[{"list": [{"int": 1}]}]'"#,  // no nested collection
                #"UPDATE "WholeBox" SET fields = '{"k": {"int": 1, "string": "x"}}'"#,
                #"UPDATE "WholeBox" SET tags = '[{"int": "x"}]'"#,
            ]
            for statement in statements {
                do {
                    _ = try await database.rows(statement)
                    Issue.record("accepted: \(statement)")
                } catch let error as PSQLError {
                    #expect(error.serverInfo?[.sqlState] == "22023", "\(statement): \(String(reflecting: error))")
                }
            }
            #expect(try await database.rows("SELECT count(*)::text FROM strata_change_log") == [["2"]])
            #expect(
                try await database.rows(#"SELECT tricks::text, scores::text, colors::text FROM "SyncDog""#) == [
                    [#"["sit"]"#, #"{"a": 1}"#, #"["red"]"#]
                ])
        }
    }

    /// Sets the replicas' wall clocks two minutes behind PostgreSQL's (the trigger stamps by `clock_timestamp()`):
    /// their writes before a SQL write are older than it, and within the hour a replica's clock takes in
    /// (``HybridLogicalClock/maximumDrift``), so a write after downloading it is later.
    private func setClocksBehindPostgreSQL(_ replicas: [ClientReplica]) {
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        for replica in replicas { replica.wall.withLock { $0 = now - 120_000 } }
    }

    /// The `at` of a map update's first operation.
    private static func mapStamp(_ update: PropertyUpdate?) -> HybridTimestamp? {
        guard case .map(let operations)? = update, case .set(_, _, let at)? = operations.first else { return nil }
        return at
    }

    /// Item 1's merge state.
    private func itemState(_ database: TestDatabase) async throws -> RowState {
        let text = try #require(
            try await database.rows(#"SELECT _strata_state::text FROM "ConvergenceItem" WHERE id = 1"#).first?.first
                ?? nil)
        return try SyncJSON.decode(RowState.self, from: text)
    }

    private func lastSequence(_ database: TestDatabase) async throws -> Int64 {
        let text = try await database.rows("SELECT COALESCE(max(last_seq), 0)::text FROM strata_scope").first?.first
        return Int64(try #require(text ?? nil)) ?? 0
    }
}

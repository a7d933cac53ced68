import Foundation
@_spi(StrataSync) import Strata
import Testing

@_spi(StrataSync) @testable import StrataSync

/// A synced type with a mixed property and an embedded object (which holds a nested one and a list).
final class WholeThing: Object {
    @Persisted(primaryKey: true) var id: Int
    @Persisted var value: AnyRealmValue
    @Persisted var home: WholeAddress?
}

/// An embedded object with a nested embedded object, an optional and a list of its own.
final class WholeAddress: EmbeddedObject {
    @Persisted var street: String
    @Persisted var city: String
    @Persisted var zip: Int?
    @Persisted var geo: WholeGeo?
    @Persisted var notes: List<String>
}

/// An embedded object inside an embedded object.
final class WholeGeo: EmbeddedObject {
    @Persisted var lat: Double
    @Persisted var lon: Double
}

/// A synced type with collections of mixed values.
final class WholeBox: Object {
    @Persisted(primaryKey: true) var id: Int
    @Persisted var items: List<AnyRealmValue>
    @Persisted var tags: MutableSet<AnyRealmValue>
    @Persisted var fields: Map<String, AnyRealmValue>
}

/// A synced type with a list and a map of embedded objects.
final class WholeRoute: Object {
    @Persisted(primaryKey: true) var id: Int
    @Persisted var stops: List<WholeAddress>
    @Persisted var places: Map<String, WholeAddress?>
}

/// Mixed values and embedded objects through the sync client against a real PostgreSQL: every kind of mixed
/// value, links in mixed values, embedded objects set, edited in place, replaced, nulled and nested; last writer
/// wins per property, the jsonb forms in the tables, and the refusal of what the client cannot sync.
@Suite struct SyncClientWholeValueTests {
    private static let classes: [ObjectBase.Type] = [
        WholeThing.self, WholeAddress.self, WholeGeo.self, ClientPerson.self, WholeBox.self, WholeRoute.self,
    ]

    private func withReplicas(_ body: ([ClientReplica], TestDatabase) async throws -> Void) async throws {
        try await withCollectionReplicas(3, classes: Self.classes, body)
    }

    /// Uploads `writer`'s queue and lets every replica download.
    private func sync(_ writer: ClientReplica, _ replicas: [ClientReplica]) async throws {
        try await writer.sync.uploadPending()
        for replica in replicas { try await replica.sync.downloadPending() }
    }

    @Test func mixedValuesOfEveryKindReachEveryReplicaAndTheTable() async throws {
        try await withReplicas { replicas, database in
            let a = replicas[0]
            try a.write { realm in
                realm.create(ClientPerson.self, value: ["name": "Ann", "city": "Oslo"])
                realm.create(WholeThing.self, value: ["id": 1, "value": AnyRealmValue.int(7)])
            }
            try await sync(a, replicas)
            for replica in replicas { #expect(try replica.thingValue() == "int 7", "replica \(replica.id)") }
            let id = try ObjectId(string: "0123456789abcdef01234567")
            let uuid = try #require(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F"))
            let cases: [(set: (Realm) throws -> AnyRealmValue, shown: String, column: String)] = [
                ({ _ in .string("Rex") }, "string Rex", #"{"string": "Rex"}"#),
                ({ _ in .int(-42) }, "int -42", #"{"int": -42}"#),
                ({ _ in .bool(true) }, "bool true", #"{"bool": true}"#),
                ({ _ in .double(2.5) }, "double 2.5", #"{"double": 2.5}"#),
                ({ _ in .float(1.5) }, "float 1.5", #"{"float": 1.5}"#),
                (
                    { _ in .date(Date(timeIntervalSince1970: 1_764_000_000.25)) }, "date 1764000000.25",
                    #"{"date": 1764000000.25}"#
                ),
                ({ _ in .data(Data([0, 1, 255])) }, "data AAH/", #"{"data": "AAH/"}"#),
                (
                    { _ in .objectId(id) }, "objectId 0123456789abcdef01234567",
                    #"{"objectId": "0123456789abcdef01234567"}"#
                ),
                (
                    { _ in .uuid(uuid) }, "uuid E621E1F8-C36C-495A-93FC-0C247A3E6E5F",
                    #"{"uuid": "E621E1F8-C36C-495A-93FC-0C247A3E6E5F"}"#
                ),
                (
                    { _ in .decimal128(try Decimal128(string: "12.50")) }, "decimal128 12.50",
                    #"{"decimal128": "12.50"}"#
                ),
                (
                    { realm in .object(try #require(realm.object(ofType: ClientPerson.self, forPrimaryKey: "Ann"))) },
                    "link ClientPerson Ann", #"{"typedLink": {"key": {"string": "Ann"}, "type": "ClientPerson"}}"#
                ),
                (
                    { _ in .fromArray([.int(1), .string("x"), .fromArray([.bool(false)])]) },
                    "list [int 1, string x, list [bool false]]",
                    #"{"list": [{"int": 1}, {"string": "x"}, {"list": [{"bool": false}]}]}"#
                ),
                (
                    { _ in .fromDictionary(["k": .int(1), "n": .none]) }, "dictionary [k: int 1, n: null]",
                    #"{"dictionary": {"k": {"int": 1}, "n": {"null": true}}}"#
                ),
                ({ _ in .none }, "null", #"{"null": true}"#),
            ]
            for (index, step) in cases.enumerated() {
                // Each value is written by another replica, so every replica captures and applies every kind.
                let writer = replicas[index % replicas.count]
                try writer.write { realm in try thing(realm).value = try step.set(realm) }
                try await sync(writer, replicas)
                for replica in replicas {
                    #expect(try replica.thingValue() == step.shown, "replica \(replica.id) after \(step.shown)")
                }
                let rows = try await database.rows(#"SELECT value::text FROM "WholeThing" WHERE id = 1"#)
                #expect(rows == [[step.column]], "column after \(step.shown)")
            }
        }
    }

    @Test func anEditInsideAMixedValuesNestedListIsSentAsTheWholeValue() async throws {
        try await withReplicas { replicas, _ in
            let (a, b) = (replicas[0], replicas[1])
            try a.write { realm in
                realm.create(WholeThing.self, value: ["id": 1, "value": AnyRealmValue.fromArray([.int(1)])])
            }
            try await sync(a, replicas)
            try a.write { realm in try #require(try thing(realm).value.listValue).append(.string("two")) }
            try await sync(a, replicas)
            #expect(try b.thingValue() == "list [int 1, string two]")
        }
    }

    @Test func concurrentWritesOfAMixedPropertyResolveByLastWriterWins() async throws {
        try await withReplicas { replicas, _ in
            let (a, b, c) = (replicas[0], replicas[1], replicas[2])
            try a.write { realm in realm.create(WholeThing.self, value: ["id": 1, "value": AnyRealmValue.int(0)]) }
            try await sync(a, replicas)
            // Concurrent: a writes first, b later; a uploads last, and a's older write loses everywhere.
            a.wall.withLock { $0 += 10 }
            b.wall.withLock { $0 += 20 }
            try a.write { realm in try thing(realm).value = .string("older") }
            try b.write { realm in try thing(realm).value = .fromDictionary(["newer": .bool(true)]) }
            try await b.sync.uploadPending()
            try await a.sync.downloadPending()  // a's pending older write gives way to b's
            try await a.sync.uploadPending()
            for replica in replicas { try await replica.sync.downloadPending() }
            for replica in [a, b, c] {
                #expect(try replica.thingValue() == "dictionary [newer: bool true]", "replica \(replica.id)")
            }
        }
    }

    @Test func embeddedObjectsSetEditedReplacedNestedAndNulledConverge() async throws {
        try await withReplicas { replicas, database in
            let (a, b, c) = (replicas[0], replicas[1], replicas[2])
            // A create carries the embedded object, nested one and list included.
            try a.write { realm in
                realm.create(
                    WholeThing.self,
                    value: [
                        "id": 1, "value": AnyRealmValue.none,
                        "home": ["street": "Main", "city": "Oslo", "geo": ["lat": 1.5, "lon": 2.5], "notes": ["n1"]],
                    ])
            }
            try await sync(a, replicas)
            let created = "Main Oslo nil geo(1.5, 2.5) [n1]"
            for replica in replicas { #expect(try replica.home() == created, "replica \(replica.id)") }
            let column = try await database.rows(#"SELECT home::text FROM "WholeThing" WHERE id = 1"#)
            #expect(
                column == [
                    [
                        #"{"geo": {"lat": 1.5, "lon": 2.5}, "zip": null, "city": "Oslo", "notes": ["n1"], "street": "Main"}"#
                    ]
                ])
            // b keeps an accessor to its embedded object: an edit downloaded later updates it in place.
            let realmB = try Realm(configuration: b.configuration)
            let homeB = try #require(try thing(realmB).home)
            // One field edited, on another replica.
            try c.write { realm in try #require(try thing(realm).home).city = "Bergen" }
            try await sync(c, replicas)
            for replica in replicas {
                #expect(try replica.home() == "Main Bergen nil geo(1.5, 2.5) [n1]", "replica \(replica.id)")
            }
            realmB.refresh()
            #expect(!homeB.isInvalidated)
            #expect(homeB.city == "Bergen")
            // A nested embedded object's field, and the embedded object's own list.
            try b.write { realm in
                let home = try #require(try thing(realm).home)
                try #require(home.geo).lat = 9
                home.notes.append("n2")
                home.zip = 5000
            }
            try await sync(b, replicas)
            for replica in replicas {
                #expect(try replica.home() == "Main Bergen 5000 geo(9.0, 2.5) [n1, n2]", "replica \(replica.id)")
            }
            // Replaced whole, with the nested object removed.
            try a.write { realm in
                try thing(realm).home = WholeAddress(value: ["street": "Side", "city": "Lund", "notes": []])
            }
            try await sync(a, replicas)
            for replica in replicas { #expect(try replica.home() == "Side Lund nil - []", "replica \(replica.id)") }
            // Nulled.
            try c.write { realm in try thing(realm).home = nil }
            try await sync(c, replicas)
            for replica in replicas { #expect(try replica.home() == "-", "replica \(replica.id)") }
            #expect(
                try await database.rows(#"SELECT home::text FROM "WholeThing" WHERE id = 1"#) == [[nil]])
        }
    }

    @Test func concurrentEditsOfOneEmbeddedObjectResolveWholeByLastWriterWins() async throws {
        try await withReplicas { replicas, _ in
            let (a, b, c) = (replicas[0], replicas[1], replicas[2])
            try a.write { realm in
                realm.create(WholeThing.self, value: ["id": 1, "home": ["street": "Main", "city": "Oslo"]])
            }
            try await sync(a, replicas)
            a.wall.withLock { $0 += 10 }
            b.wall.withLock { $0 += 20 }
            // Different fields, concurrently: the embedded object is one value, so the later write wins whole.
            try a.write { realm in try #require(try thing(realm).home).street = "Older" }
            try b.write { realm in try #require(try thing(realm).home).city = "Newer" }
            try await a.sync.uploadPending()
            try await b.sync.downloadPending()  // b's pending later write keeps its value
            try await b.sync.uploadPending()
            for replica in replicas { try await replica.sync.downloadPending() }
            for replica in [a, b, c] { #expect(try replica.home() == "Main Newer nil - []", "replica \(replica.id)") }
        }
    }

    @Test func aWriteOfAnUnrelatedPropertyDoesNotSendTheEmbeddedObject() async throws {
        try await withReplicas { replicas, _ in
            let a = replicas[0]
            try a.write { realm in
                realm.create(WholeThing.self, value: ["id": 1, "home": ["street": "Main", "city": "Oslo"]])
            }
            try await a.sync.uploadPending()
            try a.write { realm in try thing(realm).value = .int(1) }
            let realm = try Realm(configuration: a.configuration)
            let entry = try #require(try realm.syncQueue().first)
            #expect(entry.changes.map { Set($0.values.keys) } == [["value"]])
        }
    }

    @Test func aMixedValueLinkingToAnObjectWithoutAPrimaryKeyFailsTheWrite() async throws {
        try await TestDatabase.with { database in
            let schema = try await database.migratedSchema(Self.classes)
            let directory = try ReplicaDirectory()
            let replica = try ClientReplica(
                "a", in: directory.url, database: database, schema: schema,
                objectTypes: Self.classes + [WholeNote.self])
            defer { replica.configuration.stopSyncCapture() }
            try replica.write { realm in realm.create(WholeThing.self, value: ["id": 1]) }
            #expect(throws: Realm.Error.self) {
                try replica.write { realm in try thing(realm).value = .object(WholeNote(value: ["text": "x"])) }
            }
            #expect(try replica.thingValue() == "null")
            #expect(try replica.queued() == 1)
            withExtendedLifetime(directory) {}
        }
    }

    @Test func aPlainSQLWriteOfAMixedColumnReachesTheClients() async throws {
        try await withReplicas { replicas, database in
            let (a, b) = (replicas[0], replicas[1])
            try a.write { realm in
                realm.create(ClientPerson.self, value: ["name": "Ann", "city": "Oslo"])
                realm.create(WholeThing.self, value: ["id": 1, "value": AnyRealmValue.int(1)])
            }
            try await sync(a, replicas)
            _ = try await database.rows(
                #"UPDATE "WholeThing" SET value = '{"typedLink": {"type": "ClientPerson", "key": {"string": "Ann"}}}' WHERE id = 1"#
            )
            for replica in replicas { try await replica.sync.downloadPending() }
            #expect(try a.thingValue() == "link ClientPerson Ann")
            #expect(try b.thingValue() == "link ClientPerson Ann")
        }
    }

    @Test func aPlainSQLWriteOfAnEmbeddedColumnReachesTheClientsAndAMisfitIsRefused() async throws {
        try await withReplicas { replicas, database in
            let (a, b) = (replicas[0], replicas[1])
            try a.write { realm in
                realm.create(WholeThing.self, value: ["id": 1, "home": ["street": "Main", "city": "Oslo"]])
            }
            try await sync(a, replicas)
            _ = try await database.rows(
                """
                UPDATE "WholeThing" SET home = '{"street": "Dock", "city": "Bergen", "zip": 5003,
                    "geo": {"lat": 60.4, "lon": 5.3}, "notes": ["quay", "fish"]}' WHERE id = 1
                """)
            for replica in replicas { try await replica.sync.downloadPending() }
            #expect(try a.home() == "Dock Bergen 5003 geo(60.4, 5.3) [quay, fish]")
            #expect(try b.home() == "Dock Bergen 5003 geo(60.4, 5.3) [quay, fish]")
            // A field of another JSON type fails the statement: nothing reaches the log.
            await #expect(throws: (any Error).self) {
                _ = try await database.rows(#"UPDATE "WholeThing" SET home = '{"street": 5}' WHERE id = 1"#)
            }
            let rows = try await database.rows(#"SELECT home ->> 'street' FROM "WholeThing" WHERE id = 1"#)
            #expect(rows == [["Dock"]])
            _ = try await database.rows(#"UPDATE "WholeThing" SET home = NULL WHERE id = 1"#)
            for replica in replicas { try await replica.sync.downloadPending() }
            #expect(try b.home() == "-")
        }
    }

    @Test func collectionsOfMixedValuesSyncElementByElement() async throws {
        try await withReplicas { replicas, database in
            let (a, b, c) = (replicas[0], replicas[1], replicas[2])
            try a.write { realm in
                let ann = realm.create(ClientPerson.self, value: ["name": "Ann", "city": "Oslo"])
                realm.create(
                    WholeBox.self,
                    value: [
                        "id": 1, "items": [AnyRealmValue.int(1), .string("x"), .object(ann)],
                        "tags": [AnyRealmValue.int(1), .string("a")],
                        "fields": ["k": AnyRealmValue.bool(true), "l": .object(ann)],
                    ])
            }
            try await sync(a, replicas)
            let created =
                "items [int 1, string x, link ClientPerson Ann] tags [int 1, string a] "
                + "fields [k: bool true, l: link ClientPerson Ann]"
            for replica in replicas { #expect(try replica.box() == created, "replica \(replica.id)") }
            let columns = try await database.rows(#"SELECT items::text, fields::text FROM "WholeBox" WHERE id = 1"#)
            #expect(
                columns == [
                    [
                        #"[{"int": 1}, {"string": "x"}, {"typedLink": {"key": {"string": "Ann"}, "type": "ClientPerson"}}]"#,
                        #"{"k": {"bool": true}, "l": {"typedLink": {"key": {"string": "Ann"}, "type": "ClientPerson"}}}"#,
                    ]
                ])
            // Concurrent edits: both appends are kept (the later first), the later map write wins its key, and a
            // remove loses to an add it had not seen.
            a.wall.withLock { $0 += 10 }
            b.wall.withLock { $0 += 20 }
            try a.write { realm in
                let box = try #require(realm.object(ofType: WholeBox.self, forPrimaryKey: 1))
                box.items.append(.int(2))
                box.fields["k"] = .string("older")
                box.tags.remove(.string("a"))
            }
            // B adds "a" again after removing it (an insert of a value the set holds changes nothing and sends
            // nothing, as in the seed SDK): A's remove saw only the first add, so the second keeps "a".
            try b.write { realm in
                let box = try #require(realm.object(ofType: WholeBox.self, forPrimaryKey: 1))
                box.tags.remove(.string("a"))
            }
            try b.write { realm in
                let box = try #require(realm.object(ofType: WholeBox.self, forPrimaryKey: 1))
                box.items.append(.string("y"))
                box.fields["k"] = .double(2.5)
                box.tags.insert(.string("a"))
                box.tags.insert(.date(Date(timeIntervalSince1970: 5)))
            }
            try await a.sync.uploadPending()
            try await b.sync.uploadPending()
            for replica in replicas { try await replica.sync.downloadPending() }
            let merged =
                "items [int 1, string x, link ClientPerson Ann, string y, int 2] "
                + "tags [date 5.0, int 1, string a] fields [k: double 2.5, l: link ClientPerson Ann]"
            for replica in [a, b, c] { #expect(try replica.box() == merged, "replica \(replica.id)") }
        }
    }

    @Test func anElementHoldingANestedCollectionFailsTheWrite() async throws {
        try await withReplicas { replicas, _ in
            let a = replicas[0]
            try a.write { realm in realm.create(WholeBox.self, value: ["id": 1]) }
            #expect(throws: Realm.Error.self) {
                try a.write { realm in
                    try #require(realm.object(ofType: WholeBox.self, forPrimaryKey: 1)).items.append(
                        .fromArray([.int(1)]))
                }
            }
            #expect(try a.box() == "items [] tags [] fields []")
        }
    }

    @Test func listsAndMapsOfEmbeddedObjectsSyncElementByElement() async throws {
        try await withReplicas { replicas, database in
            let (a, b, c) = (replicas[0], replicas[1], replicas[2])
            try a.write { realm in
                realm.create(
                    WholeRoute.self,
                    value: [
                        "id": 1, "stops": [["street": "Main", "city": "Oslo"], ["street": "Side", "city": "Lund"]],
                        "places": ["home": ["street": "Home", "city": "Oslo"]],
                    ])
            }
            try await sync(a, replicas)
            let created = "stops [Main Oslo, Side Lund] places [home: Home Oslo]"
            for replica in replicas { #expect(try replica.route() == created, "replica \(replica.id)") }
            let columns = try await database.rows(#"SELECT stops::text, places::text FROM "WholeRoute" WHERE id = 1"#)
            #expect(
                columns == [
                    [
                        #"[{"geo": null, "zip": null, "city": "Oslo", "notes": [], "street": "Main"}, "#
                            + #"{"geo": null, "zip": null, "city": "Lund", "notes": [], "street": "Side"}]"#,
                        #"{"home": {"geo": null, "zip": null, "city": "Oslo", "notes": [], "street": "Home"}}"#,
                    ]
                ])
            // A field of a list element and of a map value, edited in place on another replica.
            try c.write { realm in
                let route = try #require(realm.object(ofType: WholeRoute.self, forPrimaryKey: 1))
                route.stops[1].city = "Malmo"
                try #require(route.places["home"] ?? nil).street = "Dock"
            }
            // Sent as a replacement of the list element and a write of the map key, nothing else.
            #expect(try c.queuedChanges().first.map { Set($0.collections.keys) } == ["stops", "places"])
            #expect(try c.queuedChanges().first?.values == [:])
            try await c.sync.uploadPending()
            for replica in replicas { try await replica.sync.downloadPending() }
            let edited = "stops [Main Oslo, Side Malmo] places [home: Dock Oslo]"
            for replica in replicas { #expect(try replica.route() == edited, "replica \(replica.id)") }
            // Concurrent inserts at one place are both kept, the later first.
            a.wall.withLock { $0 += 10 }
            b.wall.withLock { $0 += 20 }
            try a.write { realm in
                try #require(realm.object(ofType: WholeRoute.self, forPrimaryKey: 1)).stops.append(
                    WholeAddress(value: ["street": "A", "city": "Ay"]))
            }
            try b.write { realm in
                try #require(realm.object(ofType: WholeRoute.self, forPrimaryKey: 1)).stops.append(
                    WholeAddress(value: ["street": "B", "city": "Bee"]))
            }
            try await a.sync.uploadPending()
            try await b.sync.uploadPending()
            for replica in replicas { try await replica.sync.downloadPending() }
            let merged = "stops [Main Oslo, Side Malmo, B Bee, A Ay] places [home: Dock Oslo]"
            for replica in [a, b, c] { #expect(try replica.route() == merged, "replica \(replica.id)") }
            // An element inserted and removed again in one transaction, and a nested object's field edited.
            try c.write { realm in
                let route = try #require(realm.object(ofType: WholeRoute.self, forPrimaryKey: 1))
                route.stops.insert(WholeAddress(value: ["street": "Gone", "city": "Soon"]), at: 0)
                route.stops.remove(at: 0)
                route.stops[0].geo = WholeGeo(value: ["lat": 1.0, "lon": 2.0])
            }
            try c.write { realm in
                let route = try #require(realm.object(ofType: WholeRoute.self, forPrimaryKey: 1))
                try #require(route.stops[0].geo).lat = 3
            }
            try await sync(c, replicas)
            for replica in replicas {
                #expect(try replica.route() == merged, "replica \(replica.id)")
                #expect(try replica.firstStopGeo() == "3.0 2.0", "replica \(replica.id)")
            }
        }
    }
}

/// An object without a primary key in the replica's file (not synced).
final class WholeNote: Object {
    @Persisted var text: String
}

/// The `WholeThing` with primary key `id` in `realm`; fails the test if there is none.
private func thing(_ realm: Realm, _ id: Int = 1) throws -> WholeThing {
    try #require(realm.object(ofType: WholeThing.self, forPrimaryKey: id))
}

extension ClientReplica {
    /// Thing 1's mixed value as `kind value` text (see `described`).
    fileprivate func thingValue() throws -> String {
        let realm = try Realm(configuration: configuration)
        realm.refresh()
        return described(try thing(realm).value)
    }

    /// Route 1's stops and places as `stops [street city, …] places [key: street city, …]`.
    fileprivate func route() throws -> String {
        let realm = try Realm(configuration: configuration)
        realm.refresh()
        let route = try #require(realm.object(ofType: WholeRoute.self, forPrimaryKey: 1))
        let stops = route.stops.map { "\($0.street) \($0.city)" }.joined(separator: ", ")
        var places: [String] = []
        for (key, place) in route.places { places.append("\(key): \(place.map { "\($0.street) \($0.city)" } ?? "-")") }
        return "stops [\(stops)] places [\(places.sorted().joined(separator: ", "))]"
    }

    /// The first stop's nested geo as `lat lon`, or `-`.
    fileprivate func firstStopGeo() throws -> String {
        let realm = try Realm(configuration: configuration)
        realm.refresh()
        let route = try #require(realm.object(ofType: WholeRoute.self, forPrimaryKey: 1))
        return route.stops.first?.geo.map { "\($0.lat) \($0.lon)" } ?? "-"
    }

    /// The changes of the replica's queued entries, in order.
    fileprivate func queuedChanges() throws -> [CapturedObjectChange] {
        let realm = try Realm(configuration: configuration)
        realm.refresh()
        return try realm.syncQueue().flatMap(\.changes)
    }

    /// Box 1's collections as `items [...] tags [...] fields [...]` (tags and fields sorted).
    fileprivate func box() throws -> String {
        let realm = try Realm(configuration: configuration)
        realm.refresh()
        let box = try #require(realm.object(ofType: WholeBox.self, forPrimaryKey: 1))
        let items = box.items.map(described).joined(separator: ", ")
        let tags = box.tags.map(described).sorted().joined(separator: ", ")
        var fields: [String] = []
        for (key, value) in box.fields { fields.append("\(key): \(described(value))") }
        return "items [\(items)] tags [\(tags)] fields [\(fields.sorted().joined(separator: ", "))]"
    }

    /// Thing 1's embedded address as `street city zip geo(lat, lon) [notes]`, or `-`.
    fileprivate func home() throws -> String {
        let realm = try Realm(configuration: configuration)
        realm.refresh()
        guard let home = try thing(realm).home else { return "-" }
        let geo = home.geo.map { "geo(\($0.lat), \($0.lon))" } ?? "-"
        return
            "\(home.street) \(home.city) \(home.zip.map(String.init) ?? "nil") \(geo) [\(home.notes.joined(separator: ", "))]"
    }
}

/// A mixed value as `kind value` text, nested collections included (dictionary keys sorted).
private func described(_ value: AnyRealmValue) -> String {
    switch value {
    case .none: return "null"
    case .int(let value): return "int \(value)"
    case .bool(let value): return "bool \(value)"
    case .float(let value): return "float \(value)"
    case .double(let value): return "double \(value)"
    case .string(let value): return "string \(value)"
    case .data(let value): return "data \(value.base64EncodedString())"
    case .date(let value): return "date \(value.timeIntervalSince1970)"
    case .objectId(let value): return "objectId \(value.stringValue)"
    case .decimal128(let value): return "decimal128 \(value.stringValue)"
    case .uuid(let value): return "uuid \(value.uuidString)"
    case .object(let object):
        guard let person = object as? ClientPerson else { return "link \(type(of: object))" }
        return "link ClientPerson \(person.name)"
    case .list(let list): return "list [\(list.map(described).joined(separator: ", "))]"
    case .dictionary(let map):
        var entries: [String] = []
        for (key, element) in map { entries.append("\(key): \(described(element))") }
        entries.sort()
        return "dictionary [\(entries.joined(separator: ", "))]"
    }
}

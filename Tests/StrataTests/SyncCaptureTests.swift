import Foundation
import Synchronization
import Testing

@_spi(StrataSync) @testable import Strata

/// Models of the change-capture tests: `CaptureOwner` and `CaptureDog` sync (they have primary keys);
/// `CaptureNote` has none and is never captured.
enum SyncCaptureModels {
    final class CaptureOwner: Object {
        @Persisted(primaryKey: true) var name = ""
    }

    final class CaptureDog: Object {
        @Persisted(primaryKey: true) var id = 0
        @Persisted var name = ""
        @Persisted var age: Int?
        @Persisted var weight = 0.0
        @Persisted var born = Date(timeIntervalSince1970: 0)
        @Persisted var owner: CaptureOwner?
        @Persisted var tags: List<String>
    }

    final class CaptureNote: Object {
        @Persisted var text = ""
    }

    /// A synced type with a mixed value and an embedded object (which holds another).
    final class CaptureHouse: Object {
        @Persisted(primaryKey: true) var id = 0
        @Persisted var extra: AnyRealmValue
        @Persisted var home: CaptureHome?
        @Persisted var name = ""
    }

    final class CaptureHome: EmbeddedObject {
        @Persisted var city = ""
        @Persisted var geo: CaptureGeo?
    }

    final class CaptureGeo: EmbeddedObject {
        @Persisted var lat = 0.0
    }
}

/// Hands out "t1", "t2", …: one per captured commit.
final class CountingRecorder: SyncCaptureRecorder {
    private let count = Mutex(0)
    func stamp() -> String {
        let next = count.withLock { count in
            count += 1
            return count
        }
        return "t\(next)"
    }
    var stamps: Int { count.withLock { $0 } }
}

@Suite("Sync change capture (upload queue in the file)")
struct SyncCaptureTests {
    typealias Dog = SyncCaptureModels.CaptureDog
    typealias Owner = SyncCaptureModels.CaptureOwner
    let scratch: Scratch

    init() throws { scratch = try Scratch() }

    private func configuration(_ name: String = "capture.strata") -> Realm.Configuration {
        Realm.Configuration(
            fileURL: scratch.url.appendingPathComponent(name),
            objectTypes: [Dog.self, Owner.self, SyncCaptureModels.CaptureNote.self])
    }

    /// A Realm on a file whose writes of dogs and owners are captured.
    private func capturedRealm(_ recorder: CountingRecorder) throws -> Realm {
        let configuration = configuration()
        configuration.startSyncCapture(classes: ["CaptureDog", "CaptureOwner"], recorder: recorder)
        return try Realm(configuration: configuration)
    }

    @Test func aCommittedWriteLeavesExactlyOneEntryWithTheNewObjectsValues() throws {
        let recorder = CountingRecorder()
        let realm = try capturedRealm(recorder)
        defer { realm.configuration.stopSyncCapture() }
        try realm.write {
            let owner = realm.create(Owner.self, value: ["name": "Ann"])
            realm.create(Dog.self, value: ["id": 1, "name": "Rex", "age": 3, "weight": 9.5, "owner": owner])
            realm.add(SyncCaptureModels.CaptureNote(value: ["text": "not synced"]))
        }
        let queue = try realm.syncQueue()
        #expect(queue.count == 1)
        let entry = try #require(queue.first)
        #expect(entry.sequence == 1)
        #expect(entry.timestamp == "t1")
        #expect(entry.changes.map(\.className) == ["CaptureOwner", "CaptureDog"])
        let dog = entry.changes[1]
        #expect(dog.primaryKey == .int(1))
        #expect(dog.isCreated && !dog.isDeleted)
        #expect(
            dog.values == [
                "name": .string("Rex"), "age": .int(3), "weight": .double(9.5), "born": .date(0),
                "owner": .link(.string("Ann")),
            ])
    }

    @Test func aWriteThatThrowsLeavesNoEntry() throws {
        struct Refused: Error {}
        let recorder = CountingRecorder()
        let realm = try capturedRealm(recorder)
        defer { realm.configuration.stopSyncCapture() }
        #expect(throws: Refused.self) {
            try realm.write {
                realm.create(Dog.self, value: ["id": 1, "name": "Rex"])
                throw Refused()
            }
        }
        realm.refresh()
        #expect(try realm.syncQueue().isEmpty)
        #expect(realm.objects(Dog.self).isEmpty)
        #expect(recorder.stamps == 0)
    }

    @Test func anUpdateRecordsOnlyTheChangedPropertiesAndEarlierEntriesKeepTheirValues() throws {
        let recorder = CountingRecorder()
        let realm = try capturedRealm(recorder)
        defer { realm.configuration.stopSyncCapture() }
        let dog = try realm.write { realm.create(Dog.self, value: ["id": 7, "name": "Rex", "age": 3]) }
        try realm.write { dog.age = nil }
        try realm.write { dog.name = "Rex" }  // the same value: nothing changed
        try realm.write { dog.name = "Max" }
        let queue = try realm.syncQueue()
        #expect(queue.map(\.sequence) == [1, 2, 3])
        #expect(queue[0].changes[0].values["name"] == .string("Rex"))
        #expect(queue[0].changes[0].values["age"] == .int(3))
        #expect(
            queue[1].changes == [
                .init(
                    className: "CaptureDog", primaryKey: .int(7), isCreated: false, isDeleted: false,
                    values: ["age": .null])
            ])
        #expect(queue[2].changes[0].values == ["name": .string("Max")])
        #expect(queue.map(\.timestamp) == ["t1", "t2", "t3"])
    }

    @Test func aDeleteRecordsThePrimaryKeyAndACreateThenDeleteInOneWriteRecordsNothing() throws {
        let recorder = CountingRecorder()
        let realm = try capturedRealm(recorder)
        defer { realm.configuration.stopSyncCapture() }
        let dog = try realm.write { realm.create(Dog.self, value: ["id": 7, "name": "Rex"]) }
        try realm.write { realm.delete(dog) }
        try realm.write {
            let short = realm.create(Dog.self, value: ["id": 8, "name": "Brief"])
            realm.delete(short)
        }
        let queue = try realm.syncQueue()
        #expect(queue.count == 2)
        #expect(
            queue[1].changes == [
                .init(className: "CaptureDog", primaryKey: .int(7), isCreated: false, isDeleted: true, values: [:])
            ])
    }

    @Test func writesApplyingDownloadedChangesAreNotCapturedAndStoreTheirCheckpoint() throws {
        let recorder = CountingRecorder()
        let realm = try capturedRealm(recorder)
        defer { realm.configuration.stopSyncCapture() }
        try realm.write {
            try realm.markApplyingSyncChanges()
            realm.create(Dog.self, value: ["id": 1, "name": "From the server"])
            try realm.setSyncCheckpoint(41, scope: "main")
        }
        #expect(try realm.syncQueue().isEmpty)
        #expect(try realm.syncCheckpoint(scope: "main") == 41)
        #expect(try realm.syncCheckpoint(scope: "other") == 0)
        // A checkpoint set in a write that throws is not kept either.
        struct Refused: Error {}
        #expect(throws: Refused.self) {
            try realm.write {
                try realm.setSyncCheckpoint(42, scope: "main")
                throw Refused()
            }
        }
        #expect(try realm.syncCheckpoint(scope: "main") == 41)
    }

    @Test func uploadedEntriesAreRemovedUpToASequence() throws {
        let recorder = CountingRecorder()
        let realm = try capturedRealm(recorder)
        defer { realm.configuration.stopSyncCapture() }
        for id in 1...3 { try realm.write { realm.create(Dog.self, value: ["id": id]) } }
        try realm.write { try realm.removeSyncQueue(through: 2) }
        #expect(try realm.syncQueue().map(\.sequence) == [3])
        try realm.write { realm.create(Dog.self, value: ["id": 4]) }
        #expect(try realm.syncQueue(limit: 1).map(\.sequence) == [3])
        #expect(try realm.syncQueue().map(\.sequence) == [3, 4])
    }

    @Test func queueEntriesRoundTripEveryValueKindAndDamagedBytesAreRefused() throws {
        let entry = CapturedTransaction(
            sequence: 1 << 40, timestamp: "001764221345123.0000000002.replica-a",
            changes: [
                CapturedObjectChange(
                    className: "Kind", primaryKey: .uuid(UUID()), isCreated: true, isDeleted: false,
                    values: [
                        "null": .null, "bool": .bool(true), "int": .int(-5), "float": .float(.nan),
                        "double": .double(-.infinity), "string": .string("é\u{0}x"), "data": .data(Data([0, 255])),
                        "date": .date(-1.5), "decimal": .decimal128("1.50"),
                        "id": .objectId(String(repeating: "a", count: 24)),
                        "link": .link(.string("Ann")),
                        "typedLink": .typedLink(className: "Owner", key: .string("Ann")),
                        "mixedList": .list([.int(1), .list([]), .dictionary(["k": .null])]),
                        "mixedDictionary": .dictionary(["b": .bool(false), "a": .string("x")]),
                        "home": .embedded(["city": .string("Oslo"), "geo": .embedded(["lat": .double(1)])]),
                    ],
                    collections: [
                        "scores": .map(set: ["a": .int(1), "b": .null], removed: ["c"]),
                        "colors": .set(
                            added: [CapturedSetElement(value: .string("red"), tags: ["t#1"])],
                            removed: [CapturedSetElement(value: .link(.int(3)), tags: ["s#2", "r#1"])]),
                        "tricks": .list([
                            .clear(at: "t"), .insert(id: "t#1", after: nil, value: .string("sit")),
                            .insert(id: "t#2", after: "t#1", value: .double(2)), .remove(id: "s#1"),
                        ]),
                    ]),
                CapturedObjectChange(
                    className: "Gone", primaryKey: .int(7), isCreated: false, isDeleted: true, values: [:]),
            ])
        let bytes = CapturedTransactionCodec.encode(entry)
        let decoded = try #require(CapturedTransactionCodec.decode(bytes))
        // NaN is not equal to itself: compare it on its own.
        guard case .float(let nan)? = decoded.changes[0].values["float"] else {
            Issue.record("the float did not come back")
            return
        }
        #expect(nan.isNaN)
        var expected = entry
        var got = decoded
        expected.changes[0].values["float"] = nil
        got.changes[0].values["float"] = nil
        #expect(got == expected)
        for cut in 0..<bytes.count { #expect(CapturedTransactionCodec.decode(Array(bytes[..<cut])) == nil) }
        #expect(CapturedTransactionCodec.decode(bytes + [0]) == nil)
        #expect(CapturedTransactionCodec.decode([4] + bytes.dropFirst()) == nil)
    }

    @Test func queueEntriesOfFormatsOneAndTwoAreStillRead() throws {
        let entry = CapturedTransaction(
            sequence: 4, timestamp: "t4",
            changes: [
                CapturedObjectChange(
                    className: "Dog", primaryKey: .int(1), isCreated: false, isDeleted: false,
                    values: ["name": .string("Rex")])
            ])
        let bytes = CapturedTransactionCodec.encode(entry)
        #expect(bytes.first == 3 && bytes.last == 0)  // format 3; the change's collection count last
        #expect(CapturedTransactionCodec.decode([1] + bytes.dropFirst().dropLast()) == entry)
        // Format 2 is format 3 without mixed values' and embedded objects' tags.
        #expect(CapturedTransactionCodec.decode([2] + bytes.dropFirst()) == entry)
    }

    @Test func mixedValuesAndEmbeddedObjectsAreCapturedWholeAsTheirParentsProperty() throws {
        typealias House = SyncCaptureModels.CaptureHouse
        let configuration = Realm.Configuration(
            fileURL: scratch.url.appendingPathComponent("houses.strata"),
            objectTypes: [
                House.self, SyncCaptureModels.CaptureHome.self, SyncCaptureModels.CaptureGeo.self, Owner.self,
            ])
        configuration.startSyncCapture(classes: ["CaptureHouse", "CaptureOwner"], recorder: CountingRecorder())
        defer { configuration.stopSyncCapture() }
        let realm = try Realm(configuration: configuration)
        try realm.write {
            let ann = realm.create(Owner.self, value: ["name": "Ann"])
            realm.create(
                House.self,
                value: ["id": 1, "extra": AnyRealmValue.object(ann), "home": ["city": "Oslo", "geo": ["lat": 1.5]]])
        }
        let house = try #require(realm.object(ofType: House.self, forPrimaryKey: 1))
        // A nested embedded object's field: the parent's property, whole.
        try realm.write { try #require(house.home?.geo).lat = 2 }
        // A nested list of the mixed value.
        try realm.write { house.extra = .fromArray([.int(1)]) }
        try realm.write { try #require(house.extra.listValue).append(.string("x")) }
        // Another property only: neither the mixed value nor the embedded object is sent.
        try realm.write { house.name = "Villa" }
        try realm.write { house.home = nil }
        let changes = try realm.syncQueue().map { $0.changes.first { $0.className == "CaptureHouse" }?.values ?? [:] }
        let home: CapturedValue = .embedded(["city": .string("Oslo"), "geo": .embedded(["lat": .double(1.5)])])
        #expect(changes[0]["extra"] == .typedLink(className: "CaptureOwner", key: .string("Ann")))
        #expect(changes[0]["home"] == home)
        #expect(changes[1] == ["home": .embedded(["city": .string("Oslo"), "geo": .embedded(["lat": .double(2)])])])
        #expect(changes[2] == ["extra": .list([.int(1)])])
        #expect(changes[3] == ["extra": .list([.int(1), .string("x")])])
        #expect(changes[4] == ["name": .string("Villa")])
        #expect(changes[5] == ["home": .null])
        #expect(changes.count == 6)
    }

    @Test func collectionEditsAloneAreCapturedAndADeletedObjectLeavesNoMergeState() throws {
        let recorder = CountingRecorder()
        let realm = try capturedRealm(recorder)
        defer { realm.configuration.stopSyncCapture() }
        try realm.write { realm.create(Dog.self, value: ["id": 1, "name": "Rex", "tags": ["a"]]) }
        try realm.write { try #require(realm.object(ofType: Dog.self, forPrimaryKey: 1)).tags.append("b") }
        let queue = try realm.syncQueue()
        #expect(queue.count == 2)
        #expect(
            queue.first?.changes.first?.collections["tags"]
                == .list([
                    .clear(at: "t1"), .insert(id: "t1#1", after: nil, value: .string("a")),
                ]))
        #expect(queue.last?.changes.first?.values == [:])
        #expect(
            queue.last?.changes.first?.collections["tags"]
                == .list([.insert(id: "t2#1", after: "t1#1", value: .string("b"))]))
        #expect(realm.tables.view(SyncTreeNames.collections)?.count == 1)
        try realm.write { realm.delete(try #require(realm.object(ofType: Dog.self, forPrimaryKey: 1))) }
        #expect((realm.tables.view(SyncTreeNames.collections)?.count ?? 0) == 0)
    }

    @Test func captureIsPerFileAndOffByDefault() throws {
        // Capture is on for another file: this one's writes are not queued, and no capture runs for them.
        let recorder = CountingRecorder()
        let other = configuration("other.strata")
        other.startSyncCapture(classes: ["CaptureDog", "CaptureOwner"], recorder: recorder)
        defer { other.stopSyncCapture() }
        let realm = try Realm(configuration: configuration())
        try realm.write {
            realm.create(Dog.self, value: ["id": 1, "name": "Rex"])
            #expect(realm.syncCapture == nil)
        }
        #expect(try realm.syncQueue().isEmpty)
        #expect(recorder.stamps == 0)
    }
}

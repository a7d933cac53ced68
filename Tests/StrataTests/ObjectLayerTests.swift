import Foundation
import StrataStorage
import Testing

@testable import Strata

// MARK: Models

final class Person: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var name = ""
    @Persisted var age: Int?
    @Persisted var address: Address?
    @Persisted var bestFriend: Person?
    var ignored = "not stored"
}

final class Pair: Object {
    @Persisted var left: Person?
    @Persisted var right: Person?
}

final class Address: EmbeddedObject {
    @Persisted var street = ""
    @Persisted var city: String?
}

enum Mood: String, PersistableEnum {
    case happy, grumpy
}

struct Email: CustomPersistable {
    var address: String
    init(persistedValue: String) { address = persistedValue }
    var persistableValue: String { address }
}

final class AllTypes: Object {
    @Persisted var bool = false
    @Persisted var int = 0
    @Persisted var int8: Int8 = 0
    @Persisted var int16: Int16 = 0
    @Persisted var int32: Int32 = 0
    @Persisted var int64: Int64 = 0
    @Persisted var float: Float = 0
    @Persisted var double = 0.0
    @Persisted var string = ""
    @Persisted var data = Data()
    @Persisted var date = Date(timeIntervalSinceReferenceDate: 0)
    @Persisted var decimal: Decimal128 = 0
    @Persisted var uuid = UUID()
    @Persisted var objectId = ObjectId()
    @Persisted var mood = Mood.happy
    @Persisted var email = Email(persistedValue: "")
    @Persisted var optionalBool: Bool?
    @Persisted var optionalInt: Int?
    @Persisted var optionalDouble: Double?
    @Persisted var optionalString: String?
    @Persisted var optionalData: Data?
    @Persisted var optionalDate: Date?
    @Persisted var optionalDecimal: Decimal128?
    @Persisted var optionalUUID: UUID?
    @Persisted var optionalObjectId: ObjectId?
    @Persisted var optionalMood: Mood?
}

final class Renamed: Object {
    @Persisted var firstName = ""
    override class func propertiesMapping() -> [String: String] { ["firstName": "first_name"] }
    override class func className() -> String { "renamed_class" }
}

final class ThingV1: Object {
    @Persisted var a = 0
    override class func className() -> String { "Thing" }
}

final class ThingV2: Object {
    @Persisted var a = ""
    @Persisted var b = 0
    override class func className() -> String { "Thing" }
}

final class Tagged: Object {
    @Persisted(indexed: true) var tag = ""
    @Persisted(indexed: true) var when: Date?
    @Persisted var other = 0
}

final class BadKey: Object {
    @Persisted(primaryKey: true) var key = 0.0
}

// MARK: Helpers

/// A fresh directory removed when the value goes away.
final class Scratch {
    let url: URL
    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("strata-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(at: url) }
    func configuration(_ types: [ObjectBase.Type]? = nil, name: String = "test.strata") -> Realm.Configuration {
        Realm.Configuration(fileURL: url.appendingPathComponent(name), objectTypes: types)
    }
}

// MARK: Tests

@Suite("Object layer")
struct ObjectLayerTests {
    @Test func schemaIsDiscoveredFromTheModel() throws {
        let schema = Person().objectSchema
        #expect(schema.className == "Person")
        #expect(schema.properties.map(\.name) == ["id", "name", "age", "address", "bestFriend"])
        #expect(schema.primaryKeyProperty?.name == "id")
        #expect(schema[propertyName: "age"]?.isOptional == true)
        #expect(schema[propertyName: "address"]?.objectClassName == "Address")
        #expect(schema[propertyName: "ignored"] == nil)
        let renamed = Renamed().objectSchema
        #expect(renamed.className == "renamed_class")
        #expect(renamed.properties.map(\.columnName) == ["first_name"])
        #expect(renamed.properties.map(\.name) == ["firstName"])
        #expect(throws: Realm.Error.self) { try SchemaRegistry.shared.table(for: BadKey.self) }
    }

    @Test func everyValueTypeRoundTripsThroughAFile() throws {
        let scratch = try Scratch()
        let configuration = scratch.configuration([AllTypes.self])
        let date = Date(timeIntervalSince1970: 1_700_000_000.123456)
        let uuid = UUID()
        let id = ObjectId.generate()
        let decimal = try Decimal128(string: "12345.6789")
        do {
            let realm = try Realm(configuration: configuration)
            try realm.write {
                let object = AllTypes()
                object.bool = true
                object.int = .max
                object.int8 = -128
                object.int16 = 32767
                object.int32 = -5
                object.int64 = .min
                object.float = 1.5
                object.double = -0.125
                object.string = "héllo 🌍"
                object.data = Data([0, 1, 2, 255])
                object.date = date
                object.decimal = decimal
                object.uuid = uuid
                object.objectId = id
                object.mood = .grumpy
                object.email = Email(persistedValue: "a@b.c")
                object.optionalInt = 42
                object.optionalString = "x"
                object.optionalMood = .happy
                object.optionalDecimal = decimal
                realm.add(object)
            }
        }
        let realm = try Realm(configuration: configuration)
        let objects = realm.objects(AllTypes.self)
        #expect(objects.count == 1)
        let object = try #require(objects.first)
        #expect(object.bool == true)
        #expect(object.int == .max)
        #expect(object.int8 == -128)
        #expect(object.int16 == 32767)
        #expect(object.int32 == -5)
        #expect(object.int64 == .min)
        #expect(object.float == 1.5)
        #expect(object.double == -0.125)
        #expect(object.string == "héllo 🌍")
        #expect(object.data == Data([0, 1, 2, 255]))
        #expect(object.date == date)
        #expect(object.decimal == decimal)
        #expect(object.uuid == uuid)
        #expect(object.objectId == id)
        #expect(object.mood == .grumpy)
        #expect(object.email.address == "a@b.c")
        #expect(object.optionalBool == nil)
        #expect(object.optionalInt == 42)
        #expect(object.optionalString == "x")
        #expect(object.optionalDate == nil)
        #expect(object.optionalUUID == nil)
        #expect(object.optionalMood == .happy)
        #expect(object.optionalDecimal == decimal)
        #expect(object.realm === realm)
        #expect(!object.isInvalidated)
    }

    @Test func initFromDictionaryArrayAndObject() throws {
        let fromDictionary = Person(value: [
            "id": 1, "name": "Ann", "age": 30, "address": ["street": "Main", "city": "Oslo"],
        ])
        #expect(fromDictionary.id == 1)
        #expect(fromDictionary.name == "Ann")
        #expect(fromDictionary.age == 30)
        #expect(fromDictionary.address?.city == "Oslo")
        let fromArray = Person(value: [2, "Bob", NSNull()])
        #expect(fromArray.id == 2)
        #expect(fromArray.name == "Bob")
        #expect(fromArray.age == nil)
        let copy = Person(value: fromDictionary)
        #expect(copy.name == "Ann")
        #expect(copy.age == 30)
        #expect(copy["name"] as? String == "Ann")
        copy["name"] = "Changed"
        #expect(copy.name == "Changed")
        #expect(copy.ignored == "not stored")
    }

    @Test func primaryKeysRejectDuplicatesAndRollBackTheWholeWrite() throws {
        let realm = try Realm(configuration: Realm.Configuration(inMemoryIdentifier: "pk-\(UUID())"))
        try realm.write {
            realm.add(Person(value: ["id": 1, "name": "Ann"]))
        }
        #expect(throws: Realm.Error.primaryKeyExists(type: "Person", value: "1")) {
            try realm.write {
                realm.add(Person(value: ["id": 2, "name": "Bob"]))
                realm.add(Person(value: ["id": 1, "name": "Again"]))
            }
        }
        #expect(!realm.isInWriteTransaction)
        #expect(realm.objects(Person.self).count == 1)
        #expect(realm.object(ofType: Person.self, forPrimaryKey: 2) == nil)
        try realm.write {
            realm.add(Person(value: ["id": 1, "name": "Updated"]), update: .modified)
        }
        #expect(realm.objects(Person.self).count == 1)
        #expect(realm.object(ofType: Person.self, forPrimaryKey: 1)?.name == "Updated")
        try realm.write {
            realm.create(Person.self, value: ["id": 1, "age": 5], update: .modified)
        }
        let ann = try #require(realm.object(ofType: Person.self, forPrimaryKey: 1))
        #expect(ann.name == "Updated")
        #expect(ann.age == 5)
        #expect(throws: Realm.Error.primaryKeyChange(type: "Person", property: "id")) {
            try realm.write { ann.id = 9 }
        }
        #expect(ann.id == 1)
    }

    @Test func linksAreAddedWithTheirOwnerAndNullifiedOnDelete() throws {
        let realm = try Realm(configuration: Realm.Configuration(inMemoryIdentifier: "links-\(UUID())"))
        let ann = Person(value: ["id": 1, "name": "Ann"])
        let bob = Person(value: ["id": 2, "name": "Bob"])
        ann.bestFriend = bob
        bob.bestFriend = ann
        try realm.write { realm.add(ann) }
        #expect(realm.objects(Person.self).count == 2)
        let storedAnn = try #require(realm.object(ofType: Person.self, forPrimaryKey: 1))
        #expect(storedAnn.bestFriend?.name == "Bob")
        #expect(storedAnn.bestFriend?.bestFriend?.name == "Ann")
        #expect(storedAnn.bestFriend?.bestFriend?.isSameObject(as: storedAnn) == true)
        let storedBob = try #require(realm.object(ofType: Person.self, forPrimaryKey: 2))
        try realm.write { realm.delete(storedBob) }
        #expect(storedBob.isInvalidated)
        #expect(storedAnn.bestFriend == nil)
        #expect(realm.objects(Person.self).count == 1)
    }

    @Test func embeddedObjectsLiveAndDieWithTheirParent() throws {
        let realm = try Realm(configuration: Realm.Configuration(inMemoryIdentifier: "embedded-\(UUID())"))
        let ann = Person(value: ["id": 1, "name": "Ann", "address": ["street": "Main", "city": "Oslo"]])
        try realm.write { realm.add(ann) }
        #expect(ann.address?.street == "Main")
        #expect(realm.rowCount(tree: TableNames.rows("Address")) == 1)
        try realm.write { ann.address = Address(value: ["street": "Side"]) }
        #expect(ann.address?.street == "Side")
        #expect(ann.address?.city == nil)
        #expect(realm.rowCount(tree: TableNames.rows("Address")) == 1)
        try realm.write { ann.address?.city = "Bergen" }
        #expect(ann.address?.city == "Bergen")
        try realm.write { realm.delete(ann) }
        #expect(realm.rowCount(tree: TableNames.rows("Address")) == 0)
    }

    @Test func failedWritesApplyNothing() throws {
        let realm = try Realm(configuration: Realm.Configuration(inMemoryIdentifier: "limits-\(UUID())"))
        let huge = String(repeating: "x", count: (16 << 20) + 1)
        #expect(throws: Realm.Error.valueTooLarge(type: "Person", property: "name", size: (16 << 20) + 1)) {
            try realm.write {
                realm.add(Person(value: ["id": 1, "name": "fine"]))
                realm.add(Person(value: ["id": 2, "name": huge]))
            }
        }
        #expect(realm.objects(Person.self).isEmpty)
        try realm.write {
            realm.add(Person(value: ["id": 3]))
            realm.cancelWrite()
        }
        #expect(realm.isEmpty)
        struct Failure: Error {}
        #expect(throws: Failure.self) {
            try realm.write {
                realm.add(Person(value: ["id": 4]))
                throw Failure()
            }
        }
        #expect(realm.isEmpty)
        let exactlyAtLimit = String(repeating: "y", count: 16 << 20)
        try realm.write { realm.add(Person(value: ["id": 5, "name": exactlyAtLimit])) }
        #expect(realm.object(ofType: Person.self, forPrimaryKey: 5)?.name.utf8.count == 16 << 20)
    }

    @Test func changedModelsReportEachDifference() throws {
        let scratch = try Scratch()
        _ = try Realm(configuration: scratch.configuration([ThingV1.self]))
        #expect(
            throws: Realm.Error.schemaMismatch(differences: [
                "Thing.a: type changed from int to string", "Thing.b: property added",
            ])
        ) {
            _ = try Realm(configuration: scratch.configuration([ThingV2.self]))
        }
        var newer = scratch.configuration([ThingV1.self])
        newer.schemaVersion = 3
        _ = try Realm(configuration: newer)
        #expect(throws: Realm.Error.invalidSchemaVersion(fileVersion: 3, configuredVersion: 0)) {
            _ = try Realm(configuration: scratch.configuration([ThingV1.self]))
        }
    }

    @Test func typesRegisterOnFirstUseAndMappedNamesPersist() throws {
        let scratch = try Scratch()
        let configuration = scratch.configuration()
        do {
            let realm = try Realm(configuration: configuration)
            #expect(realm.objects(Renamed.self).isEmpty)
            try realm.write { realm.add(Renamed(value: ["firstName": "Zoë"])) }
        }
        let realm = try Realm(configuration: configuration)
        #expect(realm.schema[className: "renamed_class"]?.properties.map(\.name) == ["first_name"])
        #expect(realm.objects(Renamed.self).first?.firstName == "Zoë")
        #expect(realm.objects(Renamed.self).first?["first_name"] as? String == "Zoë")
    }

    @Test func inMemoryRealmsShareTheirIdentifierAndDeleteAllEmptiesThem() throws {
        let identifier = "shared-\(UUID())"
        let first = try Realm(configuration: Realm.Configuration(inMemoryIdentifier: identifier))
        let second = try Realm.independent(Realm.Configuration(inMemoryIdentifier: identifier))
        try first.write { first.add((1...10).map { Person(value: ["id": $0, "name": "p\($0)"]) }) }
        #expect(second.objects(Person.self).count == 0)
        #expect(second.refresh())
        #expect(second.objects(Person.self).count == 10)
        #expect(second.objects(Person.self).map(\.id) == Array(1...10))
        try second.write { second.deleteAll() }
        first.refresh()
        #expect(first.isEmpty)
    }

    @Test func mutationsOutsideAWriteAreRejectedBeforeTouchingTheFile() throws {
        let realm = try Realm(configuration: Realm.Configuration(inMemoryIdentifier: "readonly-\(UUID())"))
        #expect(throws: Realm.Error.notInWriteTransaction) { try realm.commitWrite() }
        #expect(throws: Realm.Error.invalidValue(type: "Person", property: "nope", reason: "no such property")) {
            try ObjectValues.apply(["nope": 1], to: Person(), schema: try SchemaRegistry.shared.table(for: Person.self))
        }
        #expect(throws: Realm.Error.self) {
            try ObjectValues.apply(
                ["int8": 300], to: AllTypes(), schema: try SchemaRegistry.shared.table(for: AllTypes.self))
        }
    }

    @Test func secondaryIndexesFollowInsertsUpdatesAndDeletes() throws {
        let realm = try Realm(configuration: Realm.Configuration(inMemoryIdentifier: "index-\(UUID())"))
        func tags() throws -> [String] {
            let entries = try realm.store.read().tree(named: TableNames.index("Tagged", "tag"))?.entries() ?? []
            return entries.map { String(decoding: $0.key.dropFirst().dropLast(8), as: UTF8.self) }
        }
        try realm.write {
            for tag in ["b", "a", "c"] { realm.add(Tagged(value: ["tag": tag])) }
        }
        #expect(try tags() == ["a", "b", "c"])
        let first = try #require(realm.objects(Tagged.self).first)
        try realm.write { first.tag = "z" }
        #expect(try tags() == ["a", "c", "z"])
        try realm.write { first.other = 5 }
        #expect(try tags() == ["a", "c", "z"])
        // Nulls are indexed too (a `when == nil` query can use the index).
        #expect(realm.rowCount(tree: TableNames.index("Tagged", "when")) == 3)
        try realm.write { first.when = Date() }
        #expect(realm.rowCount(tree: TableNames.index("Tagged", "when")) == 3)
        try realm.write { realm.delete(first) }
        #expect(try tags() == ["a", "c"])
        #expect(realm.rowCount(tree: TableNames.index("Tagged", "when")) == 2)
        try realm.write { realm.deleteAll() }
        #expect(try tags() == [])
        #expect(realm.objects(Tagged.self).isEmpty)
    }

    @Test func writeCopyProducesAnOpenableCompactFile() throws {
        let scratch = try Scratch()
        let realm = try Realm(configuration: scratch.configuration([Person.self]))
        try realm.write {
            realm.add((1...100).map { Person(value: ["id": $0, "name": "p\($0)"]) })
        }
        try realm.write { realm.delete(realm.objects(Person.self).filter { $0.id % 2 == 0 }) }
        let copy = scratch.url.appendingPathComponent("copy.strata")
        try realm.writeCopy(toFile: copy)
        #expect(throws: Realm.Error.self) { try realm.writeCopy(toFile: copy) }
        let reopened = try Realm(configuration: Realm.Configuration(fileURL: copy, objectTypes: [Person.self]))
        #expect(reopened.objects(Person.self).map(\.id) == Array(stride(from: 1, through: 99, by: 2)))
        #expect(reopened.object(ofType: Person.self, forPrimaryKey: 51)?.name == "p51")
    }

    @Test func deletingNullifiesOnlyLinksToTheDeletedObject() throws {
        let realm = try Realm(configuration: Realm.Configuration(inMemoryIdentifier: "nullify-\(UUID())"))
        let ann = Person(value: ["id": 1, "name": "Ann"])
        let bob = Person(value: ["id": 2, "name": "Bob"])
        let pair = Pair()
        pair.left = ann
        pair.right = bob
        try realm.write { realm.add(pair) }
        try realm.write { realm.delete(ann) }
        #expect(pair.left == nil)
        #expect(pair.right?.name == "Bob")
        try realm.write { realm.delete(realm.objects(Person.self)) }
        #expect(pair.right == nil)
        #expect(realm.objects(Person.self).isEmpty)
        #expect(realm.objects(Pair.self).count == 1)
        // Deleting a whole type also deletes the embedded objects it owns.
        try realm.write {
            realm.add(Person(value: ["id": 3, "address": ["street": "Main"]]))
            realm.add(Person(value: ["id": 4, "address": ["street": "Side"]]))
        }
        #expect(realm.rowCount(tree: TableNames.rows("Address")) == 2)
        try realm.write { realm.delete(realm.objects(Person.self)) }
        #expect(realm.rowCount(tree: TableNames.rows("Address")) == 0)
    }

    @Test func accessorsSeeChangesMadeThroughOtherAccessors() throws {
        let realm = try Realm(configuration: Realm.Configuration(inMemoryIdentifier: "cache-\(UUID())"))
        try realm.write { realm.add(Person(value: ["id": 1, "name": "Ann", "age": 1])) }
        let first = try #require(realm.object(ofType: Person.self, forPrimaryKey: 1))
        let second = try #require(realm.object(ofType: Person.self, forPrimaryKey: 1))
        #expect(first.name == "Ann")
        try realm.write {
            second.name = "Changed"
            #expect(first.name == "Changed")
            second.age = 2
            #expect(first.age == 2)
            #expect(first.name == "Changed")
        }
        let other = try Realm.independent(realm.configuration)
        let remote = try #require(other.object(ofType: Person.self, forPrimaryKey: 1))
        try other.write { remote.name = "Remote" }
        #expect(first.name == "Changed")  // not refreshed yet: still its version
        realm.refresh()
        #expect(first.name == "Remote")
    }

    @Test func addedObjectsFindTheirPropertiesWithoutTheColumnsTheirStorageCached() throws {
        // An object added to a Realm keeps its own storage; each property's column is cached in it when the
        // object is attached. Reads and writes must find the column again when it is missing.
        let realm = try Realm(configuration: Realm.Configuration(inMemoryIdentifier: "columns-\(UUID())"))
        let person = Person(value: ["id": 7, "name": "Ann", "age": 30])
        try realm.write { realm.add(person) }
        #expect(person.boxes.count == 5)
        for box in person.boxes { box.column = -1 }
        #expect(person.id == 7 && person.name == "Ann" && person.age == 30)
        #expect(person.address == nil && person.bestFriend == nil)
        #expect(person.boxes.map(\.column) == [0, 1, 2, 3, 4])
        for box in person.boxes { box.column = -1 }
        try realm.write { person.age = 31 }
        #expect(realm.objects(Person.self).first?.age == 31)
        #expect(realm.objects(Person.self).first?.name == "Ann")
    }

    @Test func aRealmRefusesUseFromAnotherThread() throws {
        let realm = try Realm(configuration: Realm.Configuration(inMemoryIdentifier: "thread-\(UUID())"))
        nonisolated(unsafe) let shared = realm
        let outcome = Locked<String>("")
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            do {
                try shared.write { outcome.withLock { $0 = "began" } }
            } catch {
                outcome.withLock { $0 = "\(error)" }
            }
            done.signal()
        }
        thread.start()
        done.wait()
        #expect(outcome.withLock { $0 } == Realm.Error.wrongThread.description)
        #expect(!realm.isInWriteTransaction)
    }

    @Test func readOnlyRealmsReadButNeverWrite() throws {
        let scratch = try Scratch()
        let configuration = scratch.configuration([Person.self])
        do {
            let realm = try Realm(configuration: configuration)
            try realm.write { realm.add(Person(value: ["id": 1, "name": "Ann"])) }
        }
        var readOnly = configuration
        readOnly.readOnly = true
        let realm = try Realm(configuration: readOnly)
        #expect(realm.object(ofType: Person.self, forPrimaryKey: 1)?.name == "Ann")
        #expect(throws: Realm.Error.readOnly(path: configuration.fileURL!.path)) { try realm.write {} }
        var missing = readOnly
        missing.fileURL = scratch.url.appendingPathComponent("missing.strata")
        #expect(throws: Realm.Error.fileNotFound(path: missing.fileURL!.path)) { _ = try Realm(configuration: missing) }
    }

    @Test func deleteFilesRemovesTheFileItsLockAndItsLog() throws {
        let scratch = try Scratch()
        let configuration = scratch.configuration([Person.self])
        #expect(!Realm.fileExists(for: configuration))
        do {
            let realm = try Realm(configuration: configuration)
            try realm.write { realm.add(Person(value: ["id": 1])) }
        }
        #expect(Realm.fileExists(for: configuration))
        #expect(try Realm.deleteFiles(for: configuration))
        #expect(!Realm.fileExists(for: configuration))
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: scratch.url.path)
        #expect(leftovers.isEmpty)
        #expect(try !Realm.deleteFiles(for: configuration))
        let reopened = try Realm(configuration: configuration)
        #expect(reopened.isEmpty)
    }

    @Test func dynamicObjectsReadAndWriteStoredClassesByName() throws {
        let scratch = try Scratch()
        do {
            let realm = try Realm(configuration: scratch.configuration([Person.self]))
            let ann = Person(value: ["id": 1, "name": "Ann", "age": 30, "address": ["street": "Main"]])
            ann.bestFriend = Person(value: ["id": 2, "name": "Bob"])
            try realm.write { realm.add(ann) }
        }
        // A Realm that knows no model types reads them by name.
        let realm = try Realm(configuration: scratch.configuration())
        let people = realm.dynamicObjects("Person")
        #expect(people.count == 2)
        let ann = try #require(people.first { $0["id"] as? Int == 1 })
        #expect(ann.className == "Person")
        #expect(ann["name"] as? String == "Ann")
        #expect(ann["age"] as? Int == 30)
        let friend = try #require(ann["bestFriend"] as? DynamicObject)
        #expect(friend.className == "Person")
        #expect(friend["name"] as? String == "Bob")
        #expect((ann["address"] as? DynamicObject)?["street"] as? String == "Main")
        try realm.write {
            ann["name"] = "Anne"
            ann["bestFriend"] = nil
        }
        #expect(realm.dynamicObjects("Person").first { $0["id"] as? Int == 1 }?["name"] as? String == "Anne")
        #expect(throws: Realm.Error.self) {
            try realm.write { ann["age"] = "not a number" }
        }
        try realm.write { realm.delete(ann) }
        #expect(realm.dynamicObjects("Person").count == 1)
        #expect(realm.rowCount(tree: TableNames.rows("Address")) == 0)
        #expect(throws: Realm.Error.self) {
            try realm.write { realm.add(DynamicObject()) }
        }
    }

    @Test func aReadOnlyRealmWithoutModelsDescribesTheStoredClassesAndKeysTheirObjects() throws {
        let scratch = try Scratch()
        do {
            let realm = try Realm(configuration: scratch.configuration([Person.self, Pair.self]))
            try realm.write {
                let ann = realm.create(Person.self, value: ["id": 1, "name": "Ann", "address": ["street": "Main"]])
                realm.create(Person.self, value: ["id": 2, "name": "Bob"])
                realm.create(Pair.self, value: ["left": ann])
                realm.create(Pair.self, value: ["left": ann])
            }
            try realm.write { realm.delete(realm.objects(Pair.self).first!) }
            try realm.write { realm.create(Pair.self) }
        }
        let before = try Data(contentsOf: scratch.url.appendingPathComponent("test.strata"))
        var configuration = scratch.configuration()
        configuration.readOnly = true
        let realm = try Realm(configuration: configuration)
        // The stored schema, with nothing bound: every class the file holds, as stored.
        #expect(realm.schema.objectSchema.map(\.className) == ["Address", "Pair", "Person"])
        #expect(realm.schema[className: "Address"]?.isEmbedded == true)
        let person = try #require(realm.schema[className: "Person"])
        #expect(person.primaryKeyProperty?.name == "id")
        #expect(person[propertyName: "bestFriend"]?.objectClassName == "Person")
        // A dynamic object describes its stored class, not the empty DynamicObject type.
        let ann = try #require(realm.dynamicObjects("Person").first)
        #expect(ann.objectSchema == person)
        #expect((ann["address"] as? DynamicObject)?.objectSchema.isEmbedded == true)
        // Object keys follow insertion order and are not handed out again after a delete.
        #expect(realm.dynamicObjects("Person").map(\.objectKey) == [1, 2])
        #expect(realm.dynamicObjects("Pair").map(\.objectKey) == [2, 3])
        #expect((realm.dynamicObjects("Pair").first?["left"] as? DynamicObject)?.objectKey == 1)
        #expect(DynamicObject().objectKey == nil)
        #expect(try Data(contentsOf: scratch.url.appendingPathComponent("test.strata")) == before)
    }

    @Test func dynamicObjectsReadLinksInCollectionsAsObjectsOfTheTargetClass() throws {
        let scratch = try Scratch()
        do {
            let realm = try Realm(configuration: scratch.configuration([Hiker.self]))
            try realm.write {
                let low = realm.create(Hut.self, value: ["id": 10])
                let high = realm.create(Hut.self, value: ["id": 20])
                realm.create(
                    Hiker.self, value: ["id": 1, "visits": [high, low], "memberships": [low], "byName": ["top": high]])
            }
        }
        let realm = try Realm(configuration: scratch.configuration())
        let hiker = try #require(realm.dynamicObjects("Hiker").first)
        let visits = try #require(hiker["visits"] as? [Any])
        #expect(visits.map { ($0 as? DynamicObject)?.className } == ["Hut", "Hut"])
        #expect(visits.map { ($0 as? DynamicObject)?["id"] as? Int } == [20, 10])
        #expect(((hiker["memberships"] as? [Any])?.first as? DynamicObject)?["id"] as? Int == 10)
        #expect(((hiker["byName"] as? [String: Any])?["top"] as? DynamicObject)?["id"] as? Int == 20)
    }
}

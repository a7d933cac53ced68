public import Foundation
import Testing

@testable public import Strata

// The seeds' model examples, as written there (CoreLocation's coordinate is replaced by a local struct: it does
// not exist on Linux).

final class Dog: Object {
    @Persisted(primaryKey: true) var _id: ObjectId
    @Persisted var name = ""
    @Persisted var breed: String?
    @Persisted var dateOfBirth = Date()
}

final class SeedPerson: Object {
    @Persisted var firstName = ""
    @Persisted var lastName = ""
    var fullName: String { "\(firstName) \(lastName)" }  // read-only: ignored
    var nickname = ""  // not @Persisted: ignored
    override class public func propertiesMapping() -> [String: String] {
        ["firstName": "first_name", "lastName": "last_name"]
    }
}

final class Location: EmbeddedObject {
    @Persisted var latitude: Double
    @Persisted var longitude: Double
}

struct Coordinate: Equatable {
    var latitude: Double
    var longitude: Double
}

extension Coordinate: CustomPersistable {
    typealias PersistedType = Location
    init(persistedValue: Location) { self.init(latitude: persistedValue.latitude, longitude: persistedValue.longitude) }
    var persistableValue: Location { Location(value: [latitude, longitude]) }
}

extension URL: FailableCustomPersistable {
    /// See the protocol requirement.
    public typealias PersistedType = String
    /// See the protocol requirement.
    public init?(persistedValue: String) { self.init(string: persistedValue) }
    /// See the protocol requirement.
    public var persistableValue: String { absoluteString }
}

final class Club: Object {
    @Persisted var id: ObjectId
    @Persisted var name: String
    @Persisted var url: URL?
    @Persisted var location: Coordinate
}

enum TaskStatusEnum: String, PersistableEnum {
    case notStarted, inProgress, complete
}

enum Priority: Int, PersistableEnum {
    case low = 1
    case high = 10
}

final class SeedTask: Object {
    @Persisted var name = ""
    @Persisted var taskStatus = TaskStatusEnum.notStarted
    @Persisted var priority: Priority?
}

final class Extremes: Object {
    @Persisted var int = 0
    @Persisted var double = 0.0
    @Persisted var float: Float = 0
    @Persisted var date = Date()
    @Persisted var string = ""
    @Persisted var data = Data()
    @Persisted var optionalInt: Int?
    @Persisted var optionalDouble: Double?
    @Persisted var optionalString: String?
    @Persisted var optionalData: Data?
    @Persisted var optionalDate: Date?
    @Persisted var optionalBool: Bool?
    @Persisted var optionalFloat: Float?
    @Persisted var optionalUUID: UUID?
    @Persisted var optionalObjectId: ObjectId?
    @Persisted var optionalDecimal: Decimal128?
}

final class TwoKeys: Object {
    @Persisted(primaryKey: true) var a = 0
    @Persisted(primaryKey: true) var b = 0
}

final class KeyedEmbedded: EmbeddedObject {
    @Persisted(primaryKey: true) var key = 0
}

final class RequiredLink: Object {
    @Persisted var dog: Dog
}

final class ThisClassNameIsFarTooLongForTheFileFormatWhichAllowsFiftySevenBytes: Object {
    @Persisted var value = 0
}

final class LongPropertyName: Object {
    @Persisted var thisPropertyNameIsFarTooLongForTheFileFormatWhichAllowsSixtyThreeBytes = 0
}

final class IndexedDouble: Object {
    @Persisted(indexed: true) var value = 0.0
}

@Suite("Seeds' model examples")
struct SeedExampleTests {
    private func memoryRealm() throws -> Realm {
        try Realm(configuration: Realm.Configuration(inMemoryIdentifier: "seeds-\(UUID())"))
    }

    @Test func dogWithObjectIdPrimaryKeyOptionalBreedAndDate() throws {
        let scratch = try Scratch()
        let born = Date(timeIntervalSince1970: 1_600_000_000)
        let dog = Dog()
        dog.name = "Rex"
        dog.dateOfBirth = born
        let id = dog._id
        #expect(id != ObjectId())  // a generated ObjectId, not all zeros
        do {
            let realm = try Realm(configuration: scratch.configuration([Dog.self]))
            try realm.write { realm.add(dog) }
        }
        let realm = try Realm(configuration: scratch.configuration([Dog.self]))
        #expect(realm.schema[className: "Dog"]?.primaryKeyProperty?.name == "_id")
        let stored = try #require(realm.object(ofType: Dog.self, forPrimaryKey: id))
        #expect(stored.name == "Rex")
        #expect(stored.breed == nil)
        #expect(stored.dateOfBirth == born)
        try realm.write { stored.breed = "Collie" }
        #expect(realm.object(ofType: Dog.self, forPrimaryKey: id)?.breed == "Collie")
    }

    @Test func propertiesMappingStoresTheMappedNames() throws {
        let realm = try memoryRealm()
        try realm.write {
            let person = SeedPerson()
            person.firstName = "Ada"
            person.lastName = "Lovelace"
            person.nickname = "ignored"
            realm.add(person)
        }
        let schema = try #require(realm.schema[className: "SeedPerson"])
        #expect(schema.properties.map(\.columnName) == ["first_name", "last_name"])
        let person = try #require(realm.objects(SeedPerson.self).first)
        #expect(person.fullName == "Ada Lovelace")
        #expect(person.nickname == "")
        #expect(person["first_name"] as? String == "Ada")
        #expect(person["firstName"] as? String == "Ada")
    }

    @Test func clubWithTypeProjections() throws {
        let realm = try memoryRealm()
        let club = Club(value: ["name": "American Kennel Club", "url": "https://akc.org"])
        let club2 = Club()
        club2.name = "Continental Kennel Club"
        club2.url = URL(string: "https://ckcusa.com/")!
        club2.location = Coordinate(latitude: 40.7509, longitude: 73.9777)
        try realm.write {
            realm.add(club)
            realm.add(club2)
        }
        let schema = try #require(realm.schema[className: "Club"])
        #expect(schema[propertyName: "url"]?.type == .string)
        #expect(schema[propertyName: "location"]?.type == .object)
        #expect(schema[propertyName: "location"]?.objectClassName == "Location")
        let clubs = Array(realm.objects(Club.self))
        #expect(clubs[0].url == URL(string: "https://akc.org"))
        #expect(clubs[0].location == Coordinate(latitude: 0, longitude: 0))
        #expect(clubs[1].url?.absoluteString == "https://ckcusa.com/")
        #expect(clubs[1].location == Coordinate(latitude: 40.7509, longitude: 73.9777))
        // Dynamic access acts on the persisted type.
        #expect(clubs[1]["url"] as? String == "https://ckcusa.com/")
        // A stored string that is not a URL reads as nil through the failable projection.
        try realm.write { clubs[0]["url"] = "" }
        #expect(clubs[0].url == nil)
    }

    @Test func enumsPersistTheirRawValues() throws {
        let realm = try memoryRealm()
        try realm.write {
            realm.add(SeedTask(value: ["name": "a", "taskStatus": TaskStatusEnum.inProgress]))
            realm.add(SeedTask(value: ["name": "b", "taskStatus": "complete", "priority": 10]))
        }
        let tasks = Array(realm.objects(SeedTask.self))
        #expect(tasks.map(\.taskStatus) == [.inProgress, .complete])
        #expect(tasks.map(\.priority) == [nil, .high])
        #expect(tasks[1]["taskStatus"] as? String == "complete")
        #expect(realm.schema[className: "SeedTask"]?[propertyName: "priority"]?.type == .int)
    }

    @Test func extremesRoundTripThroughAFile() throws {
        let scratch = try Scratch()
        let big = String(repeating: "é", count: 8 << 20)  // 16 MiB of UTF-8
        let bigData = Data(repeating: 0xAB, count: 16 << 20)
        let cases: [(Int, Double, Float, Date, String, Data)] = [
            (.min, -.infinity, -.greatestFiniteMagnitude, .distantPast, "", Data()),
            (.max, .infinity, .leastNonzeroMagnitude, .distantFuture, "nul\u{0}inside ☃︎ 𝄞", Data([0])),
            (0, .nan, .nan, Date(timeIntervalSinceReferenceDate: 0), big, bigData),
            (-1, -0.0, -0.0, Date(timeIntervalSince1970: 0.000001), "\u{0}", Data([0, 0, 0])),
        ]
        do {
            let realm = try Realm(configuration: scratch.configuration([Extremes.self]))
            try realm.write {
                for (int, double, float, date, string, data) in cases {
                    realm.add(
                        Extremes(value: [
                            "int": int, "double": double, "float": float, "date": date, "string": string, "data": data,
                        ]))
                }
                let everything = Extremes()
                everything.optionalInt = .min
                everything.optionalDouble = .nan
                everything.optionalString = ""
                everything.optionalData = Data()
                everything.optionalDate = .distantFuture
                everything.optionalBool = false
                everything.optionalFloat = .infinity
                everything.optionalUUID = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
                everything.optionalObjectId = ObjectId()
                everything.optionalDecimal = .nan
                realm.add(everything)
            }
        }
        let realm = try Realm(configuration: scratch.configuration([Extremes.self]))
        let stored = Array(realm.objects(Extremes.self))
        #expect(stored.count == cases.count + 1)
        for (object, expected) in zip(stored, cases) {
            #expect(object.int == expected.0)
            #expect(object.double.bitPattern == expected.1.bitPattern)
            #expect(object.float.bitPattern == expected.2.bitPattern)
            #expect(object.date == expected.3)
            #expect(object.string == expected.4)
            #expect(object.data == expected.5)
            #expect(object.optionalInt == nil)
            #expect(object.optionalDouble == nil)
            #expect(object.optionalString == nil)
            #expect(object.optionalData == nil)
            #expect(object.optionalDate == nil)
            #expect(object.optionalBool == nil)
            #expect(object.optionalFloat == nil)
            #expect(object.optionalUUID == nil)
            #expect(object.optionalObjectId == nil)
            #expect(object.optionalDecimal == nil)
        }
        let everything = stored[cases.count]
        #expect(everything.optionalInt == .min)
        #expect(everything.optionalDouble?.isNaN == true)
        #expect(everything.optionalString == "")
        #expect(everything.optionalData == Data())
        #expect(everything.optionalDate == .distantFuture)
        #expect(everything.optionalBool == false)
        #expect(everything.optionalFloat == .infinity)
        #expect(everything.optionalUUID?.uuidString == "00000000-0000-0000-0000-000000000000")
        #expect(everything.optionalObjectId == ObjectId())
        #expect(everything.optionalDecimal?.isNaN == true)
    }

    @Test func eachModelRuleIsATypedErrorAtSchemaTime() throws {
        func reason(_ type: ObjectBase.Type) -> String? {
            do {
                _ = try SchemaRegistry.shared.table(for: type)
                return nil
            } catch {
                return error.description
            }
        }
        #expect(reason(TwoKeys.self) == "TwoKeys.b: a type has at most one primary key")
        #expect(reason(KeyedEmbedded.self) == "KeyedEmbedded.key: embedded and asymmetric objects have no primary key")
        #expect(reason(RequiredLink.self) == "RequiredLink.dog: links must be optional (`Dog?`)")
        #expect(reason(BadKey.self) == "BadKey.key: a primary key must be Int, String, UUID or ObjectId, not double")
        #expect(reason(IndexedDouble.self) == "IndexedDouble.value: double properties cannot have a general index")
        #expect(
            reason(ThisClassNameIsFarTooLongForTheFileFormatWhichAllowsFiftySevenBytes.self)?.contains(
                "1 to 57 UTF-8 bytes")
                == true)
        #expect(reason(LongPropertyName.self)?.contains("1 to 63 UTF-8 bytes") == true)
        #expect(throws: Realm.Error.self) {
            _ = try Realm(
                configuration: Realm.Configuration(inMemoryIdentifier: "rules-\(UUID())", objectTypes: [TwoKeys.self]))
        }
    }

    @Test func eachWriteRuleFailsTheTransactionAndLeavesTheFileUnchanged() throws {
        let scratch = try Scratch()
        let realm = try Realm(configuration: scratch.configuration([Person.self, AllTypes.self]))
        try realm.write { realm.add(Person(value: ["id": 1, "name": "Ann"])) }
        let version = realm.store.latestVersion
        let size = try FileManager.default.attributesOfItem(
            atPath: scratch.url.appendingPathComponent("test.strata").path)[.size]
        let violations: [(Realm.Error, () -> Void)] = [
            (.primaryKeyExists(type: "Person", value: "1"), { realm.add(Person(value: ["id": 1])) }),
            (
                .primaryKeyChange(type: "Person", property: "id"),
                { realm.objects(Person.self).first?.id = 2 }
            ),
            (
                .valueTooLarge(type: "AllTypes", property: "data", size: (16 << 20) + 1),
                { realm.add(AllTypes(value: ["data": Data(count: (16 << 20) + 1)])) }
            ),
            (
                .valueTooLarge(type: "Person", property: "name", size: (16 << 20) + 1),
                { realm.objects(Person.self).first?.name = String(repeating: "x", count: (16 << 20) + 1) }
            ),
            (
                .invalidValue(type: "AllTypes", property: "int8", reason: "300 does not fit in Int8"),
                { realm.create(AllTypes.self, value: ["int8": 300]) }
            ),
            (
                .invalidValue(
                    type: "Person", property: "age", reason: "String is not a valid value for a int? property"),
                { realm.create(Person.self, value: ["id": 7, "age": "seven"]) }
            ),
        ]
        for (expected, violate) in violations {
            #expect(throws: expected) {
                try realm.write {
                    realm.add(Person(value: ["id": 99, "name": "written before the violation"]))
                    violate()
                }
            }
            #expect(!realm.isInWriteTransaction)
            #expect(realm.store.latestVersion == version)
            #expect(realm.object(ofType: Person.self, forPrimaryKey: 99) == nil)
            #expect(realm.objects(Person.self).first?.name == "Ann")
        }
        let after = try FileManager.default.attributesOfItem(
            atPath: scratch.url.appendingPathComponent("test.strata").path)[.size]
        #expect(after as? Int == size as? Int)
    }
}

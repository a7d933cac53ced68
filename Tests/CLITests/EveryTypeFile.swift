import Foundation
import Strata

// A model with every property type the library stores, each plain, optional, and as the elements of a list, a set
// and a map (optional elements too); embedded objects (nested, in lists and maps); links to classes with and without
// a primary key (to-one, list, set, map); backlinks; mixed values with every case, nested lists and dictionaries
// and links. The CLI tests read it without the models, dump it and load it back.

final class Specimen: Object {
    @Persisted(primaryKey: true) var id = 0
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
    @Persisted var date = Date(timeIntervalSince1970: 0)
    @Persisted var decimal: Decimal128 = 0
    @Persisted var objectId = ObjectId()
    @Persisted var uuid = UUID(uuidString: "00000000-0000-0000-0000-000000000000")!
    @Persisted var optBool: Bool?
    @Persisted var optInt: Int?
    @Persisted var optFloat: Float?
    @Persisted var optDouble: Double?
    @Persisted var optString: String?
    @Persisted var optData: Data?
    @Persisted var optDate: Date?
    @Persisted var optDecimal: Decimal128?
    @Persisted var optObjectId: ObjectId?
    @Persisted var optUUID: UUID?
    @Persisted var bools: List<Bool>
    @Persisted var ints: List<Int>
    @Persisted var floats: List<Float>
    @Persisted var doubles: List<Double>
    @Persisted var strings: List<String>
    @Persisted var datas: List<Data>
    @Persisted var dates: List<Date>
    @Persisted var decimals: List<Decimal128>
    @Persisted var objectIds: List<ObjectId>
    @Persisted var uuids: List<UUID>
    @Persisted var optInts: List<Int?>
    @Persisted var optStrings: List<String?>
    @Persisted var optDates: List<Date?>
    @Persisted var boolSet: MutableSet<Bool>
    @Persisted var intSet: MutableSet<Int>
    @Persisted var floatSet: MutableSet<Float>
    @Persisted var doubleSet: MutableSet<Double>
    @Persisted var stringSet: MutableSet<String>
    @Persisted var dataSet: MutableSet<Data>
    @Persisted var dateSet: MutableSet<Date>
    @Persisted var decimalSet: MutableSet<Decimal128>
    @Persisted var objectIdSet: MutableSet<ObjectId>
    @Persisted var uuidSet: MutableSet<UUID>
    @Persisted var optIntSet: MutableSet<Int?>
    @Persisted var boolMap: Map<String, Bool>
    @Persisted var intMap: Map<String, Int>
    @Persisted var floatMap: Map<String, Float>
    @Persisted var doubleMap: Map<String, Double>
    @Persisted var stringMap: Map<String, String>
    @Persisted var dataMap: Map<String, Data>
    @Persisted var dateMap: Map<String, Date>
    @Persisted var decimalMap: Map<String, Decimal128>
    @Persisted var objectIdMap: Map<String, ObjectId>
    @Persisted var uuidMap: Map<String, UUID>
    @Persisted var optStringMap: Map<String, String?>
    @Persisted var optDoubleMap: Map<String, Double?>
    @Persisted var part: SpecimenPart?
    @Persisted var parts: List<SpecimenPart>
    @Persisted var partMap: Map<String, SpecimenPart?>
    @Persisted var friend: Specimen?
    @Persisted var friends: List<Specimen>
    @Persisted var friendSet: MutableSet<Specimen>
    @Persisted var friendMap: Map<String, Specimen?>
    @Persisted var tag: Label?
    @Persisted var tags: List<Label>
    @Persisted var tagSet: MutableSet<Label>
    @Persisted var tagMap: Map<String, Label?>
    @Persisted var mixed: AnyRealmValue
    @Persisted var mixedList: List<AnyRealmValue>
    @Persisted var mixedSet: MutableSet<AnyRealmValue>
    @Persisted var mixedMap: Map<String, AnyRealmValue>
    @Persisted(originProperty: "friends") var friendOf: LinkingObjects<Specimen>
}

/// Embedded, with a nested embedded object and a link out.
final class SpecimenPart: EmbeddedObject {
    @Persisted var name = ""
    @Persisted var weight: Double?
    @Persisted var detail: SpecimenDetail?
    @Persisted var label: Label?
    @Persisted var counts: List<Int>
}

final class SpecimenDetail: EmbeddedObject {
    @Persisted var note = ""
    @Persisted var at: Date?
}

/// No primary key: links to it are its object key.
final class Label: Object {
    @Persisted var text = ""
    @Persisted var colour: String?
    @Persisted(originProperty: "tags") var taggedOn: LinkingObjects<Specimen>
}

enum EveryTypeFile {
    static let types: [ObjectBase.Type] = [Specimen.self, Label.self]

    /// A file with three specimens — one full of values (extremes included), one with every default and nil, one
    /// linking back — and three labels.
    static func write(to path: String) throws {
        let realm = try Realm(configuration: .init(fileURL: URL(fileURLWithPath: path), objectTypes: types))
        let when = Date(timeIntervalSinceReferenceDate: 721_303_200.123_456_7)  // sub-millisecond
        let early = Date(timeIntervalSince1970: -86_400 * 365.25 * 50 + 0.5)  // before 1970
        let id1 = try ObjectId(string: "65a1b2c3d4e5f60718293a4b")
        let id2 = try ObjectId(string: "65a1b2c3d4e5f60718293a4c")
        let uuid1 = UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!
        let uuid2 = UUID(uuidString: "00000000-0000-0000-0000-000000000001")!
        let decimal1 = try Decimal128(string: "12345678901234567890.123456789")
        let decimal2 = try Decimal128(string: "-0.000001")
        try realm.write {
            let red = realm.create(Label.self, value: ["text": "red", "colour": "#f00"])
            let plain = realm.create(Label.self, value: ["text": "plain"])
            let unicode = realm.create(Label.self, value: ["text": "ünï \"çødé\"\n\t✓ 🎉"])
            let full = realm.create(
                Specimen.self,
                value: [
                    "id": 1, "bool": true, "int": Int.max, "int8": Int8.min, "int16": Int16.max, "int32": Int32.min,
                    "int64": Int64.min, "float": Float(3.14159), "double": 0.1 + 0.2, "string": "hello, \"world\"\\ ✓",
                    "data": Data([0, 1, 2, 255, 254]), "date": when, "decimal": decimal1, "objectId": id1,
                    "uuid": uuid1,
                    "optBool": false, "optInt": -42, "optFloat": Float.infinity, "optDouble": Double.nan,
                    "optString": "", "optData": Data(), "optDate": early, "optDecimal": decimal2, "optObjectId": id2,
                    "optUUID": uuid2,
                    "bools": [true, false, true], "ints": [3, -1, 0, 3], "floats": [1.5, -Float.infinity],
                    "doubles": [1e300, -0.0, Double.infinity, 1.0], "strings": ["a", "", "ü"],
                    "datas": [Data([1]), Data()], "dates": [when, early], "decimals": [decimal1, decimal2],
                    "objectIds": [id1, id2], "uuids": [uuid1, uuid2], "optInts": [1, nil, 3],
                    "optStrings": [nil, "x"], "optDates": [nil, when],
                    "boolSet": [true, false], "intSet": [5, 1, 3], "floatSet": [2.5, 0.5], "doubleSet": [9.75, -1.0],
                    "stringSet": ["b", "a"], "dataSet": [Data([9]), Data([8, 7])], "dateSet": [early, when],
                    "decimalSet": [decimal2], "objectIdSet": [id2, id1], "uuidSet": [uuid1],
                    "optIntSet": [nil, 7],
                    "boolMap": ["yes": true], "intMap": ["one": 1, "minus": -1], "floatMap": ["half": 0.5],
                    "doubleMap": ["pi": 3.141592653589793], "stringMap": ["k": "v", "empty": ""],
                    "dataMap": ["d": Data([1, 2])], "dateMap": ["then": early], "decimalMap": ["d": decimal1],
                    "objectIdMap": ["o": id1], "uuidMap": ["u": uuid2],
                    "optStringMap": ["none": NSNull(), "some": "s"],
                    "optDoubleMap": ["n": NSNull(), "d": 2.5],
                    "part": [
                        "name": "head", "weight": 1.25,
                        "detail": ["note": "nested", "at": when] as [String: Any], "label": red, "counts": [1, 2],
                    ] as [String: Any],
                    "parts": [["name": "arm", "label": plain], ["name": "leg", "counts": [7]]],
                    "partMap": ["left": ["name": "left hand"], "gone": NSNull()] as [String: Any],
                    "tag": red, "tags": [red, unicode, red], "tagSet": [plain, red],
                    "tagMap": ["main": red, "no": NSNull()],
                ])
            full.mixed = .fromDictionary([
                "int": .int(7), "double": .double(2.0), "float": .float(1.5), "bool": .bool(true),
                "string": .string("s"), "data": .data(Data([1, 2, 3])), "date": .date(when), "oid": .objectId(id1),
                "uuid": .uuid(uuid1), "decimal": .decimal128(decimal2), "null": .none, "nan": .double(.nan),
                "inf": .float(-.infinity), "link": .object(red),
                "nested": .fromArray([.int(1), .fromArray([.string("deep"), .fromDictionary(["x": .double(1e-7)])])]),
            ])
            full.mixedList.append(objectsIn: [
                .int(1), .double(1), .string("1"), .none, .date(early), .fromArray([.bool(false)]),
                .fromDictionary(["k": .int(2)]),
            ])
            full.mixedSet.insert(objectsIn: [.int(1), .double(1), .string("one"), .data(Data([1]))])
            full.mixedMap["a"] = .int(1)
            full.mixedMap["b"] = .fromArray([.uuid(uuid2), .decimal128(decimal1)])
            let empty = realm.create(Specimen.self, value: ["id": 2])
            let third = realm.create(
                Specimen.self,
                value: [
                    "id": 3, "friend": full, "friends": [full, empty], "friendSet": [empty],
                    "mixed": AnyRealmValue.object(full),
                ])
            third.friendMap["best"] = full
            third.friendMap["none"] = .some(nil)
            full.friend = third  // a cycle, and a link to a later object
            full.friends.append(third)
            full.friendMap["self"] = full
        }
    }
}

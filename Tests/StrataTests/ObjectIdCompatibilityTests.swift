import Foundation
import Strata
import Testing

/// The SDK's `ObjectId` API, from its documentation: literals, the timestamp/machine/process initialiser, and the
/// members code written for the SDK uses.
@Suite("ObjectId compatibility")
struct ObjectIdCompatibilityTests {
    @Test func aStringLiteralIsAnObjectId() throws {
        let id: ObjectId = "6543a1b2c3d4e5f60718293a"
        #expect(id == (try ObjectId(string: "6543a1b2c3d4e5f60718293a")))
        #expect(id.stringValue == "6543a1b2c3d4e5f60718293a")
        let upper: ObjectId = "6543A1B2C3D4E5F60718293A"
        #expect(upper == id)
        let fromStatic = ObjectId("6543a1b2c3d4e5f60718293a")
        #expect(fromStatic == id)
    }

    @Test func literalsWorkWhereAnObjectIdIsExpected() {
        let ids: [ObjectId] = ["000000000000000000000001", "000000000000000000000002"]
        #expect(ids[0] < ids[1])
        #expect(ids.contains("000000000000000000000002"))
    }

    @Test func timestampMachineAndProcessInitializer() {
        let date = Date(timeIntervalSince1970: 1_700_000_000.75)
        let first = ObjectId(timestamp: date, machineId: 0x0A0B0C, processId: 0x0102)
        let second = ObjectId(timestamp: date, machineId: 0x0A0B0C, processId: 0x0102)
        // Whole seconds survive; the fraction does not.
        #expect(first.timestamp == Date(timeIntervalSince1970: 1_700_000_000))
        let bytes = first.bytes
        #expect(Array(bytes[0..<4]) == [0x65, 0x53, 0xF1, 0x00])  // 1_700_000_000, big-endian
        // As in the SDK: the machine's low three bytes and the process's low two, least significant first.
        #expect(Array(bytes[4..<7]) == [0x0C, 0x0B, 0x0A])
        #expect(Array(bytes[7..<9]) == [0x02, 0x01])
        // The counter makes identifiers from the same arguments differ, in creation order.
        #expect(first != second)
        #expect(first.timestamp == second.timestamp)
    }

    @Test func machineAndProcessKeepOnlyTheirLowBytes() {
        let id = ObjectId(timestamp: Date(timeIntervalSince1970: 0), machineId: 0x7F_FF_AA_BB_CC, processId: -1)
        #expect(Array(id.bytes[4..<9]) == [0xCC, 0xBB, 0xAA, 0xFF, 0xFF])
    }

    @Test func theRestOfTheSDKSurface() throws {
        #expect(ObjectId().stringValue == "000000000000000000000000")
        let generated = ObjectId.generate()
        #expect(abs(generated.timestamp.timeIntervalSinceNow) < 3600)
        #expect(generated.description == generated.stringValue)
        #expect(throws: ObjectIdParseError.self) { try ObjectId(string: "not an object id") }
        let encoded = try JSONEncoder().encode([generated])
        #expect(String(decoding: encoded, as: UTF8.self) == "[\"\(generated.stringValue)\"]")
        #expect(try JSONDecoder().decode([ObjectId].self, from: encoded) == [generated])
    }

    @Test func aLiteralIsUsableInQueries() throws {
        let realm = try Realm(
            configuration: Realm.Configuration(
                inMemoryIdentifier: "objectid-literal-\(UUID())", objectTypes: [ObjectIdCompatibilityItem.self]))
        try realm.write {
            realm.add(ObjectIdCompatibilityItem(value: ["id": "6543a1b2c3d4e5f60718293a" as ObjectId]))
        }
        let wanted: ObjectId = "6543a1b2c3d4e5f60718293a"
        #expect(realm.object(ofType: ObjectIdCompatibilityItem.self, forPrimaryKey: wanted) != nil)
        #expect(realm.objects(ObjectIdCompatibilityItem.self).where { $0.id == "6543a1b2c3d4e5f60718293a" }.count == 1)
    }
}

final class ObjectIdCompatibilityItem: Object {
    @Persisted(primaryKey: true) var id: ObjectId
}

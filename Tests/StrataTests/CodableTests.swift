import Foundation
import Testing

@testable import Strata

final class Kennel: Object, Codable {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var name = ""
    @Persisted var founded: Date?
    @Persisted var code = ObjectId()
    @Persisted var fee: Decimal128 = 0
    @Persisted var keeper: Keeper?
    @Persisted var address: KennelAddress?
}

final class Keeper: Object, Codable {
    @Persisted(primaryKey: true) var name = ""
    @Persisted var age = 0
}

final class KennelAddress: EmbeddedObject, Codable {
    @Persisted var city = ""
}

@Suite("Codable")
struct CodableTests {
    @Test func unmanagedObjectsRoundTripThroughJSON() throws {
        let kennel = Kennel()
        kennel.id = 7
        kennel.name = "North"
        kennel.founded = Date(timeIntervalSince1970: 1_000_000)
        kennel.fee = try Decimal128(string: "12.50")
        kennel.keeper = Keeper(value: ["name": "Ann", "age": 40])
        kennel.address = KennelAddress(value: ["city": "Oslo"])
        let data = try JSONEncoder().encode(kennel)
        let decoded = try JSONDecoder().decode(Kennel.self, from: data)
        #expect(decoded.id == 7)
        #expect(decoded.name == "North")
        #expect(decoded.founded == kennel.founded)
        #expect(decoded.code == kennel.code)
        #expect(decoded.fee == kennel.fee)
        #expect(decoded.keeper?.name == "Ann")
        #expect(decoded.keeper?.age == 40)
        #expect(decoded.address?.city == "Oslo")
        #expect(decoded.realm == nil)
    }

    @Test func missingKeysTakeDefaultsAndDecodedObjectsCanBeAdded() throws {
        let json = Data(#"{"id": 3, "name": "South"}"#.utf8)
        let decoded = try JSONDecoder().decode(Kennel.self, from: json)
        #expect(decoded.id == 3)
        #expect(decoded.name == "South")
        #expect(decoded.founded == nil)
        #expect(decoded.keeper == nil)
        #expect(decoded.fee == 0)
        let realm = try Realm(configuration: Realm.Configuration(inMemoryIdentifier: "codable-\(UUID())"))
        try realm.write { realm.add(decoded) }
        let stored = try #require(realm.object(ofType: Kennel.self, forPrimaryKey: 3))
        #expect(stored.name == "South")
        // Decoded objects found their real boxes: writes through them reach the file.
        try realm.write { decoded.name = "Renamed" }
        #expect(stored.name == "Renamed")
    }

    @Test func managedObjectsEncodeTheirStoredValues() throws {
        let realm = try Realm(configuration: Realm.Configuration(inMemoryIdentifier: "codable-managed-\(UUID())"))
        try realm.write {
            realm.add(Kennel(value: ["id": 1, "name": "Stored", "keeper": ["name": "Bob", "age": 50]]))
        }
        let managed = try #require(realm.objects(Kennel.self).first)
        try realm.write { managed.name = "Changed in the Realm" }
        let object = try JSONSerialization.jsonObject(with: JSONEncoder().encode(managed)) as? [String: Any]
        #expect(object?["name"] as? String == "Changed in the Realm")
        #expect((object?["keeper"] as? [String: Any])?["age"] as? Int == 50)
    }

    @Test func nestedDecodingKeepsEveryObjectsBoxes() throws {
        // The keeper is decoded in the middle of the kennel's properties and the address last: each object must
        // still end up with its own boxes.
        let json = Data(
            #"{"id": 9, "name": "Mid", "keeper": {"name": "Cy", "age": 33}, "address": {"city": "Rome"}}"#.utf8)
        let decoded = try JSONDecoder().decode(Kennel.self, from: json)
        let table = try SchemaRegistry.shared.table(for: Kennel.self)
        let values = table.boxes(of: decoded).map(\.stored)
        #expect(values.count == table.schema.properties.count)
        #expect(decoded["name"] as? String == "Mid")
        #expect(decoded.keeper?["age"] as? Int == 33)
        #expect(decoded.address?["city"] as? String == "Rome")
        #expect(BoxStack.local.value.boxes.isEmpty)
    }
}

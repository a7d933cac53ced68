import Foundation
import StrataStorage
import StrataTestSupport
import Testing

@testable import Strata

final class Office: EmbeddedObject {
    @Persisted var city = ""
    @Persisted var country: String?
}

/// The seeds' `DogClub.regionalOfficeAddresses`, plus a map of embedded objects.
final class OfficeClub: Object {
    @Persisted(primaryKey: true) var name = ""
    @Persisted var offices: List<Office>
    @Persisted var branches: Map<String, Office?>
}

final class EmbeddedSetOwner: Object {
    @Persisted var offices: MutableSet<Office>
}

@Suite("Embedded objects in collections")
struct EmbeddedCollectionTests {
    private static func office(_ city: String) -> Office { Office(value: ["city": city]) }

    /// Stored `Office` rows: embedded objects must live exactly as long as their collection holds them.
    private static func officeRows(_ realm: Realm) throws -> Int {
        realm.rowCount(tree: TableNames.rows("Office"))
    }

    @Test func listsOfEmbeddedObjectsOwnTheirElements() throws {
        let scratch = try Scratch()
        let configuration = scratch.configuration([OfficeClub.self])
        do {
            let realm = try Realm(configuration: configuration)
            let club = OfficeClub(value: ["name": "Walkers"])
            club.offices.append(objectsIn: [Self.office("Berlin"), Self.office("Paris"), Self.office("Rome")])
            try realm.write { realm.add(club) }
            #expect(club.offices.map(\.city) == ["Berlin", "Paris", "Rome"])
            #expect(try Self.officeRows(realm) == 3)
            try realm.write {
                club.offices.remove(at: 1)
                club.offices[0] = Self.office("Bonn")
                club.offices.append(Self.office("Oslo"))
                club.offices.move(from: 2, to: 0)
                club.offices.swapAt(1, 2)
                club.offices[0].country = "Norway"
            }
            #expect(club.offices.map(\.city) == ["Oslo", "Rome", "Bonn"])
            #expect(try Self.officeRows(realm) == 3)
            // A managed embedded object belongs to one parent.
            #expect(throws: Realm.Error.self) {
                try realm.write { club.offices.append(club.offices[0]) }
            }
            // Deleting an element directly removes it from its list.
            try realm.write { realm.delete(club.offices[1]) }
            #expect(club.offices.map(\.city) == ["Oslo", "Bonn"])
            #expect(try Self.officeRows(realm) == 2)
        }
        let realm = try Realm(configuration: configuration)
        let club = try #require(realm.object(ofType: OfficeClub.self, forPrimaryKey: "Walkers"))
        #expect(club.offices.map(\.city) == ["Oslo", "Bonn"])
        #expect(club.offices[0].country == "Norway")
        try realm.write { club.offices.removeAll() }
        #expect(try Self.officeRows(realm) == 0)
    }

    @Test func mapsOfEmbeddedObjectsOwnTheirValues() throws {
        let realm = try Realm(configuration: Realm.Configuration(inMemoryIdentifier: "embedded-map-\(UUID())"))
        let club = OfficeClub(value: ["name": "Runners"])
        club.branches["north"] = Self.office("Oslo")
        club.branches["south"] = Self.office("Rome")
        try realm.write { realm.add(club) }
        #expect(club.branches["north"]??.city == "Oslo")
        try realm.write {
            club.branches["north"] = Self.office("Bergen")
            club.branches.removeObject(for: "south")
            club.branches["east"] = .some(nil)
        }
        #expect(club.branches.keys == ["east", "north"])
        #expect(club.branches["north"]??.city == "Bergen")
        #expect(try Self.officeRows(realm) == 1)
    }

    @Test func deletingTheOwnerDeletesEveryEmbeddedElement() throws {
        let realm = try Realm(configuration: Realm.Configuration(inMemoryIdentifier: "embedded-owner-\(UUID())"))
        try realm.write {
            for name in ["a", "b", "c"] {
                let club = OfficeClub(value: ["name": name])
                club.offices.append(objectsIn: [Self.office("x"), Self.office("y")])
                club.branches["k"] = Self.office("z")
                realm.add(club)
            }
        }
        #expect(try Self.officeRows(realm) == 9)
        try realm.write { realm.delete(realm.object(ofType: OfficeClub.self, forPrimaryKey: "a")!) }
        #expect(try Self.officeRows(realm) == 6)
        // Replacing a whole club (upsert) replaces its embedded elements.
        try realm.write {
            realm.add(OfficeClub(value: ["name": "b", "offices": [Self.office("only")]]), update: .all)
        }
        #expect(try Self.officeRows(realm) == 4)
        try realm.write { realm.delete(realm.objects(OfficeClub.self)) }
        #expect(try Self.officeRows(realm) == 0)
    }

    @Test func setsOfEmbeddedObjectsAreRejected() throws {
        #expect(throws: Realm.Error.self) {
            _ = try Realm(
                configuration: Realm.Configuration(
                    inMemoryIdentifier: "embedded-set-\(UUID())", objectTypes: [EmbeddedSetOwner.self]))
        }
    }
}

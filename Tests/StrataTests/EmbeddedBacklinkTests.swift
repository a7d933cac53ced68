import Foundation
import StrataTestSupport
import Testing

@testable import Strata

// `LinkingObjects` whose origin is an `EmbeddedObject` type, as the SDK allows: an embedded address links to a
// top-level city, and the city lists the addresses that point at it wherever they are embedded.

final class EbCity: Object {
    @Persisted(primaryKey: true) var name = ""
    @Persisted(originProperty: "city") var addresses: LinkingObjects<EbAddress>
}

final class EbAddress: EmbeddedObject {
    @Persisted var street = ""
    @Persisted var city: EbCity?
}

final class EbPerson: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var home: EbAddress?
    @Persisted var previous: List<EbAddress>
    @Persisted var labelled: Map<String, EbAddress?>
}

/// An embedded type whose `LinkingObjects` origin property does not exist.
final class EbBadCity: Object {
    @Persisted var name = ""
    @Persisted(originProperty: "town") var addresses: LinkingObjects<EbBadAddress>
}

final class EbBadAddress: EmbeddedObject {
    @Persisted var city: EbBadCity?
}

final class EbBadHolder: Object {
    @Persisted var address: EbBadAddress?
}

private func embeddedBacklinkRealm() throws -> Realm {
    try Realm(
        configuration: Realm.Configuration(
            inMemoryIdentifier: "embedded-backlinks-\(UUID())",
            objectTypes: [EbCity.self, EbAddress.self, EbPerson.self]
        ))
}

private func address(_ street: String, in city: EbCity?) -> EbAddress {
    let address = EbAddress()
    address.street = street
    address.city = city
    return address
}

@Suite("Embedded backlinks")
struct EmbeddedBacklinkTests {
    @Test func schemaListsTheEmbeddedOriginAsAComputedProperty() throws {
        let realm = try embeddedBacklinkRealm()
        let oslo = EbCity(value: ["name": "Oslo"])
        try realm.write { realm.add(oslo) }
        let schema = oslo.objectSchema
        let backlink = try #require(schema.computedProperties.first { $0.name == "addresses" })
        #expect(backlink.type == .linkingObjects)
        #expect(backlink.objectClassName == "EbAddress")
        #expect(backlink.linkOriginPropertyName == "city")
        #expect(!schema.properties.contains { $0.name == "addresses" })
    }

    @Test func aMissingOriginPropertyOnAnEmbeddedTypeIsATypedError() {
        #expect(throws: Realm.Error.self) {
            _ = try Realm(
                configuration: Realm.Configuration(
                    inMemoryIdentifier: "embedded-backlinks-bad-\(UUID())",
                    objectTypes: [EbBadCity.self, EbBadAddress.self, EbBadHolder.self]))
        }
    }

    @Test func backlinksListReferrersEmbeddedDirectlyInListsAndInMaps() throws {
        let realm = try embeddedBacklinkRealm()
        let oslo = EbCity(value: ["name": "Oslo"])
        let bergen = EbCity(value: ["name": "Bergen"])
        try realm.write {
            realm.add([oslo, bergen])
            let person = EbPerson(value: ["id": 1])
            person.home = address("Karl Johans gate", in: oslo)
            person.previous.append(address("Bryggen", in: bergen))
            person.previous.append(address("Grensen", in: oslo))
            person.labelled["work"] = address("Storgata", in: oslo)
            person.labelled["none"] = address("Nowhere", in: nil)
            realm.add(person)
        }
        #expect(oslo.addresses.count == 3)
        #expect(Set(oslo.addresses.map(\.street)) == ["Karl Johans gate", "Grensen", "Storgata"])
        #expect(bergen.addresses.map(\.street) == ["Bryggen"])
        #expect(oslo.addresses.allSatisfy { $0.city?.name == "Oslo" })
        let person = try #require(realm.object(ofType: EbPerson.self, forPrimaryKey: 1))
        #expect(oslo.addresses.index(of: try #require(person.home)) != nil)
        #expect(bergen.addresses.index(of: try #require(person.home)) == nil)
    }

    @Test func relinkingAndReplacingEmbeddedObjectsMovesTheBacklinks() throws {
        let realm = try embeddedBacklinkRealm()
        let oslo = EbCity(value: ["name": "Oslo"])
        let bergen = EbCity(value: ["name": "Bergen"])
        let person = EbPerson(value: ["id": 1])
        try realm.write {
            realm.add([oslo, bergen])
            person.home = address("A", in: oslo)
            person.previous.append(address("B", in: oslo))
            realm.add(person)
        }
        #expect(oslo.addresses.count == 2)

        try realm.write { person.home?.city = bergen }
        #expect(oslo.addresses.map(\.street) == ["B"])
        #expect(bergen.addresses.map(\.street) == ["A"])

        // Replacing the embedded object deletes the old one, and its link with it.
        try realm.write { person.home = address("C", in: oslo) }
        #expect(bergen.addresses.isEmpty)
        #expect(Set(oslo.addresses.map(\.street)) == ["B", "C"])

        try realm.write { person.previous.removeAll() }
        #expect(oslo.addresses.map(\.street) == ["C"])
    }

    @Test func deletingTheParentRemovesItsEmbeddedReferrers() throws {
        let realm = try embeddedBacklinkRealm()
        let oslo = EbCity(value: ["name": "Oslo"])
        try realm.write {
            realm.add(oslo)
            for id in 1...2 {
                let person = EbPerson(value: ["id": id])
                person.home = address("home \(id)", in: oslo)
                person.previous.append(address("old \(id)", in: oslo))
                person.labelled["work"] = address("work \(id)", in: oslo)
                realm.add(person)
            }
        }
        #expect(oslo.addresses.count == 6)
        try realm.write { realm.delete(realm.object(ofType: EbPerson.self, forPrimaryKey: 1)!) }
        #expect(Set(oslo.addresses.map(\.street)) == ["home 2", "old 2", "work 2"])
        try realm.write { realm.delete(realm.objects(EbPerson.self)) }
        #expect(oslo.addresses.isEmpty)
    }

    @Test func deletingTheTargetClearsTheEmbeddedLinks() throws {
        let realm = try embeddedBacklinkRealm()
        let oslo = EbCity(value: ["name": "Oslo"])
        let person = EbPerson(value: ["id": 1])
        try realm.write {
            realm.add(oslo)
            person.home = address("A", in: oslo)
            person.previous.append(address("B", in: oslo))
            realm.add(person)
        }
        try realm.write { realm.delete(oslo) }
        #expect(person.home?.city == nil)
        #expect(person.previous.first?.city == nil)
        #expect(person.home?.street == "A")
    }

    @Test func queriesGoThroughEmbeddedBacklinks() throws {
        let realm = try embeddedBacklinkRealm()
        try realm.write {
            let oslo = realm.create(EbCity.self, value: ["name": "Oslo"])
            let bergen = realm.create(EbCity.self, value: ["name": "Bergen"])
            realm.create(EbCity.self, value: ["name": "Tromsø"])
            let person = EbPerson(value: ["id": 1])
            person.home = address("Karl Johans gate", in: oslo)
            person.previous.append(address("Bryggen", in: bergen))
            person.labelled["work"] = address("Storgata", in: oslo)
            realm.add(person)
        }
        let cities = realm.objects(EbCity.self)
        #expect(Set(cities.filter("addresses.@count > 0").map(\.name)) == ["Oslo", "Bergen"])
        #expect(cities.filter("addresses.@count == 2").map(\.name) == ["Oslo"])
        #expect(cities.filter("ANY addresses.street == 'Bryggen'").map(\.name) == ["Bergen"])
        #expect(cities.filter("addresses.@count == 0").map(\.name) == ["Tromsø"])
        #expect(cities.where { $0.addresses.street == "Storgata" }.map(\.name) == ["Oslo"])
        let oslo = try #require(realm.object(ofType: EbCity.self, forPrimaryKey: "Oslo"))
        #expect(oslo.addresses.filter("street BEGINSWITH 'Karl'").map(\.street) == ["Karl Johans gate"])
    }

    @Test func observersOfEmbeddedBacklinksSeeLinksComeAndGo() throws {
        let realm = try embeddedBacklinkRealm()
        let oslo = EbCity(value: ["name": "Oslo"])
        try realm.write { realm.add(oslo) }
        var counts: [Int] = []
        var insertions: [[Int]] = []
        var deletions: [[Int]] = []
        var modifications: [[Int]] = []
        let token = oslo.addresses.observe { change in
            switch change {
            case .initial(let addresses): counts.append(addresses.count)
            case .update(let addresses, let deleted, let inserted, let modified):
                counts.append(addresses.count)
                insertions.append(inserted)
                deletions.append(deleted)
                modifications.append(modified)
            case .error(let error): Issue.record("\(error)")
            }
        }
        defer { token.invalidate() }
        let person = EbPerson(value: ["id": 1])
        try realm.write {
            person.home = address("A", in: oslo)
            realm.add(person)
        }
        try realm.write { person.previous.append(address("B", in: oslo)) }
        try realm.write { person.previous[0].street = "B2" }
        try realm.write { realm.delete(person) }
        #expect(counts == [0, 1, 2, 2, 0])
        #expect(insertions == [[0], [1], [], []])
        #expect(deletions == [[], [], [], [0, 1]])
        #expect(modifications == [[], [], [1], []])
    }

    @Test func embeddedBacklinksSurviveReopeningAFile() throws {
        let directory = TemporaryDirectory()
        let configuration = Realm.Configuration(
            fileURL: URL(fileURLWithPath: directory.file("embedded-backlinks.strata")),
            objectTypes: [EbCity.self, EbAddress.self, EbPerson.self])
        do {
            let realm = try Realm(configuration: configuration)
            try realm.write {
                let oslo = realm.create(EbCity.self, value: ["name": "Oslo"])
                let person = EbPerson(value: ["id": 1])
                person.home = address("A", in: oslo)
                realm.add(person)
            }
        }
        let reopened = try Realm(configuration: configuration)
        let oslo = try #require(reopened.object(ofType: EbCity.self, forPrimaryKey: "Oslo"))
        #expect(oslo.addresses.map(\.street) == ["A"])
    }
}

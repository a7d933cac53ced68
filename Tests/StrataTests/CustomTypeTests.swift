import Foundation
import Testing

@testable import Strata

// Enums and custom-persisted types (the seeds' `URL`, `Coordinate`, `TaskStatusEnum`, `Priority` of
// SeedExampleTests) as collection elements and in type-safe queries, as the Realm SDK allows them.

/// A failable projection with no value for the persisted type's default (`""`): a non-optional property of this
/// type needs an initial value.
struct SecureSite: FailableCustomPersistable, Equatable {
    var url: URL
    init?(persistedValue: String) {
        guard persistedValue.hasPrefix("https://"), let url = URL(string: persistedValue) else { return nil }
        self.url = url
    }
    var persistableValue: String { url.absoluteString }
}

enum Shelf: String, PersistableEnum {
    case top, bottom
}

// The conformance the Realm SDK never needed and Strata once did: still accepted, and harmless.
extension Shelf: RealmCollectionValue {}

final class CustomVenue: Object {
    @Persisted var name = ""
    @Persisted var statuses: List<TaskStatusEnum>
    @Persisted var priorities: MutableSet<Priority>
    @Persisted var statusByRoom: Map<String, TaskStatusEnum>
    @Persisted var maybePriorities: List<Priority?>
    @Persisted var links: List<URL>
    @Persisted var mirrors: MutableSet<URL>
    @Persisted var pages: Map<String, URL?>
    @Persisted var spots: List<Coordinate>
    @Persisted var shelves: List<Shelf>
    @Persisted var home = SecureSite(persistedValue: "https://home.example")!
    @Persisted var backup: SecureSite?
}

@Suite("Enums and custom types in collections and queries")
struct CustomTypeTests {
    private func realm() throws -> Realm {
        try Realm(
            configuration: Realm.Configuration(
                inMemoryIdentifier: "custom-types-\(UUID())", objectTypes: [CustomVenue.self, Club.self, Location.self])
        )
    }

    @Test func enumsAndCustomTypesAreCollectionValuesWithoutAnExtraConformance() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("custom-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let configuration = Realm.Configuration(
            fileURL: directory.appendingPathComponent("venues.strata"), objectTypes: [CustomVenue.self, Location.self])
        let akc = URL(string: "https://akc.org")!
        let ckc = URL(string: "https://ckcusa.com/")!
        do {
            let realm = try Realm(configuration: configuration)
            let venue = CustomVenue()
            venue.name = "hall"
            venue.statuses.append(objectsIn: [.complete, .notStarted, .complete])
            venue.priorities.insert(objectsIn: [.high, .low, .high])
            venue.statusByRoom["kitchen"] = .inProgress
            venue.maybePriorities.append(objectsIn: [nil, .high])
            venue.links.append(objectsIn: [akc, ckc])
            venue.mirrors.insert(akc)
            venue.pages["main"] = akc
            venue.pages["none"] = .some(nil)
            venue.spots.append(Coordinate(latitude: 59.9, longitude: 10.7))
            venue.shelves.append(.bottom)
            try realm.write { realm.add(venue) }
            // Managed collections take them too, and from their raw or persisted values by name.
            try realm.write {
                venue.statuses.append(.inProgress)
                venue.spots.append(Coordinate(latitude: -33.9, longitude: 151.2))
                realm.create(
                    CustomVenue.self, value: ["name": "annex", "statuses": ["complete"], "links": [ckc.absoluteString]])
            }
        }
        let realm = try Realm(configuration: configuration)
        let venues = realm.objects(CustomVenue.self).sorted(byKeyPath: "name", ascending: false)
        let hall = try #require(venues.first)
        #expect(Array(hall.statuses) == [.complete, .notStarted, .complete, .inProgress])
        #expect(Set(hall.priorities) == [.high, .low])
        #expect(hall.statusByRoom["kitchen"] == .inProgress)
        #expect(Array(hall.maybePriorities) == [nil, .high])
        #expect(Array(hall.links) == [akc, ckc])
        #expect(Array(hall.mirrors) == [akc])
        #expect(hall.pages["main"] == .some(akc))
        #expect(hall.pages["none"] == .some(nil))
        #expect(
            Array(hall.spots) == [
                Coordinate(latitude: 59.9, longitude: 10.7), Coordinate(latitude: -33.9, longitude: 151.2),
            ])
        #expect(Array(hall.shelves) == [.bottom])
        #expect(Array(venues[1].statuses) == [.complete] && Array(venues[1].links) == [ckc])
        // The schema shows the persisted types.
        let schema = try #require(realm.schema[className: "CustomVenue"])
        #expect(schema[propertyName: "statuses"]?.type == .string && schema[propertyName: "statuses"]?.isArray == true)
        #expect(schema[propertyName: "priorities"]?.type == .int && schema[propertyName: "priorities"]?.isSet == true)
        #expect(schema[propertyName: "pages"]?.type == .string && schema[propertyName: "pages"]?.isMap == true)
        #expect(schema[propertyName: "spots"]?.objectClassName == "Location")
        // Queries over the elements compare persisted values.
        #expect(realm.objects(CustomVenue.self).filter("ANY statuses == 'inProgress'").map(\.name) == ["hall"])
        #expect(realm.objects(CustomVenue.self).where { $0.statuses.contains(.complete) }.count == 2)
        #expect(realm.objects(CustomVenue.self).where { $0.links.contains(akc) }.map(\.name) == ["hall"])
        #expect(realm.objects(CustomVenue.self).where { $0.statusByRoom.values == .inProgress }.map(\.name) == ["hall"])
        #expect(realm.objects(CustomVenue.self).filter("ANY spots.latitude < 0").map(\.name) == ["hall"])
    }

    @Test func typeSafeQueriesThroughOptionalAndEmbeddedCustomTypes() throws {
        let realm = try realm()
        try realm.write {
            realm.add(Club(value: ["name": "AKC", "url": "https://akc.org", "location": [40.75, -73.98]]))
            realm.add(Club(value: ["name": "CKC", "url": "https://ckcusa.com/", "location": [35.9, -78.6]]))
            realm.add(Club(value: ["name": "Kennel Club", "location": [51.5, -0.13]]))
            realm.add(Club(value: ["name": "Bad URL", "url": "", "location": [-33.9, 151.2]]))
            realm.create(CustomVenue.self, value: ["name": "a"])
            realm.create(
                CustomVenue.self, value: ["name": "b", "home": "https://b.example", "backup": "https://b2.example"])
        }
        let clubs = realm.objects(Club.self)
        func names(_ results: Results<Club>) -> [String] { results.map(\.name) }
        // An optional failable type (the seeds' URL?): compared as itself, or through its persisted String.
        #expect(names(clubs.where { $0.url == URL(string: "https://akc.org")! }) == ["AKC"])
        #expect(names(clubs.where { $0.url.persistableValue.starts(with: "https://ckc") }) == ["CKC"])
        #expect(names(clubs.where { $0.url.persistableValue == nil }) == ["Kennel Club"])
        // A stored value URL rejects reads as nil, but its persisted value is still there to query.
        #expect(names(clubs.where { $0.url.persistableValue == "" }) == ["Bad URL"])
        #expect(clubs.where { $0.url.persistableValue == "" }.first?.url == nil)
        // A type persisted as an embedded object: its properties through persistableValue.
        #expect(names(clubs.where { $0.location.persistableValue.latitude > 40 }) == ["AKC", "Kennel Club"])
        #expect(
            names(clubs.where { $0.location.persistableValue.longitude < -70 && $0.url != nil }) == ["AKC", "CKC"])
        #expect(
            names(clubs.where { $0.location.persistableValue.latitude > 40 })
                == names(clubs.filter("location.latitude > 40")))
        // A non-optional failable type whose persisted default it rejects, and an optional one.
        let venues = realm.objects(CustomVenue.self)
        #expect(venues.where { $0.home.persistableValue.ends(with: "b.example") }.map(\.name) == ["b"])
        #expect(venues.where { $0.home == SecureSite(persistedValue: "https://home.example")! }.map(\.name) == ["a"])
        #expect(venues.where { $0.backup.persistableValue == nil }.map(\.name) == ["a"])
        #expect(venues.where { $0.backup == SecureSite(persistedValue: "https://b2.example") }.map(\.name) == ["b"])
    }

    /// What FailableCustomPersistable's documentation says of a stored value the type rejects.
    @Test func rejectedStoredValuesReadAsTheFailableProtocolDocumentationSays() throws {
        let realm = try realm()
        let venue = try realm.write {
            realm.create(CustomVenue.self, value: ["name": "v", "backup": "https://b.example"])
        }
        #expect(venue.backup == SecureSite(persistedValue: "https://b.example"))
        try realm.write { venue["backup"] = "http://plain.example" }  // SecureSite rejects it
        // Optional property: nil; the stored value stays, for dynamic access, RQL and persistableValue.
        #expect(venue.backup == nil)
        #expect(venue["backup"] as? String == "http://plain.example")
        #expect(realm.objects(CustomVenue.self).filter("backup BEGINSWITH 'http:'").count == 1)
        #expect(
            realm.objects(CustomVenue.self).where { $0.backup.persistableValue == "http://plain.example" }.count == 1)
        // A non-optional property declared with an initial value keeps it.
        #expect(venue.home == SecureSite(persistedValue: "https://home.example"))
    }

    @Test func typeSafeQueriesTheEngineCannotRunThrowFromCheckedWhere() throws {
        let realm = try realm()
        try realm.write { realm.add(Club(value: ["name": "AKC", "location": [40.75, -73.98]])) }
        let clubs = realm.objects(Club.self)
        func reason(_ query: (Query<Club>) -> Query<Bool>) -> String? {
            do {
                _ = try clubs.checkedWhere(query)
                return nil
            } catch {
                guard case .invalidQuery(let text, _, let reason) = error else { return "\(error)" }
                #expect(text == "where { … } on Club")
                return reason
            }
        }
        // The Realm SDK cannot compare an embedded object by value either.
        let embedded = reason { $0.location == Coordinate(latitude: 40.75, longitude: -73.98) }
        #expect(embedded?.contains("persisted as an embedded object") == true, "\(embedded ?? "accepted")")
        #expect(embedded?.contains("$0.location.persistableValue") == true)
        // A stored property of the custom type itself is not a persisted property.
        let member = reason { $0.location.latitude > 3 }
        #expect(member?.contains("Coordinate is not a model type or projection") == true, "\(member ?? "accepted")")
        // What works goes through.
        #expect(try clubs.checkedWhere { $0.location.persistableValue.latitude > 40 }.count == 1)
    }

    @Test func checkedWhereOnCollectionsOfObjects() throws {
        let realm = try Realm(
            configuration: Realm.Configuration(
                inMemoryIdentifier: "custom-types-\(UUID())", objectTypes: [SeedPerson.self, PersonGroup.self]))
        let group = try realm.write {
            realm.create(
                PersonGroup.self,
                value: [
                    "members": [["firstName": "Ann", "lastName": "Lee"], ["firstName": "Bob", "lastName": "Ray"]]
                ])
        }
        #expect(try group.members.checkedWhere { $0.firstName == "Bob" }.map(\.lastName) == ["Ray"])
        #expect(throws: Realm.Error.self) { try group.members.checkedWhere { $0.fullName == "Bob Ray" } }
    }
}

final class PersonGroup: Object {
    @Persisted var members: List<SeedPerson>
}

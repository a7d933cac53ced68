import Foundation
import Strata
import Testing

// Documentation/Projections.md

enum ProjectionsSample {
    class Person: Object {
        @Persisted var firstName = ""
        @Persisted var lastName = ""
        @Persisted var address: Address?
        @Persisted var friends = List<Person>()
    }

    class Address: EmbeddedObject {
        @Persisted var city: String = ""
        @Persisted var country = ""
    }

    class PersonProjection: Projection<Person> {
        @Projected(\Person.firstName) var firstName  // passthrough
        @Projected(\Person.address?.city) var homeCity  // rename, through an embedded object
        @Projected(\Person.friends.projectTo.firstName) var firstFriendsName: ProjectedCollection<String>
    }

    actor CityWatcher {
        var seen: [[String]] = []

        func follow(firstName: String, configuration: Realm.Configuration) async throws {
            let realm = try await Realm(configuration: configuration, actor: self)
            guard let person = realm.objects(Person.self).where({ $0.firstName == firstName }).first else { return }
            let projection = PersonProjection(projecting: person)
            for await change in projection.changes {  // on the Realm's actor; ends after .deleted
                if case .change(_, let properties) = change {
                    print(properties.map(\.name))  // ["homeCity"]
                    seen.append(properties.map(\.name))
                }
            }
        }
    }
}

@Suite("Projections")
struct ProjectionsSampleTests {
    typealias Person = ProjectionsSample.Person
    typealias PersonProjection = ProjectionsSample.PersonProjection

    /// Ann (Lisbon) with friends Bo (Porto) and Cy (no address).
    private static func fill(_ realm: Realm) throws {
        try realm.write {
            let bo = realm.create(
                Person.self, value: ["firstName": "Bo", "address": ["city": "Porto", "country": "PT"]])
            let cy = realm.create(Person.self, value: ["firstName": "Cy"])
            realm.create(
                Person.self,
                value: [
                    "firstName": "Ann", "lastName": "Alves", "address": ["city": "Lisbon", "country": "PT"],
                    "friends": [bo, cy],
                ])
        }
    }

    @Test func projectionsReadQueryAndObserve() throws {
        let realm = try Realm(configuration: inMemoryConfiguration("projections"))
        try Self.fill(realm)
        let ann = realm.objects(Person.self).where { $0.firstName == "Ann" }.first!

        let projection = PersonProjection(projecting: ann)
        let friends = Array(projection.firstFriendsName)
        print(projection.firstName, projection.homeCity ?? "-", friends)  // Ann Lisbon ["Bo", "Cy"]
        #expect(projection.homeCity == "Lisbon" && Array(projection.firstFriendsName) == ["Bo", "Cy"])
        try realm.write { projection.homeCity = "Porto" }  // writes ann.address?.city
        #expect(ann.address?.city == "Porto")

        let people = realm.objects(PersonProjection.self)
        let inPorto = people.filter("homeCity == 'Porto'")  // projected names stand for the root path they project
        let inPortugal = people.filter("address.country == 'PT'")  // root key paths work too
        let friendsOfBo = people.filter("ANY firstFriendsName == 'Bo'")  // a projected collection is a to-many path
        let typeSafe = people.where { $0.homeCity == "Porto" }  // type-safe, over the projection's properties
        let byCity = people.sorted(byKeyPath: "homeCity")
        let byName = people.sorted(by: \PersonProjection.firstName, ascending: false)
        #expect(inPorto.map(\.firstName).sorted() == ["Ann", "Bo"] && inPortugal.count == 2)
        #expect(friendsOfBo.map(\.firstName) == ["Ann"] && typeSafe.count == 2)
        #expect(byCity.map(\.firstName) == ["Cy", "Bo", "Ann"] && byName.map(\.firstName) == ["Cy", "Bo", "Ann"])

        var names: [[String]] = []
        let token = projection.observe { change in
            if case .change(_, let properties) = change {
                print(properties.map(\.name))  // ["homeCity"] — the projection's names
                names.append(properties.map(\.name))
            }
        }
        try realm.write { ann.lastName = "Silva" }  // not projected: no notification
        try realm.write { ann.address?.city = "Faro" }
        #expect(names == [["homeCity"]])
        token.invalidate()
    }

    @Test(.timeLimit(.minutes(1))) func projectionSequences() async throws {
        let configuration = inMemoryConfiguration("projections-sequence")
        let writer = Writer()
        try await writer.open(configuration: configuration)
        let watcher = ProjectionsSample.CityWatcher()
        let following = Task { try await watcher.follow(firstName: "Ann", configuration: configuration) }
        // No initial element: change the city until the watcher has seen a change.
        var round = 0
        while await watcher.seen.isEmpty {
            try await writer.move(to: "City \(round)")
            round += 1
            try await Task.sleep(for: .milliseconds(10))
        }
        following.cancel()
        try await following.value
        #expect(await watcher.seen.first == ["homeCity"])
        await writer.close()
    }

    actor Writer {
        var realm: Realm?

        func open(configuration: Realm.Configuration) async throws {
            let realm = try await Realm(configuration: configuration, actor: self)
            try ProjectionsSampleTests.fill(realm)
            self.realm = realm
        }

        func move(to city: String) async throws {
            guard let realm else { return }
            try await realm.asyncWrite {
                realm.objects(Person.self).where { $0.firstName == "Ann" }.first?.address?.city = city
            }
        }

        func close() { realm = nil }
    }
}

import Foundation
import Strata
import Testing

// Documentation/MigratingFromRealm.md: the seeds' model declarations compile unchanged.

enum FromRealmSample {
    class Dog: Object {
        @Persisted(primaryKey: true) var _id: ObjectId
        @Persisted var name = ""
        @Persisted var breed: String?
        @Persisted var dateOfBirth = Date()
    }

    class Person: Object {
        @Persisted(primaryKey: true) var id = 0
        @Persisted var name = ""
        // To-many relationship - a person can have many dogs
        @Persisted var dogs: List<Dog>
        // Inverse relationship - a person can be a member of many clubs
        @Persisted(originProperty: "members") var clubs: LinkingObjects<DogClub>
        // Embed a single object.
        // Embedded object properties must be marked optional.
        @Persisted var address: Address?

        convenience init(name: String, address: Address) {
            self.init()
            self.name = name
            self.address = address
        }
    }

    class DogClub: Object {
        @Persisted var name = ""
        @Persisted var members: List<Person>
        // DogClub has an array of regional office addresses.
        // These are embedded objects.
        @Persisted var regionalOfficeAddresses: List<Address>

        convenience init(name: String, addresses: [Address]) {
            self.init()
            self.name = name
            self.regionalOfficeAddresses.append(objectsIn: addresses)
        }
    }

    class Address: EmbeddedObject {
        @Persisted var street: String?
        @Persisted var city: String?
        @Persisted var country: String?
        @Persisted var postalCode: String?
    }

    actor Kennel {
        func run() async throws -> [String] {
            let realm = try await Realm(actor: self)
            try await realm.asyncWrite {  // suspends while another writer holds the lock
                realm.add(Dog(value: ["name": "Rex"]))
            }
            let rDogs = realm.objects(Dog.self).filter("name BEGINSWITH $0", "R")  // a query string, not an NSPredicate
            for await change in rDogs.changes {  // an AsyncSequence, not a Combine publisher
                if case .initial(let dogs) = change { return dogs.map(\.name) }
            }
            return []
        }
    }
}

@Suite("Migrating from the Realm SDK")
struct MigratingFromRealmSampleTests {
    typealias Person = FromRealmSample.Person
    typealias DogClub = FromRealmSample.DogClub
    typealias Address = FromRealmSample.Address

    @Test func theSeedsModelsWorkUnchanged() throws {
        let realm = try Realm(configuration: inMemoryConfiguration("from-realm"))
        try realm.write {
            let ann = Person(name: "Ann", address: Address(value: ["city": "Oslo"]))
            ann.dogs.append(FromRealmSample.Dog(value: ["name": "Rex"]))
            let club = DogClub(name: "Oslo Dogs", addresses: [Address(value: ["city": "Bergen"])])
            club.members.append(ann)
            realm.add(club)
        }
        let ann = try #require(realm.objects(Person.self).first)
        #expect(ann.clubs.map(\.name) == ["Oslo Dogs"] && ann.address?.city == "Oslo" && ann.dogs.count == 1)
        #expect(realm.objects(DogClub.self).first?.regionalOfficeAddresses.first?.city == "Bergen")
    }
}

extension DefaultConfigurationSamples {
    @Suite("Migrating from the Realm SDK")
    struct MigratingFromRealmDefaultTests {
        @Test func theAsyncReplacementsWork() async throws {
            DefaultConfigurationSamples.useFreshDefaultConfiguration("from-realm-actor")
            #expect(try await FromRealmSample.Kennel().run() == ["Rex"])
        }
    }
}

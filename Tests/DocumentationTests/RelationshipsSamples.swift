import Foundation
import Strata
import Testing

// Documentation/Relationships.md (and the Address of Documentation/Models.md)

enum RelationshipsSample {
    final class Person: Object {
        @Persisted(primaryKey: true) var name = ""
        @Persisted var bestFriend: Person?  // to-one link
        @Persisted var dogs: List<Dog>  // to-many: ordered, may hold an object twice
        @Persisted var visitedCities: MutableSet<String>  // unordered, unique
        @Persisted var favoriteParks: Map<String, String>  // city -> park
        @Persisted var dogsByNickname: Map<String, Dog?>  // map values that are objects are optional
        @Persisted var address: Address?  // embedded: owned by this person
        @Persisted var previousAddresses: List<Address>
    }

    final class Dog: Object {
        @Persisted var name = ""
        @Persisted var age = 0
        @Persisted(originProperty: "dogs") var owners: LinkingObjects<Person>
    }

    final class Address: EmbeddedObject {
        @Persisted var street = ""
        @Persisted var city = ""
    }

    final class Setting: Object {
        @Persisted var key = ""
        @Persisted var value: AnyRealmValue
    }
}

@Suite("Relationships")
struct RelationshipsSampleTests {
    typealias Person = RelationshipsSample.Person
    typealias Dog = RelationshipsSample.Dog
    typealias Address = RelationshipsSample.Address
    typealias Setting = RelationshipsSample.Setting

    @Test func linksCollectionsAndDeletionRules() throws {
        let realm = try Realm(configuration: inMemoryConfiguration("relationships"))

        try realm.write {
            let ann = realm.create(Person.self, value: ["name": "Ann"])
            let bob = Person(value: ["name": "Bob", "bestFriend": ann])
            bob.dogs.append(Dog(value: ["name": "Rex", "age": 3]))
            realm.add(bob)  // adds Bob and his unmanaged dog; Ann is already managed
        }

        let bob = realm.object(ofType: Person.self, forPrimaryKey: "Bob")!
        let rex = bob.dogs[0]
        print(bob.bestFriend?.name ?? "-", rex.owners.map(\.name))  // Ann ["Bob"]
        let friendsOfAnn = realm.objects(Person.self).filter("bestFriend.name == 'Ann'")
        let dogOwners = realm.objects(Person.self).where { $0.dogs.age > 2 }
        print(friendsOfAnn.count, dogOwners.count)  // 1 1
        #expect(bob.bestFriend?.name == "Ann" && rex.owners.map(\.name) == ["Bob"])
        #expect(friendsOfAnn.count == 1 && dogOwners.count == 1)

        try realm.write {
            bob.dogs.append(objectsIn: [Dog(value: ["name": "Fido"]), Dog(value: ["name": "Bo"])])
            bob.dogs.move(from: 2, to: 0)  // Bo, Rex, Fido
            bob.dogs.swapAt(1, 2)  // Bo, Fido, Rex
            bob.dogs.remove(at: 0)  // Fido, Rex: Bo leaves the list, not the Realm
            bob.dogs.insert(rex, at: 0)  // Rex, Fido, Rex: a list may hold an object twice
        }
        print(bob.dogs.map(\.name), realm.objects(Dog.self).count)  // ["Rex", "Fido", "Rex"] 3
        #expect(bob.dogs.map(\.name) == ["Rex", "Fido", "Rex"] && realm.objects(Dog.self).count == 3)
        #expect(rex.owners.count == 2)  // one entry per link

        try realm.write {
            bob.visitedCities.insert(objectsIn: ["Oslo", "Lisbon"])
            bob.visitedCities.formUnion(["Porto", "Oslo"])
            bob.visitedCities.subtract(["Lisbon"])
        }
        print(bob.visitedCities.contains("Porto"), bob.visitedCities.count)  // true 2
        #expect(bob.visitedCities.contains("Porto") && bob.visitedCities.count == 2)

        try realm.write {
            bob.favoriteParks["Oslo"] = "Frogner"
            bob.favoriteParks["Lisbon"] = "Estrela"
            bob.favoriteParks["Lisbon"] = nil  // removes the key
            bob.dogsByNickname["boss"] = rex
        }
        print(bob.favoriteParks.keys, bob.dogsByNickname["boss"]??.name ?? "-")  // ["Oslo"] Rex
        #expect(bob.favoriteParks.keys == ["Oslo"] && bob.dogsByNickname["boss"]??.name == "Rex")

        var first: Address?
        try realm.write {
            bob.address = Address(value: ["street": "1 Main St", "city": "Oslo"])
            first = bob.address
            bob.address = Address(value: ["street": "2 High St", "city": "Oslo"])  // the first one is deleted
            bob.previousAddresses.append(Address(value: ["street": "1 Main St", "city": "Oslo"]))
        }
        let inOslo = realm.objects(Person.self).filter("address.city == 'Oslo'")
        print(inOslo.count, bob.previousAddresses.count)  // 1 1
        #expect(inOslo.count == 1 && bob.previousAddresses.count == 1)
        #expect(first?.isInvalidated == true && bob.address?.street == "2 High St")
        let home = try #require(bob.address)

        try realm.write { realm.delete(rex) }
        print(bob.dogs.map(\.name), bob.dogsByNickname.keys)  // ["Fido"] ["boss"]: the key stays, its value is nil
        #expect(bob.dogs.map(\.name) == ["Fido"] && bob.dogsByNickname.keys == ["boss"])
        #expect(bob.dogsByNickname["boss"].map { $0 == nil } == true)

        try realm.write { realm.delete(bob) }  // his addresses go with him; Ann and the dogs stay
        print(realm.objects(Person.self).map(\.name), realm.objects(Dog.self).count)  // ["Ann"] 2
        #expect(realm.objects(Person.self).map(\.name) == ["Ann"] && realm.objects(Dog.self).count == 2)
        #expect(home.isInvalidated)
    }

    @Test func backlinksFollowEveryLink() throws {
        let realm = try Realm(configuration: inMemoryConfiguration("relationships-backlinks"))
        try realm.write {
            let rex = realm.create(Dog.self, value: ["name": "Rex"])
            realm.create(Person.self, value: ["name": "Ann", "dogs": [rex]])
            realm.create(Person.self, value: ["name": "Bob", "dogs": [rex]])
        }
        let rex = realm.objects(Dog.self).first!
        #expect(rex.owners.map(\.name) == ["Ann", "Bob"])
        let shared = realm.objects(Dog.self).filter("owners.@count > 1")
        #expect(shared.count == 1)
        // Linking objects cannot be set: the write fails.
        #expect(throws: Realm.Error.self) { try realm.write { rex["owners"] = [] } }
    }

    @Test func mixedValuesHoldNestedCollections() throws {
        let realm = try Realm(configuration: inMemoryConfiguration("relationships-mixed"))

        try realm.write {
            realm.add(Setting(value: ["key": "theme", "value": AnyRealmValue.string("dark")]))
            let layout = Setting()
            layout.key = "layout"
            layout.value = .fromDictionary(["columns": .int(3), "widgets": .fromArray([.string("clock")])])
            realm.add(layout)
        }
        let layout = realm.objects(Setting.self).filter("key == 'layout'").first!
        try realm.write { layout.value.dictionaryValue?["widgets"]?.listValue?.append(.string("news")) }
        let widgets = layout.value.dictionaryValue?["widgets"]?.listValue.map { Array($0) } ?? []
        let columns = layout.value.dictionaryValue?["columns"]?.intValue ?? 0
        print(columns, widgets.compactMap(\.stringValue))  // 3 ["clock", "news"]
        let strings = realm.objects(Setting.self).filter("value.@type == 'string'")
        print(strings.map(\.key))  // ["theme"]
        #expect(layout.value.dictionaryValue?["columns"]?.intValue == 3)
        #expect(widgets == [.string("clock"), .string("news")])
        #expect(strings.map(\.key) == ["theme"])

        try realm.write {
            let target = realm.create(Dog.self, value: ["name": "Rex"])
            realm.create(Setting.self, value: ["key": "mascot", "value": AnyRealmValue.object(target)])
        }
        let mascot = realm.objects(Setting.self).filter("key == 'mascot'").first!
        print(mascot.value.object(Dog.self)?.name ?? "-")  // Rex
        try realm.write { realm.delete(realm.objects(Dog.self)) }
        print(mascot.value)  // none: deleting the target clears the value
        #expect(mascot.value == .none)
    }

    @Test func anyRealmCollectionErasesTheCollectionType() throws {
        let realm = try Realm(configuration: inMemoryConfiguration("relationships-any"))
        try realm.write {
            realm.create(Person.self, value: ["name": "Ann", "dogs": [["name": "Rex", "age": 3]]])
        }
        let ann = realm.objects(Person.self).first!

        let all = AnyRealmCollection(realm.objects(Dog.self))
        let owned = AnyRealmCollection(ann.dogs)
        for dogs in [all, owned] {
            print(dogs.count, dogs.filter("age > 2").count)  // 1 1
        }
        #expect(all.count == 1 && owned.filter("age > 2").count == 1)
    }
}

@Suite("Relationships: rules behind the page")
struct RelationshipRuleTests {
    typealias Person = RelationshipsSample.Person
    typealias Dog = RelationshipsSample.Dog
    typealias Address = RelationshipsSample.Address

    @Test func assigningACollectionCopiesItsElements() throws {
        let realm = try Realm(configuration: inMemoryConfiguration("relationships-assign"))
        try realm.write {
            let ann = realm.create(Person.self, value: ["name": "Ann", "dogs": [["name": "Rex"]]])
            let bob = realm.create(Person.self, value: ["name": "Bob"])
            bob.dogs = ann.dogs
            bob["visitedCities"] = ["Oslo"]
        }
        let bob = try #require(realm.object(ofType: Person.self, forPrimaryKey: "Bob"))
        let ann = try #require(realm.object(ofType: Person.self, forPrimaryKey: "Ann"))
        #expect(bob.dogs.map(\.name) == ["Rex"] && bob.visitedCities.contains("Oslo"))
        try realm.write { ann.dogs.removeAll() }
        #expect(bob.dogs.count == 1)
    }

    @Test func mapsIterateInKeyOrderOnceManaged() throws {
        let realm = try Realm(configuration: inMemoryConfiguration("relationships-map-order"))
        let person = Person(value: ["name": "Ann"])
        person.favoriteParks["Oslo"] = "Frogner"
        person.favoriteParks["Lisbon"] = "Estrela"
        #expect(person.favoriteParks.keys == ["Oslo", "Lisbon"])
        try realm.write { realm.add(person) }
        #expect(person.favoriteParks.keys == ["Lisbon", "Oslo"])
    }

    @Test func aManagedEmbeddedObjectHasOneParent() throws {
        let realm = try Realm(configuration: inMemoryConfiguration("relationships-embedded"))
        let address = Address(value: ["street": "1 Main St", "city": "Oslo"])
        try realm.write {
            let bob = realm.create(Person.self, value: ["name": "Bob"])
            bob.address = address
        }
        #expect(address.realm != nil)
        let bob = try #require(realm.object(ofType: Person.self, forPrimaryKey: "Bob"))
        #expect(throws: Realm.Error.self) {
            try realm.write {
                let ann = realm.create(Person.self, value: ["name": "Ann"])
                ann.address = bob.address
            }
        }
        #expect(throws: Realm.Error.self) {
            try realm.write { bob.previousAddresses.append(bob.address!) }
        }
        try realm.write { bob.previousAddresses.append(Address(value: bob.address!)) }
        #expect(bob.previousAddresses.first?.street == "1 Main St")
        try realm.write { realm.delete(bob.previousAddresses[0]) }
        #expect(bob.previousAddresses.isEmpty)
    }
}

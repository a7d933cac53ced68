import Foundation
import Testing

@testable import Strata

/// The README's example, kept compiling and working (types nested so their names do not clash with other tests).
enum Readme {
    final class Dog: Object {
        @Persisted(primaryKey: true) var id = ObjectId.generate()
        @Persisted var name = ""
        @Persisted var breed: String?
        @Persisted var owner: Person?
    }

    final class Person: Object {
        @Persisted(primaryKey: true) var name = ""
        @Persisted var address: Address?
    }

    final class Address: EmbeddedObject {
        @Persisted var city = ""
    }
}

@Suite("README example")
struct ReadmeExampleTests {
    @Test func theExampleWorks() throws {
        let realm = try Realm(configuration: Realm.Configuration(inMemoryIdentifier: "readme-\(UUID())"))
        try realm.write {
            let rex = Readme.Dog(value: ["name": "Rex", "owner": ["name": "Ann"]])
            realm.add(rex)
        }
        let dogs = realm.objects(Readme.Dog.self)
        let ann = realm.object(ofType: Readme.Person.self, forPrimaryKey: "Ann")
        #expect(dogs.count == 1)
        #expect(dogs.first?.owner?.isSameObject(as: ann) == true)
        #expect(realm.schema[className: "Dog"]?.primaryKeyProperty?.type == .objectId)
    }
}

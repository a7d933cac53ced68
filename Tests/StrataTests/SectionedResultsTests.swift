import Foundation
import Testing

@testable import Strata

final class Contact: Object {
    @Persisted var name = ""
    @Persisted var age = 0
    @Persisted var friends: List<Contact>
}

@Suite("Sectioned results and AnyRealmCollection")
struct SectionedResultsTests {
    private func contacts(_ names: [String]) throws -> Realm {
        let realm = try Realm(
            configuration: Realm.Configuration(inMemoryIdentifier: "sections-\(UUID())", objectTypes: [Contact.self]))
        try realm.write {
            for (index, name) in names.enumerated() {
                realm.create(Contact.self, value: ["name": name, "age": 20 + index % 3])
            }
        }
        return realm
    }

    @Test func sectionsByAKeyBlockAreLive() throws {
        let realm = try contacts(["Lisa", "Anna", "Liam", "Bob", "Larry", "Alice"])
        let sections = realm.objects(Contact.self).sectioned(sortDescriptors: [SortDescriptor(keyPath: "name")]) {
            String($0.name.prefix(1))
        }
        #expect(sections.allKeys == ["A", "B", "L"])
        #expect(sections.count == 3)
        #expect(sections[2].key == "L")
        #expect(sections[2].map(\.name) == ["Larry", "Liam", "Lisa"])
        #expect(sections["A"]?.map(\.name) == ["Alice", "Anna"])
        #expect(sections["Z"] == nil)
        let l = sections[2]
        try realm.write {
            realm.create(Contact.self, value: ["name": "Zoe"])
            realm.create(Contact.self, value: ["name": "Leo"])
            realm.delete(realm.objects(Contact.self).filter("name == 'Bob'"))
        }
        #expect(sections.allKeys == ["A", "L", "Z"])
        #expect(l.map(\.name) == ["Larry", "Leo", "Liam", "Lisa"])
        #expect(l.filter("name ENDSWITH 'a'").map(\.name) == ["Lisa"])
        #expect(l.sorted(byKeyPath: "name", ascending: false).first?.name == "Lisa")
        try realm.write { realm.delete(realm.objects(Contact.self).filter("name BEGINSWITH 'L'")) }
        #expect(l.isEmpty)
        #expect(sections.allKeys == ["A", "Z"])
    }

    @Test func sectionsByAKeyPathFollowTheSortDirection() throws {
        let realm = try contacts(["a", "b", "c", "d", "e", "f", "g"])
        let byAge = realm.objects(Contact.self).sectioned(by: \.age, ascending: false)
        #expect(byAge.allKeys == [22, 21, 20])
        #expect(byAge.map { $0.map(\.name) } == [["c", "f"], ["b", "e"], ["a", "d", "g"]])
        let total = byAge.reduce(0) { $0 + $1.count }
        #expect(total == 7)
        let owner = try realm.write { () -> Contact in
            let owner = realm.create(Contact.self, value: ["name": "owner"])
            owner.friends.append(objectsIn: realm.objects(Contact.self).filter("name IN {'a', 'b', 'c', 'd'}"))
            return owner
        }
        let friendsByAge = owner.friends.sectioned(by: \.age)
        #expect(friendsByAge.allKeys == [20, 21, 22])
        #expect(friendsByAge[0].map(\.name) == ["a", "d"])
    }

    @Test func anyRealmCollectionErasesEveryCollection() throws {
        let realm = try contacts(["a", "b", "c", "d"])
        let owner = try realm.write { () -> Contact in
            let owner = realm.create(Contact.self, value: ["name": "owner", "age": 99])
            owner.friends.append(
                objectsIn: realm.objects(Contact.self).filter("name IN {'d', 'b'}").sorted(
                    byKeyPath: "name", ascending: false))
            return owner
        }
        let collections: [AnyRealmCollection<Contact>] = [
            AnyRealmCollection(realm.objects(Contact.self)), AnyRealmCollection(owner.friends),
            AnyRealmCollection(AnyRealmCollection(owner.friends)),
            AnyRealmCollection(realm.objects(Contact.self).sectioned(by: \.age)[0]),
        ]
        #expect(collections.map(\.count) == [5, 2, 2, 2])
        #expect(collections[1].map(\.name) == ["d", "b"])
        #expect(collections[0].filter("age > 20").count == 3)
        #expect(collections[1].where { $0.name == "b" }.count == 1)
        #expect(collections[1].sorted(by: \.name).map(\.name) == ["b", "d"])
        #expect(collections[1].max(ofProperty: "age") as Int? == 21)
        #expect(collections[0].sum(of: \.age) == 20 + 21 + 22 + 20 + 99)
        #expect(collections[1].index(matching: "name == 'b'") == 1)
        #expect(collections[1].index(matching: { $0.name == "d" }) == 0)
        #expect(collections.allSatisfy { $0.realm === realm && !$0.isInvalidated })
        func generic<C: RealmCollection>(_ collection: C) -> Int { collection.count }
        #expect(generic(owner.friends) == 2)
        #expect(generic(collections[3]) == 2)
    }

    @Test func sortDescriptorsTakeKeyPaths() throws {
        let realm = try contacts(["b", "a", "d", "c", "e"])
        let sorted = realm.objects(Contact.self).sorted(by: [
            SortDescriptor(keyPath: \Contact.age, ascending: false), SortDescriptor(keyPath: \Contact.name),
        ])
        #expect(sorted.map(\.name) == ["d", "a", "e", "b", "c"])
    }
}

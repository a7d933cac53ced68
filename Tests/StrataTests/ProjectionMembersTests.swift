import Foundation
import Testing

@testable import Strata

final class Birthday: Object {
    @Persisted var name = ""
    @Persisted var birthday = Date()
    @Persisted var friends: List<Birthday>
}

/// Projects members of stored values and the friends' names.
final class BirthdayCard: Projection<Birthday> {
    @Projected(\Birthday.birthday.timeIntervalSince1970) var seconds
    @Projected(\Birthday.birthday) var birthday
    @Projected(\Birthday.name.count) var nameLength
    @Projected(\Birthday.friends.projectTo.name) var friendNames: ProjectedCollection<String>
}

/// The Realm Swift SDK's projection behaviours from its documentation: a `@Projected` path through a member of a
/// stored value, the `ProjectedCollection` setter, and `@Persisted` outside a model class.
@Suite("Projections: value members, collection setter, @Persisted as a local variable")
struct ProjectionMembersTests {
    private func realm() throws -> Realm {
        try Realm(
            configuration: Realm.Configuration(
                inMemoryIdentifier: "projection-members-\(UUID())", objectTypes: [Birthday.self]))
    }

    @Test func aPathThroughADatesMemberReadsThatMember() throws {
        let realm = try realm()
        let date = Date(timeIntervalSince1970: 1_700_000_000)
        let ann = try realm.write { realm.create(Birthday.self, value: ["name": "Ann", "birthday": date]) }
        let card = BirthdayCard(projecting: ann)
        #expect(card.seconds == 1_700_000_000)  // seconds since 1970, not since 2001
        #expect(card.birthday == date)
        #expect(card.nameLength == 3)
        let cards = realm.objects(BirthdayCard.self)
        #expect(cards.first?.seconds == 1_700_000_000)
    }

    @Test func settingAProjectedCollectionElementSetsTheUnderlyingProperty() throws {
        let realm = try realm()
        let ann = try realm.write { () -> Birthday in
            let ann = realm.create(Birthday.self, value: ["name": "Ann"])
            ann.friends.append(realm.create(Birthday.self, value: ["name": "Bob"]))
            ann.friends.append(realm.create(Birthday.self, value: ["name": "Cy"]))
            return ann
        }
        let card = BirthdayCard(projecting: ann)
        try realm.write { card.friendNames[1] = "Cyd" }
        #expect(ann.friends[1].name == "Cyd")
        #expect(Array(card.friendNames) == ["Bob", "Cyd"])
        #expect(realm.objects(Birthday.self).filter("name == 'Cyd'").count == 1)
    }

    @Test func persistedWorksOnALocalVariableAsAnUnmanagedValue() throws {
        @Persisted var list: List<Int>
        list.append(1)
        list.append(objectsIn: [2, 3])
        #expect(Array(list) == [1, 2, 3])
        @Persisted var name = "start"
        name = "changed"
        #expect(name == "changed")
        @Persisted var optional: Int?
        #expect(optional == nil)
        optional = 4
        #expect(optional == 4)

        // The unmanaged list can become an object's list.
        let realm = try realm()
        let object = Birthday()
        object.name = "Dee"
        try realm.write { realm.add(object) }
        try realm.write { object.friends.append(realm.create(Birthday.self, value: ["name": "\(list.count)"])) }
        #expect(object.friends.first?.name == "3")
    }
}

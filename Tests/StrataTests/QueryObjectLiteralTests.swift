import Foundation
import Testing

@testable import Strata

/// A person found by an integer primary key.
final class LiteralOwner: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var name = ""
}

/// A breed found by a string primary key.
final class LiteralBreed: Object {
    @Persisted(primaryKey: true) var name = ""
}

/// A tag found by an ObjectId primary key.
final class LiteralTag: Object {
    @Persisted(primaryKey: true) var id = ObjectId()
}

/// A dog with links of each kind; `LiteralCollar` has no primary key.
final class LiteralDog: Object {
    @Persisted var name = ""
    @Persisted var owner: LiteralOwner?
    @Persisted var breed: LiteralBreed?
    @Persisted var tag: LiteralTag?
    @Persisted var walkers: List<LiteralOwner>
    @Persisted var collar: LiteralCollar?
    @Persisted var anything: AnyRealmValue
}

/// A class without a primary key.
final class LiteralCollar: Object {
    @Persisted var color = ""
}

/// Object literals of the Realm Query Language, `obj('Class', primaryKey)` (core's grammar: `OBJ '(' STRING ','
/// primary_key ')'`): the object with that primary key, compared as an object argument would be.
@Suite("Query object literals: obj('Class', primaryKey)")
struct QueryObjectLiteralTests {
    static let tagId = try! ObjectId(string: "6553a6f3c5b2a1e4d8f00042")

    /// Rex (owner Ann 1, breed Collie, tag, walked by Ann and Bob, anything = Bob), Fido (owner Bob 2, breed Pug,
    /// walked by Bob), Spot (no owner).
    private func kennel() throws -> Realm {
        let realm = try Realm(
            configuration: Realm.Configuration(
                inMemoryIdentifier: "object-literals-\(UUID())",
                objectTypes: [
                    LiteralOwner.self, LiteralBreed.self, LiteralTag.self, LiteralDog.self, LiteralCollar.self,
                ]))
        try realm.write {
            let ann = realm.create(LiteralOwner.self, value: ["id": 1, "name": "Ann"] as [String: Any])
            let bob = realm.create(LiteralOwner.self, value: ["id": 2, "name": "Bob"] as [String: Any])
            let collie = realm.create(LiteralBreed.self, value: ["name": "Collie"])
            let pug = realm.create(LiteralBreed.self, value: ["name": "Pug"])
            let tag = realm.create(LiteralTag.self, value: ["id": Self.tagId])
            let rex = realm.create(LiteralDog.self, value: ["name": "Rex"])
            rex.owner = ann
            rex.breed = collie
            rex.tag = tag
            rex.walkers.append(objectsIn: [ann, bob])
            rex.anything = .object(bob)
            let fido = realm.create(LiteralDog.self, value: ["name": "Fido"])
            fido.owner = bob
            fido.breed = pug
            fido.walkers.append(bob)
            realm.create(LiteralDog.self, value: ["name": "Spot"])
        }
        return realm
    }

    private func dogs(_ realm: Realm, _ query: String) throws -> [String] {
        try realm.objects(LiteralDog.self).narrowed(query, []).map(\.name).sorted()
    }

    @Test func anObjectLiteralIsTheObjectWithThatPrimaryKey() throws {
        let realm = try kennel()
        #expect(try dogs(realm, "owner == obj('LiteralOwner', 1)") == ["Rex"])
        #expect(try dogs(realm, "owner != obj('LiteralOwner', 1)") == ["Fido", "Spot"])
        #expect(try dogs(realm, "breed == obj('LiteralBreed', 'Pug')") == ["Fido"])
        #expect(try dogs(realm, "tag == obj('LiteralTag', oid(6553a6f3c5b2a1e4d8f00042))") == ["Rex"])
        #expect(try dogs(realm, "obj('LiteralOwner', 2) == owner") == ["Fido"])
        #expect(try dogs(realm, "ANY walkers == obj('LiteralOwner', 2)") == ["Fido", "Rex"])
        #expect(try dogs(realm, "anything == obj('LiteralOwner', 2)") == ["Rex"])
    }

    @Test func anObjectLiteralInAnInList() throws {
        let realm = try kennel()
        #expect(try dogs(realm, "owner IN {obj('LiteralOwner', 1), obj('LiteralOwner', 2)}") == ["Fido", "Rex"])
        #expect(try dogs(realm, "owner IN {obj('LiteralOwner', 2), nil}") == ["Fido", "Spot"])
    }

    @Test func aKeyNoObjectHasMatchesNothing() throws {
        let realm = try kennel()
        #expect(try dogs(realm, "owner == obj('LiteralOwner', 99)").isEmpty)
        #expect(try dogs(realm, "breed == obj('LiteralBreed', 'Husky')").isEmpty)
        #expect(try dogs(realm, "owner != obj('LiteralOwner', 99)") == ["Fido", "Rex", "Spot"])
    }

    @Test func anUnknownClassAClassWithoutKeyOrAKeyOfTheWrongTypeIsAnInvalidQuery() throws {
        let realm = try kennel()
        let cases: [(String, String)] = [
            ("owner == obj('Nobody', 1)", "names no class"),
            ("collar == obj('LiteralCollar', 1)", "LiteralCollar has no primary key"),
            ("owner == obj('LiteralOwner', 'Ann')", "the primary key of LiteralOwner is int, not the string 'Ann'"),
            ("breed == obj('LiteralBreed', 3)", "is string, not the integer 3"),
            ("owner == obj('LiteralBreed', 'Pug')", "owner holds LiteralOwner, not LiteralBreed"),
            ("owner == obj(LiteralOwner, 1)", "expected the class name as a string"),
            ("owner == obj('LiteralOwner', name)", "must be written as a value"),
        ]
        for (query, reason) in cases {
            do {
                _ = try dogs(realm, query)
                Issue.record("\(query) was accepted")
            } catch let Realm.Error.invalidQuery(_, _, message) {
                #expect(message.contains(reason), "\(query): \(message)")
            }
        }
    }
}

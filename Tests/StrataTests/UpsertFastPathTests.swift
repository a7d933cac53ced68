import Foundation
import Testing

@testable import Strata

final class FastUpsertItem: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var name = ""
    @Persisted var count = 0
    @Persisted var small: Int8 = 0
    @Persisted var score = 0.0
    @Persisted var date = Date(timeIntervalSinceReferenceDate: 0)
    @Persisted var note: String?
    @Persisted(indexed: true) var tag = ""
    @Persisted var friend: FastUpsertItem?
}

/// `create(_:value:update:)` given a dictionary of plain values for an object that exists takes a shorter path
/// (`Realm.upsertPlainDictionary`): values converted as the dictionary is walked, compared with the stored columns,
/// only the changed ones written. These pin what it must keep: exactly the changed properties reported, typed
/// errors before anything is written, new objects, `.all`, persisted-name and link keys left to the general path,
/// and rollback.
@Suite("UpsertFastPath")
struct UpsertFastPathTests {
    private static let day = Date(timeIntervalSinceReferenceDate: 86_400)

    private func stored() throws -> Realm {
        let realm = try Realm(
            configuration: Realm.Configuration(
                inMemoryIdentifier: "upsert-fast-\(UUID())", objectTypes: [FastUpsertItem.self]))
        try realm.write {
            realm.create(
                FastUpsertItem.self,
                value: ["id": 1, "name": "one", "count": 1, "score": 1.5, "date": Self.day, "note": "n", "tag": "a"])
            realm.create(FastUpsertItem.self, value: ["id": 2, "name": "two", "tag": "b"])
        }
        return realm
    }

    /// The names of the properties each change notification of `object` reported, while `body` writes.
    private func reportedChanges(
        of object: FastUpsertItem, in realm: Realm, _ body: () -> Void
    ) throws -> [[String]] {
        var received: [[String]] = []
        let token = object.observe { change in
            if case .change(_, let properties) = change { received.append(properties.map(\.name)) }
        }
        defer { token.invalidate() }
        try realm.write { body() }
        return received
    }

    @Test func unchangedValuesAreNeitherWrittenNorReported() throws {
        let realm = try stored()
        let one = try #require(realm.object(ofType: FastUpsertItem.self, forPrimaryKey: 1))
        let same: [String: Any] = [
            "id": 1, "name": "one", "count": 1, "score": 1.5, "date": Self.day, "note": "n", "tag": "a",
        ]
        let nothing = try reportedChanges(of: one, in: realm) {
            let returned = realm.create(FastUpsertItem.self, value: same, update: .modified)
            #expect(returned.isSameObject(as: one) && returned.realm === realm)
        }
        #expect(nothing.isEmpty)
        var onlyScore = same
        onlyScore["score"] = 2.5
        let score = try reportedChanges(of: one, in: realm) {
            realm.create(FastUpsertItem.self, value: onlyScore, update: .modified)
        }
        #expect(score == [["score"]])
        #expect(one.score == 2.5 && one.name == "one" && one.count == 1 && one.date == Self.day && one.note == "n")
    }

    @Test func aChangedStringDateOptionalOrLinkIsWrittenAndReported() throws {
        let realm = try stored()
        let one = try #require(realm.object(ofType: FastUpsertItem.self, forPrimaryKey: 1))
        let two = try #require(realm.object(ofType: FastUpsertItem.self, forPrimaryKey: 2))
        let later = Self.day.addingTimeInterval(1)
        let plain = try reportedChanges(of: one, in: realm) {
            realm.create(
                FastUpsertItem.self, value: ["id": 1, "name": "uno", "date": later, "note": NSNull()], update: .modified
            )
        }
        #expect(plain.map(Set.init) == [["name", "date", "note"]])
        #expect(one.name == "uno" && one.date == later && one.note == nil && one.count == 1 && one.score == 1.5)
        // A link in the dictionary takes the general path: it is set, and reported with the plain value beside it.
        let linked = try reportedChanges(of: one, in: realm) {
            realm.create(FastUpsertItem.self, value: ["id": 1, "note": "back", "friend": two], update: .modified)
        }
        #expect(linked.map(Set.init) == [["note", "friend"]])
        #expect(one.note == "back" && one.friend?.id == 2)
        // An indexed value is rewritten with its index.
        try realm.write { realm.create(FastUpsertItem.self, value: ["id": 1, "tag": "z"], update: .modified) }
        #expect(realm.objects(FastUpsertItem.self).filter("tag == 'z'").map(\.id) == [1])
        #expect(realm.objects(FastUpsertItem.self).filter("tag == 'a'").isEmpty)
    }

    /// A canonically equal string in other bytes (a decomposed é) is unchanged for `.modified`, as `==` says.
    @Test func aCanonicallyEqualStringIsUnchanged() throws {
        let realm = try stored()
        let one = try #require(realm.object(ofType: FastUpsertItem.self, forPrimaryKey: 1))
        try realm.write { one.name = "caf\u{E9}" }
        let changes = try reportedChanges(of: one, in: realm) {
            realm.create(FastUpsertItem.self, value: ["id": 1, "name": "cafe\u{301}"], update: .modified)
        }
        #expect(changes.isEmpty)
        #expect(Array(one.name.utf8) == Array("caf\u{E9}".utf8))
    }

    @Test func aWrongValueFailsTheWriteBeforeAnythingIsWritten() throws {
        let realm = try stored()
        let cases: [(value: [String: Any], error: Realm.Error)] = [
            // Every value converts; the narrow integer's range is checked before the score is written.
            (
                ["id": 1, "score": 9.5, "small": 300],
                .invalidValue(type: "FastUpsertItem", property: "small", reason: "300 does not fit in Int8")
            ),
            (
                ["id": 1, "score": 9.5, "count": "many"],
                .invalidValue(
                    type: "FastUpsertItem", property: "count", reason: "String is not a valid value for a int property")
            ),
            (
                ["id": 1, "score": 9.5, "name": NSNull()],
                .invalidValue(
                    type: "FastUpsertItem", property: "name",
                    reason: "NSNull is not a valid value for a string property")
            ),
            (
                ["id": 1, "score": 9.5, "colour": "red"],
                .invalidValue(type: "FastUpsertItem", property: "colour", reason: "no such property")
            ),
        ]
        for (value, error) in cases {
            #expect(throws: error) {
                try realm.write {
                    realm.create(FastUpsertItem.self, value: ["id": 2, "count": 7], update: .modified)
                    realm.create(FastUpsertItem.self, value: value, update: .modified)
                }
            }
            let one = try #require(realm.object(ofType: FastUpsertItem.self, forPrimaryKey: 1))
            #expect(one.score == 1.5 && one.small == 0 && one.count == 1 && one.name == "one")
            #expect(realm.object(ofType: FastUpsertItem.self, forPrimaryKey: 2)?.count == 0)
        }
    }

    @Test func anAbsentKeyInsertsWithDefaultsForMissingValues() throws {
        let realm = try stored()
        let created = try realm.write {
            realm.create(FastUpsertItem.self, value: ["id": 3, "name": "three", "score": 3.5], update: .modified)
        }
        #expect(created.realm === realm && created.id == 3)
        let three = try #require(realm.object(ofType: FastUpsertItem.self, forPrimaryKey: 3))
        #expect(three.name == "three" && three.score == 3.5 && three.count == 0 && three.note == nil && three.tag == "")
        #expect(realm.objects(FastUpsertItem.self).count == 3)
        // With `.error`, the same key is a duplicate.
        #expect(throws: Realm.Error.self) {
            try realm.write { realm.create(FastUpsertItem.self, value: ["id": 3], update: .error) }
        }
        #expect(realm.objects(FastUpsertItem.self).count == 3)
        // A value too wide for a new object's property fails the write before the object is added.
        #expect(
            throws: Realm.Error.invalidValue(
                type: "FastUpsertItem", property: "small", reason: "300 does not fit in Int8")
        ) {
            try realm.write {
                realm.create(FastUpsertItem.self, value: ["id": 6, "name": "six"], update: .modified)
                realm.create(FastUpsertItem.self, value: ["id": 5, "name": "five", "small": 300], update: .modified)
            }
        }
        #expect(realm.objects(FastUpsertItem.self).count == 3)
    }

    /// `.all` writes every value given, changed or not; the properties a notification names are those whose
    /// stored value differs (notifications compare versions).
    @Test func allWritesEveryGivenValue() throws {
        let realm = try stored()
        let one = try #require(realm.object(ofType: FastUpsertItem.self, forPrimaryKey: 1))
        let changes = try reportedChanges(of: one, in: realm) {
            realm.create(
                FastUpsertItem.self, value: ["id": 1, "name": "ONE", "count": 10, "score": 1.5], update: .all)
        }
        #expect(changes.map(Set.init) == [["name", "count"]])
        #expect(one.name == "ONE" && one.count == 10 && one.score == 1.5 && one.note == "n")
    }

    @Test func aCancelledWriteRollsTheUpsertBack() throws {
        let realm = try stored()
        realm.beginWrite()
        realm.create(FastUpsertItem.self, value: ["id": 1, "name": "gone", "score": 7.0], update: .modified)
        realm.create(FastUpsertItem.self, value: ["id": 4, "name": "four"], update: .modified)
        #expect(realm.object(ofType: FastUpsertItem.self, forPrimaryKey: 1)?.name == "gone")
        realm.cancelWrite()
        let one = try #require(realm.object(ofType: FastUpsertItem.self, forPrimaryKey: 1))
        #expect(one.name == "one" && one.score == 1.5)
        #expect(realm.object(ofType: FastUpsertItem.self, forPrimaryKey: 4) == nil)
    }
}

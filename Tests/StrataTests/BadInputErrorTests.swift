import Foundation
import Testing

@testable import Strata

final class Rambler: Object {
    @Persisted var name = ""
    @Persisted var dogs: List<Trekker>
    @Persisted var nicknames: List<String>
    @Persisted var tags: MutableSet<String>
}

final class Trekker: Object {
    @Persisted var name = ""
}

final class Scaler: Object {
    @Persisted var name = ""
}

/// Misuse inside a write transaction is reported as what it is, fails the transaction, and leaves the file as it
/// was: deleting an object twice, positions outside a list, elements of the wrong type.
@Suite("Bad input errors")
struct BadInputErrorTests {
    private func realm() throws -> Realm {
        try Realm(
            configuration: Realm.Configuration(
                inMemoryIdentifier: "bad-input-\(UUID())", objectTypes: [Rambler.self, Trekker.self, Scaler.self]))
    }

    /// The error `write { body() }` throws, after which nothing of the write is applied.
    private func failure(_ realm: Realm, _ body: () -> Void) -> Realm.Error? {
        do {
            try realm.write {
                realm.create(Scaler.self, value: ["name": "written before the failure"])
                body()
            }
            Issue.record("the write succeeded")
        } catch let error as Realm.Error {
            #expect(!realm.isInWriteTransaction)
            #expect(realm.objects(Scaler.self).isEmpty, "the failed write was applied")
            return error
        } catch {
            Issue.record("unexpected error \(error)")
        }
        return nil
    }

    @Test func deletingAnObjectThatIsAlreadyDeletedFailsTheWrite() throws {
        let realm = try realm()
        let rex = try realm.write { realm.create(Trekker.self, value: ["name": "Rex"]) }
        let max = try realm.write { realm.create(Trekker.self, value: ["name": "Max"]) }
        try realm.write { realm.delete(rex) }
        #expect(failure(realm) { realm.delete(rex) } == .invalidatedObject)
        // Deleted earlier in the same write, and in a sequence; Max is still there.
        #expect(
            failure(realm) {
                realm.delete(max)
                realm.delete(max)
            } == .invalidatedObject)
        #expect(failure(realm) { realm.delete([max, rex]) } == .invalidatedObject)
        #expect(realm.objects(Trekker.self).map(\.name) == ["Max"])
        // Through another Realm of the same file, the beginning of the write sees the deletion.
        let other = try Realm(configuration: realm.configuration)
        let maxThere = try #require(other.objects(Trekker.self).first)
        try realm.write { realm.delete(max) }
        #expect(failure(other) { other.delete(maxThere) } == .invalidatedObject)
        // A list holding an object twice deletes it once.
        let walker = try realm.write {
            let walker = realm.create(Rambler.self, value: ["name": "Ann"])
            let bo = realm.create(Trekker.self, value: ["name": "Bo"])
            walker.dogs.append(objectsIn: [bo, bo])
            return walker
        }
        try realm.write { realm.delete(walker.dogs) }
        #expect(realm.objects(Trekker.self).isEmpty)
    }

    @Test func positionsOutsideAListAreRangeErrorsNamingTheList() throws {
        let realm = try realm()
        let walker = try realm.write {
            realm.create(Rambler.self, value: ["name": "Ann", "nicknames": ["a", "b", "c"], "tags": ["x"]])
        }
        func reason(_ body: () -> Void) -> String? {
            guard case .invalidValue(let type, let property, let reason)? = failure(realm, body) else { return nil }
            #expect(type == "Rambler" && property == "nicknames")
            return reason
        }
        #expect(reason { walker.nicknames.remove(at: 999) } == "index 999 is out of bounds (must be less than 3)")
        #expect(reason { walker.nicknames.insert("d", at: 4) } == "index 4 is out of bounds (must be at most 3)")
        #expect(reason { walker.nicknames[3] = "d" } == "index 3 is out of bounds (must be less than 3)")
        #expect(
            reason { walker.nicknames.replace(index: -1, object: "d") }
                == "index -1 is out of bounds (must be less than 3)")
        #expect(reason { walker.nicknames.move(from: 0, to: 3) } == "index 3 is out of bounds (must be less than 3)")
        #expect(reason { walker.nicknames.move(from: 5, to: 5) } == "index 5 is out of bounds (must be less than 3)")
        #expect(reason { walker.nicknames.swapAt(1, 7) } == "index 7 is out of bounds (must be less than 3)")
        #expect(
            failure(realm) {
                walker.nicknames.removeLast()
                walker.nicknames.remove(at: 2)
            }?.description
                == "Rambler.nicknames: index 2 is out of bounds (must be less than 2)")
        #expect(Array(walker.nicknames) == ["a", "b", "c"])
        // In range, the same operations work.
        try realm.write {
            walker.nicknames.insert("d", at: 3)
            walker.nicknames.move(from: 3, to: 0)
            walker.nicknames.swapAt(1, 2)
            walker.nicknames.remove(at: 3)
        }
        #expect(Array(walker.nicknames) == ["d", "b", "a"])
    }

    @Test func elementsOfTheWrongTypeNameTheMismatch() throws {
        let realm = try realm()
        let walker = try realm.write { realm.create(Rambler.self, value: ["name": "Ann"]) }
        let climber = try realm.write { realm.create(Scaler.self, value: ["name": "Cy"]) }
        try realm.write { realm.delete(climber) }
        func reason(_ body: () -> Void) -> String? {
            guard case .invalidValue(_, _, let reason)? = failure(realm, body) else { return nil }
            return reason
        }
        #expect(reason { walker["dogs"] = ["Rex"] } == "expected Trekker elements, got String")
        #expect(reason { walker["dogs"] = [Optional<Trekker>.none as Any] } == "expected Trekker elements, got nil")
        #expect(reason { walker["nicknames"] = ["a", 1] } == "expected string elements, got Int")
        #expect(reason { walker["tags"] = [2.5] } == "expected string elements, got Double")
        #expect(reason { walker["dogs"] = [Scaler()] } == "a list of Trekker cannot hold a Scaler")
    }
}

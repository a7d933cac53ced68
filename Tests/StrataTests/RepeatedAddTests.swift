import Foundation
import Testing

@testable import Strata

/// `realm.add` remembers the class it accepted last (`TableStore.lastAdded`) and checks the write transaction once
/// an object: these tests hold the checks it skips for that class to what they were for every other one.
@Suite("Repeated adds")
struct RepeatedAddTests {
    private func memoryRealm() throws -> Realm {
        try Realm(
            configuration: Realm.Configuration(
                inMemoryIdentifier: "repeated-adds-\(UUID())",
                objectTypes: [RepeatedAddItem.self, RepeatedAddOther.self, RepeatedAddPart.self]))
    }

    @Test func objectsOfTwoClassesAddedInTurnAreAllStored() throws {
        let realm = try memoryRealm()
        try realm.write {
            for id in 0..<20 {
                realm.add(RepeatedAddItem(value: ["id": id, "name": "item \(id)"]))
                realm.add(RepeatedAddOther(value: ["id": id, "part": ["note": "part \(id)"]]))
            }
        }
        #expect(realm.objects(RepeatedAddItem.self).count == 20)
        #expect(realm.objects(RepeatedAddOther.self).count == 20)
        #expect(realm.object(ofType: RepeatedAddItem.self, forPrimaryKey: 19)?.name == "item 19")
        #expect(realm.object(ofType: RepeatedAddOther.self, forPrimaryKey: 7)?.part?.note == "part 7")
    }

    /// A `DynamicObject` added after objects of a remembered class still fails the write, which rolls back whole.
    @Test func aDynamicObjectAfterRememberedAddsFailsTheWrite() throws {
        let realm = try memoryRealm()
        let error = #expect(throws: Realm.Error.self) {
            try realm.write {
                for id in 0..<5 { realm.add(RepeatedAddItem(value: ["id": id])) }
                realm.add(DynamicObject())
            }
        }
        guard case .invalidValue(let type, _, _)? = error else {
            Issue.record("expected invalidValue, got \(String(describing: error))")
            return
        }
        #expect(type == "DynamicObject")
        #expect(realm.objects(RepeatedAddItem.self).isEmpty)
    }

    /// The remembered class is forgotten whenever the Realm's bindings change (a migration or a reset rebuilds
    /// them), so it never hands out a binding the Realm no longer uses.
    @Test func theRememberedClassIsForgottenWhenBindingsChange() throws {
        let realm = try memoryRealm()
        try realm.write { realm.add(RepeatedAddItem(value: ["id": 1])) }
        let remembered = try #require(realm.tables.lastAdded)
        #expect(remembered.type == ObjectIdentifier(RepeatedAddItem.self))
        #expect(try remembered.binding === realm.binding(for: RepeatedAddItem.self))
        realm.tables.bindings = [:]
        #expect(realm.tables.lastAdded?.binding == nil)
        try realm.write { realm.add(RepeatedAddItem(value: ["id": 2])) }
        #expect(try realm.tables.lastAdded?.binding === realm.binding(for: RepeatedAddItem.self))
        #expect(realm.objects(RepeatedAddItem.self).count == 2)
    }
}

final class RepeatedAddItem: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var name = ""
}

final class RepeatedAddOther: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var part: RepeatedAddPart?
}

final class RepeatedAddPart: EmbeddedObject {
    @Persisted var note = ""
}

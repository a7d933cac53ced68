import Foundation
import Testing

@testable import Strata

/// `realm.add` of an object whose class stores plain values only encodes the row straight from the object's
/// `@Persisted` boxes (`Realm.insertPlain`); these tests hold it to what the general path does.
@Suite("Plain-row inserts")
struct PlainRowInsertTests {
    private func memoryRealm() throws -> Realm {
        try Realm(
            configuration: Realm.Configuration(
                inMemoryIdentifier: "plain-rows-\(UUID())",
                objectTypes: [PlainRowItem.self, PlainRowIndexed.self, PlainRowDerived.self, PlainRowReferrer.self]))
    }

    /// The suite's models take the paths it means them to: the plain one for `PlainRowItem`, the general one for
    /// a class with a secondary index, and for a subclass (its boxes are created subclass first, its properties
    /// listed superclass first, so they are not in property order).
    @Test func theModelsTakeThePathsTheTestsMean() throws {
        let realm = try memoryRealm()
        #expect(try realm.binding(for: PlainRowItem.self).plainRows)
        #expect(try !realm.binding(for: PlainRowIndexed.self).plainRows)
        #expect(SchemaRegistry.shared.boxCount(of: PlainRowItem()) == 4)
        let item = PlainRowItem()
        #expect(try realm.binding(for: PlainRowItem.self).table.boxesInPropertyOrder(of: item) != nil)
        let derived = PlainRowDerived()
        #expect(try realm.binding(for: PlainRowDerived.self).table.boxesInPropertyOrder(of: derived) == nil)
    }

    @Test func anAddedObjectIsManagedAndLive() throws {
        let realm = try memoryRealm()
        let item = PlainRowItem()
        item.id = 7
        item.name = "seven"
        item.small = -12
        item.when = Date(timeIntervalSinceReferenceDate: 70)
        let untouched = PlainRowItem(value: ["id": 8, "name": "eight"])
        try realm.write { realm.add(item) }
        #expect(item.realm === realm)
        #expect(item.name == "seven" && item.small == -12 && item.when == Date(timeIntervalSinceReferenceDate: 70))
        #expect(item["name"] as? String == "seven")
        try realm.write { item.name = "changed" }
        #expect(realm.object(ofType: PlainRowItem.self, forPrimaryKey: 7)?.name == "changed")
        #expect(untouched.realm == nil && untouched.name == "eight")
        let data = try JSONEncoder().encode(item)
        let decoded = try JSONDecoder().decode(PlainRowItem.self, from: data)
        #expect(decoded.id == 7 && decoded.name == "changed" && decoded.realm == nil)
    }

    /// Deleting a plain object decodes its primary key alone (`TableStore.remove`): the key is free again, the row
    /// is gone, links other objects held to it are dropped, and a write that is cancelled restores it.
    @Test func deletingAPlainObjectFreesItsKeyAndDropsLinksToIt() throws {
        let realm = try memoryRealm()
        try realm.write {
            let one = realm.create(PlainRowItem.self, value: ["id": 1, "name": "one"])
            realm.create(PlainRowItem.self, value: ["id": 2, "name": "two"])
            realm.add(PlainRowReferrer(value: ["id": 1, "item": one, "items": [one, one]]))
        }
        try realm.write { realm.delete(realm.object(ofType: PlainRowItem.self, forPrimaryKey: 1)!) }
        #expect(realm.object(ofType: PlainRowItem.self, forPrimaryKey: 1) == nil)
        #expect(realm.objects(PlainRowItem.self).map(\.id) == [2])
        let referrer = try #require(realm.object(ofType: PlainRowReferrer.self, forPrimaryKey: 1))
        #expect(referrer.item == nil && referrer.items.isEmpty)
        try realm.write { realm.add(PlainRowItem(value: ["id": 1, "name": "again"])) }
        #expect(realm.object(ofType: PlainRowItem.self, forPrimaryKey: 1)?.name == "again")

        realm.beginWrite()
        realm.delete(realm.object(ofType: PlainRowItem.self, forPrimaryKey: 2)!)
        #expect(realm.object(ofType: PlainRowItem.self, forPrimaryKey: 2) == nil)
        realm.cancelWrite()
        #expect(realm.object(ofType: PlainRowItem.self, forPrimaryKey: 2)?.name == "two")
    }

    /// A taken primary key fails the write, which rolls back whole: the keys the objects before it claimed and
    /// their rows.
    @Test func aTakenPrimaryKeyRollsTheWholeWriteBack() throws {
        let realm = try memoryRealm()
        #expect(throws: Realm.Error.primaryKeyExists(type: "PlainRowItem", value: "1")) {
            try realm.write {
                realm.add(PlainRowItem(value: ["id": 1, "name": "first"]))
                realm.add(PlainRowItem(value: ["id": 2, "name": "second"]))
                realm.add(PlainRowItem(value: ["id": 1, "name": "again"]))
            }
        }
        #expect(realm.objects(PlainRowItem.self).isEmpty)
        try realm.write { realm.add(PlainRowItem(value: ["id": 2, "name": "later"])) }
        #expect(realm.object(ofType: PlainRowItem.self, forPrimaryKey: 2)?.name == "later")
    }

    /// A value a row cannot hold (an integer beyond the property's width, reachable through dynamic writes) fails
    /// the write on the plain path as on the general one.
    @Test func anIntegerBeyondThePropertysWidthFailsTheWrite() throws {
        let realm = try memoryRealm()
        let item = PlainRowItem(value: ["id": 3])
        let binding = try realm.binding(for: PlainRowItem.self)
        binding.table.box(of: item, property: 2).stored = .int(300)
        let error = #expect(throws: Realm.Error.self) { try realm.write { realm.add(item) } }
        guard case .invalidValue(let type, let property, _)? = error else {
            Issue.record("expected invalidValue, got \(String(describing: error))")
            return
        }
        #expect(type == "PlainRowItem" && property == "small")
        #expect(realm.objects(PlainRowItem.self).isEmpty)
    }

    @Test func aSubclassAndAnIndexedClassStillInsertThroughTheGeneralPath() throws {
        let realm = try memoryRealm()
        try realm.write {
            realm.add(PlainRowDerived(value: ["id": 1, "name": "base", "extra": 5]))
            realm.add(PlainRowIndexed(value: ["id": 1, "tag": "red"]))
        }
        let derived = try #require(realm.object(ofType: PlainRowDerived.self, forPrimaryKey: 1))
        #expect(derived.name == "base" && derived.extra == 5)
        #expect(realm.objects(PlainRowIndexed.self).where { $0.tag == "red" }.count == 1)
    }
}

final class PlainRowItem: Object, Codable {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var name = ""
    @Persisted var small: Int8 = 0
    @Persisted var when = Date(timeIntervalSinceReferenceDate: 0)
}

final class PlainRowReferrer: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var item: PlainRowItem?
    @Persisted var items: List<PlainRowItem>
}

final class PlainRowIndexed: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted(indexed: true) var tag = ""
}

class PlainRowBase: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var name = ""
}

final class PlainRowDerived: PlainRowBase {
    @Persisted var extra = 0
}

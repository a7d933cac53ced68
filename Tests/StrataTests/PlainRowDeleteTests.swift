import Foundation
import StrataStorage
import Testing

@testable import Strata

/// Deleting a plain object (`TableStore.remove`) reads no row when its primary key is already known: from the
/// accessor's row at the current generation, or from the primary-key lookup that found the object in the same
/// write with nothing changed since; a class without a primary key is deleted without a read. These tests hold
/// those shortcuts to what the read did: the right primary-key entry goes, a stale hint is never used.
@Suite("Plain-row deletes")
struct PlainRowDeleteTests {
    private func memoryRealm() throws -> Realm {
        let realm = try Realm(
            configuration: Realm.Configuration(
                inMemoryIdentifier: "plain-deletes-\(UUID())",
                objectTypes: [PlainRowItem.self, PlainRowKeyless.self, PlainRowReferrer.self]))
        try realm.write {
            for id in 1...4 { realm.create(PlainRowItem.self, value: ["id": id, "name": "item \(id)"]) }
        }
        return realm
    }

    private func ids(_ realm: Realm) -> [Int] { realm.objects(PlainRowItem.self).map(\.id).sorted() }

    /// A lookup in a write is noted for the delete that follows, and only while nothing changed since; one outside
    /// a write is not noted.
    @Test func aLookupIsAHintOnlyUntilTheWriteChangesAnything() throws {
        let realm = try memoryRealm()
        let binding = try realm.binding(for: PlainRowItem.self)
        realm.tables.lastPrimaryKeyLookup = nil
        let outside = try #require(realm.object(ofType: PlainRowItem.self, forPrimaryKey: 2))
        #expect(realm.tables.lastPrimaryKeyLookup == nil)
        realm.beginWrite()
        let three = try #require(realm.object(ofType: PlainRowItem.self, forPrimaryKey: 3))
        let two = try #require(realm.object(ofType: PlainRowItem.self, forPrimaryKey: 2))
        let key = try #require(two.managed?.key)
        #expect(realm.tables.lookedUpPrimaryKey(binding, key: key) != nil)
        #expect(realm.tables.lookedUpPrimaryKey(binding, key: key + 1) == nil)
        three.name = "changed"
        #expect(realm.tables.lookedUpPrimaryKey(binding, key: key) == nil)
        realm.cancelWrite()
        #expect(outside.name == "item 2")
    }

    /// The looked-up object's primary key is freed, not the one of an object looked up before.
    @Test func aLookedUpObjectIsDeletedWithItsOwnPrimaryKey() throws {
        let realm = try memoryRealm()
        try realm.write {
            _ = realm.object(ofType: PlainRowItem.self, forPrimaryKey: 1)
            realm.delete(try #require(realm.object(ofType: PlainRowItem.self, forPrimaryKey: 3)))
        }
        #expect(ids(realm) == [1, 2, 4])
        #expect(realm.object(ofType: PlainRowItem.self, forPrimaryKey: 3) == nil)
        #expect(realm.object(ofType: PlainRowItem.self, forPrimaryKey: 1)?.name == "item 1")
        try realm.write { realm.add(PlainRowItem(value: ["id": 3, "name": "again"])) }
        #expect(realm.object(ofType: PlainRowItem.self, forPrimaryKey: 3)?.name == "again")
    }

    /// An object deleted after the lookup that found it (by another accessor) fails the write, which rolls back
    /// whole, as before.
    @Test func anObjectDeletedSinceItsLookupFailsTheWrite() throws {
        let realm = try memoryRealm()
        #expect(throws: Realm.Error.invalidatedObject) {
            try realm.write {
                let found = try #require(realm.object(ofType: PlainRowItem.self, forPrimaryKey: 2))
                realm.delete(try #require(realm.objects(PlainRowItem.self).first { $0.id == 2 }))
                realm.delete(found)
            }
        }
        #expect(ids(realm) == [1, 2, 3, 4])
    }

    /// An object found another way than the last lookup (a query) still has its own primary key removed: the
    /// hint names another object.
    @Test func anObjectNotLookedUpIsDeletedWithItsOwnPrimaryKey() throws {
        let realm = try memoryRealm()
        try realm.write {
            let four = try #require(realm.objects(PlainRowItem.self).first { $0.id == 4 })
            _ = realm.object(ofType: PlainRowItem.self, forPrimaryKey: 1)
            realm.delete(four)
        }
        #expect(ids(realm) == [1, 2, 3])
        #expect(realm.object(ofType: PlainRowItem.self, forPrimaryKey: 1) != nil)
        try realm.write { realm.add(PlainRowItem(value: ["id": 4, "name": "again"])) }
        #expect(ids(realm) == [1, 2, 3, 4])
    }

    /// An accessor that read its row in the write hands it to the delete; one whose row changed since reads it
    /// again. Either way the row and its primary key go, and links to it are dropped.
    @Test func anAccessorsRowIsUsedOnlyAtTheCurrentGeneration() throws {
        let realm = try memoryRealm()
        try realm.write {
            let one = try #require(realm.object(ofType: PlainRowItem.self, forPrimaryKey: 1))
            realm.add(PlainRowReferrer(value: ["id": 1, "item": one, "items": [one]]))
        }
        try realm.write {
            let one = try #require(realm.objects(PlainRowItem.self).first { $0.id == 1 })
            let two = try #require(realm.objects(PlainRowItem.self).first { $0.id == 2 })
            #expect(one.name == "item 1" && two.name == "item 2")
            two.name = "renamed"
            realm.delete(one)
            realm.delete(two)
        }
        #expect(ids(realm) == [3, 4])
        let referrer = try #require(realm.object(ofType: PlainRowReferrer.self, forPrimaryKey: 1))
        #expect(referrer.item == nil && referrer.items.isEmpty)
        try realm.write {
            realm.add(PlainRowItem(value: ["id": 1, "name": "one again"]))
            realm.add(PlainRowItem(value: ["id": 2, "name": "two again"]))
        }
        #expect(ids(realm) == [1, 2, 3, 4])
    }

    /// A looked-up object whose stored row does not decode is deleted without reading it: the row and its
    /// primary-key entry go and the write commits (a delete that read the row failed with the damage instead).
    @Test func aLookedUpObjectWhoseRowDoesNotDecodeIsDeleted() throws {
        let scratch = try Scratch()
        let configuration = scratch.configuration([PlainRowItem.self, PlainRowKeyless.self, PlainRowReferrer.self])
        try {
            let realm = try Realm(configuration: configuration)
            try realm.write {
                for id in 1...3 { realm.create(PlainRowItem.self, value: ["id": id, "name": "item \(id)"]) }
            }
        }()
        DamagedRealmTests.dropLog(configuration)
        let store = try Store.open(path: configuration.fileURL!.path)
        try store.write { transaction in
            let rows = try #require(try transaction.tree(named: "o:PlainRowItem"))
            try transaction.put(try transaction.element(at: 1, in: rows).key, [0xFF, 0x01], in: rows)
        }
        let realm = try Realm(configuration: configuration)
        let key = try #require(realm.object(ofType: PlainRowItem.self, forPrimaryKey: 2)?.managed?.key)
        let binding = try realm.binding(for: PlainRowItem.self)
        #expect(throws: Realm.Error.self) { try realm.tables.rowValues(binding: binding, key: key) }
        try realm.write {
            realm.delete(try #require(realm.object(ofType: PlainRowItem.self, forPrimaryKey: 2)))
        }
        #expect(realm.object(ofType: PlainRowItem.self, forPrimaryKey: 2) == nil)
        #expect(ids(realm) == [1, 3])
    }

    /// A class without a primary key deletes its row without reading it; deleting it twice fails the write.
    @Test func aKeylessObjectIsDeletedOnceAndOnlyOnce() throws {
        let realm = try memoryRealm()
        #expect(try realm.binding(for: PlainRowKeyless.self).plainRows)
        try realm.write {
            realm.add(PlainRowKeyless(value: ["name": "a"]))
            realm.add(PlainRowKeyless(value: ["name": "b"]))
        }
        let first = try #require(realm.objects(PlainRowKeyless.self).first { $0.name == "a" })
        try realm.write { realm.delete(first) }
        #expect(first.isInvalidated)
        #expect(realm.objects(PlainRowKeyless.self).map(\.name) == ["b"])
        #expect(throws: Realm.Error.invalidatedObject) { try realm.write { realm.delete(first) } }
        #expect(realm.objects(PlainRowKeyless.self).map(\.name) == ["b"])
    }
}

final class PlainRowKeyless: Object {
    @Persisted var name = ""
}

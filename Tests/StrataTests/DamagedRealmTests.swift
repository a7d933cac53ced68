import Foundation
import Strata
import StrataStorage
import Testing

/// What a Realm does when a read that cannot throw (a property getter, an iterator) meets a damaged file: it
/// shows a harmless default, records the damage (`realm.damage`), and every later call that can throw refuses
/// with it, so that no write built on the default commits.
@Suite("Damaged Realm")
struct DamagedRealmTests {
    final class Item: Object {
        @Persisted(primaryKey: true) var id = 0
        @Persisted var name = ""
        @Persisted var code = UUID(uuid: (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16))
        @Persisted var numbers: List<Int>
        override class func className() -> String { "DamagedRealmItem" }
    }

    final class Note: Object {
        @Persisted var text = ""
        override class func className() -> String { "DamagedRealmNote" }
    }

    /// A list element no other stored value equals, to find the page that holds the list.
    static let listMarker = 0x5EED_5EED_0DA3_A6E5

    /// A closed file holding items 1, 2 and 3 (named "needle-1"...; only item 1's list holds ``listMarker``) and,
    /// in a later commit, one note: the items' pages are not among the newest commit's, so opening the file does
    /// not look at them.
    static func makeFile(in scratch: Scratch) throws -> Realm.Configuration {
        let configuration = scratch.configuration([Item.self, Note.self])
        let realm = try Realm(configuration: configuration)
        try realm.write {
            for id in 1...3 {
                let numbers = id == 1 ? [listMarker, listMarker + 1] : [id, id]
                realm.create(Item.self, value: ["id": id, "name": "needle-\(id)", "numbers": numbers])
            }
        }
        try realm.write { realm.create(Note.self, value: ["text": "later"]) }
        return configuration
    }

    /// Removes the commit log and lock file of a closed file, so that a reopen cannot repair pages from the log.
    static func dropLog(_ configuration: Realm.Configuration) {
        let path = configuration.fileURL!.path
        for suffix in [".log", ".lock"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }

    /// Zeroes the page of the closed file holding `needle` and returns its number.
    static func zeroPage(holding needle: [UInt8], in configuration: Realm.Configuration) throws -> Int {
        dropLog(configuration)
        let url = configuration.fileURL!
        var bytes = [UInt8](try Data(contentsOf: url))
        let pageSize = 4096
        let offset = try #require(
            (0...(bytes.count - needle.count)).first { bytes[$0..<($0 + needle.count)].elementsEqual(needle) })
        let page = offset / pageSize
        bytes.replaceSubrange(page * pageSize..<(page + 1) * pageSize, with: repeatElement(0, count: pageSize))
        try Data(bytes).write(to: url)
        return page
    }

    /// Rewrites the stored row of the `position`th item with `change`, through the storage engine: the file stays
    /// valid page by page, only its content no longer makes sense to the object layer.
    static func editRow(
        _ position: Int, in configuration: Realm.Configuration, _ change: (inout [UInt8]?) -> Void
    ) throws {
        dropLog(configuration)
        let store = try Store.open(path: configuration.fileURL!.path)
        try store.write { transaction in
            let rows = try #require(try transaction.tree(named: "o:DamagedRealmItem"))
            let key = try transaction.element(at: position, in: rows).key
            var row = try transaction.get(key, in: rows)
            change(&row)
            if let row { try transaction.put(key, row, in: rows) } else { try transaction.delete(key, in: rows) }
        }
    }

    static func expectDamage(_ realm: Realm, page: Int? = nil, reason: String? = nil) {
        guard case .incompatibleFile(let path, let message)? = realm.damage else {
            Issue.record("no damage recorded: \(String(describing: realm.damage))")
            return
        }
        #expect(path == realm.configuration.fileURL!.path)
        if let page { #expect(message.contains("page \(page)"), "\(message)") }
        if let reason { #expect(message.contains(reason), "\(message)") }
    }

    @Test func aPropertyOnADamagedPageReadsAsItsDefaultAndTheDamageIsRecorded() throws {
        let scratch = try Scratch()
        let configuration = try Self.makeFile(in: scratch)
        let page = try Self.zeroPage(holding: Array("needle-2".utf8), in: configuration)
        let realm = try Realm(configuration: configuration)
        #expect(realm.damage == nil)
        let item = try #require(realm.object(ofType: Item.self, forPrimaryKey: 2))
        #expect(item.name == "")
        #expect(item.numbers.count == 2)
        Self.expectDamage(realm, page: page)
        // Every Realm on the file shares it.
        #expect(realm.freeze().damage == realm.damage)
    }

    @Test func iteratingADamagedClassHandsOutItsCountOfObjectsThatReadAsInvalidated() throws {
        let scratch = try Scratch()
        let configuration = try Self.makeFile(in: scratch)
        let page = try Self.zeroPage(holding: Array("needle-2".utf8), in: configuration)
        let realm = try Realm(configuration: configuration)
        let items = realm.objects(Item.self)
        // The class's only page is gone: its count cannot be read either (0), or, when other pages still count
        // the objects, that many placeholders come out; either way nothing it hands out reads as data.
        let read = Array(items)
        #expect(read.count == items.count)
        #expect(read.allSatisfy { $0.name == "" && $0.isInvalidated })
        #expect(items.filter("name == 'needle-1'").count == 0)
        Self.expectDamage(realm, page: page)
    }

    @Test func iteratingADamagedListHandsOutItsCountOfDefaults() throws {
        let scratch = try Scratch()
        let configuration = try Self.makeFile(in: scratch)
        let marker = withUnsafeBytes(of: Int64(Self.listMarker).littleEndian) { Array($0) }
        let page = try Self.zeroPage(holding: marker, in: configuration)
        let realm = try Realm(configuration: configuration)
        let item = try #require(realm.object(ofType: Item.self, forPrimaryKey: 1))
        #expect(item.name == "needle-1")
        let numbers = item.numbers
        #expect(Array(numbers) == Array(repeating: 0, count: numbers.count))
        #expect(numbers.map { $0 } == Array(repeating: 0, count: numbers.count))
        Self.expectDamage(realm, page: page)
    }

    @Test func aWriteAfterADamagedReadThrowsTheDamageAndCommitsNothing() throws {
        let scratch = try Scratch()
        let configuration = try Self.makeFile(in: scratch)
        _ = try Self.zeroPage(holding: Array("needle-2".utf8), in: configuration)
        do {
            let realm = try Realm(configuration: configuration)
            let item = try #require(realm.object(ofType: Item.self, forPrimaryKey: 2))
            let name = item.name  // the damaged read
            let damage = try #require(realm.damage)
            #expect(throws: damage) {
                try realm.write { realm.create(Note.self, value: ["text": "built on \(name)"]) }
            }
            #expect(!realm.isInWriteTransaction)
            #expect(throws: damage) { try realm.write {} }
            #expect(throws: damage) { _ = try realm.objects(Note.self).checkedFilter("text == 'later'") }
            #expect(throws: damage) { try realm.writeCopy(toFile: scratch.url.appendingPathComponent("copy.strata")) }
            // Another Realm on the file learns of it when it opens.
            #expect(throws: damage) { _ = try Realm.independent(configuration) }
        }
        // Once every Realm on the file is gone, the file is read afresh: nothing of the refused writes is in it.
        let reopened = try Realm(configuration: configuration)
        #expect(reopened.damage == nil)
        #expect(reopened.objects(Note.self).map(\.text) == ["later"])
    }

    @Test func aDamagedReadInsideAWriteRollsTheWholeWriteBack() throws {
        let scratch = try Scratch()
        let configuration = try Self.makeFile(in: scratch)
        _ = try Self.zeroPage(holding: Array("needle-2".utf8), in: configuration)
        do {
            let realm = try Realm(configuration: configuration)
            let item = try #require(realm.object(ofType: Item.self, forPrimaryKey: 2))
            realm.beginWrite()
            realm.create(Note.self, value: ["text": "in the same write"])
            let copy = realm.create(Item.self, value: ["id": 20, "name": item.name])  // reads the damaged page
            #expect(copy.name == "")
            let damage = try #require(realm.damage)
            #expect(throws: damage) { try realm.commitWrite() }
            #expect(!realm.isInWriteTransaction)
        }
        let reopened = try Realm(configuration: configuration)
        #expect(reopened.objects(Note.self).map(\.text) == ["later"])
        #expect(reopened.object(ofType: Item.self, forPrimaryKey: 20) == nil)
    }

    @Test func aRowThatDoesNotDecodeIsDamageNotADeletedObject() throws {
        let scratch = try Scratch()
        let configuration = try Self.makeFile(in: scratch)
        try Self.editRow(1, in: configuration) { $0 = [0xFF, 0x01] }
        let realm = try Realm(configuration: configuration)
        let item = try #require(realm.object(ofType: Item.self, forPrimaryKey: 2))
        #expect(item.name == "")
        #expect(!item.isInvalidated)
        Self.expectDamage(realm, reason: "DamagedRealmItem object")
        #expect(realm.damage?.description.contains("deleted") == false)
    }

    @Test func aReferenceToAMissingRowIsDamageNotADeletedObject() throws {
        let scratch = try Scratch()
        let configuration = try Self.makeFile(in: scratch)
        try Self.editRow(2, in: configuration) { $0 = nil }  // the primary-key index still names item 3
        let realm = try Realm(configuration: configuration)
        let item = try #require(realm.object(ofType: Item.self, forPrimaryKey: 3))
        #expect(item.name == "")
        Self.expectDamage(realm, reason: "which is not stored")
    }

    @Test func aStoredValueOfTheWrongTypeIsDamage() throws {
        let scratch = try Scratch()
        let configuration = try Self.makeFile(in: scratch)
        // Column 2 (`code`, a required UUID) marked null as well as variable-size: the row no longer makes sense,
        // and none of its values is handed out.
        try Self.editRow(0, in: configuration) { $0?[3] |= 1 << 2 }
        let realm = try Realm(configuration: configuration)
        let item = try #require(realm.object(ofType: Item.self, forPrimaryKey: 1))
        #expect(item.name == "")
        _ = item.code
        Self.expectDamage(realm, reason: "DamagedRealmItem object 1")
    }

    /// The next schema version of `Item`: one more property.
    final class TaggedItem: Object {
        @Persisted(primaryKey: true) var id = 0
        @Persisted var name = ""
        @Persisted var code = UUID(uuid: (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16))
        @Persisted var numbers: List<Int>
        @Persisted var total = 0
        override class func className() -> String { "DamagedRealmItem" }
    }

    @Test func aMigrationThatReadsDamagedDataFailsWholeAndLeavesTheFile() throws {
        let scratch = try Scratch()
        let configuration = try Self.makeFile(in: scratch)
        let marker = withUnsafeBytes(of: Int64(Self.listMarker).littleEndian) { Array($0) }
        let page = try Self.zeroPage(holding: marker, in: configuration)
        var next = Realm.Configuration(
            fileURL: configuration.fileURL, schemaVersion: 1, objectTypes: [TaggedItem.self, Note.self])
        next.migrationBlock = { migration, _ in
            migration.enumerateObjects(ofType: "DamagedRealmItem") { old, new in
                let numbers = old?["numbers"] as? [Any] ?? []
                new?["total"] = numbers.compactMap { $0 as? Int }.reduce(0, &+)
            }
        }
        #expect {
            _ = try Realm(configuration: next)
        } throws: { error in
            guard case .incompatibleFile(let path, let reason) = error as? Realm.Error else { return false }
            return path == configuration.fileURL!.path && reason.contains("page \(page)")
        }
        // The file keeps its schema version and data: the old models open it without a migration.
        let old = try Realm(configuration: configuration)
        #expect(old.objects(Item.self).count == 3)
        #expect(old.object(ofType: Item.self, forPrimaryKey: 2)?.name == "needle-2")
    }

    @Test func compactingADamagedFileOnLaunchThrowsAndLeavesIt() throws {
        let scratch = try Scratch()
        let configuration = try Self.makeFile(in: scratch)
        let page = try Self.zeroPage(holding: Array("needle-2".utf8), in: configuration)
        let before = try Data(contentsOf: configuration.fileURL!)
        var compacting = configuration
        compacting.shouldCompactOnLaunch = { _, _ in true }
        #expect {
            _ = try Realm(configuration: compacting)
        } throws: { error in
            guard case .incompatibleFile(let path, let reason) = error as? Realm.Error else { return false }
            return path == configuration.fileURL!.path && reason.contains("page \(page)")
        }
        #expect(try Data(contentsOf: configuration.fileURL!) == before)
    }

    /// Reads a damaged property on its own actor, then writes.
    actor Writer {
        func readThenWrite(_ configuration: Realm.Configuration) async throws -> (name: String, damage: Realm.Error?) {
            let realm = try await Realm(configuration: configuration, actor: self)
            let name = realm.object(ofType: Item.self, forPrimaryKey: 2)?.name ?? "missing"
            try await realm.asyncWrite { realm.create(Note.self, value: ["text": "built on \(name)"]) }
            return (name, realm.damage)
        }
    }

    @Test func asyncWriteAfterADamagedReadThrowsTheDamage() async throws {
        let scratch = try Scratch()
        let configuration = try Self.makeFile(in: scratch)
        let page = try Self.zeroPage(holding: Array("needle-2".utf8), in: configuration)
        await #expect {
            _ = try await Writer().readThenWrite(configuration)
        } throws: { error in
            guard case .incompatibleFile(_, let reason) = error as? Realm.Error else { return false }
            return reason.contains("page \(page)")
        }
    }

    @Test func aDeletedObjectIsNotDamage() throws {
        let scratch = try Scratch()
        let realm = try Realm(configuration: try Self.makeFile(in: scratch))
        let item = try #require(realm.object(ofType: Item.self, forPrimaryKey: 2))
        try realm.write { realm.delete(item) }
        #expect(item.isInvalidated)
        #expect(realm.damage == nil)
        try realm.write { realm.create(Note.self, value: ["text": "still writable"]) }
    }
}

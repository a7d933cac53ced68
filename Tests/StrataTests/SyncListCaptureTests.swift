import Foundation
import StrataStorage
import StrataTestSupport
import Testing

@_spi(StrataSync) @testable import Strata

/// A replicated growable array as the server keeps it (Sync's `ListState`), for checking captured list operations
/// without PostgreSQL: each element follows the one it was inserted after, the later of two siblings first. Ids are
/// this suite's recorder's `t<n>#<m>` (`m` with its `~` length marks), compared as numbers.
private struct ModelList {
    struct Element {
        let id: String
        let after: String?
        let value: CapturedValue
        var removed = false
    }

    var elements: [Element] = []
    var cleared: String?

    static func order(_ id: String) -> (Int, Int) {
        let parts = id.dropFirst().split(separator: "#")
        return (Int(parts[0])!, parts.count > 1 ? Int(parts[1].filter { $0 != "~" })! : 0)
    }

    mutating func apply(_ operations: [CapturedListOperation]) {
        for operation in operations {
            switch operation {
            case .insert(let id, let after, let value):
                #expect(!elements.contains { $0.id == id }, "id \(id) reused")
                elements.append(Element(id: id, after: after, value: value))
            case .remove(let id):
                let index = elements.firstIndex { $0.id == id }
                #expect(index != nil, "removal of unknown id \(id)")
                if let index { elements[index].removed = true }
            case .clear(let at):
                cleared = at
            }
        }
    }

    var values: [CapturedValue] {
        let known = Set(elements.map(\.id))
        var children: [String?: [Element]] = [:]
        for element in elements {
            children[element.after.flatMap { known.contains($0) ? $0 : nil }, default: []].append(element)
        }
        var result: [CapturedValue] = []
        var stack = (children[nil] ?? []).sorted { Self.order($0.id) < Self.order($1.id) }
        while let element = stack.popLast() {
            let visible = !element.removed && cleared.map { Self.order(element.id) >= Self.order($0) } ?? true
            if visible { result.append(element.value) }
            stack += (children[element.id] ?? []).sorted { Self.order($0.id) < Self.order($1.id) }
        }
        return result
    }
}

/// A synced list of links: deleting a target removes its elements without a recorded edit.
final class CaptureKennel: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var owners: List<SyncCaptureModels.CaptureOwner>
}

@Suite("Sync list capture: positional edits and the list state")
struct SyncListCaptureTests {
    typealias Dog = SyncCaptureModels.CaptureDog
    let scratch: Scratch

    init() throws { scratch = try Scratch() }

    private func capturedRealm(_ recorder: CountingRecorder) throws -> Realm {
        let configuration = Realm.Configuration(
            fileURL: scratch.url.appendingPathComponent("lists.strata"),
            objectTypes: [Dog.self, SyncCaptureModels.CaptureOwner.self, CaptureKennel.self])
        configuration.startSyncCapture(classes: ["CaptureDog", "CaptureOwner", "CaptureKennel"], recorder: recorder)
        return try Realm(configuration: configuration)
    }

    /// Applies the queue entries after `seen` to `model`; returns the last sequence.
    private func applyNewEntries(_ realm: Realm, after seen: Int64, to model: inout ModelList) throws -> Int64 {
        var last = seen
        for entry in try realm.syncQueue() where entry.sequence > seen {
            if case .list(let operations)? = entry.changes.first?.collections["tags"] { model.apply(operations) }
            last = entry.sequence
        }
        return last
    }

    /// One random edit of `tags` (what `List` offers: append, insert, replace, remove, move, swap, remove all).
    private func randomEdit(_ tags: List<String>, _ generator: inout SeededGenerator, _ counter: inout Int) {
        counter += 1
        let value = "v\(counter)"
        let count = tags.count
        switch Int.random(in: 0..<20, using: &generator) {
        case 0..<5: tags.append(value)
        case 5..<9: tags.insert(value, at: Int.random(in: 0...count, using: &generator))
        case 9..<11 where count > 0: tags[Int.random(in: 0..<count, using: &generator)] = value
        case 11..<15 where count > 0: tags.remove(at: Int.random(in: 0..<count, using: &generator))
        case 15..<17 where count > 0:
            tags.move(
                from: Int.random(in: 0..<count, using: &generator), to: Int.random(in: 0..<count, using: &generator))
        case 17..<19 where count > 1:
            tags.swapAt(Int.random(in: 0..<count, using: &generator), Int.random(in: 0..<count, using: &generator))
        case 19: tags.removeAll()
        default: tags.insert(value, at: 0)
        }
    }

    @Test(arguments: [UInt64(1), 2, 3, 4, 5, 6])
    func randomPositionalEditsInOneAndInSeveralTransactionsGiveTheListsContents(seed: UInt64) throws {
        var generator = SeededGenerator(seed: seed)
        let recorder = CountingRecorder()
        let realm = try capturedRealm(recorder)
        defer { realm.configuration.stopSyncCapture() }
        var model = ModelList()
        var counter = 0
        try realm.write { realm.create(Dog.self, value: ["id": 1, "tags": (0..<8).map { "s\($0)" }]) }
        var seen = try applyNewEntries(realm, after: 0, to: &model)
        for round in 0..<25 {
            // Mostly positional edits (a few in one transaction, up to 30: ids past #9 included); now and then
            // the list assigned whole, which is compared with its base instead.
            let edits = Int.random(in: 1...(round % 5 == 0 ? 30 : 4), using: &generator)
            try realm.write {
                let dog = try #require(realm.object(ofType: Dog.self, forPrimaryKey: 1))
                if round % 7 == 6 {
                    var values = Array(dog.tags)
                    values.shuffle(using: &generator)
                    values.append("whole\(round)")
                    realm.create(Dog.self, value: ["id": 1, "tags": values], update: .modified)
                }
                for _ in 0..<edits { randomEdit(dog.tags, &generator, &counter) }
            }
            seen = try applyNewEntries(realm, after: seen, to: &model)
            let dog = try #require(realm.object(ofType: Dog.self, forPrimaryKey: 1))
            #expect(model.values == dog.tags.map { .string($0) }, "seed \(seed), round \(round)")
        }
    }

    @Test func oneAppendToALongListWritesOneElementRecordAndTheIDTree() throws {
        let recorder = CountingRecorder()
        let realm = try capturedRealm(recorder)
        defer { realm.configuration.stopSyncCapture() }
        try realm.write { realm.create(Dog.self, value: ["id": 1, "tags": (0..<2_000).map { "tag \($0)" }]) }
        let dog = try #require(realm.object(ofType: Dog.self, forPrimaryKey: 1))
        let key = try #require(dog.managed).key
        let stateKey = Array("CaptureDog".utf8) + [0] + Array("tags".utf8) + [0] + KeyEncoding.objectKey(key)
        let before = try #require(try realm.tables.view(SyncTreeNames.collections)?.subtree(forKey: stateKey))
        #expect(before.count == 2_002)  // the id tree, the clear, one record per element
        try realm.write { dog.tags.append("one more") }
        let after = try #require(try realm.tables.view(SyncTreeNames.collections)?.subtree(forKey: stateKey))
        let difference = try after.differences(from: before)
        #expect(difference.inserted.count == 1)
        #expect(difference.inserted.first?.first == UInt8(ascii: "e"))
        #expect(difference.changed == [Array("$ids".utf8)])
        #expect(difference.deleted.isEmpty)
        #expect(
            try realm.syncQueue().last?.changes.first?.collections["tags"]
                == .list([.insert(id: "t2#1", after: "t1#~~~2000", value: .string("one more"))]))
    }

    @Test func editsThatDoNotAccountForTheListFallBackToItsDifference() throws {
        // A deleted owner leaves the list without a recorded edit: the recorded append alone would not give the
        // list, so the commit compares the list with its base and sends the removal too.
        let recorder = CountingRecorder()
        let realm = try capturedRealm(recorder)
        defer { realm.configuration.stopSyncCapture() }
        try realm.write {
            let owners = ["a", "b", "c"].map { realm.create(SyncCaptureModels.CaptureOwner.self, value: ["name": $0]) }
            realm.create(CaptureKennel.self, value: ["id": 1, "owners": owners])
        }
        try realm.write {
            let kennel = try #require(realm.object(ofType: CaptureKennel.self, forPrimaryKey: 1))
            kennel.owners.append(realm.create(SyncCaptureModels.CaptureOwner.self, value: ["name": "d"]))
            realm.delete(try #require(realm.object(ofType: SyncCaptureModels.CaptureOwner.self, forPrimaryKey: "b")))
        }
        let kennel = try realm.syncQueue().last?.changes.first { $0.className == "CaptureKennel" }
        #expect(
            kennel?.collections["owners"]
                == .list([.remove(id: "t1#2"), .insert(id: "t2#1", after: "t1#3", value: .link(.string("d")))]))
    }

    @Test func aStateOfTheFormerOneValueLayoutIsConvertedOnFirstTouch() throws {
        let recorder = CountingRecorder()
        let realm = try capturedRealm(recorder)
        defer { realm.configuration.stopSyncCapture() }
        try realm.write { realm.create(Dog.self, value: ["id": 1, "tags": ["a", "c"]]) }
        let dog = try #require(realm.object(ofType: Dog.self, forPrimaryKey: 1))
        let binding = try #require(dog.managed).binding
        let property = try #require(binding.table.schema.properties.firstIndex { $0.columnName == "tags" })
        // Format 1: the whole state as one value under `$list` (the clear, then id, after, removed per element);
        // "x" was removed, "a" and "c" are shown.
        let key = try #require(dog.managed).key
        try realm.write {
            let transaction = try realm.activeTransaction()
            let states = try #require(try realm.handle(SyncTreeNames.collections, create: false))
            let stateKey = Array("CaptureDog".utf8) + [0] + Array("tags".utf8) + [0] + KeyEncoding.objectKey(key)
            try transaction.delete(stateKey, in: states)
            let tree = try #require(try realm.collectionState(binding, property: property, key: key, create: true))
            let strings = ["t0", "t1#1", "", "0", "t0#9", "t1#1", "1", "t1#2", "t1#1", "0"]
            try transaction.put(Array("$list".utf8), Realm.encodeStrings(strings), in: tree)
        }
        try realm.write { dog.tags.insert("b", at: 1) }
        #expect(
            try realm.syncQueue().last?.changes.first?.collections["tags"]
                == .list([.insert(id: "t2#1", after: "t1#1", value: .string("b"))]))
        try realm.write {
            let state = try #require(try realm.syncListState(of: dog, property: "tags"))
            #expect(state.cleared == "t0")
            #expect(state.visibleIDs == ["t1#1", "t2#1", "t1#2"])
            #expect(state.elements.last == .init(id: "t0#9", after: "t1#1", isRemoved: true))
            realm.cancelWrite()
        }
    }

    @Test func elementIDsOfOneTransactionSortAsTextInTheOrderTheyAreMade() {
        let stamp = CaptureStamp(CountingRecorder())
        let ids = (0..<120).map { _ in stamp.elementID() }
        #expect(ids[8] == "t1#9" && ids[9] == "t1#~10" && ids[99] == "t1#~~100")
        #expect(ids == ids.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) })
    }
}

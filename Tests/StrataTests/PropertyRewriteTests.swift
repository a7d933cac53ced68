import Foundation
import Strata
import Testing

final class RewrittenNote: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var title = ""
    @Persisted var count = 0
    @Persisted var subtitle: String?
    @Persisted var score = 0.0
    @Persisted var stamp = Date(timeIntervalSinceReferenceDate: 0)
    @Persisted var payload = Data()
    @Persisted(indexed: true) var tag = ""
}

/// Setting a plain property rewrites its column alone in the stored row (issue 25), and an upsert that changes
/// plain values does the same: every other value of the row must read back unchanged, in the transaction, after
/// it, and in a new Realm on the file; an indexed property still moves its index entry.
@Suite("Setting one property")
struct PropertyRewriteTests {
    private struct Expected: Equatable {
        var title = "first", count = 1, subtitle: String? = "sub", score = 1.5
        var stamp = Date(timeIntervalSinceReferenceDate: 10), payload = Data([1, 2, 3]), tag = "a"
        init() {}
        init(_ note: RewrittenNote) {
            (title, count, subtitle, score) = (note.title, note.count, note.subtitle, note.score)
            (stamp, payload, tag) = (note.stamp, note.payload, note.tag)
        }
    }

    /// Stores note 1 holding `values`.
    private func create(_ values: Expected, in realm: Realm) throws {
        try realm.write {
            realm.create(
                RewrittenNote.self,
                value: [
                    "id": 1, "title": values.title, "count": values.count, "subtitle": values.subtitle as Any,
                    "score": values.score, "stamp": values.stamp, "payload": values.payload, "tag": values.tag,
                ])
        }
    }

    private func note(in realm: Realm) throws -> RewrittenNote {
        try #require(realm.object(ofType: RewrittenNote.self, forPrimaryKey: 1))
    }

    @Test func everyOtherValueReadsBackUnchanged() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("rewrite-\(UUID()).strata")
        defer { try? FileManager.default.removeItem(at: url) }
        let configuration = Realm.Configuration(fileURL: url, objectTypes: [RewrittenNote.self])
        let realm = try Realm(configuration: configuration)
        var expected = Expected()
        try create(expected, in: realm)
        let note = try note(in: realm)
        // Each edit in a transaction of its own, then several in one; strings grow, shrink, vanish and come back.
        let edits: [(inout Expected, RewrittenNote) -> Void] = [
            {
                $0.title = "a much longer first title"
                $1.title = $0.title
            },
            {
                $0.count += 1
                $1.count += 1
            },
            {
                $0.subtitle = nil
                $1.subtitle = nil
            },
            {
                $0.payload = Data()
                $1.payload = Data()
            },
            {
                $0.subtitle = "back"
                $1.subtitle = "back"
            },
            {
                $0.title = ""
                $1.title = ""
            },
            {
                $0.score = -0.25
                $1.score = -0.25
            },
            {
                $0.stamp = Date(timeIntervalSinceReferenceDate: -5)
                $1.stamp = $0.stamp
            },
            {
                $0.tag = "b"
                $1.tag = "b"
            },
        ]
        for edit in edits {
            try realm.write {
                edit(&expected, note)
                #expect(Expected(note) == expected)
            }
            #expect(Expected(note) == expected)
        }
        try realm.write {
            for (index, edit) in edits.enumerated().reversed() where index % 2 == 0 { edit(&expected, note) }
            note.count += 1
            note.count += 1
            expected.count += 2
        }
        #expect(Expected(note) == expected)
        #expect(realm.objects(RewrittenNote.self).filter("tag == 'b'").count == 1)
        #expect(realm.objects(RewrittenNote.self).filter("tag == 'a'").isEmpty)
        let reopened = try Realm(configuration: configuration)
        reopened.refresh()
        #expect(Expected(try self.note(in: reopened)) == expected)
    }

    @Test func anUpsertChangingPlainValuesKeepsTheRest() throws {
        let realm = try Realm(
            configuration: Realm.Configuration(
                inMemoryIdentifier: "rewrite-upsert-\(UUID())", objectTypes: [RewrittenNote.self]))
        var expected = Expected()
        try create(expected, in: realm)
        try realm.write {
            realm.create(
                RewrittenNote.self, value: ["id": 1, "subtitle": "changed", "count": 1, "tag": "c"], update: .modified)
        }
        expected.subtitle = "changed"
        expected.tag = "c"
        #expect(Expected(try note(in: realm)) == expected)
        #expect(realm.objects(RewrittenNote.self).filter("tag == 'c'").count == 1)
        try realm.write {
            realm.create(RewrittenNote.self, value: ["id": 1, "title": "t", "score": 2.0], update: .all)
        }
        expected.title = "t"
        expected.score = 2
        #expect(Expected(try note(in: realm)) == expected)
        // A value of the wrong type fails the write whole.
        #expect(throws: Realm.Error.self) {
            try realm.write {
                realm.create(RewrittenNote.self, value: ["id": 1, "title": "u", "count": "many"], update: .modified)
            }
        }
        #expect(Expected(try note(in: realm)) == expected)
    }

    /// Setting a property of every object in key order reads and rewrites rows in the leaf the previous put left
    /// dirty (StrataStorage's `LastLeaf`); values that keep their size are patched there, others move. Every
    /// object reads back its own values in the write and after it, and a write that fails rolls all of it back.
    @Test func settingAPropertyOfEveryObjectInOneWriteKeepsEachObjectsValues() throws {
        let realm = try Realm(
            configuration: Realm.Configuration(
                inMemoryIdentifier: "rewrite-all-\(UUID())", objectTypes: [RewrittenNote.self]))
        let count = 3_000
        try realm.write {
            for id in 0..<count {
                realm.create(RewrittenNote.self, value: ["id": id, "title": "note \(id)", "count": id, "score": 0.5])
            }
        }
        try realm.write {
            for note in realm.objects(RewrittenNote.self) {
                note.score += 1
                note.count = note.count * 2
                if note.id % 3 == 0 { note.title = String(repeating: "x", count: note.id % 40) }
                #expect(note.score == 1.5 && note.count == note.id * 2)
            }
        }
        func check(score: Double) throws {
            for id in stride(from: 0, to: count, by: 7) {
                let note = try #require(realm.object(ofType: RewrittenNote.self, forPrimaryKey: id))
                #expect(note.score == score && note.count == id * 2)
                #expect(note.title == (id % 3 == 0 ? String(repeating: "x", count: id % 40) : "note \(id)"))
            }
        }
        try check(score: 1.5)
        #expect(throws: Realm.Error.self) {
            try realm.write {
                for note in realm.objects(RewrittenNote.self) { note.score += 1 }
                realm.create(RewrittenNote.self, value: ["id": 0])
            }
        }
        try check(score: 1.5)
    }
}

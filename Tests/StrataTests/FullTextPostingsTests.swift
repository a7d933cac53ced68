import Foundation
import StrataStorage
import StrataTestSupport
import Testing

@testable import Strata

/// Test access to the raw entries of `FullTextDocument.body`'s full-text index.
extension Realm {
    func fullTextIndexName() throws -> String { try binding(for: FullTextDocument.self).indexTrees[1] }

    /// Every entry of the committed index tree, in order.
    func committedFullTextEntries() throws -> [(key: [UInt8], value: [UInt8])] {
        guard let tree = treeView(try fullTextIndexName()) else { return [] }
        var entries: [(key: [UInt8], value: [UInt8])] = []
        var cursor = tree.makeCursor()
        var more = try cursor.first()
        while more {
            entries.append(try cursor.withEntry { (Array($0), Array($1)) })
            more = try cursor.next()
        }
        return entries
    }

    /// Rewrites the committed index as files written before posting blocks stored it: one entry per word and
    /// object, with an empty value.
    func rewriteFullTextIndexInTheOldFormat() throws {
        let entries = try committedFullTextEntries()
        let name = try fullTextIndexName()
        try write {
            let transaction = try activeTransaction()
            let tree = try #require(try handle(name, create: false))
            try transaction.removeAll(in: tree)
            for entry in entries {
                var keys: [Int64] = []
                try FullText.decodeBlock(key: entry.key, value: entry.value, into: &keys)
                for key in keys {
                    try transaction.put(FullText.blockKey(entry.key.dropLast(9), first: key), [UInt8](), in: tree)
                }
            }
        }
    }

    /// Each word of the committed index with its number of postings, after checking the blocks: every block
    /// decodes, holds 1 to `FullText.blockCapacity` keys, and a word's keys ascend across its blocks.
    func checkedPostingCounts() throws -> [String: Int] {
        var counts: [String: Int] = [:]
        var last: (word: [UInt8], key: Int64)?
        for entry in try committedFullTextEntries() {
            let word = Array(entry.key.dropLast(9))
            var keys: [Int64] = []
            try FullText.decodeBlock(key: entry.key, value: entry.value, into: &keys)
            #expect((1...FullText.blockCapacity).contains(keys.count))
            if let last, last.word == word { #expect(last.key < keys[0]) }
            last = (word, keys.last!)
            counts[String(decoding: word, as: UTF8.self), default: 0] += keys.count
        }
        return counts
    }
}

/// The posting blocks of full-text indexes (`FullTextPostings.swift`) and the postings a write holds until it
/// flushes them (`PendingPostings.swift`), against a model of the texts.
@Suite("Full-text posting blocks")
struct FullTextPostingsTests {
    /// The texts by id, as sets of words.
    struct Model {
        var texts: [Int: Set<String>] = [:]

        func ids(_ search: String) -> [Int] {
            texts.keys.sorted().filter { id in
                search.split(separator: " ").allSatisfy { raw in
                    let excluded = raw.hasPrefix("-")
                    let term = excluded ? raw.dropFirst() : raw[...]
                    let found =
                        term.hasSuffix("*")
                        ? texts[id]!.contains { $0.hasPrefix(term.dropLast()) } : texts[id]!.contains(String(term))
                    return found != excluded
                }
            }
        }

        var postingCounts: [String: Int] {
            var counts: [String: Int] = [:]
            for words in texts.values { for word in words { counts[word, default: 0] += 1 } }
            return counts
        }
    }

    static let searches = [
        "common", "half", "common -half", "alpha beta", "gam*", "half -alp*", "rare7", "rare7 common", "late",
        "late -common", "epsilon delta",
    ]

    static func expectAgreement(_ realm: Realm, _ model: Model, _ step: String) {
        for search in searches {
            let found = Array(realm.objects(FullTextDocument.self).filter("body TEXT $0", search).map(\.id)).sorted()
            let expected = model.ids(search)
            #expect(found == expected, "\(step) '\(search)': \(found.count) found, \(expected.count) expected")
        }
    }

    static func text(_ id: Int, _ generator: inout SeededGenerator) -> Set<String> {
        var words: Set<String> = ["common", "rare\(id % 50)"]
        if id % 2 == 0 { words.insert("half") }
        for word in ["alpha", "beta", "gamma", "delta", "epsilon"] where generator.next() % 3 == 0 {
            words.insert(word)
        }
        return words
    }

    @Test func editsDeletesSplitsAndDropsAgreeWithAModel() throws {
        let realm = try Realm(configuration: Realm.Configuration(inMemoryIdentifier: "postings-\(UUID())"))
        var generator = SeededGenerator(seed: 25)
        var model = Model()
        try realm.write {
            for id in 0..<1_000 {
                model.texts[id] = Self.text(id, &generator)
                realm.create(
                    FullTextDocument.self, value: ["id": id, "body": model.texts[id]!.sorted().joined(separator: " ")])
            }
            // Queries in the write see the postings it holds.
            Self.expectAgreement(realm, model, "loaded, in the write")
        }
        Self.expectAgreement(realm, model, "loaded")
        // "common" is in every text: its postings take several blocks.
        #expect(
            try realm.committedFullTextEntries().filter { $0.key.starts(with: Array("common".utf8) + [0]) }.count >= 8)
        #expect(try realm.checkedPostingCounts() == model.postingCounts)

        // Edits that add and remove words (some drop "common", the first key of a block among them) and scattered
        // deletes, with queries in between.
        try realm.write {
            let documents = realm.objects(FullTextDocument.self)
            for id in stride(from: 0, to: 1_000, by: 3) {
                var words = Self.text(id &* 7 &+ 1, &generator)
                if id % 2 == 1 { words.remove("common") }
                words.insert(id % 9 == 0 ? "late" : "other")
                model.texts[id] = words
                documents.filter("id == %@", id).first!.body = words.sorted().joined(separator: " ")
            }
            Self.expectAgreement(realm, model, "edited, in the write")
            for id in stride(from: 1, to: 1_000, by: 5) {
                realm.delete(documents.filter("id == %@", id).first!)
                model.texts[id] = nil
            }
            Self.expectAgreement(realm, model, "deleted, in the write")
        }
        Self.expectAgreement(realm, model, "edited and deleted")
        #expect(try realm.checkedPostingCounts() == model.postingCounts)

        // "common" comes back into the middle of full blocks (they split); every "half" goes (its blocks are
        // dropped); new objects append to the last blocks.
        try realm.write {
            let documents = realm.objects(FullTextDocument.self)
            for (id, words) in model.texts where !words.contains("common") {
                model.texts[id]!.insert("common")
                documents.filter("id == %@", id).first!.body = model.texts[id]!.sorted().joined(separator: " ")
            }
            for (id, words) in model.texts where words.contains("half") {
                realm.delete(documents.filter("id == %@", id).first!)
                model.texts[id] = nil
            }
            for id in 1_000..<1_300 {
                model.texts[id] = Self.text(id, &generator).subtracting(["half"])
                realm.create(
                    FullTextDocument.self, value: ["id": id, "body": model.texts[id]!.sorted().joined(separator: " ")])
            }
            Self.expectAgreement(realm, model, "split and dropped, in the write")
        }
        Self.expectAgreement(realm, model, "split and dropped")
        let counts = try realm.checkedPostingCounts()
        #expect(counts["half"] == nil)
        #expect(counts == model.postingCounts)

        // Removing most postings of "common" one by one: shrunk blocks take in their next ones, so the word does not
        // stay spread over as many blocks as before.
        func commonBlocks() throws -> Int {
            try realm.committedFullTextEntries().filter { $0.key.starts(with: Array("common".utf8) + [0]) }.count
        }
        let blocksBefore = try commonBlocks()
        try realm.write {
            let documents = realm.objects(FullTextDocument.self)
            for id in model.texts.keys.sorted() where id % 10 != 0 {
                model.texts[id]!.remove("common")
                documents.filter("id == %@", id).first!.body = model.texts[id]!.sorted().joined(separator: " ")
            }
            Self.expectAgreement(realm, model, "merged, in the write")
        }
        Self.expectAgreement(realm, model, "merged")
        #expect(try realm.checkedPostingCounts() == model.postingCounts)
        let remaining = model.postingCounts["common"]!
        let blocksAfter = try commonBlocks()
        #expect(blocksAfter <= blocksBefore / 2, "\(blocksBefore) blocks -> \(blocksAfter) for \(remaining) postings")
    }

    @Test func aCancelledWriteLeavesTheIndexAsItWas() throws {
        let realm = try Realm(configuration: Realm.Configuration(inMemoryIdentifier: "postings-\(UUID())"))
        try realm.write {
            for id in 0..<100 { realm.create(FullTextDocument.self, value: ["id": id, "body": "kept words"]) }
        }
        let before = try realm.committedFullTextEntries().map { $0.key + [1] + $0.value }
        realm.beginWrite()
        for id in 100..<200 { realm.create(FullTextDocument.self, value: ["id": id, "body": "dropped kept"]) }
        for document in realm.objects(FullTextDocument.self).filter("id < 10") { document.body = "words" }
        #expect(realm.objects(FullTextDocument.self).filter("body TEXT 'kept'").count == 190)
        // Held again after the query flushed them.
        for id in 200..<300 { realm.create(FullTextDocument.self, value: ["id": id, "body": "dropped"]) }
        realm.cancelWrite()
        #expect(try realm.committedFullTextEntries().map { $0.key + [1] + $0.value } == before)
        #expect(realm.objects(FullTextDocument.self).filter("body TEXT 'dropped'").count == 0)

        // A write that throws rolls back what it held too; the next write starts with nothing held.
        struct Stop: Error {}
        #expect(throws: Stop.self) {
            try realm.write {
                realm.create(FullTextDocument.self, value: ["id": 500, "body": "dropped"])
                throw Stop()
            }
        }
        try realm.write { realm.create(FullTextDocument.self, value: ["id": 600, "body": "after"]) }
        #expect(realm.objects(FullTextDocument.self).filter("body TEXT 'dropped'").count == 0)
        #expect(realm.objects(FullTextDocument.self).filter("body TEXT 'after'").map(\.id) == [600])
        #expect(realm.objects(FullTextDocument.self).filter("body TEXT 'kept'").count == 100)
    }

    @Test func deletingEveryObjectForgetsTheHeldPostings() throws {
        let realm = try Realm(configuration: Realm.Configuration(inMemoryIdentifier: "postings-\(UUID())"))
        try realm.write {
            for id in 0..<50 { realm.create(FullTextDocument.self, value: ["id": id, "body": "gone"]) }
            realm.deleteAll()
            realm.create(FullTextDocument.self, value: ["id": 1, "body": "stays"])
        }
        #expect(realm.objects(FullTextDocument.self).filter("body TEXT 'gone'").count == 0)
        #expect(try realm.checkedPostingCounts() == ["stays": 1])
        try realm.write {
            for id in 2..<50 { realm.create(FullTextDocument.self, value: ["id": id, "body": "gone"]) }
            realm.delete(realm.objects(FullTextDocument.self))
        }
        #expect(try realm.checkedPostingCounts() == [:])
    }

    @Test func anIndexWrittenBeforePostingBlocksAnswersAndIsRewrittenByWrites() throws {
        let realm = try Realm(configuration: Realm.Configuration(inMemoryIdentifier: "postings-\(UUID())"))
        var generator = SeededGenerator(seed: 5)
        var model = Model()
        try realm.write {
            for id in 0..<600 {
                model.texts[id] = Self.text(id, &generator)
                realm.create(
                    FullTextDocument.self, value: ["id": id, "body": model.texts[id]!.sorted().joined(separator: " ")])
            }
        }
        try realm.rewriteFullTextIndexInTheOldFormat()
        let old = try realm.committedFullTextEntries()
        #expect(old.allSatisfy { $0.value.isEmpty })
        #expect(old.count == model.postingCounts.values.reduce(0, +))
        Self.expectAgreement(realm, model, "old format")
        try realm.write { Self.expectAgreement(realm, model, "old format, in a write") }

        try realm.write {
            let documents = realm.objects(FullTextDocument.self)
            for id in stride(from: 0, to: 600, by: 4) {
                model.texts[id] = ["late", "common", "alpha"]
                documents.filter("id == %@", id).first!.body = "late common alpha"
            }
            for id in stride(from: 3, to: 600, by: 10) {
                realm.delete(documents.filter("id == %@", id).first!)
                model.texts[id] = nil
            }
            for id in 600..<700 {
                model.texts[id] = Self.text(id, &generator)
                realm.create(
                    FullTextDocument.self, value: ["id": id, "body": model.texts[id]!.sorted().joined(separator: " ")])
            }
            Self.expectAgreement(realm, model, "mixed formats, in the write")
        }
        Self.expectAgreement(realm, model, "mixed formats")
        #expect(try realm.checkedPostingCounts() == model.postingCounts)
        #expect(try realm.committedFullTextEntries().contains { !$0.value.isEmpty })
    }

    /// Replaces the value of `word`'s first block with `value` through the storage engine.
    static func damageBlock(of word: String, in realm: Realm, with value: [UInt8]) throws {
        let entries = try realm.committedFullTextEntries()
        let key = try #require(entries.first { $0.key.starts(with: Array(word.utf8) + [0]) }?.key)
        let name = try realm.fullTextIndexName()
        try realm.write {
            let tree = try #require(try realm.handle(name, create: false))
            try realm.activeTransaction().put(key, value, in: tree)
        }
    }

    @Test func aDamagedBlockIsReportedAsDamage() throws {
        func loaded() throws -> Realm {
            let realm = try Realm(configuration: Realm.Configuration(inMemoryIdentifier: "postings-\(UUID())"))
            try realm.write {
                for id in 0..<300 { realm.create(FullTextDocument.self, value: ["id": id, "body": "common word"]) }
            }
            return realm
        }
        // Cut inside a key's difference: read outside a write (from the segment extracts).
        let reading = try loaded()
        try Self.damageBlock(of: "common", in: reading, with: [FullText.blockFormat, 0x80])
        _ = reading.objects(FullTextDocument.self).filter("body TEXT 'common'").count
        guard case .incompatibleFile(_, let reason)? = reading.damage else {
            Issue.record("no damage recorded: \(String(describing: reading.damage))")
            return
        }
        #expect(reason.contains("posting block"), "\(reason)")

        // An unknown format, met by a write that removes a posting from the block: the write rolls back whole.
        let writing = try loaded()
        try Self.damageBlock(of: "common", in: writing, with: [9, 1])
        let first = try #require(writing.object(ofType: FullTextDocument.self, forPrimaryKey: 0))
        #expect {
            try writing.write {
                writing.create(FullTextDocument.self, value: ["id": 1_000, "body": "common"])
                first.body = "word"
            }
        } throws: { error in
            guard case .incompatibleFile(_, let reason) = error as? Realm.Error else { return false }
            return reason.contains("posting block")
        }
        #expect(writing.object(ofType: FullTextDocument.self, forPrimaryKey: 1_000) == nil)
        #expect(first.body == "common word")
    }

    @Test func blocksRoundTripAndDamageIsCaught() throws {
        let keys: [Int64] = [3, 4, 200, 1 << 40, (1 << 40) + 1, Int64.max]
        let word = Array("word".utf8)[...]
        let value = FullText.encodeBlock(keys[...])
        var decoded: [Int64] = []
        try FullText.decodeBlock(key: FullText.blockKey(word, first: 3), value: value, into: &decoded)
        #expect(decoded == keys)
        // An entry of the older format is one posting.
        decoded = []
        try FullText.decodeBlock(key: FullText.blockKey(word, first: 9), value: [], into: &decoded)
        #expect(decoded == [9])
        // Unknown format, cut inside a difference, a zero difference, a difference longer than 64 bits.
        let tooLong = [FullText.blockFormat] + [UInt8](repeating: 0xFF, count: 10) + [1]
        for damaged: [UInt8] in [[2], [FullText.blockFormat, 0x81], [FullText.blockFormat, 0], tooLong] {
            #expect(throws: FullText.DamagedPostings.self) {
                var keys: [Int64] = []
                try FullText.decodeBlock(key: FullText.blockKey(word, first: 3), value: damaged, into: &keys)
            }
        }
    }
}

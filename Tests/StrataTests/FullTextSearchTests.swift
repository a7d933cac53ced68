import Foundation
import StrataTestSupport
import Testing

@testable import Strata

/// A document with a full-text index, for the search tests.
final class FullTextDocument: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted(indexed: .fullText) var body = ""
}

/// Full-text searches over random texts: outside a write transaction the exact words' postings come from cached
/// per-segment extracts and are intersected shortest first, inside one they are read from the index and merged;
/// both must give the answer Swift computes.
@Suite("Full-text search joins")
struct FullTextSearchTests {
    /// Words with very different frequencies (the first ones are in most texts, the last in a few).
    static let vocabulary = (0..<60).map { "w\($0)x" } + ["apple", "apricot", "banana", "band", "bandit"]

    @Test func joinsAgreeWithSwiftInsideAndOutsideWrites() throws {
        let realm = try Realm(configuration: Realm.Configuration(inMemoryIdentifier: "full-text-\(UUID())"))
        var generator = SeededGenerator(seed: 11)
        var texts: [Set<String>] = []
        try realm.write {
            for id in 0..<12_000 {
                var words: [String] = []
                for _ in 0..<(3 + Int(generator.next() % 8)) {
                    // Skewed: rank r chosen with probability about 1 / (r + 1).
                    let rank = Int(Double(Self.vocabulary.count) * pow(Double(generator.next() % 10_000) / 10_000, 3))
                    words.append(Self.vocabulary[min(rank, Self.vocabulary.count - 1)])
                }
                texts.append(Set(words))
                realm.create(FullTextDocument.self, value: ["id": id, "body": words.joined(separator: " ")])
            }
        }
        func holds(_ text: Set<String>, _ search: String) -> Bool {
            for raw in search.split(separator: " ") {
                var term = String(raw)
                let excluded = term.hasPrefix("-")
                if excluded { term.removeFirst() }
                let found: Bool
                if term.hasSuffix("*") {
                    let prefix = term.dropLast()
                    found = text.contains { $0.hasPrefix(prefix) }
                } else {
                    found = text.contains(term)
                }
                if found == excluded { return false }
            }
            return true
        }
        var searches = [
            "w0x w1x", "w0x w59x", "w59x w0x", "w3x w4x w5x", "w0x w1x w2x w3x", "w10x -w0x", "w0x -w1x -w2x",
            "ban* w0x", "w2x band", "apple apricot", "ap* -apple", "w0x w0x", "w57x w58x w59x", "nothing w0x",
            "bandit -w0x -ban*", "w1x",
        ]
        for _ in 0..<40 {
            let count = 1 + Int(generator.next() % 3)
            searches.append(
                (0..<count).map { _ in
                    let word = Self.vocabulary[Int(generator.next() % UInt64(Self.vocabulary.count))]
                    return generator.next() % 5 == 0 ? "-" + word : word
                }.joined(separator: " "))
        }
        func check(_ format: String) throws {
            for search in searches where search.split(separator: " ").contains(where: { !$0.hasPrefix("-") }) {
                let expected = texts.indices.filter { holds(texts[$0], search) }
                let joined = Array(realm.objects(FullTextDocument.self).filter("body TEXT $0", search).map(\.id))
                let same = joined == expected
                #expect(same, "\(format) '\(search)': \(joined.count) found, \(expected.count) expected")
                try realm.write {
                    let merged = Array(realm.objects(FullTextDocument.self).filter("body TEXT $0", search).map(\.id))
                    let agree = merged == expected
                    #expect(
                        agree, "\(format) '\(search)' in a write: \(merged.count) found, \(expected.count) expected")
                }
            }
        }
        try check("posting blocks")
        // In the format written before posting blocks (an entry per word and object) the index spans several
        // segments, so postings are gathered across segment boundaries.
        try realm.rewriteFullTextIndexInTheOldFormat()
        let binding = try realm.binding(for: FullTextDocument.self)
        let index = try #require(realm.treeView(binding.indexTrees[1]))
        var segments = 0
        try index.forEachSegment { _ in
            segments += 1
            return true
        }
        #expect(segments > 1)
        try check("one entry per posting")
    }
}

/// The sorted-array set operations index candidates and full-text postings go through, against Swift's `Set`.
@Suite("Sorted key sets")
struct SortedKeysTests {
    @Test func operationsAgreeWithSets() {
        var generator = SeededGenerator(seed: 29)
        func randomKeys(_ count: Int, below limit: UInt64) -> [Int64] {
            (0..<count).map { _ in Int64(generator.next() % limit) }
        }
        for round in 0..<200 {
            let limit = UInt64(1 + round * 7)
            let raw = [
                randomKeys(round % 13, below: limit), randomKeys(round * 3, below: limit), randomKeys(5, below: limit),
            ]
            let lists = raw.map(SortedKeys.normalized)
            for (list, source) in zip(lists, raw) { #expect(list == Set(source).sorted()) }
            let sets = raw.map(Set.init)
            #expect(SortedKeys.intersection(lists) == sets.dropFirst().reduce(sets[0]) { $0.intersection($1) }.sorted())
            #expect(SortedKeys.subtracting(lists[1], lists[0]) == sets[1].subtracting(sets[0]).sorted())
            #expect(SortedKeys.union(lists[0], lists[1]) == sets[0].union(sets[1]).sorted())
        }
        #expect(SortedKeys.intersection([]) == [])
    }
}

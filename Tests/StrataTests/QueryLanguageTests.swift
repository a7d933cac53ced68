import Foundation
import Testing

@testable import Strata

final class DogKennel: Object {
    @Persisted var name = ""
    @Persisted var dogs: List<Hound>
    @Persisted var favourite: Hound?
}

final class Hound: Object {
    @Persisted var name = ""
    @Persisted var age = 0
    @Persisted var mood: HoundMood = .calm
    @Persisted var extra: AnyRealmValue = .none
    @Persisted var scores: Map<String, Int>
    @Persisted(originProperty: "dogs") var kennels: LinkingObjects<DogKennel>
}

enum HoundMood: String, PersistableEnum {
    case calm, playful, grumpy
}

final class Review: Object {
    @Persisted(indexed: .fullText) var text = ""
    @Persisted var plain = ""
    @Persisted var stars = 0
}

@Suite("Query language: backlinks, SUBQUERY, @type, TEXT")
struct QueryLanguageTests {
    /// Three kennels over six dogs; dog i is `age` i, in kennels by a fixed pattern.
    private func kennels() throws -> Realm {
        let realm = try Realm(
            configuration: Realm.Configuration(
                inMemoryIdentifier: "language-\(UUID())", objectTypes: [DogKennel.self, Hound.self]))
        try realm.write {
            let dogs = (0..<6).map { index in
                realm.create(
                    Hound.self,
                    value: [
                        "name": ["Rex", "Rover", "Bella", "Max", "Ruby", "Zed"][index], "age": index,
                        "mood": [HoundMood.calm, .playful, .grumpy][index % 3],
                    ])
            }
            dogs[0].extra = .string("bone")
            dogs[1].extra = .int(3)
            dogs[2].extra = .double(2.5)
            dogs[3].extra = AnyRealmValue.fromArray([.int(1), .string("x")])
            dogs[4].extra = AnyRealmValue.fromDictionary(["k": .bool(true)])
            dogs[0].scores["speed"] = 7
            dogs[1].scores["speed"] = 3
            dogs[1].scores["nose"] = 9
            let a = realm.create(DogKennel.self, value: ["name": "A"])
            a.dogs.append(objectsIn: [dogs[0], dogs[1], dogs[2]])
            a.favourite = dogs[0]
            let b = realm.create(DogKennel.self, value: ["name": "B"])
            b.dogs.append(objectsIn: [dogs[2], dogs[3], dogs[4], dogs[4]])
            b.favourite = dogs[2]
            _ = realm.create(DogKennel.self, value: ["name": "C"])
        }
        return realm
    }

    private func names<T: Object>(_ results: Results<T>, _ key: KeyPath<T, String>) -> [String] {
        results.map { $0[keyPath: key] }.sorted()
    }

    @Test func linkingObjectsAndLinksInKeyPaths() throws {
        let realm = try kennels()
        let dogs = realm.objects(Hound.self)
        #expect(names(dogs.filter("kennels.@count == 0"), \.name) == ["Zed"])
        #expect(names(dogs.filter("kennels.@count > 1"), \.name) == ["Bella", "Ruby"])  // Ruby is listed twice
        #expect(names(dogs.filter("ANY kennels.name == 'B'"), \.name) == ["Bella", "Max", "Ruby"])
        #expect(names(dogs.filter("ALL kennels.name == 'A'"), \.name) == ["Rex", "Rover", "Zed"])
        #expect(names(dogs.filter("@links.DogKennel.dogs.@count == 1"), \.name) == ["Max", "Rex", "Rover"])
        #expect(names(dogs.filter("@links.DogKennel.favourite.name == 'B'"), \.name) == ["Bella"])
        // Every link: lists and the favourite link together.
        #expect(names(dogs.filter("@links.@count >= 3"), \.name) == ["Bella"])
        #expect(names(dogs.where { $0.kennels.count == 0 }, \.name) == ["Zed"])
        #expect(names(dogs.where { $0.kennels.name == "A" && $0.age > 0 }, \.name) == ["Bella", "Rover"])
        for (query, reason) in [
            ("@links.DogKennel.name == 'x'", "DogKennel.name is not a link to Hound"),
            ("@links.Nope.dogs.@count > 0", "there is no class Nope"),
            ("@links.DogKennel > 0", "@links is followed by"),
        ] {
            dogs.expectInvalidQuery(query, reason: reason)
        }
    }

    @Test func subqueriesCountMatchingElements() throws {
        let realm = try kennels()
        let kennels = realm.objects(DogKennel.self)
        #expect(names(kennels.filter("SUBQUERY(dogs, $d, $d.age >= 2).@count >= 2"), \.name) == ["B"])
        #expect(
            names(kennels.filter("SUBQUERY(dogs, $dog, $dog.name BEGINSWITH 'R' AND $dog.age < 4).@count == 2"), \.name)
                == ["A"])
        #expect(names(kennels.filter("SUBQUERY(dogs, $d, $d.age > 100).@count == 0"), \.name) == ["A", "B", "C"])
        // Mirrored, and over linking objects, nested.
        #expect(names(kennels.filter("1 < SUBQUERY(dogs, $d, $d.mood == 'grumpy').@count"), \.name) == [])
        let dogs = realm.objects(Hound.self)
        #expect(
            names(
                dogs.filter("SUBQUERY(kennels, $k, SUBQUERY($k.dogs, $o, $o.age == 0).@count > 0).@count > 0"), \.name)
                == ["Bella", "Rex", "Rover"])
        // Compared with a plain Swift count.
        for threshold in 0..<6 {
            let expected = kennels.filter { kennel in kennel.dogs.filter { $0.age >= threshold }.count >= 2 }
                .map(\.name).sorted()
            #expect(
                names(kennels.filter("SUBQUERY(dogs, $d, $d.age >= $0).@count >= 2", threshold), \.name) == expected)
        }
        for (query, reason) in [
            ("SUBQUERY(dogs, $d, age > 2).@count > 0", "key paths inside SUBQUERY start with $d"),
            ("SUBQUERY(name, $d, $d.age > 2).@count > 0", "SUBQUERY needs a collection of objects"),
            ("SUBQUERY(dogs, $d, $d.age > 2) > 0", "must be followed by .@count"),
            ("SUBQUERY(dogs, d, $d.age > 2).@count > 0", "expected a variable such as $x"),
        ] {
            kennels.expectInvalidQuery(query, reason: reason)
        }
    }

    @Test func typeOperatorNamesMixedValueTypes() throws {
        let realm = try kennels()
        let dogs = realm.objects(Hound.self)
        #expect(names(dogs.filter("extra.@type == 'string'"), \.name) == ["Rex"])
        #expect(names(dogs.filter("extra.@type == 'numeric'"), \.name) == ["Bella", "Rover"])
        #expect(names(dogs.filter("extra.@type IN {'int', 'list'}"), \.name) == ["Max", "Rover"])
        #expect(names(dogs.filter("extra.@type == 'dictionary'"), \.name) == ["Ruby"])
        #expect(names(dogs.filter("extra.@type == 'null'"), \.name) == ["Zed"])
        #expect(names(dogs.filter("extra.@type != 'numeric'"), \.name) == ["Max", "Rex", "Ruby", "Zed"])
        #expect(names(dogs.filter("extra.@type ==[c] 'STRING'"), \.name) == ["Rex"])
        dogs.expectInvalidQuery("extra.@type == 'colour'", reason: "is not a type name", position: 15)
    }

    @Test func enumsAndMapsInTypeSafeQueries() throws {
        let realm = try kennels()
        let dogs = realm.objects(Hound.self)
        #expect(names(dogs.where { $0.mood == .grumpy }, \.name) == ["Bella", "Zed"])
        #expect(names(dogs.where { $0.mood.rawValue == "playful" }, \.name) == ["Rover", "Ruby"])
        #expect(names(dogs.where { $0.mood.rawValue.starts(with: "gr") }, \.name) == ["Bella", "Zed"])
        #expect(names(dogs.where { $0.scores.keys == "nose" }, \.name) == ["Rover"])
        #expect(names(dogs.where { $0.scores.values > 5 }, \.name) == ["Rex", "Rover"])
        #expect(names(dogs.where { $0.scores.count == 0 }, \.name) == ["Bella", "Max", "Ruby", "Zed"])
        #expect(names(dogs.where { $0.scores.contains(3) }, \.name) == ["Rover"])
        #expect(names(dogs.filter("scores.@values > 5"), \.name) == ["Rex", "Rover"])
    }

    private func reviews(indexed: Bool) throws -> (Realm, Results<Review>, [String]) {
        let realm = try Realm(
            configuration: Realm.Configuration(inMemoryIdentifier: "fts-\(UUID())", objectTypes: [Review.self]))
        let texts = [
            "Great cheese, creamy and rich", "The blue cheese was too strong", "Crème brûlée: CREAMY!",
            "cheesecake with blueberries", "Nothing to say", "e-mail me about the cheese-board", "",
            "Cheeses of France and Switzerland",
        ]
        try realm.write {
            for (index, text) in texts.enumerated() {
                realm.create(Review.self, value: ["text": text, "plain": text, "stars": index])
            }
        }
        return (realm, realm.objects(Review.self), texts)
    }

    @Test func fullTextSearchWithAndWithoutTheIndex() throws {
        let (realm, reviews, texts) = try self.reviews(indexed: true)
        let cases: [(String, [Int])] = [
            ("cheese", [0, 1, 5]),
            ("CHEESE creamy", [0]),
            ("creme", [2]),
            ("crème BRULEE", [2]),
            ("chees*", [0, 1, 3, 5, 7]),
            ("chees* -blue", [0, 3, 5, 7]),
            ("chees* -blue*", [0, 5, 7]),
            ("-cheese", [2, 3, 4, 6, 7]),
            ("e-mail", [5]),
            ("board cheese", [5]),
            ("cheese nothing", []),
            ("zzz*", []),
        ]
        for (search, expected) in cases {
            for property in ["text", "plain"] {
                let found = reviews.filter("\(property) TEXT $0", search).map(\.stars).sorted()
                #expect(found == expected, "\(property) TEXT '\(search)'")
            }
            #expect(reviews.where { $0.text.matches(search) }.map(\.stars).sorted() == expected, "\(search)")
            #expect(reviews.where { $0.plain.matches(search) }.map(\.stars).sorted() == expected, "\(search)")
        }
        // Combined with other conditions (the index narrows, the rest is checked on each candidate).
        #expect(reviews.filter("text TEXT 'cheese' AND stars > 0").map(\.stars).sorted() == [1, 5])
        #expect(reviews.filter("text TEXT 'cheese' OR stars == 4").map(\.stars).sorted() == [0, 1, 4, 5])
        #expect(reviews.filter("NOT text TEXT 'cheese'").count == texts.count - 3)

        // The index follows edits, deletions and transactions that roll back.
        try realm.write {
            reviews.filter("stars == 4").first!.text = "now about cheese"
            realm.delete(reviews.filter("stars == 0").first!)
            #expect(reviews.filter("text TEXT 'cheese'").map(\.stars).sorted() == [1, 4, 5])
        }
        #expect(reviews.filter("text TEXT 'cheese'").map(\.stars).sorted() == [1, 4, 5])
        #expect(reviews.filter("text TEXT 'nothing'").count == 0)
        realm.beginWrite()
        reviews.filter("stars == 1").first!.text = "gone"
        realm.cancelWrite()
        #expect(reviews.filter("text TEXT 'cheese'").map(\.stars).sorted() == [1, 4, 5])

        for (query, reason) in [
            ("stars TEXT 'x'", "TEXT needs a string property"),
            ("text TEXT ' -- '", "TEXT needs at least one word"),
            ("text TEXT 3", "TEXT needs a string of words"),
        ] {
            reviews.expectInvalidQuery(query, reason: reason)
        }
        #expect(realm.schema[className: "Review"]?.properties.first { $0.name == "text" }?.isFullTextIndexed == true)
    }

    @Test func fullTextWordsAreFoldedAndCut() {
        #expect(FullText.words("Hello, WORLD! 42x") == [Array("hello".utf8), Array("world".utf8), Array("42x".utf8)])
        #expect(FullText.words("Ærøskøbing Crème") == [Array("ærøskøbing".utf8), Array("creme".utf8)])
        #expect(FullText.words(String(repeating: "é", count: 80)).first?.count == 64)
        #expect(FullText.Search("  ") == nil)
        #expect(FullText.Search("-a b*")?.required.map(\.isPrefix) == [true])
    }

    @Test func fullTextEntriesAreDistinctSortedAndDiffed() throws {
        let key = KeyEncoding.objectKey(7)
        func entry(_ word: String) -> [UInt8] { Array(word.utf8) + [0] + key }
        // Repeats are kept once, in the tree's byte order; an ASCII word past 64 bytes is cut like any other.
        let long = String(repeating: "Ab", count: 40)
        #expect(
            FullText.entries(.string("pie Red apple red PIE \(long)"), key: 7)
                == [entry(String(repeating: "ab", count: 32)), entry("apple"), entry("pie"), entry("red")])
        #expect(FullText.entries(.string(" ,; "), key: 7).isEmpty)
        #expect(FullText.entries(.int(3), key: 7).isEmpty)

        var removed: [[UInt8]] = []
        var added: [[UInt8]] = []
        FullText.forEachChange(
            from: ["a", "c", "d"].map(entry), to: ["b", "c", "e", "f"].map(entry), removed: { removed.append($0) },
            added: { added.append($0) })
        #expect(removed == ["a", "d"].map(entry))
        #expect(added == ["b", "e", "f"].map(entry))

        // An edit that keeps some words: the index drops only the words gone and finds the kept and new ones.
        let (realm, reviews, _) = try self.reviews(indexed: true)
        let review = reviews.filter("stars == 6").first!
        try realm.write { review.text = "red apple red pie" }
        try realm.write { review.text = "green apple pie pie" }
        for (search, found) in [("red", false), ("green", true), ("apple", true), ("pie", true), ("apple -red", true)] {
            #expect(reviews.filter("text TEXT $0 AND stars == 6", search).count == (found ? 1 : 0), "\(search)")
        }
    }

    @Test func errorPositionsCountCharacters() throws {
        let realm = try kennels()
        realm.objects(Hound.self).expectInvalidQuery(
            "name == 'Bjørk' AND ågé > 3", reason: "Hound has no property ågé", position: 20)
    }
}

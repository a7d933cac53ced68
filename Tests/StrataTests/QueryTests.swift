import Foundation
import StrataStorage
import StrataTestSupport
import Testing

@testable import Strata

final class QueryItem: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted(indexed: true) var count = 0
    @Persisted var score: Double = 0
    @Persisted var rating: Int?
    @Persisted(indexed: true) var name = ""
    @Persisted var nickname: String?
    @Persisted var active = false
    @Persisted var created = Date(timeIntervalSince1970: 0)
    @Persisted var tags: List<String>
    @Persisted var numbers: List<Int>
    @Persisted var owner: QueryOwner?
    @Persisted var friends: List<QueryOwner>
    @Persisted var circle: MutableSet<QueryOwner>
}

final class QueryOwner: Object {
    @Persisted var name = ""
    @Persisted var age = 0
    @Persisted(originProperty: "owner") var items: LinkingObjects<QueryItem>
}

/// The same data as plain Swift values: the reference the engine's answers are checked against.
private struct Mirror {
    var id: Int
    var count: Int
    var score: Double
    var rating: Int?
    var name: String
    var nickname: String?
    var active: Bool
    var created: Date
    var tags: [String]
    var numbers: [Int]
    var owner: (name: String, age: Int)?
    var friends: [(name: String, age: Int)]
}

@Suite("Queries")
struct QueryTests {
    static let names = [
        "alpha", "Beta", "gamma", "Ärger", "delta", "Éclair", "éclair", "zeta", "", "a🙂a", "alpha\u{0}x",
    ]
    static let epoch = Date(timeIntervalSince1970: 1_700_000_000)

    private func populate(_ realm: Realm, count: Int, seed: UInt64) throws -> [Mirror] {
        var random = SeededGenerator(seed: seed)
        var owners: [QueryOwner] = []
        var ownerValues: [(name: String, age: Int)] = []
        try realm.write {
            for index in 0..<6 {
                let owner = realm.create(QueryOwner.self, value: ["name": "o\(index)", "age": 20 + index * 7])
                owners.append(owner)
                ownerValues.append(("o\(index)", 20 + index * 7))
            }
        }
        var mirrors: [Mirror] = []
        try realm.write {
            for id in 0..<count {
                let ownerIndex = Int.random(in: -1..<owners.count, using: &random)
                let friendIndexes = (0..<Int.random(in: 0...3, using: &random)).map { _ in
                    Int.random(in: 0..<owners.count, using: &random)
                }
                let mirror = Mirror(
                    id: id, count: Int.random(in: 0...9, using: &random),
                    score: Double(Int.random(in: 0...100, using: &random)) / 100,
                    rating: Bool.random(using: &random) ? nil : Int.random(in: 0...5, using: &random),
                    name: Self.names.randomElement(using: &random)!,
                    nickname: Bool.random(using: &random) ? nil : Self.names.randomElement(using: &random)!,
                    active: Bool.random(using: &random),
                    created: Self.epoch.addingTimeInterval(Double(Int.random(in: -5...5, using: &random)) * 86_400),
                    tags: (0..<Int.random(in: 0...3, using: &random)).map { _ in
                        ["x", "y", "z"].randomElement(using: &random)!
                    },
                    numbers: (0..<Int.random(in: 0...4, using: &random)).map { _ in
                        Int.random(in: 0...9, using: &random)
                    },
                    owner: ownerIndex < 0 ? nil : ownerValues[ownerIndex],
                    friends: friendIndexes.map { ownerValues[$0] })
                mirrors.append(mirror)
                let item = realm.create(
                    QueryItem.self,
                    value: [
                        "id": id, "count": mirror.count, "score": mirror.score, "rating": mirror.rating as Any,
                        "name": mirror.name, "nickname": mirror.nickname as Any, "active": mirror.active,
                        "created": mirror.created, "tags": mirror.tags, "numbers": mirror.numbers,
                    ])
                item.owner = ownerIndex < 0 ? nil : owners[ownerIndex]
                item.friends.append(objectsIn: friendIndexes.map { owners[$0] })
            }
        }
        return mirrors
    }

    private static func fold(_ text: String, _ options: String.CompareOptions) -> String {
        text.folding(options: options, locale: nil)
    }

    /// (query, arguments, the same condition in Swift)
    private static var cases: [(String, [Any], (Mirror) -> Bool)] {
        [
            ("count > 5", [], { $0.count > 5 }),
            ("count >= $0", [5], { $0.count >= 5 }),
            ("5 < count", [], { $0.count > 5 }),
            ("count == 3 OR count == 7", [], { $0.count == 3 || $0.count == 7 }),
            ("count = 3 || count == 7 && active == true", [], { $0.count == 3 || ($0.count == 7 && $0.active) }),
            ("NOT (count < 5)", [], { !($0.count < 5) }),
            ("!(count < 5) AND score < 0.5", [], { $0.count >= 5 && $0.score < 0.5 }),
            ("score BETWEEN {0.25, 0.75}", [], { $0.score >= 0.25 && $0.score <= 0.75 }),
            ("score > count", [], { $0.score > Double($0.count) }),
            ("rating == nil", [], { $0.rating == nil }),
            ("rating != NULL AND rating > 2", [], { ($0.rating ?? -1) > 2 }),
            ("rating <= 2", [], { $0.rating.map { $0 <= 2 } ?? false }),
            ("name BEGINSWITH 'a'", [], { $0.name.hasPrefix("a") }),
            ("name ENDSWITH[c] 'A'", [], { fold($0.name, .caseInsensitive).hasSuffix("a") }),
            ("name CONTAINS[cd] 'e'", [], { fold($0.name, [.caseInsensitive, .diacriticInsensitive]).contains("e") }),
            ("name ==[c] 'éclair'", [], { fold($0.name, .caseInsensitive) == "éclair" }),
            ("name ==[cd] 'eclair'", [], { fold($0.name, [.caseInsensitive, .diacriticInsensitive]) == "eclair" }),
            ("name LIKE '*a?a'", [], { QueryValues.like(Array($0.name.unicodeScalars), Array("*a?a".unicodeScalars)) }),
            ("name LIKE[c] 'A*'", [], { fold($0.name, .caseInsensitive).hasPrefix("a") }),
            ("name == ''", [], { $0.name.isEmpty }),
            ("name > 'c'", [], { $0.name > "c" }),
            ("name IN {'alpha', 'zeta'}", [], { ["alpha", "zeta"].contains($0.name) }),
            ("name IN $0", [["Beta", "delta"]], { ["Beta", "delta"].contains($0.name) }),
            ("id IN $0", [[1, 5, 9, 500]], { [1, 5, 9, 500].contains($0.id) }),
            ("nickname == nil", [], { $0.nickname == nil }),
            ("nickname BEGINSWITH 'a'", [], { $0.nickname?.hasPrefix("a") ?? false }),
            ("active == true", [], { $0.active }),
            ("active != $0", [true], { !$0.active }),
            ("created > $0", [epoch], { $0.created > epoch }),
            (
                "created BETWEEN {$0, $1}", [epoch, epoch.addingTimeInterval(86_400 * 2)],
                {
                    $0.created >= epoch && $0.created <= epoch.addingTimeInterval(86_400 * 2)
                }
            ),
            ("tags.@count == 0", [], { $0.tags.isEmpty }),
            ("tags.@size >= 2", [], { $0.tags.count >= 2 }),
            ("ANY tags == 'x'", [], { $0.tags.contains("x") }),
            ("tags == 'x'", [], { $0.tags.contains("x") }),
            ("ALL tags == 'y'", [], { $0.tags.allSatisfy { $0 == "y" } }),
            ("NONE tags == 'z'", [], { !$0.tags.contains("z") }),
            ("ALL numbers > 3", [], { $0.numbers.allSatisfy { $0 > 3 } }),
            ("numbers.@sum > 10", [], { $0.numbers.reduce(0, +) > 10 }),
            (
                "numbers.@avg < 4", [],
                { !$0.numbers.isEmpty && Double($0.numbers.reduce(0, +)) / Double($0.numbers.count) < 4 }
            ),
            ("numbers.@max == 9", [], { $0.numbers.max() == 9 }),
            ("numbers.@min <= 1", [], { ($0.numbers.min() ?? 99) <= 1 }),
            ("ANY numbers IN {1, 2}", [], { $0.numbers.contains { [1, 2].contains($0) } }),
            ("rating IN {nil, 2, 3.0, 4.5}", [], { $0.rating == nil || [2, 3].contains($0.rating!) }),
            ("name IN {'alpha', nil, 'Beta'}", [], { ["alpha", "Beta"].contains($0.name) }),
            ("nickname IN {nil, 'zeta'}", [], { $0.nickname == nil || $0.nickname == "zeta" }),
            ("owner.name == 'o1'", [], { $0.owner?.name == "o1" }),
            ("owner == nil", [], { $0.owner == nil }),
            ("owner.age > 30", [], { ($0.owner?.age ?? 0) > 30 }),
            ("ANY friends.age > 40", [], { $0.friends.contains { $0.age > 40 } }),
            ("friends.@count > 1 AND owner != nil", [], { $0.friends.count > 1 && $0.owner != nil }),
            ("friends.@sum.age > 60", [], { $0.friends.map(\.age).reduce(0, +) > 60 }),
            ("TRUEPREDICATE", [], { _ in true }),
            ("FALSEPREDICATE OR count == 1", [], { $0.count == 1 }),
        ]
    }

    @Test func queriesAgreeWithSwiftFilters() throws {
        let realm = try Realm(
            configuration: Realm.Configuration(inMemoryIdentifier: "queries-\(UUID())", objectTypes: [QueryItem.self]))
        let mirrors = try populate(realm, count: 400, seed: 7)
        let all = realm.objects(QueryItem.self)
        for (query, arguments, reference) in Self.cases {
            let expected = mirrors.filter(reference).map(\.id)
            let results = try all.checkedFilterArguments(query, arguments)
            #expect(results.map(\.id) == expected, "\(query)")
            #expect(results.count == expected.count, "\(query)")
            // Inside a write transaction the same query reads the uncommitted state.
            try realm.write {
                let inWrite = try all.checkedFilterArguments(query, arguments).map(\.id)
                #expect(inWrite == expected, "\(query) in a write")
            }
        }
    }

    @Test func sortDistinctLimitAndAggregates() throws {
        let realm = try Realm(
            configuration: Realm.Configuration(inMemoryIdentifier: "queries-\(UUID())", objectTypes: [QueryItem.self]))
        let mirrors = try populate(realm, count: 300, seed: 11)
        let all = realm.objects(QueryItem.self)
        // Stable multi-key sort, nil first ascending.
        let sorted = all.sorted(by: [
            SortDescriptor(keyPath: "rating"), SortDescriptor(keyPath: "score", ascending: false),
        ])
        let expected = mirrors.enumerated().sorted { a, b in
            let x = a.element
            let y = b.element
            if x.rating != y.rating { return (x.rating ?? Int.min) < (y.rating ?? Int.min) }
            if x.score != y.score { return x.score > y.score }
            return a.offset < b.offset
        }.map(\.element.id)
        #expect(sorted.map(\.id) == expected)
        #expect(all.sorted(byKeyPath: "owner.age", ascending: false).map(\.id).count == mirrors.count)
        let byOwner = all.sorted(byKeyPath: "owner.age", ascending: false).map { $0.owner?.age ?? -1 }
        #expect(byOwner == byOwner.sorted(by: >))
        // RQL SORT / DISTINCT / LIMIT, applied after the filter.
        let top = all.filter("count > 2 SORT(score DESC, id ASC) LIMIT(5)")
        let topExpected = mirrors.filter { $0.count > 2 }.sorted { ($0.score, -$0.id) > ($1.score, -$1.id) }.prefix(5)
        #expect(top.map(\.id) == topExpected.map(\.id))
        let distinct = all.filter("TRUEPREDICATE DISTINCT(count)")
        var seen = Set<Int>()
        #expect(distinct.map(\.id) == mirrors.filter { seen.insert($0.count).inserted }.map(\.id))
        #expect(all.distinct(by: ["active"]).count == Set(mirrors.map(\.active)).count)
        // Chained filters.
        #expect(
            all.filter("count > 2").filter("active == true").map(\.id)
                == mirrors.filter { $0.count > 2 && $0.active }.map(\.id))
        // Aggregates.
        #expect(all.sum(ofProperty: "count") == mirrors.map(\.count).reduce(0, +))
        #expect(all.max(ofProperty: "score") == mirrors.map(\.score).max())
        #expect(all.min(ofProperty: "rating") == mirrors.compactMap(\.rating).min())
        let average: Double? = all.average(ofProperty: "count")
        #expect(
            average.map { abs($0 - Double(mirrors.map(\.count).reduce(0, +)) / Double(mirrors.count)) < 1e-9 } == true)
        #expect(all.filter("id < 0").sum(ofProperty: "count") == 0)
        #expect((all.filter("id < 0").average(ofProperty: "count") as Double?) == nil)
        #expect(all.index(matching: "count == $0", 9) == mirrors.firstIndex { $0.count == 9 })
        // Key-path forms.
        #expect(
            all.sorted(by: \.score, ascending: false).map(\.id)
                == all.sorted(byKeyPath: "score", ascending: false).map(\.id))
        #expect(all.sum(of: \.count) == mirrors.map(\.count).reduce(0, +))
        #expect(all.max(of: \.score) == mirrors.map(\.score).max())
        #expect(all.min(of: \.name) == mirrors.map(\.name).min { $0.utf8.lexicographicallyPrecedes($1.utf8) })
        #expect(all.average(of: \.count) == average)
        #expect(
            all.filter("count > 4").objects(at: [0, 2]).map(\.id)
                == mirrors.filter { $0.count > 4 }.map(\.id).enumerated().filter { [0, 2].contains($0.offset) }.map(
                    \.element))
        let third = all.filter("count > 4")[2]
        #expect(all.filter("count > 4").index(of: third) == 2)
    }

    @Test func equalityOnKeysAndIndexesUsesTheIndex() throws {
        let realm = try Realm(
            configuration: Realm.Configuration(inMemoryIdentifier: "queries-\(UUID())", objectTypes: [QueryItem.self]))
        let mirrors = try populate(realm, count: 300, seed: 3)
        let all = realm.objects(QueryItem.self)
        let plans: [(String, [Any], Bool, (Mirror) -> Bool)] = [
            ("id == 5", [], true, { $0.id == 5 }),
            ("id IN {1, 2, 999}", [], true, { [1, 2].contains($0.id) }),
            ("count == 3 AND score > 0.5", [], true, { $0.count == 3 && $0.score > 0.5 }),
            ("count == 3 OR name == 'alpha'", [], true, { $0.count == 3 || $0.name == "alpha" }),
            ("name IN $0", [["alpha", "zeta"]], true, { ["alpha", "zeta"].contains($0.name) }),
            ("count == 3 OR score > 0.5", [], false, { $0.count == 3 || $0.score > 0.5 }),
            ("name ==[c] 'ALPHA'", [], false, { $0.name.lowercased() == "alpha" }),
            ("count == 3.0", [], false, { $0.count == 3 }),
        ]
        for (query, arguments, indexed, reference) in plans {
            let results = try all.checkedFilterArguments(query, arguments)
            #expect(results.map(\.id) == mirrors.filter(reference).map(\.id), "\(query)")
            #expect((results.query?.indexCandidateCount != nil) == indexed, "\(query)")
            // And inside a write, after changes the index must reflect.
            try realm.write {
                realm.create(QueryItem.self, value: ["id": 10_000, "count": 3, "name": "alpha", "score": 0.9])
                #expect(
                    results.map(\.id).contains(10_000)
                        == reference(
                            Mirror(
                                id: 10_000, count: 3, score: 0.9, rating: nil, name: "alpha", nickname: nil,
                                active: false,
                                created: Date(timeIntervalSince1970: 0), tags: [], numbers: [], owner: nil, friends: [])
                        ), "\(query)")
                realm.cancelWrite()
            }
        }
    }

    @Test func longIndexedStringsAreCheckedBeyondWhatTheIndexKeeps() throws {
        let realm = try Realm(
            configuration: Realm.Configuration(inMemoryIdentifier: "queries-\(UUID())", objectTypes: [QueryItem.self]))
        let long = String(repeating: "x", count: 300)
        try realm.write {
            for (id, name) in [(1, long + "a"), (2, long + "b"), (3, "short")] {
                realm.create(QueryItem.self, value: ["id": id, "name": name])
            }
        }
        let all = realm.objects(QueryItem.self)
        // Both long names share their indexed prefix: the index offers both, the rows decide.
        let one = all.filter("name == $0", long + "a")
        #expect(one.map(\.id) == [1])
        #expect(one.query?.indexCandidateCount == 2)
        #expect(all.filter("name IN $0", [long + "b", "short"]).map(\.id) == [2, 3])
        let short = all.filter("name == 'short'")
        #expect(short.count == 1)
        #expect(short.query?.indexCandidateCount == 1)
    }

    @Test func notANumberIsUnorderedInBothEvaluators() throws {
        let realm = try Realm(
            configuration: Realm.Configuration(inMemoryIdentifier: "queries-\(UUID())", objectTypes: [QueryItem.self]))
        try realm.write {
            realm.create(QueryItem.self, value: ["id": 1, "score": Double.nan] as [String: Any])
            realm.create(QueryItem.self, value: ["id": 2, "score": 1.0] as [String: Any])
        }
        let all = realm.objects(QueryItem.self)
        let cases: [(String, [Int])] = [
            ("score > 0", [2]), ("score <= 1", [2]), ("score == 1", [2]), ("score != 1", [1]),
            ("score BETWEEN {0, 2}", [2]), ("score == $0", []),
        ]
        for (query, expected) in cases {
            // Outside a write the compiled conditions run; inside one, the general evaluator.
            #expect(all.filter(query, Double.nan).map(\.id) == expected, "\(query)")
            try realm.write { #expect(all.filter(query, Double.nan).map(\.id) == expected, "\(query) in a write") }
        }
    }

    @Test func resultsAreLiveAndDeletingFilteredResultsDeletesOnlyThem() throws {
        let realm = try Realm(
            configuration: Realm.Configuration(inMemoryIdentifier: "queries-\(UUID())", objectTypes: [QueryItem.self]))
        let big = realm.objects(QueryItem.self).filter("count >= 5")
        #expect(big.isEmpty)
        try realm.write {
            for id in 0..<10 { realm.create(QueryItem.self, value: ["id": id, "count": id]) }
            #expect(big.count == 5)
        }
        #expect(big.map(\.id) == [5, 6, 7, 8, 9])
        try realm.write { realm.delete(big) }
        #expect(realm.objects(QueryItem.self).map(\.id) == [0, 1, 2, 3, 4])
        #expect(big.isEmpty)
    }

    @Test func malformedQueriesPointAtTheOffendingToken() {
        let realm = try! Realm(
            configuration: Realm.Configuration(inMemoryIdentifier: "queries-\(UUID())", objectTypes: [QueryItem.self]))
        let all = realm.objects(QueryItem.self)
        let owner = try! realm.write { realm.create(QueryOwner.self, value: ["name": "o"]) }
        let cases: [(String, Int, String)] = [
            ("count >", 7, "expected a property, a value or an argument"),
            ("count >> 3", 7, "expected a property, a value or an argument"),
            ("count 3", 6, "expected a comparison operator"),
            ("(count > 3", 10, ") to close ("),
            ("name == 'open", 8, "the string is not closed"),
            ("name ==[x] 'a'", 7, "unknown option [x]"),
            ("count > 3 LIMIT(-1)", 16, "LIMIT takes a non-negative integer"),
            ("count > 3 extra", 10, "unexpected 'extra'"),
            ("count > $2", 8, "$2 has no argument"),
            ("colour == 'red'", 0, "QueryItem has no property colour"),
            ("owner.colour == 'red'", 0, "QueryOwner has no property colour"),
            ("count == 'x'", 9, "QueryItem.count is int and cannot be compared with the string 'x'"),
            ("count BEGINSWITH 'x'", 17, "BEGINSWITH needs a string or data property; QueryItem.count is int"),
            ("count IN 3", 9, "IN needs a list"),
            ("ALL count > 3", 0, "ALL needs a key path through a collection"),
            ("count.@count > 3", 0, "@count needs a collection, string or data"),
            ("owner > $0", 8, "links can only be compared with == and !="),
            ("", 0, "expected a condition"),
            ("count > 3 #", 10, "unexpected character '#'"),
        ]
        for (query, position, reason) in cases {
            all.expectInvalidQuery(query, query.contains("$0") ? [owner] : [], reason: reason, position: position)
        }
    }
}

extension Results {
    /// Expects `checkedFilter(query, arguments…)` to throw `invalidQuery` for exactly `query`, with a reason that
    /// contains `reason` (at `position`, when given).
    func expectInvalidQuery(
        _ query: String, _ arguments: [Any] = [], reason: String, position: Int? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        do {
            _ = try checkedFilterArguments(query, arguments)
            Issue.record("\(query) was accepted", sourceLocation: sourceLocation)
        } catch let Realm.Error.invalidQuery(text, at, message) {
            #expect(text == query, sourceLocation: sourceLocation)
            if let position { #expect(at == position, "\(query): \(message)", sourceLocation: sourceLocation) }
            #expect(message.contains(reason), "\(query): \(message)", sourceLocation: sourceLocation)
        } catch {
            Issue.record("\(query): \(error)", sourceLocation: sourceLocation)
        }
    }

    /// `checkedFilter` with an array of arguments (tests build them at run time).
    func checkedFilterArguments(_ query: String, _ arguments: [Any]) throws -> Results<Element> {
        switch arguments.count {
        case 0: try checkedFilter(query)
        case 1: try checkedFilter(query, arguments[0])
        default: try checkedFilter(query, arguments[0], arguments[1])
        }
    }
}

@Suite("Type-safe queries")
struct WhereQueryTests {
    @Test func typeSafeQueriesMatchTheirRQLEquivalents() throws {
        let realm = try Realm(
            configuration: Realm.Configuration(inMemoryIdentifier: "where-\(UUID())", objectTypes: [QueryItem.self]))
        try realm.write {
            let owners = (0..<4).map { realm.create(QueryOwner.self, value: ["name": "o\($0)", "age": 20 + $0 * 10]) }
            for id in 0..<200 {
                let item = realm.create(
                    QueryItem.self,
                    value: [
                        "id": id, "count": id % 10, "score": Double(id % 7) / 7, "rating": id % 3 == 0 ? nil : id % 5,
                        "name": QueryTests.names[id % QueryTests.names.count],
                        "nickname": id % 4 == 0 ? nil : QueryTests.names[(id / 3) % QueryTests.names.count],
                        "active": id % 2 == 0,
                        "created": QueryTests.epoch.addingTimeInterval(Double(id % 9 - 4) * 86_400),
                        "tags": Array(["x", "y", "z"].prefix(id % 4)), "numbers": (0..<(id % 5)).map { ($0 * id) % 10 },
                    ])
                item.owner = id % 5 == 4 ? nil : owners[id % 4]
                item.friends.append(objectsIn: owners.prefix(id % 3))
            }
        }
        let all = realm.objects(QueryItem.self)
        let epoch = QueryTests.epoch
        let pairs: [(Results<QueryItem>, String)] = [
            (all.where { $0.count > 5 }, "count > 5"),
            (
                all.where { $0.count == 3 || ($0.count == 7 && $0.active) },
                "count == 3 OR (count == 7 AND active == true)"
            ),
            (all.where { !($0.count < 5) }, "NOT count < 5"),
            (all.where { $0.active }, "active == true"),
            (all.where { $0.score.contains(0.25...0.75) }, "score BETWEEN {0.25, 0.75}"),
            (all.where { $0.count.contains(2..<5) }, "count >= 2 AND count < 5"),
            (all.where { $0.rating == nil }, "rating == nil"),
            (all.where { $0.rating > 2 }, "rating > 2"),
            (all.where { $0.name.starts(with: "a") }, "name BEGINSWITH 'a'"),
            (
                all.where { $0.name.contains("E", options: [.caseInsensitive, .diacriticInsensitive]) },
                "name CONTAINS[cd] 'E'"
            ),
            (all.where { $0.name.like("*a?a") }, "name LIKE '*a?a'"),
            (all.where { $0.name.in(["alpha", "zeta"]) }, "name IN {'alpha', 'zeta'}"),
            (all.where { $0.nickname.ends(with: "a") }, "nickname ENDSWITH 'a'"),
            (all.where { $0.nickname == nil }, "nickname == nil"),
            (all.where { $0.created > epoch }, "created > $0"),
            (all.where { $0.tags.count == 0 }, "tags.@count == 0"),
            (all.where { $0.tags.contains("y") }, "ANY tags == 'y'"),
            (all.where { $0.numbers.containsAny(in: [1, 2]) }, "ANY numbers IN {1, 2}"),
            (all.where { $0.numbers.sum > 10 }, "numbers.@sum > 10"),
            (all.where { $0.numbers.max == 9 }, "numbers.@max == 9"),
            (all.where { $0.owner.name == "o1" }, "owner.name == 'o1'"),
            (all.where { $0.owner == nil }, "owner == nil"),
            (all.where { $0.owner.age >= 40 }, "owner.age >= 40"),
            (all.where { $0.friends.age > 20 }, "ANY friends.age > 20"),
            (all.where { $0.friends.count > 1 && $0.owner != nil }, "friends.@count > 1 AND owner != nil"),
        ]
        for (typed, text) in pairs {
            let expected = try all.checkedFilter(text, epoch).map(\.id)
            #expect(typed.map(\.id) == expected, "\(text)")
            #expect(!expected.isEmpty || text.contains("@max") || text.contains("nil"), "\(text) matches nothing")
        }
        // Type-safe and string filters chain.
        #expect(
            all.where { $0.count > 2 }.filter("active == true").map(\.id)
                == all.filter("count > 2 AND active == true").map(\.id))
        let owner = realm.objects(QueryOwner.self).first!
        #expect(all.where { $0.owner == owner }.map(\.id) == all.filter("owner == $0", owner).map(\.id))
    }

    @Test func listsSetsAndLinkingObjectsAreQueryable() throws {
        let realm = try Realm(
            configuration: Realm.Configuration(inMemoryIdentifier: "where-\(UUID())", objectTypes: [QueryItem.self]))
        let item = try realm.write { () -> QueryItem in
            let owners = (0..<8).map {
                realm.create(QueryOwner.self, value: ["name": "o\($0)", "age": 20 + ($0 * 7) % 30])
            }
            let item = realm.create(QueryItem.self, value: ["id": 1])
            // List order differs from key order, with a repeat.
            item.friends.append(objectsIn: [owners[5], owners[1], owners[6], owners[1], owners[3]])
            item.circle.insert(objectsIn: [owners[0], owners[2], owners[4], owners[7]])
            for (index, owner) in owners.enumerated() {
                realm.create(QueryItem.self, value: ["id": 100 + index, "count": index]).owner = owner
                if index % 2 == 0 {
                    realm.create(QueryItem.self, value: ["id": 200 + index, "count": 9]).owner = owner
                }
            }
            return item
        }
        let friends = Array(item.friends)
        #expect(item.friends.filter("age > 25").map(\.name) == friends.filter { $0.age > 25 }.map(\.name))
        #expect(item.friends.where { $0.age > 25 }.map(\.name) == friends.filter { $0.age > 25 }.map(\.name))
        #expect(
            item.friends.sorted(byKeyPath: "age", ascending: false).map(\.age)
                == friends.map(\.age).sorted(by: >))
        #expect(item.friends.distinct(by: ["name"]).count == Set(friends.map(\.name)).count)
        let circle = Array(item.circle)
        #expect(Set(item.circle.filter("age > 25").map(\.name)) == Set(circle.filter { $0.age > 25 }.map(\.name)))
        #expect(item.circle.where { $0.age <= 25 }.count == circle.filter { $0.age <= 25 }.count)
        #expect(item.circle.sorted(by: \.age).map(\.age) == circle.map(\.age).sorted())
        let owner = realm.objects(QueryOwner.self).filter("name == 'o2'").first!
        #expect(owner.items.filter("count > 5").map(\.id) == [202])
        #expect(owner.items.where { $0.count < 5 }.map(\.id) == [102])
        #expect(owner.items.sorted(byKeyPath: "count", ascending: false).map(\.id) == [202, 102])
        // Live: the filtered list follows edits of the list.
        let older = item.friends.filter("age > 25")
        let before = older.count
        try realm.write { item.friends.removeAll() }
        #expect(older.isEmpty && before > 0)
    }
}

@Suite("Queries through nil links")
struct NilLinkQueryTests {
    /// People with and without addresses (and cities), and chains of best friends ending in nil.
    private func people() throws -> Realm {
        let realm = try Realm(
            configuration: Realm.Configuration(
                inMemoryIdentifier: "nil-links-\(UUID())", objectTypes: [Person.self, Address.self]))
        try realm.write {
            var previous: Person?
            for id in 0..<12 {
                let person = realm.create(
                    Person.self, value: ["id": id, "name": "p\(id)", "age": (id % 4 == 0 ? nil : id) as Any])
                if id % 3 != 0 {
                    person.address = Address(value: ["street": "s\(id)", "city": id % 3 == 1 ? "Lisbon" : nil])
                }
                if id % 2 == 0 { person.bestFriend = previous }
                previous = person
            }
        }
        return realm
    }

    /// A nil to-one link makes the rest of the path null, like Swift's optional chaining: `address.city == nil`
    /// holds for a person without an address. Checked through the semi-join (filter) and the general evaluator
    /// (`index(matching:)` on each single object).
    @Test func nilLinksReadAsNullValues() throws {
        let realm = try people()
        let all = Array(realm.objects(Person.self))
        let cases: [(String, (Person) -> Bool)] = [
            ("address.city == nil", { $0.address?.city == nil }),
            ("address.city != nil", { $0.address?.city != nil }),
            ("address.city == 'Lisbon'", { $0.address?.city == "Lisbon" }),
            ("address.city != 'Lisbon'", { $0.address?.city != "Lisbon" }),
            ("address.city IN {'Lisbon', nil}", { $0.address?.city == "Lisbon" || $0.address?.city == nil }),
            ("address.city BEGINSWITH 'L'", { $0.address?.city?.hasPrefix("L") == true }),
            ("NOT address.city == nil", { $0.address?.city != nil }),
            ("bestFriend.name == nil", { $0.bestFriend == nil }),
            ("bestFriend.age == nil", { $0.bestFriend?.age == nil }),
            ("bestFriend.age > 3", { ($0.bestFriend?.age ?? .min) > 3 }),
            ("bestFriend.bestFriend.name == nil", { $0.bestFriend?.bestFriend == nil }),
            ("bestFriend.address.city == 'Lisbon'", { $0.bestFriend?.address?.city == "Lisbon" }),
        ]
        for (query, expected) in cases {
            let ids = realm.objects(Person.self).filter(query).map(\.id)
            #expect(ids == all.filter(expected).map(\.id), "\(query)")
            for person in all {
                let single = realm.objects(Person.self).filter("id == \(person.id)")
                #expect((single.index(matching: query) != nil) == expected(person), "\(query) on p\(person.id)")
            }
        }
        #expect(
            realm.objects(Person.self).where { $0.address.city == nil }.map(\.id)
                == all.filter { $0.address?.city == nil }.map(\.id))
    }

    /// A numeric sort over scanned rows with nils: nil first ascending, last descending, ties in key order.
    @Test func numericSortsPlaceNilsAndKeepTies() throws {
        let realm = try people()
        let all = Array(realm.objects(Person.self))
        for ascending in [true, false] {
            let found = realm.objects(Person.self).filter("id >= 0").sorted(byKeyPath: "age", ascending: ascending)
            let expected = all.enumerated().sorted { a, b in
                switch (a.element.age, b.element.age) {
                case (nil, nil): return a.offset < b.offset
                case (nil, _): return ascending
                case (_, nil): return !ascending
                case (let x?, let y?): return x == y ? a.offset < b.offset : (ascending ? x < y : x > y)
                }
            }.map(\.element.id)
            #expect(found.map(\.id) == expected, "ascending \(ascending)")
        }
    }
}

import Foundation
import StrataTestSupport
import Testing

@testable import Strata

/// The properties both differential models share, so one query table runs against both.
protocol DifferentialRow: Object {
    var id: Int { get }
    var int: Int { get }
    var text: String { get }
    var flag: Bool { get }
    var when: Date { get }
    var tag: UUID? { get }
    var oid: ObjectId? { get }
    var small: Float { get }
    var money: Decimal128 { get }
    var blob: Data { get }
    var mixed: AnyRealmValue { get }
    var words: MutableSet<String> { get }
    var scores: Map<String, Int> { get }
}

/// Every indexable property unindexed.
final class PlainRow: Object, DifferentialRow {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var int = 0
    @Persisted var text = ""
    @Persisted var flag = false
    @Persisted var when = Date(timeIntervalSince1970: 0)
    @Persisted var tag: UUID?
    @Persisted var oid: ObjectId?
    @Persisted var small: Float = 0
    @Persisted var money: Decimal128 = 0
    @Persisted var blob = Data()
    @Persisted var mixed: AnyRealmValue = .none
    @Persisted var words: MutableSet<String>
    @Persisted var scores: Map<String, Int>
}

/// The same model with every indexable property indexed (queries take candidates from the indexes).
final class IndexedRow: Object, DifferentialRow {
    @Persisted(primaryKey: true) var id = 0
    @Persisted(indexed: true) var int = 0
    @Persisted(indexed: true) var text = ""
    @Persisted(indexed: true) var flag = false
    @Persisted(indexed: true) var when = Date(timeIntervalSince1970: 0)
    @Persisted(indexed: true) var tag: UUID?
    @Persisted(indexed: true) var oid: ObjectId?
    @Persisted var small: Float = 0
    @Persisted var money: Decimal128 = 0
    @Persisted var blob = Data()
    @Persisted(indexed: true) var mixed: AnyRealmValue = .none
    @Persisted var words: MutableSet<String>
    @Persisted var scores: Map<String, Int>
}

/// A row as plain Swift values.
private struct Expected {
    var id: Int
    var int: Int
    var text: String
    var flag: Bool
    var when: Date
    var tag: UUID?
    var oid: ObjectId?
    var small: Float
    var money: Decimal128
    var blob: Data
    var mixed: AnyRealmValue
    var words: Set<String>
    var scores: [String: Int]
}

@Suite("Differential queries over every property type")
struct DifferentialQueryTests {
    static let texts = ["", "a", "ab", "Ab", "ä", "über", "Zürich", "zebra", "🙂", "a🙂", "naïve", "NAIVE", "x y"]
    static let uuids = (0..<3).map { UUID(uuidString: "00000000-0000-0000-0000-00000000000\($0)")! }
    static let oids = (0..<3).map { try! ObjectId(string: "65f0000000000000000000a\($0)") }
    static let epoch = Date(timeIntervalSince1970: 1_750_000_000)

    private static func rows(count: Int, seed: UInt64) -> [Expected] {
        var random = SeededGenerator(seed: seed)
        return (0..<count).map { id in
            let mixed: AnyRealmValue =
                switch Int.random(in: 0..<6, using: &random) {
                case 0: .none
                case 1: .int(Int.random(in: -3...3, using: &random))
                case 2: .double(Double(Int.random(in: -6...6, using: &random)) / 2)
                case 3: .string(texts.randomElement(using: &random)!)
                case 4: .bool(Bool.random(using: &random))
                default: .uuid(uuids.randomElement(using: &random)!)
                }
            return Expected(
                id: id, int: Int.random(in: -5...5, using: &random), text: texts.randomElement(using: &random)!,
                flag: Bool.random(using: &random),
                when: epoch.addingTimeInterval(Double(Int.random(in: -3...3, using: &random)) * 3600),
                tag: Bool.random(using: &random) ? nil : uuids.randomElement(using: &random),
                oid: Bool.random(using: &random) ? nil : oids.randomElement(using: &random),
                small: Float(Int.random(in: 0...8, using: &random)) / 4,
                money: Decimal128(Int.random(in: -20...20, using: &random)) / Decimal128(10),
                blob: Data(
                    (0..<Int.random(in: 0...3, using: &random)).map { _ in UInt8.random(in: 0...2, using: &random) }),
                mixed: mixed,
                words: Set(
                    (0..<Int.random(in: 0...3, using: &random)).map { _ in
                        ["red", "green", "blue"].randomElement(using: &random)!
                    }),
                scores: Dictionary(
                    uniqueKeysWithValues: ["x", "y", "z"].filter { _ in Bool.random(using: &random) }.map {
                        ($0, Int.random(in: 0...9, using: &random))
                    }))
        }
    }

    private static func fold(_ text: String) -> String {
        text.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil)
    }

    /// (RQL, arguments, the condition in Swift)
    private static var cases: [(String, [Any], (Expected) -> Bool)] {
        let at = epoch
        return [
            ("int == 3", [], { $0.int == 3 }),
            ("int != 3 AND int >= -2", [], { $0.int != 3 && $0.int >= -2 }),
            ("int IN {-5, 0, 5}", [], { [-5, 0, 5].contains($0.int) }),
            ("int IN {1, 2.0, 2.5}", [], { [1, 2].contains($0.int) }),
            ("int BETWEEN {-1, 1}", [], { (-1...1).contains($0.int) }),
            ("int == 1 OR text == 'a'", [], { $0.int == 1 || $0.text == "a" }),
            ("text == 'über'", [], { $0.text == "über" }),
            ("text ==[c] 'ab'", [], { $0.text.lowercased() == "ab" }),
            ("text ==[cd] 'naive'", [], { fold($0.text) == "naive" }),
            ("text BEGINSWITH 'a'", [], { $0.text.hasPrefix("a") }),
            ("text CONTAINS '🙂'", [], { $0.text.contains("🙂") }),
            ("text ENDSWITH[cd] 'E'", [], { fold($0.text).hasSuffix("e") }),
            ("text LIKE '?b'", [], { $0.text.unicodeScalars.count == 2 && $0.text.hasSuffix("b") }),
            (
                "text > 'Z'", [],
                { $0.text.unicodeScalars.lexicographicallyPrecedes("Z".unicodeScalars) == false && $0.text != "Z" }
            ),
            ("text.@size == 2", [], { $0.text.utf8.count == 2 }),
            ("text IN $0", [["a", "ä", "x y"]], { ["a", "ä", "x y"].contains($0.text) }),
            ("flag == true AND int < 0", [], { $0.flag && $0.int < 0 }),
            ("when > $0", [at], { $0.when > at }),
            (
                "when BETWEEN {$0, $1}", [at, at.addingTimeInterval(7200)],
                { $0.when >= at && $0.when <= at.addingTimeInterval(7200) }
            ),
            ("tag == $0", [uuids[1]], { $0.tag == uuids[1] }),
            ("tag == nil", [], { $0.tag == nil }),
            ("tag IN $0", [[uuids[0], uuids[2]]], { $0.tag == uuids[0] || $0.tag == uuids[2] }),
            ("oid == $0", [oids[2]], { $0.oid == oids[2] }),
            ("oid != nil AND oid < $0", [oids[1]], { $0.oid.map { $0 < oids[1] } ?? false }),
            ("small >= 1.25", [], { $0.small >= 1.25 }),
            ("small == int", [], { Double($0.small) == Double($0.int) }),
            ("money > 0.5", [], { $0.money > Decimal128(0.5) }),
            ("money <= $0", [Decimal128(-1)], { $0.money <= Decimal128(-1) }),
            ("blob.@size == 0", [], { $0.blob.isEmpty }),
            ("blob == $0", [Data([1])], { $0.blob == Data([1]) }),
            ("blob BEGINSWITH $0", [Data([2])], { $0.blob.first == 2 }),
            ("mixed == 1", [], { $0.mixed == .int(1) || $0.mixed == .double(1) }),
            ("mixed == 'a'", [], { $0.mixed == .string("a") }),
            (
                "mixed > 0", [],
                {
                    switch $0.mixed {
                    case .int(let v): v > 0
                    case .double(let v): v > 0
                    default: false
                    }
                }
            ),
            ("mixed == nil", [], { $0.mixed == .none }),
            ("mixed == $0", [uuids[0]], { $0.mixed == .uuid(uuids[0]) }),
            ("mixed.@type == 'bool'", [], { if case .bool = $0.mixed { true } else { false } }),
            (
                "mixed.@type == 'numeric' AND int > 0", [],
                {
                    switch $0.mixed {
                    case .int, .double: $0.int > 0
                    default: false
                    }
                }
            ),
            ("words == 'red'", [], { $0.words.contains("red") }),
            ("words.@count == 0", [], { $0.words.isEmpty }),
            ("ALL words IN {'red', 'blue'}", [], { $0.words.allSatisfy { ["red", "blue"].contains($0) } }),
            ("NONE words ==[c] 'GREEN'", [], { !$0.words.contains("green") }),
            ("scores.@count >= 2", [], { $0.scores.count >= 2 }),
            ("scores.@keys == 'x'", [], { $0.scores["x"] != nil }),
            ("ANY scores.@values > 7", [], { $0.scores.values.contains { $0 > 7 } }),
            ("scores.@sum > 10", [], { $0.scores.values.reduce(0, +) > 10 }),
            ("scores.@max == 9", [], { $0.scores.values.max() == 9 }),
            ("NOT (int > 0 OR flag == false)", [], { !($0.int > 0 || !$0.flag) }),
            ("id IN $0 AND int >= 0", [[3, 30, 300, 3000]], { [3, 30, 300, 3000].contains($0.id) && $0.int >= 0 }),
            // Argument collections of every common element type (each converts by its exact type).
            ("int IN $0", [Set([-2, 0, 5])], { [-2, 0, 5].contains($0.int) }),
            ("int IN $0", [[Int64(1), Int64(-3)]], { [1, -3].contains($0.int) }),
            ("small IN $0", [[0.5, -1.0]], { [0.5, -1.0].contains(Double($0.small)) }),
            ("text IN $0", [Set(["a", "x y"])], { ["a", "x y"].contains($0.text) }),
        ]
    }

    private func load<Row: DifferentialRow>(_ type: Row.Type, _ rows: [Expected]) throws -> Realm {
        let realm = try Realm(
            configuration: Realm.Configuration(inMemoryIdentifier: "differential-\(UUID())", objectTypes: [type]))
        try realm.write {
            for row in rows {
                let object = realm.create(
                    type,
                    value: [
                        "id": row.id, "int": row.int, "text": row.text, "flag": row.flag, "when": row.when,
                        "tag": row.tag as Any, "oid": row.oid as Any, "small": row.small, "money": row.money,
                        "blob": row.blob, "mixed": row.mixed,
                    ])
                object.words.insert(objectsIn: row.words)
                for (key, value) in row.scores { object.scores[key] = value }
            }
        }
        return realm
    }

    private func check<Row: DifferentialRow>(_ type: Row.Type) throws {
        let rows = Self.rows(count: 600, seed: 42)
        let realm = try load(type, rows)
        let all = realm.objects(type)
        for (query, arguments, reference) in Self.cases {
            let expected = rows.filter(reference).map(\.id)
            // Every case selects some rows and leaves some out, so a wrong answer shows.
            #expect(!expected.isEmpty && expected.count < rows.count, "\(query) selects \(expected.count)")
            let found = try all.checkedFilterArguments(query, arguments).map(\.id)
            #expect(found == expected, "\(type): \(query)")
        }
        // Type-safe front end: the same conditions through key paths.
        let typeSafe: [((Query<Row>) -> Query<Bool>, (Expected) -> Bool)] = [
            ({ $0.int == 3 }, { $0.int == 3 }),
            ({ $0.int.in([-5, 0, 5]) }, { [-5, 0, 5].contains($0.int) }),
            ({ $0.int.contains(-1...1) && $0.flag }, { (-1...1).contains($0.int) && $0.flag }),
            (
                { $0.text.equals("naive", options: [.caseInsensitive, .diacriticInsensitive]) },
                { Self.fold($0.text) == "naive" }
            ),
            ({ $0.text.starts(with: "a") || $0.text == "über" }, { $0.text.hasPrefix("a") || $0.text == "über" }),
            ({ $0.tag == Self.uuids[1] }, { $0.tag == Self.uuids[1] }),
            ({ $0.tag == nil }, { $0.tag == nil }),
            ({ $0.oid == Self.oids[2] }, { $0.oid == Self.oids[2] }),
            ({ $0.small >= 1.25 }, { $0.small >= 1.25 }),
            ({ $0.money > Decimal128(0.5) }, { $0.money > Decimal128(0.5) }),
            ({ $0.when > Self.epoch }, { $0.when > Self.epoch }),
            ({ $0.mixed == .string("a") }, { $0.mixed == .string("a") }),
            ({ $0.words.contains("red") }, { $0.words.contains("red") }),
            ({ $0.words.count == 0 }, { $0.words.isEmpty }),
            ({ $0.scores.keys == "x" }, { $0.scores["x"] != nil }),
            ({ $0.scores.values > 7 }, { $0.scores.values.contains { $0 > 7 } }),
            ({ !($0.int > 0) }, { !($0.int > 0) }),
        ]
        for (index, (query, reference)) in typeSafe.enumerated() {
            #expect(all.where(query).map(\.id) == rows.filter(reference).map(\.id), "\(type): type-safe case \(index)")
        }
        // Sorting agrees with Swift's ordering of the same values (stable; byte order for strings).
        let byText = all.sorted(by: [SortDescriptor(keyPath: "text"), SortDescriptor(keyPath: "id", ascending: false)])
        let expectedByText = rows.sorted {
            $0.text == $1.text ? $0.id > $1.id : Array($0.text.utf8).lexicographicallyPrecedes(Array($1.text.utf8))
        }.map(\.id)
        #expect(byText.map(\.id) == expectedByText, "\(type): sorted by text")
        // One string key over rows a scan kept (sorted as bytes, nil-free here), both directions, stable.
        for ascending in [true, false] {
            let found = all.filter("int >= -4").sorted(byKeyPath: "text", ascending: ascending).map(\.id)
            let expected = rows.filter { $0.int >= -4 }.enumerated().sorted {
                let order = QueryValues.compareArrays(Array($0.element.text.utf8), Array($1.element.text.utf8))
                return order == 0 ? $0.offset < $1.offset : (ascending ? order < 0 : order > 0)
            }.map(\.element.id)
            #expect(found == expected, "\(type): sorted by text ascending \(ascending)")
        }
        // One numeric key over rows a scan kept (sorted as unboxed pairs), both directions, stable.
        for ascending in [true, false] {
            let scanned = rows.filter { $0.int >= -4 }.enumerated()
            func expected<T: Comparable>(_ value: (Expected) -> T) -> [Int] {
                scanned.sorted {
                    let (x, y) = (value($0.element), value($1.element))
                    return x == y ? $0.offset < $1.offset : (ascending ? x < y : x > y)
                }.map(\.element.id)
            }
            let found = { (key: String) in
                all.filter("int >= -4").sorted(byKeyPath: key, ascending: ascending).map(\.id)
            }
            #expect(found("int") == expected(\.int), "\(type): sorted by int ascending \(ascending)")
            #expect(found("small") == expected(\.small), "\(type): sorted by small ascending \(ascending)")
            #expect(found("when") == expected(\.when), "\(type): sorted by when ascending \(ascending)")
        }
        #expect(
            all.filter("int > 0").average(ofProperty: "small") as Double?
                == {
                    let values = rows.filter { $0.int > 0 }.map { Double($0.small) }
                    return values.reduce(0, +) / Double(values.count)
                }())
        #expect(all.max(ofProperty: "int") as Int? == rows.map(\.int).max())
        let byMoney = all.sorted(byKeyPath: "money", ascending: false).map(\.id)
        let expectedByMoney = rows.enumerated().sorted {
            $0.element.money == $1.element.money ? $0.offset < $1.offset : $0.element.money > $1.element.money
        }.map(\.element.id)
        #expect(byMoney == expectedByMoney, "\(type): sorted by money")
        #expect(all.sum(ofProperty: "int") as Int == rows.map(\.int).reduce(0, +))
        #expect(all.filter("flag == true").min(ofProperty: "small") as Float? == rows.filter(\.flag).map(\.small).min())
    }

    @Test func unindexedQueriesAgreeWithSwift() throws { try check(PlainRow.self) }

    @Test func indexedQueriesAgreeWithSwift() throws { try check(IndexedRow.self) }
}

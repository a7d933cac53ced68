import Foundation
import StrataTestSupport
import Testing

@testable import Strata

/// Objects for the column-scan tests: every fixed-width property type, optional and not.
enum ColumnScanSeed {
    final class Item: Object {
        @Persisted(primaryKey: true) var id = 0
        @Persisted var count = 0
        @Persisted var maybe: Int?
        @Persisted var small: Int8 = 0
        @Persisted var ratio = 0.0
        @Persisted var maybeRatio: Double?
        @Persisted var weight: Float = 0
        @Persisted var when = Date(timeIntervalSinceReferenceDate: 0)
        @Persisted var flag = false
        @Persisted var maybeFlag: Bool?
        @Persisted var label = ""
        @Persisted var owner: Owner?
    }

    /// The target of `Item.owner`, for conditions across a to-one link.
    final class Owner: Object {
        @Persisted(primaryKey: true) var id = 0
        @Persisted var age: Int?
        @Persisted var name = ""
    }

    /// The same values as plain data, for answers computed in Swift.
    struct Row {
        var id: Int
        var count: Int
        var maybe: Int?
        var small: Int8
        var ratio: Double
        var maybeRatio: Double?
        var weight: Float
        var when: Date
        var flag: Bool
        var maybeFlag: Bool?
        var label: String
    }

    static func random(_ id: Int, _ generator: inout SeededGenerator) -> Row {
        func pick<T>(_ values: [T]) -> T { values[Int(generator.next() % UInt64(values.count))] }
        let count = Int(generator.next() % 1_000) - 500
        return Row(
            id: id, count: count, maybe: generator.next() % 4 == 0 ? nil : Int(generator.next() % 100),
            small: Int8(truncatingIfNeeded: generator.next()), ratio: pick([0.0, -1.5, 2.5, 1e10, .nan, 0.25, 3]),
            maybeRatio: pick([nil, 1.0, 2.0, .nan, -0.0]), weight: pick([0, 1.5, -2, .nan, 100]),
            when: Date(timeIntervalSinceReferenceDate: Double(generator.next() % 100) * 3_600),
            flag: generator.next() % 2 == 0, maybeFlag: pick([nil, true, false]),
            label: pick(["", "abc", "ABC", "abcdef", "xyz", "Ärger", "ärger", "straße", "naïve", "zebra", "Zab"]))
    }

    static func apply(_ row: Row, to item: Item) {
        item.count = row.count
        item.maybe = row.maybe
        item.small = row.small
        item.ratio = row.ratio
        item.maybeRatio = row.maybeRatio
        item.weight = row.weight
        item.when = row.when
        item.flag = row.flag
        item.maybeFlag = row.maybeFlag
        item.label = row.label
    }

    /// A query (RQL with arguments) and the same condition in Swift.
    struct Case {
        let text: String
        let arguments: [Any]
        /// The condition in Swift; nil where the engine's string folding decides (then the row evaluator inside
        /// a write transaction is the reference).
        let holds: ((Row) -> Bool)?
    }

    static let noon = Date(timeIntervalSinceReferenceDate: 50 * 3_600)

    static var cases: [Case] {
        [
            Case(text: "count == 7", arguments: []) { $0.count == 7 },
            Case(text: "count != 7", arguments: []) { $0.count != 7 },
            Case(text: "count < -200 OR count >= 400", arguments: []) { $0.count < -200 || $0.count >= 400 },
            Case(text: "count BETWEEN {$0, $1}", arguments: [-10, 10]) { (-10...10).contains($0.count) },
            Case(text: "count > 2.5", arguments: []) { Double($0.count) > 2.5 },
            Case(text: "count == 3.0", arguments: []) { $0.count == 3 },
            Case(text: "count IN {1, 2, 3, 4.0, 4.5}", arguments: []) { [1, 2, 3, 4].contains($0.count) },
            Case(text: "count == 1 OR count == 2 OR count == -3", arguments: []) { [1, 2, -3].contains($0.count) },
            Case(text: "maybe == nil", arguments: []) { $0.maybe == nil },
            Case(text: "maybe != nil AND maybe < 10", arguments: []) { ($0.maybe ?? 100) < 10 },
            Case(text: "maybe != 5", arguments: []) { $0.maybe != 5 },
            Case(text: "maybe > 90", arguments: []) { ($0.maybe ?? -1) > 90 },
            Case(text: "maybe IN {nil, 1, 2}", arguments: []) { $0.maybe == nil || [1, 2].contains($0.maybe!) },
            Case(text: "maybe IN {1, 2}", arguments: []) { $0.maybe.map { [1, 2].contains($0) } ?? false },
            Case(text: "NOT (maybe == 3)", arguments: []) { $0.maybe != 3 },
            Case(text: "small < 0 AND small >= -10", arguments: []) { $0.small < 0 && $0.small >= -10 },
            Case(text: "ratio == 2.5", arguments: []) { $0.ratio == 2.5 },
            Case(text: "ratio != 2.5", arguments: []) { $0.ratio != 2.5 },
            Case(text: "ratio > 0", arguments: []) { $0.ratio > 0 },
            Case(text: "ratio <= 0.25", arguments: []) { $0.ratio <= 0.25 },
            Case(text: "maybeRatio == nil OR maybeRatio >= 2", arguments: []) { $0.maybeRatio.map { $0 >= 2 } ?? true },
            Case(text: "maybeRatio == 0", arguments: []) { $0.maybeRatio == 0 },
            // NaN is unordered: only != holds for it.
            Case(text: "weight > 1", arguments: []) { $0.weight > 1 },
            Case(text: "weight == 0", arguments: []) { $0.weight == 0 },
            Case(text: "weight != 1.5", arguments: []) { $0.weight != 1.5 },
            Case(text: "ratio > 2.5e0 AND count <= 10.5", arguments: []) { $0.ratio > 2.5 && Double($0.count) <= 10.5 },
            Case(text: "when < $0", arguments: [noon]) { $0.when < noon },
            Case(text: "when == $0", arguments: [noon]) { $0.when == noon },
            Case(text: "flag == true AND maybeFlag == false", arguments: []) { $0.flag && $0.maybeFlag == false },
            Case(text: "maybeFlag != true", arguments: []) { $0.maybeFlag != true },
            Case(text: "maybeFlag == nil OR flag == false", arguments: []) { $0.maybeFlag == nil || !$0.flag },
            Case(text: "count > 100 AND (ratio > 0 OR maybe == nil)", arguments: []) {
                $0.count > 100 && ($0.ratio > 0 || $0.maybe == nil)
            },
            Case(text: "label BEGINSWITH 'ab'", arguments: []) { $0.label.hasPrefix("ab") },
            Case(text: "label ENDSWITH 'er'", arguments: []) { $0.label.hasSuffix("er") },
            Case(text: "label CONTAINS 'b'", arguments: []) { $0.label.contains("b") },
            Case(text: "label == 'abc' OR label == 'xyz'", arguments: []) { ["abc", "xyz"].contains($0.label) },
            Case(text: "label != 'abc' AND count > 0", arguments: []) { $0.label != "abc" && $0.count > 0 },
            Case(text: "label < 'b'", arguments: []) {
                Array($0.label.utf8).lexicographicallyPrecedes(Array("b".utf8))
            },
            Case(text: "label BEGINSWITH[c] 'AB'", arguments: [], holds: nil),
            Case(text: "label CONTAINS[c] 'ÄR'", arguments: [], holds: nil),
            Case(text: "label CONTAINS[cd] 'a'", arguments: [], holds: nil),
            Case(text: "label ==[c] 'ärger'", arguments: [], holds: nil),
            Case(text: "label !=[c] 'ABC'", arguments: [], holds: nil),
            Case(text: "label LIKE 'a*c'", arguments: [], holds: nil),
            // [d] alone keeps case: "ABC" is not "abc".
            Case(text: "label ==[d] 'ABC'", arguments: []) { $0.label == "ABC" },
            Case(text: "label CONTAINS[d] 'ab'", arguments: []) { $0.label.contains("ab") },
            Case(text: "TRUEPREDICATE", arguments: []) { _ in true },
            Case(text: "FALSEPREDICATE", arguments: []) { _ in false },
        ]
    }
}

@Suite("Column scans")
struct ColumnScanTests {
    typealias Item = ColumnScanSeed.Item

    /// Answers of every case, three ways: Swift over the data, the scan outside a write transaction (column
    /// extracts), and the same query inside one (row conditions, no extracts).
    private func check(_ realm: Realm, _ rows: [Int: ColumnScanSeed.Row], label: String, inWrite: Bool) throws {
        for test in ColumnScanSeed.cases {
            let scanned = Array(realm.objects(Item.self).filter(test.text, test.arguments).map(\.id))
            var reference = scanned
            if let holds = test.holds {
                reference = rows.values.filter(holds).map(\.id).sorted()
                #expect(scanned == reference, "\(label): \(test.text): \(Self.difference(scanned, reference))")
            }
            guard inWrite || test.holds == nil else { continue }
            try realm.write {
                let rowScan = Array(realm.objects(Item.self).filter(test.text, test.arguments).map(\.id))
                let difference = Self.difference(rowScan, reference)
                #expect(rowScan == reference, "\(label), in a write: \(test.text): \(difference)")
            }
        }
    }

    /// A short description of how `found` differs from `expected` (never the whole arrays).
    static func difference(_ found: [Int], _ expected: [Int]) -> String {
        let extra = Set(found).subtracting(expected).sorted()
        let missing = Set(expected).subtracting(found).sorted()
        return
            "\(found.count) found, \(expected.count) expected; extra \(extra.prefix(5)), missing \(missing.prefix(5))"
    }

    /// The positions of `values` in Swift's order: nil first ascending and last descending, position breaking ties.
    static func swiftOrder<T: Comparable>(_ values: [T?], ascending: Bool) -> [Int] {
        values.indices.sorted { a, b in
            switch (values[a], values[b]) {
            case (nil, nil): return a < b
            case (nil, _): return ascending
            case (_, nil): return !ascending
            case (let x?, let y?): return x == y ? a < b : (ascending ? x < y : x > y)
            }
        }
    }

    /// Adds one `Item` per value, its id the value's position, `set` giving it the value.
    static func addItems<T>(_ values: [T], to realm: Realm, _ set: (Item, T) -> Void) throws {
        try realm.write {
            for (id, value) in values.enumerated() {
                let item = Item()
                item.id = id
                set(item, value)
                realm.add(item)
            }
        }
    }

    /// The ids of every `Item` sorted by `property` (through a filter, so that the query's own sort runs).
    static func sortedIds(_ realm: Realm, by property: String, ascending: Bool) -> [Int] {
        Array(realm.objects(Item.self).filter("id >= 0").sorted(byKeyPath: property, ascending: ascending).map(\.id))
    }

    @Test func answersMatchSwiftAndRowScansAcrossVersions() throws {
        let realm = try Realm(configuration: Realm.Configuration(inMemoryIdentifier: "column-scan-\(UUID())"))
        var generator = SeededGenerator(seed: 42)
        var rows: [Int: ColumnScanSeed.Row] = [:]
        try realm.write {
            for id in 0..<20_000 {
                let row = ColumnScanSeed.random(id, &generator)
                rows[id] = row
                let item = Item()
                item.id = id
                ColumnScanSeed.apply(row, to: item)
                realm.add(item)
            }
        }
        try check(realm, rows, label: "first version", inWrite: true)
        let cache = realm.store.segmentCache
        #expect(cache.count > 3)
        let frozen = realm.freeze()
        let frozenRows = rows

        // Another version: updates, deletions and insertions spread over some segments only.
        let extractsBefore = cache.count
        try realm.write {
            // Changes to the first few hundred objects and appended ones: the segments in between stay as they were.
            for _ in 0..<40 {
                let id = Int(generator.next() % 300)
                guard let item = realm.object(ofType: Item.self, forPrimaryKey: id) else { continue }
                if generator.next() % 3 == 0 {
                    realm.delete(item)
                    rows[id] = nil
                } else {
                    let row = ColumnScanSeed.random(id, &generator)
                    ColumnScanSeed.apply(row, to: item)
                    rows[id] = row
                }
            }
            for id in 20_000..<20_100 {
                let row = ColumnScanSeed.random(id, &generator)
                rows[id] = row
                let item = Item()
                item.id = id
                ColumnScanSeed.apply(row, to: item)
                realm.add(item)
            }
        }
        try check(realm, rows, label: "second version", inWrite: false)
        // Unchanged segments reuse their extracts: fewer new entries than a full re-extraction would add.
        #expect(cache.count - extractsBefore < extractsBefore)

        // The frozen first version still answers from its own segments.
        for test in ColumnScanSeed.cases {
            guard let holds = test.holds else { continue }
            let expected = frozenRows.values.filter(holds).map(\.id).sorted()
            #expect(Array(frozen.objects(Item.self).filter(test.text, test.arguments).map(\.id)) == expected)
        }
    }

    /// Sum, min, max and average of every numeric column, over all objects and over what each case finds, read
    /// from column extracts outside a write, against Swift and against the row walk inside a write.
    @Test func aggregatesOverExtractsMatchSwiftAndRowWalks() throws {
        let realm = try Realm(configuration: Realm.Configuration(inMemoryIdentifier: "column-sums-\(UUID())"))
        var generator = SeededGenerator(seed: 7)
        var rows: [ColumnScanSeed.Row] = []
        try realm.write {
            for id in 0..<6_000 {
                let row = ColumnScanSeed.random(id, &generator)
                rows.append(row)
                let item = Item()
                item.id = id
                ColumnScanSeed.apply(row, to: item)
                realm.add(item)
            }
        }
        /// The four aggregates of each numeric property, as text (NaN and nil compare equal that way).
        func aggregates(_ results: Results<Item>) -> [String] {
            var answers: [String] = []
            for property in ["count", "maybe", "small", "ratio", "maybeRatio", "weight"] {
                let sum: Double = results.sum(ofProperty: property)
                let low: Double? = results.min(ofProperty: property)
                let high: Double? = results.max(ofProperty: property)
                let mean: Double? = results.average(ofProperty: property)
                answers.append(
                    "\(property): \(sum) \(low.map { "\($0)" } ?? "nil") \(high.map { "\($0)" } ?? "nil") \(mean.map { "\($0)" } ?? "nil")"
                )
            }
            return answers
        }
        func expected(_ chosen: [ColumnScanSeed.Row]) -> [String] {
            func line(_ name: String, _ values: [Double?]) -> String {
                let present = values.compactMap { $0 }
                let ordered = present.filter { !$0.isNaN }
                let sum = present.reduce(0, +)
                let mean = present.isEmpty ? nil : sum / Double(present.count)
                return
                    "\(name): \(sum) \(ordered.min().map { "\($0)" } ?? "nil") \(ordered.max().map { "\($0)" } ?? "nil") \(mean.map { "\($0)" } ?? "nil")"
            }
            return [
                line("count", chosen.map { Double($0.count) }), line("maybe", chosen.map { $0.maybe.map(Double.init) }),
                line("small", chosen.map { Double($0.small) }), line("ratio", chosen.map(\.ratio)),
                line("maybeRatio", chosen.map(\.maybeRatio)), line("weight", chosen.map { Double($0.weight) }),
            ]
        }
        #expect(aggregates(realm.objects(Item.self)) == expected(rows))
        let all = aggregates(realm.objects(Item.self))
        try realm.write { #expect(aggregates(realm.objects(Item.self)) == all) }
        for (number, test) in ColumnScanSeed.cases.enumerated() {
            let results = realm.objects(Item.self).filter(test.text, test.arguments)
            let outside = aggregates(results)
            if let holds = test.holds { #expect(outside == expected(rows.filter(holds)), "\(test.text)") }
            // Inside a write (rows walked, no extracts): the cases Swift cannot answer and every third other one.
            guard test.holds == nil || number % 3 == 0 else { continue }
            try realm.write {
                #expect(
                    aggregates(realm.objects(Item.self).filter(test.text, test.arguments)) == outside, "\(test.text)")
            }
        }
    }

    /// Conditions across a to-one link run as a membership test on the link column (the matching owners found
    /// first): the same answers as Swift and as the row path inside a write, nil links and nil ages included.
    @Test func linkConditionsMatchSwiftAndRowScans() throws {
        let realm = try Realm(configuration: Realm.Configuration(inMemoryIdentifier: "column-links-\(UUID())"))
        var generator = SeededGenerator(seed: 5)
        // Arrays, not dictionaries: assigning nil through a dictionary subscript would drop the entry.
        var ownerAges: [Int?] = []
        var itemOwners: [Int?] = []
        var itemCounts: [Int] = []
        try realm.write {
            var owners: [ColumnScanSeed.Owner] = []
            for id in 0..<300 {
                let owner = ColumnScanSeed.Owner()
                owner.id = id
                owner.age = generator.next() % 10 == 0 ? nil : Int(generator.next() % 100)
                owner.name = "owner \(id % 7)"
                ownerAges.append(owner.age)
                owners.append(realm.create(ColumnScanSeed.Owner.self, value: owner))
            }
            for id in 0..<8_000 {
                let item = Item()
                item.id = id
                item.count = Int(generator.next() % 1_000)
                let owner = generator.next() % 8 == 0 ? nil : owners[Int(generator.next() % 300)]
                item.owner = owner
                itemOwners.append(owner?.id)
                itemCounts.append(item.count)
                realm.add(item)
            }
        }
        func age(_ item: Int) -> Int?? { itemOwners[item].map { ownerAges[$0] } }
        let cases: [(String, [Any], (Int) -> Bool)] = [
            ("owner.age > $0", [50], { (age($0) ?? nil).map { $0 > 50 } ?? false }),
            ("owner.age <= $0", [10], { (age($0) ?? nil).map { $0 <= 10 } ?? false }),
            ("owner.age == nil", [], { (age($0) ?? nil) == nil }),
            ("owner.age != nil", [], { (age($0) ?? nil) != nil }),
            ("owner.age != $0", [3], { (age($0) ?? nil) != 3 }),
            ("owner.age IN {1, 2, 3, nil}", [], { [1, 2, 3, nil].contains(age($0) ?? nil) }),
            ("owner.age BETWEEN {20, 30}", [], { (age($0) ?? nil).map { (20...30).contains($0) } ?? false }),
            ("NOT owner.age > 50", [], { !((age($0) ?? nil).map { $0 > 50 } ?? false) }),
            ("owner == nil", [], { itemOwners[$0] == nil }),
            ("owner.name == 'owner 3'", [], { itemOwners[$0].map { $0 % 7 == 3 } ?? false }),
            (
                "owner.age > 40 AND count < 500 OR owner.id < 5", [],
                {
                    ((age($0) ?? nil).map { $0 > 40 } ?? false) && itemCounts[$0] < 500
                        || (itemOwners[$0].map { $0 < 5 } ?? false)
                }
            ),
        ]
        for (text, arguments, holds) in cases {
            try expectIDs(realm, text, arguments, itemOwners.indices.filter(holds))
        }
    }

    /// The ids `text` finds, outside a write (column scans) and inside one (row conditions), and its count outside,
    /// each checked against `expected`.
    private func expectIDs(_ realm: Realm, _ text: String, _ arguments: [Any], _ expected: [Int]) throws {
        let scanned = Array(realm.objects(Item.self).filter(text, arguments).map(\.id))
        let same = scanned == expected
        #expect(same, "\(text) \(arguments): \(Self.difference(scanned, expected))")
        #expect(realm.objects(Item.self).filter(text, arguments).count == expected.count, "\(text) \(arguments)")
        try realm.write {
            let rows = Array(realm.objects(Item.self).filter(text, arguments).map(\.id))
            let same = rows == expected
            #expect(same, "\(text) \(arguments), in a write: \(Self.difference(rows, expected))")
        }
    }

    /// CONTAINS over segments whose strings are all ASCII searches each segment's buffer at once: the same rows as
    /// Swift and as the per-row test inside a write, with [c], for needles of every length, never across rows.
    @Test func substringSearchOverWholeSegmentsMatchesPerRowTests() throws {
        let realm = try Realm(configuration: Realm.Configuration(inMemoryIdentifier: "column-contains-\(UUID())"))
        var generator = SeededGenerator(seed: 3)
        let alphabet = Array("abcABC xyzXYZ-1")
        var labels: [String] = []
        try realm.write {
            for id in 0..<20_000 {
                let item = Item()
                item.id = id
                // Some empty strings, the rest random over letters of both cases, a space, a dash and a digit.
                let length = generator.next() % 50 == 0 ? 0 : Int(generator.next() % 24)
                item.label = String((0..<length).map { _ in alphabet[Int(generator.next() % UInt64(alphabet.count))] })
                labels.append(item.label)
                realm.add(item)
            }
        }
        let needles = ["a", "Z", "ab", "aB", "cx", "c x", "1a", "zz", "-1", "abcABC", "xyzXYZ-1a", "", "q"]
        for needle in needles {
            try expectIDs(
                realm, "label CONTAINS $0", [needle],
                labels.indices.filter { needle.isEmpty || labels[$0].contains(needle) })
            try expectIDs(
                realm, "label CONTAINS[c] $0", [needle],
                labels.indices.filter { needle.isEmpty || labels[$0].lowercased().contains(needle.lowercased()) })
        }
    }

    /// Sorting by one string column compares eight-byte prefixes first: strings that share them, are shorter than
    /// eight bytes, hold NUL bytes or are empty must still order by their UTF-8 bytes, ties by position.
    @Test func stringSortsOrderByBytesPastSharedPrefixes() throws {
        let realm = try Realm(configuration: Realm.Configuration(inMemoryIdentifier: "string-sort-\(UUID())"))
        var labels = [
            "abcdefghX", "abcdefgh", "abcdefghA", "", "a\u{0}b", "a", "abcdefgh\u{0}", "zz", "Ä", "abcdefghXY",
            "abcdefgh", "a\u{0}", "abcdefghX", "", "ab",
        ]
        // Many strings sharing their first eight bytes (the radix key) or differing only past them, or only in
        // a trailing zero byte, with repeats; and strings of every length up to 12.
        var generator = SeededGenerator(seed: 41)
        let pieces = ["abcdefgh", "abcdefgi", "a", "\u{0}", "é", "z", "Zz", "abcd"]
        for _ in 0..<2_000 {
            var label = ""
            for _ in 0..<Int(generator.next() % 4) { label += pieces[Int(generator.next() % UInt64(pieces.count))] }
            labels.append(String(label.prefix(Int(generator.next() % 13))))
        }
        try Self.addItems(labels, to: realm) { $0.label = $1 }
        for ascending in [true, false] {
            let found = Self.sortedIds(realm, by: "label", ascending: ascending)
            let expected = labels.indices.sorted { a, b in
                let order = QueryValues.compareArrays(Array(labels[a].utf8), Array(labels[b].utf8))
                return order == 0 ? a < b : (ascending ? order < 0 : order > 0)
            }
            let same = found == expected
            #expect(same, "ascending \(ascending): \(Self.difference(found, expected))")
        }
    }

    /// Sorting by one integer column is a radix sort on order-preserving keys: extremes, negatives, ties (kept in
    /// position order) and nils (first ascending, last descending) as Swift orders them.
    @Test func integerSortsOrderExtremesTiesAndNils() throws {
        let realm = try Realm(configuration: Realm.Configuration(inMemoryIdentifier: "int-sort-\(UUID())"))
        var generator = SeededGenerator(seed: 23)
        let specials: [Int?] = [.max, .min, 0, -1, 1, nil, .max, 255, 256, -256, 65_536, nil, .min + 1, 1 << 40]
        var values: [Int?] = specials
        for _ in 0..<3_000 {
            values.append(
                generator.next() % 10 == 0 ? nil : Int(bitPattern: UInt(generator.next())) >> Int(generator.next() % 64)
            )
        }
        try Self.addItems(values, to: realm) { $0.maybe = $1 }
        for ascending in [true, false] {
            let found = Self.sortedIds(realm, by: "maybe", ascending: ascending)
            let expected = Self.swiftOrder(values, ascending: ascending)
            let same = found == expected
            #expect(same, "ascending \(ascending): \(Self.difference(found, expected))")
        }
    }

    /// Doubles, floats and dates sort by a radix sort on order-preserving bits: signs, both zeros (equal, so in
    /// position order), infinities, subnormals, ties and nils as Swift orders them; a NaN sends the sort to the
    /// general comparison, which must agree too.
    @Test func floatingSortsOrderSignsZerosInfinitiesAndNils() throws {
        let realm = try Realm(configuration: Realm.Configuration(inMemoryIdentifier: "double-sort-\(UUID())"))
        var generator = SeededGenerator(seed: 29)
        let specials: [Double?] = [
            0, -0.0, .infinity, -.infinity, nil, 1, -1, .leastNonzeroMagnitude, -.leastNonzeroMagnitude,
            .greatestFiniteMagnitude, -.greatestFiniteMagnitude, 0, -0.0, nil, 1e-300, -1e300, 2.5, 2.5,
        ]
        var values: [Double?] = specials
        for _ in 0..<3_000 {
            let magnitude = Double(generator.next() % 1_000) / 8 * Double(1 << (generator.next() % 12))
            values.append(generator.next() % 10 == 0 ? nil : generator.next() % 2 == 0 ? magnitude : -magnitude)
        }
        try Self.addItems(values, to: realm) { item, value in
            item.maybeRatio = value
            item.weight = Float(value ?? 0)
            item.when = Date(timeIntervalSinceReferenceDate: value ?? 0)
        }
        for ascending in [true, false] {
            let doubles = Self.sortedIds(realm, by: "maybeRatio", ascending: ascending)
            let doublesExpected = Self.swiftOrder(values, ascending: ascending)
            let doublesMatch = doubles == doublesExpected
            #expect(doublesMatch, "doubles \(ascending): \(Self.difference(doubles, doublesExpected))")
            let floats = Self.sortedIds(realm, by: "weight", ascending: ascending)
            let floatsExpected = Self.swiftOrder(values.map { Float($0 ?? 0) }, ascending: ascending)
            let floatsMatch = floats == floatsExpected
            #expect(floatsMatch, "floats \(ascending): \(Self.difference(floats, floatsExpected))")
            let dates = Self.sortedIds(realm, by: "when", ascending: ascending)
            let datesExpected = Self.swiftOrder(
                values.map { Date(timeIntervalSinceReferenceDate: $0 ?? 0) }, ascending: ascending)
            let datesMatch = dates == datesExpected
            #expect(datesMatch, "dates \(ascending): \(Self.difference(dates, datesExpected))")
        }
        // A NaN sends the sort to the general comparison: wherever that puts the NaN, the other objects keep the
        // order Swift gives them.
        try realm.write { realm.objects(Item.self).filter("id == 0").first?.maybeRatio = .nan }
        let withNaN = Self.sortedIds(realm, by: "maybeRatio", ascending: true)
        let rest = withNaN.filter { $0 != 0 }
        let restExpected = Self.swiftOrder(
            values.enumerated().map { $0.offset == 0 ? nil : $0.element }, ascending: true
        )
        .filter { $0 != 0 }
        let restMatch = rest == restExpected
        #expect(restMatch, "around NaN: \(Self.difference(rest, restExpected))")
        #expect(withNaN.count == values.count)
    }

    /// Resolved key paths are kept for reuse without keeping their classes' bindings (or the Realm) alive.
    @Test func reusedQueryPathsKeepNothingAlive() throws {
        weak var weakBinding: TableBinding?
        weak var weakOwnerBinding: TableBinding?
        do {
            let realm = try Realm(configuration: Realm.Configuration(inMemoryIdentifier: "paths-\(UUID())"))
            try realm.write {
                let item = Item()
                item.count = 3
                realm.add(item)
            }
            #expect(realm.objects(Item.self).filter("count > 1 AND owner.age == nil").count == 1)
            #expect(realm.objects(Item.self).filter("count > 1 AND owner.age == nil").count == 1)
            #expect(!realm.resolvedPaths.withLock { $0.isEmpty })
            weakBinding = try realm.binding(for: Item.self)
            weakOwnerBinding = try realm.binding(for: ColumnScanSeed.Owner.self)
        }
        #expect(weakBinding == nil, "a cached path kept its root binding alive")
        #expect(weakOwnerBinding == nil, "a cached path kept its target binding alive")
    }

    @Test func foundRowsAreReadOnlyWhenAskedForAndThenFeedSortsAndObjects() throws {
        let realm = try Realm(configuration: Realm.Configuration(inMemoryIdentifier: "column-rows-\(UUID())"))
        try realm.write {
            for id in 0..<5_000 {
                let item = Item()
                item.id = id
                item.count = (id * 7919) % 1_000
                item.label = "item \(id)"
                realm.add(item)
            }
        }
        let results = realm.objects(Item.self).filter("count < 100")
        #expect(results.count == 500)
        #expect(results.map(\.label).allSatisfy { $0.hasPrefix("item ") })
        #expect(results[10].count < 100)
        let sorted = results.sorted(byKeyPath: "count", ascending: false)
        #expect(Array(sorted.map(\.count)) == (0..<5_000).map { ($0 * 7919) % 1_000 }.filter { $0 < 100 }.sorted(by: >))
        #expect(
            results.sum(ofProperty: "count") as Int
                == (0..<5_000).map { ($0 * 7919) % 1_000 }.filter { $0 < 100 }.reduce(0, +))
    }
}

/// The segment cache is shared by every Realm on a file: scans of many versions from several tasks at once, each
/// answer checked (run under ThreadSanitizer by CI: the suite name matches its filter).
@Suite("Column scans under concurrency")
struct ColumnScanConcurrencyTests {
    typealias Item = ColumnScanSeed.Item

    @Test func scansOfManyVersionsFromSeveralTasksShareTheCache() async throws {
        let configuration = Realm.Configuration(inMemoryIdentifier: "column-concurrency-\(UUID())")
        let batches = 6
        let perBatch = 1_500
        var versions: [Frozen<Realm>] = []
        do {
            let writer = try Realm(configuration: configuration)
            for batch in 0..<batches {
                try writer.write {
                    for index in 0..<perBatch {
                        let item = Item()
                        item.id = batch * perBatch + index
                        item.count = batch
                        item.label = index % 2 == 0 ? "even \(batch)" : "odd \(batch)"
                        writer.add(item)
                    }
                }
                versions.append(Frozen(writer))
            }
        }
        let snapshots = versions
        let failures = try await withThrowingTaskGroup(of: [String].self) { group in
            for reader in 0..<4 {
                group.addTask {
                    var failures: [String] = []
                    // Each reader visits the versions in its own order, so scans of one segment overlap.
                    let order = Array(snapshots.indices).shuffled()
                    for position in order + order.reversed() {
                        let realm = snapshots[position].value
                        let items = realm.objects(Item.self)
                        let total = items.filter("count >= 0").count
                        if total != perBatch * (position + 1) {
                            failures.append("reader \(reader) v\(position): \(total)")
                        }
                        for batch in 0...position {
                            let odd = items.filter("count == $0 AND label BEGINSWITH 'odd'", batch).count
                            if odd != perBatch / 2 {
                                failures.append("reader \(reader) v\(position) b\(batch): \(odd)")
                            }
                        }
                        let later = items.filter("count > $0", position).count
                        if later != 0 { failures.append("reader \(reader) v\(position): \(later) later") }
                    }
                    return failures
                }
            }
            var all: [String] = []
            for try await failures in group { all += failures }
            return all
        }
        #expect(failures.isEmpty, "\(failures.prefix(5))")
    }
}

import Foundation
import Testing

@testable import Strata

/// A row with two numbers and a link to another row, to compare properties with properties.
final class ColumnComparedRow: Object {
    @Persisted var name = ""
    @Persisted var low = 0
    @Persisted var high = 0
    @Persisted var ratio: Double?
    @Persisted var limit: Double?
    @Persisted var parent: ColumnComparedRow?
}

/// Comparing one property with another, as the Realm SDK allows in both query languages: `$0.low > $0.high` in a
/// type-safe query, `low > high` and through links `parent.low > low` in the Realm Query Language. A row compares
/// its own values; a nil on either side of `<`, `>` is never ordered.
@Suite("Query column comparisons: property against property")
struct QueryColumnComparisonTests {
    let realm: Realm

    /// a (1, 5; ratio 0.5, limit 1.0), b (7, 7; ratio nil) whose parent is a, c (9, 2; ratio 3, limit 2) whose
    /// parent is b.
    init() throws {
        realm = try Realm(
            configuration: Realm.Configuration(
                inMemoryIdentifier: "column-comparison-\(UUID())", objectTypes: [ColumnComparedRow.self]))
        try realm.write {
            let a = realm.create(
                ColumnComparedRow.self,
                value: ["name": "a", "low": 1, "high": 5, "ratio": 0.5, "limit": 1.0] as [String: Any])
            let b = realm.create(ColumnComparedRow.self, value: ["name": "b", "low": 7, "high": 7] as [String: Any])
            b.parent = a
            let c = realm.create(
                ColumnComparedRow.self,
                value: ["name": "c", "low": 9, "high": 2, "ratio": 3.0, "limit": 2.0] as [String: Any])
            c.parent = b
        }
    }

    var rows: Results<ColumnComparedRow> { realm.objects(ColumnComparedRow.self) }
    func names(_ results: Results<ColumnComparedRow>) -> [String] { results.map(\.name).sorted() }

    @Test func typeSafeComparesTwoProperties() {
        #expect(names(rows.where { $0.low > $0.high }) == ["c"])
        #expect(names(rows.where { $0.low <= $0.high }) == ["a", "b"])
        #expect(names(rows.where { $0.low == $0.high }) == ["b"])
        #expect(names(rows.where { $0.low != $0.high }) == ["a", "c"])
        #expect(names(rows.where { $0.ratio < $0.limit }) == ["a"])
        #expect(names(rows.where { $0.ratio >= $0.limit }) == ["c"])
        #expect(names(rows.where { $0.parent.low > $0.low }) == [])
        #expect(names(rows.where { $0.parent.high < $0.high }) == ["b"])
        #expect(names(rows.where { $0.parent.name == $0.name }) == [])
    }

    @Test func queryLanguageComparesTwoProperties() {
        #expect(names(rows.filter("low > high")) == ["c"])
        #expect(names(rows.filter("high >= low")) == ["a", "b"])
        #expect(names(rows.filter("ratio < limit")) == ["a"])
        #expect(names(rows.filter("parent.high < high")) == ["b"])
        #expect(names(rows.filter("parent.low < low")) == ["b", "c"])
    }
}

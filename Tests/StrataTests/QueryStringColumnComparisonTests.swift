import Foundation
import Testing

@testable import Strata

/// A string and a fragment of it (or not), to compare one string property with another.
final class StringPairRow: Object {
    @Persisted var name = ""
    @Persisted var fragment = ""
}

/// String operators between two properties, as the Realm Query Language allows (`name BEGINSWITH fragment`,
/// with `[c]`/`[d]`). The SDK's type-safe `starts(with:)`, `ends(with:)` and `contains(_:)` take a value only, so
/// there is no `where { }` form.
@Suite("Query string column comparisons")
struct QueryStringColumnComparisonTests {
    private func rows() throws -> Results<StringPairRow> {
        let realm = try Realm(
            configuration: Realm.Configuration(
                inMemoryIdentifier: "string-columns-\(UUID())", objectTypes: [StringPairRow.self]))
        try realm.write {
            for (name, fragment) in [("apple", "app"), ("banana", "ana"), ("Cherry", "ch")] {
                realm.create(StringPairRow.self, value: ["name": name, "fragment": fragment])
            }
        }
        return realm.objects(StringPairRow.self)
    }

    private func names(_ results: Results<StringPairRow>) -> [String] { results.map(\.name).sorted() }

    @Test func stringOperatorsTakeAPropertyOnTheRight() throws {
        let rows = try rows()
        #expect(names(rows.filter("name BEGINSWITH fragment")) == ["apple"])
        #expect(names(rows.filter("name ENDSWITH fragment")) == ["banana"])
        #expect(names(rows.filter("name CONTAINS fragment")) == ["apple", "banana"])
        #expect(names(rows.filter("name BEGINSWITH[c] fragment")) == ["Cherry", "apple"])
        #expect(names(rows.filter("name == fragment")) == [])
        #expect(names(rows.filter("name != fragment")) == ["Cherry", "apple", "banana"])
    }
}

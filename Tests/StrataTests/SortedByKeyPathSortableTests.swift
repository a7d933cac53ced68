import Foundation
import Strata
import Testing

enum SortableKeyPathSize: Int, PersistableEnum {
    case small = 1
    case large = 3
    case medium = 2
}

final class SortableKeyPathRow: Object {
    @Persisted var name = ""
    @Persisted var value: AnyRealmValue
    @Persisted var maybeScore: Int?
    @Persisted var flag = false
    @Persisted var size = SortableKeyPathSize.small
    @Persisted var maybeSize: SortableKeyPathSize?
}

final class SortableKeyPathOwner: Object {
    @Persisted var rows: List<SortableKeyPathRow>
}

// Generic code as SDK users write it: a key path to a mixed property is a `SortableType`, not a `Comparable`.
private func namesByValue(_ rows: some RealmCollection<SortableKeyPathRow>, ascending: Bool) -> [String] {
    rows.sorted(by: \.value, ascending: ascending).map(\.name)
}

/// `sorted(by:)` with a key path takes any of the SDK's `SortableType`s (`AnyRealmValue`, optionals, `Bool`), not
/// only `Comparable` types, and sorts as `sorted(byKeyPath:)` does.
@Suite("sorted(by:) with a key path to a SortableType")
struct SortedByKeyPathSortableTests {
    /// Rows inserted in no order, named after their place in the mixed order (nil < bool < numbers < strings < dates).
    private func owner() throws -> SortableKeyPathOwner {
        let realm = try Realm(
            configuration: Realm.Configuration(
                inMemoryIdentifier: "sortable-key-path-\(UUID())",
                objectTypes: [SortableKeyPathRow.self, SortableKeyPathOwner.self]))
        let rows: [(String, AnyRealmValue, Int?, Bool)] = [
            ("4-string", .string("a"), 2, true), ("2-int", .int(1), nil, false),
            ("5-date", .date(Date(timeIntervalSince1970: 0)), 7, false), ("0-nil", .none, 3, true),
            ("3-double", .double(2.5), nil, true), ("1-bool", .bool(true), -1, false),
        ]
        let owner = SortableKeyPathOwner()
        try realm.write {
            realm.add(owner)
            for (name, value, score, flag) in rows {
                owner.rows.append(
                    realm.create(
                        SortableKeyPathRow.self,
                        value: ["name": name, "value": value, "maybeScore": score as Any, "flag": flag]))
            }
        }
        return owner
    }

    private static let mixedOrder = ["0-nil", "1-bool", "2-int", "3-double", "4-string", "5-date"]

    @Test func aMixedPropertySortsInTheEnginesMixedOrder() throws {
        let rows = try #require(owner().realm).objects(SortableKeyPathRow.self)
        #expect(rows.sorted(by: \.value).map(\.name) == Self.mixedOrder)
        #expect(rows.sorted(by: \.value, ascending: false).map(\.name) == Self.mixedOrder.reversed())
        #expect(
            rows.sorted(by: \.value).map(\.name) == rows.sorted(byKeyPath: "value").map(\.name))
    }

    @Test func everyCollectionOfObjectsSortsByAMixedKeyPath() throws {
        let owner = try owner()
        #expect(owner.rows.sorted(by: \.value).map(\.name) == Self.mixedOrder)
        #expect(namesByValue(owner.rows, ascending: true) == Self.mixedOrder)
        #expect(namesByValue(AnyRealmCollection(owner.rows), ascending: false) == Self.mixedOrder.reversed())
    }

    @Test func optionalAndBooleanKeyPathsSortNilAndFalseFirst() throws {
        let rows = try #require(owner().realm).objects(SortableKeyPathRow.self)
        let byScore = rows.sorted(by: \.maybeScore).map(\.maybeScore)
        #expect(byScore == [nil, nil, -1, 2, 3, 7])
        #expect(rows.sorted(by: \.maybeScore, ascending: false).map(\.maybeScore) == [7, 3, 2, -1, nil, nil])
        #expect(rows.sorted(by: \.flag).map(\.flag) == [false, false, false, true, true, true])
    }

    /// An enum property sorts by its raw value (it did before `SortableType`, through `Comparable` raw values).
    @Test func enumKeyPathsSortByRawValue() throws {
        let rows = try #require(owner().realm).objects(SortableKeyPathRow.self)
        try #require(rows.realm).write {
            for (row, size) in zip(rows, [SortableKeyPathSize.large, .small, .medium, .large, .small, .medium]) {
                row.size = size
                row.maybeSize = size == .medium ? nil : size
            }
        }
        #expect(rows.sorted(by: \.size).map(\.size) == [.small, .small, .medium, .medium, .large, .large])
        #expect(rows.sorted(by: \.maybeSize).map(\.maybeSize) == [nil, nil, .small, .small, .large, .large])
    }
}

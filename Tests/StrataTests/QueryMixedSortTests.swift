import Foundation
import Testing

@testable import Strata

/// Sorting by an `AnyRealmValue` property orders values of different types as the Realm SDK's engine does: nil,
/// then booleans, then numbers of every kind by value, strings, binary data, dates, ObjectIds, UUIDs, objects.
@Suite("Sorting by a mixed (AnyRealmValue) property")
struct QueryMixedSortTests {
    /// Names in ascending order, each with its value, inserted in a scrambled order.
    private static func values(target: MixedQueryTarget) -> [(String, AnyRealmValue)] {
        [
            ("null", .none), ("false", .bool(false)), ("true", .bool(true)), ("int-1", .int(-1)),
            ("float1", .float(1)), ("double2.5", .double(2.5)), ("int3", .int(3)), ("decimal10", .decimal128(10)),
            ("stringA", .string("a")), ("stringB", .string("b")), ("data", .data(Data([0x00]))),
            ("date", .date(Date(timeIntervalSince1970: 0))),
            ("objectId", .objectId(ObjectId("6553a6f3c5b2a1e4d8f00001"))),
            ("uuid", .uuid(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!)), ("object", .object(target)),
        ]
    }

    private static let ascending = values(target: MixedQueryTarget()).map(\.0)

    private func rows() throws -> Results<MixedQueryRow> {
        let realm = try Realm(
            configuration: Realm.Configuration(
                inMemoryIdentifier: "mixed-sort-\(UUID())", objectTypes: [MixedQueryRow.self, MixedQueryTarget.self]))
        try realm.write {
            let target = realm.create(MixedQueryTarget.self, value: ["label": "t"])
            // A fixed scramble, so that the insertion order is no hint.
            let values = Self.values(target: target)
            for index in [7, 2, 13, 0, 9, 4, 11, 1, 14, 6, 3, 12, 5, 10, 8] {
                let (name, value) = values[index]
                realm.create(MixedQueryRow.self, value: ["name": name]).value = value
            }
        }
        return realm.objects(MixedQueryRow.self)
    }

    @Test func ascendingFollowsTheTypeOrderThenTheValue() throws {
        let rows = try rows()
        #expect(rows.sorted(byKeyPath: "value").map(\.name) == Self.ascending)
        #expect(rows.sorted(by: [SortDescriptor(keyPath: "value")]).map(\.name) == Self.ascending)
        #expect(rows.filter("TRUEPREDICATE SORT(value ASC)").map(\.name) == Self.ascending)
    }

    @Test func descendingIsTheReverse() throws {
        let rows = try rows()
        #expect(rows.sorted(byKeyPath: "value", ascending: false).map(\.name) == Self.ascending.reversed())
        #expect(rows.filter("TRUEPREDICATE SORT(value DESC)").map(\.name) == Self.ascending.reversed())
    }

    @Test func numbersOfEveryKindSortByValueAndNotWithDates() throws {
        let rows = try rows().filter("value.@type IN {'numeric', 'date'}")
        #expect(
            rows.sorted(byKeyPath: "value").map(\.name)
                == ["int-1", "float1", "double2.5", "int3", "decimal10", "date"])
    }
}

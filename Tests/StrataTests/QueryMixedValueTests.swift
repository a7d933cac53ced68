import Foundation
import Testing

@testable import Strata

/// One mixed value per row, named after what it holds.
final class MixedQueryRow: Object {
    @Persisted var name = ""
    @Persisted var value: AnyRealmValue = .none
}

/// The same, with the mixed value indexed: equality may then use the index.
final class IndexedMixedQueryRow: Object {
    @Persisted var name = ""
    @Persisted(indexed: true) var value: AnyRealmValue = .none
}

/// What a mixed value links to.
final class MixedQueryTarget: Object {
    @Persisted var label = ""
}

/// Queries on `AnyRealmValue` properties follow the seed SDK (its query engine's rules for mixed values): numbers
/// of every kind compare by value (`value == 1` holds for 1, 1.0, Float(1) and Decimal128(1)); a boolean is not a
/// number; strings and data compare with each other by their bytes; nil equals only nil; a comparison between
/// types that have no order between them is false (so `!=` holds); a nested list or dictionary is not nil.
@Suite("Queries on mixed values (AnyRealmValue)")
struct QueryMixedValueTests {
    private func rows() throws -> Realm {
        let realm = try Realm(
            configuration: Realm.Configuration(
                inMemoryIdentifier: "mixed-query-\(UUID())",
                objectTypes: [MixedQueryRow.self, IndexedMixedQueryRow.self, MixedQueryTarget.self]))
        try realm.write {
            let target = realm.create(MixedQueryTarget.self, value: ["label": "t"])
            let values: [(String, AnyRealmValue)] = [
                ("int1", .int(1)), ("double1", .double(1)), ("float1", .float(1)), ("decimal1", .decimal128(1)),
                ("true", .bool(true)), ("string1", .string("1")), ("stringA", .string("a")),
                ("dataA", .data(Data("a".utf8))), ("int5", .int(5)), ("double2.5", .double(2.5)), ("null", .none),
                ("date", .date(Date(timeIntervalSince1970: 1))), ("object", .object(target)),
                ("list", AnyRealmValue.fromArray([.int(1), .string("x"), .fromArray([.int(7)])])),
                ("dictionary", AnyRealmValue.fromDictionary(["key": .string("x"), "n": .int(3)])),
            ]
            for (name, value) in values {
                realm.create(MixedQueryRow.self, value: ["name": name]).value = value
                realm.create(IndexedMixedQueryRow.self, value: ["name": name]).value = value
            }
        }
        return realm
    }

    private func names(_ results: Results<MixedQueryRow>) -> [String] { results.map(\.name).sorted() }

    private static let all = [
        "dataA", "date", "decimal1", "dictionary", "double1", "double2.5", "float1", "int1", "int5", "list", "null",
        "object", "string1", "stringA", "true",
    ]
    private static let ones = ["decimal1", "double1", "float1", "int1"]

    @Test func equalityComparesNumbersByValueAcrossTypes() throws {
        let rows = try rows().objects(MixedQueryRow.self)
        #expect(names(rows.filter("value == 1")) == Self.ones)
        #expect(names(rows.filter("value == 1.0")) == Self.ones)
        #expect(names(rows.filter("value == %@", 1)) == Self.ones)
        #expect(names(rows.filter("value == %@", Decimal128(1))) == Self.ones)
        #expect(names(rows.filter("value == %@", AnyRealmValue.float(1))) == Self.ones)
        #expect(names(rows.where { $0.value == .int(1) }) == Self.ones)
        #expect(names(rows.where { $0.value == .double(1) }) == Self.ones)
        // `!=` holds for every other value, including nil, other types and nested collections.
        #expect(names(rows.filter("value != 1")) == Self.all.filter { !Self.ones.contains($0) })
        #expect(names(rows.where { $0.value != .int(1) }) == Self.all.filter { !Self.ones.contains($0) })
    }

    @Test func aBooleanIsNotANumber() throws {
        let rows = try rows().objects(MixedQueryRow.self)
        #expect(names(rows.filter("value == true")) == ["true"])
        #expect(names(rows.where { $0.value == .bool(true) }) == ["true"])
        #expect(!names(rows.filter("value >= 1")).contains("true"))
    }

    @Test func nilEqualsOnlyNilAndNestedCollectionsAreNotNil() throws {
        let rows = try rows().objects(MixedQueryRow.self)
        #expect(names(rows.filter("value == nil")) == ["null"])
        #expect(names(rows.filter("value == %@", NSNull())) == ["null"])
        #expect(names(rows.where { $0.value == .none }) == ["null"])
        #expect(names(rows.filter("value != nil")) == Self.all.filter { $0 != "null" })
    }

    @Test func stringsAndDataCompareByTheirBytes() throws {
        let rows = try rows().objects(MixedQueryRow.self)
        #expect(names(rows.filter("value == 'a'")) == ["dataA", "stringA"])
        #expect(names(rows.filter("value == %@", Data("a".utf8))) == ["dataA", "stringA"])
        #expect(names(rows.where { $0.value == .string("a") }) == ["dataA", "stringA"])
        // The string "1" is not the number 1.
        #expect(names(rows.filter("value == '1'")) == ["string1"])
    }

    @Test func orderingHoldsOnlyBetweenComparableTypes() throws {
        let rows = try rows().objects(MixedQueryRow.self)
        #expect(names(rows.filter("value > 1")) == ["double2.5", "int5"])
        #expect(names(rows.filter("value >= 1")) == (Self.ones + ["double2.5", "int5"]).sorted())
        #expect(names(rows.filter("value < 2.5")) == Self.ones)
        #expect(names(rows.filter("value <= %@", Decimal128(2.5))) == (Self.ones + ["double2.5"]).sorted())
        #expect(names(rows.filter("value < 'b'")) == ["dataA", "string1", "stringA"])
        #expect(names(rows.filter("value BETWEEN {2, 6}")) == ["double2.5", "int5"])
        #expect(names(rows.where { $0.value > .int(1) }) == ["double2.5", "int5"])
        #expect(names(rows.where { $0.value <= .double(1) }) == Self.ones)
    }

    @Test func inMatchesAnyValueOfTheList() throws {
        let rows = try rows().objects(MixedQueryRow.self)
        #expect(names(rows.filter("value IN {1, 'a', nil}")) == (Self.ones + ["dataA", "null", "stringA"]).sorted())
        #expect(names(rows.filter("value IN %@", [AnyRealmValue.int(5), .bool(true)])) == ["int5", "true"])
        #expect(names(rows.where { $0.value.in([.int(5), .string("1")]) }) == ["int5", "string1"])
    }

    @Test func aLinkComparesWithTheSameObject() throws {
        let realm = try rows()
        let rows = realm.objects(MixedQueryRow.self)
        let target = try #require(realm.objects(MixedQueryTarget.self).first)
        #expect(names(rows.filter("value == %@", target)) == ["object"])
        #expect(names(rows.where { $0.value == .object(target) }) == ["object"])
        #expect(names(rows.filter("value != %@", target)).count == Self.all.count - 1)
    }

    @Test func typeNamesOfMixedValues() throws {
        let rows = try rows().objects(MixedQueryRow.self)
        #expect(names(rows.filter("value.@type == 'int'")) == ["int1", "int5"])
        #expect(
            names(rows.filter("value.@type == 'numeric'"))
                == ["decimal1", "double1", "double2.5", "float1", "int1", "int5"])
        #expect(names(rows.filter("value.@type == 'string'")) == ["string1", "stringA"])
        #expect(names(rows.filter("value.@type == 'binary'")) == ["dataA"])
        #expect(names(rows.filter("value.@type == 'date'")) == ["date"])
        #expect(names(rows.filter("value.@type == 'decimal128'")) == ["decimal1"])
        #expect(names(rows.filter("value.@type == 'bool'")) == ["true"])
        #expect(names(rows.filter("value.@type == 'object'")) == ["object"])
        #expect(names(rows.filter("value.@type == 'list'")) == ["list"])
        #expect(names(rows.filter("value.@type == 'dictionary'")) == ["dictionary"])
        #expect(names(rows.filter("value.@type == 'null'")) == ["null"])
    }

    @Test func subscriptsIntoNestedLists() throws {
        let rows = try rows().objects(MixedQueryRow.self)
        #expect(names(rows.filter("value[0] == 1")) == ["list"])
        #expect(names(rows.filter("value[1] == 'x'")) == ["list"])
        #expect(names(rows.filter("value[2][0] == 7")) == ["list"])
        #expect(names(rows.filter("value[9] == 1")) == [])
        #expect(names(rows.filter("value[FIRST] == 1")) == ["list"])
        #expect(names(rows.filter("value[LAST].@type == 'list'")) == ["list"])
        #expect(names(rows.filter("value[SIZE] == 3")) == ["list"])
        #expect(names(rows.filter("value[*] == 'x'")) == ["dictionary", "list"])
        #expect(names(rows.filter("value[1].@type == 'string'")) == ["list"])
        #expect(names(rows.where { $0.value[0] == .int(1) }) == ["list"])
        #expect(names(rows.where { $0.value[2][0] == .double(7) }) == ["list"])
    }

    @Test func subscriptsIntoNestedDictionaries() throws {
        let rows = try rows().objects(MixedQueryRow.self)
        #expect(names(rows.filter("value['key'] == 'x'")) == ["dictionary"])
        #expect(names(rows.filter("value['n'] > 2")) == ["dictionary"])
        #expect(names(rows.filter("value['key'].@type == 'string'")) == ["dictionary"])
        #expect(names(rows.filter("value['missing'] == 'x'")) == [])
        #expect(names(rows.filter("value[SIZE] == 2")) == ["dictionary"])
        #expect(names(rows.where { $0.value["key"] == .string("x") }) == ["dictionary"])
        #expect(names(rows.where { $0.value["n"] == .int(3) }) == ["dictionary"])
    }

    @Test func nestedCollectionArgumentsAreATypedError() throws {
        let rows = try rows().objects(MixedQueryRow.self)
        rows.expectInvalidQuery(
            "value == %@", [AnyRealmValue.fromArray([.int(1)])], reason: "a nested list or dictionary")
        rows.expectInvalidQuery(
            "value == %@", [AnyRealmValue.fromDictionary(["k": .int(1)])], reason: "a nested list or dictionary")
        #expect(throws: Realm.Error.self) {
            _ = try rows.checkedWhere { $0.value == AnyRealmValue.fromArray([.int(1)]) }
        }
    }

    @Test func anIndexGivesTheSameAnswers() throws {
        let realm = try rows()
        let plain = realm.objects(MixedQueryRow.self)
        let indexed = realm.objects(IndexedMixedQueryRow.self)
        for query in ["value == nil", "value != nil", "value == 1", "value == 'a'", "value IN {1, nil, 'x'}"] {
            #expect(indexed.filter(query).map(\.name).sorted() == names(plain.filter(query)), "\(query)")
        }
    }
}

import Foundation
import Testing

@testable import Strata

/// A list and a map of mixed values, whose elements may themselves be lists or dictionaries.
final class MixedCollectionRow: Object {
    @Persisted var name = ""
    @Persisted var anyList: List<AnyRealmValue>
    @Persisted var anyMap: Map<String, AnyRealmValue>
}

/// Mixed values inside a `List<AnyRealmValue>` or `Map<String, AnyRealmValue>` property, as the Realm Query
/// Language reference and the Swift SDK's type-safe queries define them: a nested list or dictionary element is a
/// collection (never nil, never equal to a scalar), and it can be subscripted (`anyList[0][1]`,
/// `anyMap['k'][0]`) and asked for its type (`anyMap['k'].@type == 'list'`).
@Suite("Queries into nested collections of List<AnyRealmValue> and Map<String, AnyRealmValue>")
struct QueryNestedMixedCollectionTests {
    private func rows() throws -> Results<MixedCollectionRow> {
        let realm = try Realm(
            configuration: Realm.Configuration(
                inMemoryIdentifier: "nested-mixed-\(UUID())", objectTypes: [MixedCollectionRow.self]))
        try realm.write {
            let nested = realm.create(MixedCollectionRow.self, value: ["name": "nested"])
            nested.anyList.append(AnyRealmValue.fromArray([.int(1), .int(2)]))
            nested.anyList.append(.string("x"))
            nested.anyMap["k"] = AnyRealmValue.fromArray([.int(5), .int(6)])
            nested.anyMap["s"] = .string("str")
            let flat = realm.create(MixedCollectionRow.self, value: ["name": "flat"])
            flat.anyList.append(objectsIn: [.int(1), .double(2)])
            flat.anyMap["k"] = .int(5)
            let dictionary = realm.create(MixedCollectionRow.self, value: ["name": "dictionary"])
            dictionary.anyList.append(AnyRealmValue.fromDictionary(["a": .int(1)]))
            dictionary.anyMap["k"] = AnyRealmValue.fromDictionary(["inner": .int(2)])
            realm.create(MixedCollectionRow.self, value: ["name": "empty"])
        }
        return realm.objects(MixedCollectionRow.self)
    }

    private func names(_ results: Results<MixedCollectionRow>) -> [String] { results.map(\.name).sorted() }

    @Test func nestedElementsOfAListAreCollectionsNotNil() throws {
        let rows = try rows()
        #expect(names(rows.filter("ANY anyList == nil")) == [])
        #expect(names(rows.filter("anyList[0] == nil")) == [])
        #expect(names(rows.filter("anyList[0].@type == 'list'")) == ["nested"])
        #expect(names(rows.filter("anyList[0].@type == 'dictionary'")) == ["dictionary"])
        #expect(names(rows.filter("ANY anyList.@type == 'string'")) == ["nested"])
    }

    @Test func aNestedCollectionNeverEqualsAScalar() throws {
        let rows = try rows()
        #expect(names(rows.filter("ANY anyList == 1")) == ["flat"])
        #expect(names(rows.filter("anyList[0] == 1")) == ["flat"])
        #expect(names(rows.filter("anyList[0] != 1")) == ["dictionary", "nested"])
        #expect(names(rows.where { $0.anyList == .int(1) }) == ["flat"])
        #expect(names(rows.where { $0.anyList.contains(.double(1)) }) == ["flat"])
    }

    @Test func listElementsAreSubscripted() throws {
        let rows = try rows()
        #expect(names(rows.filter("anyList[0][1] == 2")) == ["nested"])
        #expect(names(rows.filter("anyList[0][0] == 1.0")) == ["nested"])
        #expect(names(rows.filter("anyList[1] == 'x'")) == ["nested"])
        #expect(names(rows.filter("anyList[LAST] == 2")) == ["flat"])
        #expect(names(rows.filter("anyList[FIRST][SIZE] == 2")) == ["nested"])
        #expect(names(rows.filter("anyList[0]['a'] == 1")) == ["dictionary"])
        #expect(names(rows.filter("anyList[*][*] == 2")) == ["nested"])
        #expect(names(rows.filter("anyList[5] == 1")) == [])
    }

    @Test func mapValuesAreSubscripted() throws {
        let rows = try rows()
        #expect(names(rows.filter("anyMap['k'][0] == 5")) == ["nested"])
        #expect(names(rows.filter("anyMap['k'] == 5")) == ["flat"])
        #expect(names(rows.filter("anyMap['k'].@type == 'list'")) == ["nested"])
        #expect(names(rows.filter("anyMap['k'].@type == 'dictionary'")) == ["dictionary"])
        #expect(names(rows.filter("anyMap['k']['inner'] == 2")) == ["dictionary"])
        #expect(names(rows.filter("anyMap['k'] == nil")) == ["empty"])
        #expect(names(rows.filter("ANY anyMap.@values == nil")) == [])
        #expect(names(rows.where { $0.anyMap["k"][0] == .int(5) }) == ["nested"])
        #expect(names(rows.where { $0.anyMap["k"]["inner"] == .int(2) }) == ["dictionary"])
        #expect(names(rows.where { $0.anyMap["k"].any == .int(6) }) == ["nested"])
        #expect(names(rows.where { $0.anyMap["k"] == .none }) == ["empty"])
    }

    @Test func positionsOnAListOfOtherValuesAreATypedError() throws {
        let realm = try Realm(
            configuration: Realm.Configuration(
                inMemoryIdentifier: "nested-mixed-errors-\(UUID())", objectTypes: [QueryListRow.self]))
        let rows = realm.objects(QueryListRow.self)
        rows.expectInvalidQuery("tags[0] == 'a'", reason: "needs a mixed value holding a list or dictionary")
        rows.expectInvalidQuery("name[0] == 'a'", reason: "needs a mixed value holding a list or dictionary")
    }
}

/// A list of strings: positions into it are not subscripts of a mixed value.
final class QueryListRow: Object {
    @Persisted var name = ""
    @Persisted var tags: List<String>
}

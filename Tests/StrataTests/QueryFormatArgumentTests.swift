import Foundation
import Testing

@testable import Strata

/// NSPredicate-style format arguments, the most common way Realm Swift code passes values to `filter(_:_:)`:
/// `%@` takes the next argument as a value (numbers, strings, dates, data, UUIDs, ObjectIds, decimals, nil, managed
/// objects, and arrays or sets for `IN`), `%K` the next argument as a key path, `%d`/`%i`/`%ld`/`%f`/`%lf` are
/// values too, and a query that mixes them with `$0`-style arguments is an error.
@Suite("Query format arguments: %@, %K, %d, %f")
struct QueryFormatArgumentTests {
    @Test func valuesOfEveryTypeThroughPercentAt() throws {
        let t = try QueryTowns()
        #expect(t.names(t.towns.filter("population > %@", 100_000)) == ["Bergen", "Oslo"])
        #expect(t.names(t.towns.filter("area < %@", 100.5)) == ["Moss"])
        #expect(t.names(t.towns.filter("area == %@", Float(454))) == ["Oslo"])
        #expect(t.names(t.towns.filter("coastal == %@", false)) == ["Moss"])
        #expect(t.names(t.towns.filter("name == %@", "Bergen")) == ["Bergen"])
        #expect(t.names(t.towns.filter("founded < %@", Date(timeIntervalSince1970: -28_800_000_000))) == ["Oslo"])
        #expect(t.names(t.towns.filter("crest == %@", Data([1, 2, 3]))) == ["Oslo"])
        #expect(t.names(t.towns.filter("registry == %@", QueryTowns.osloRegistry)) == ["Oslo"])
        #expect(t.names(t.towns.filter("code == %@", QueryTowns.osloCode)) == ["Oslo"])
        #expect(t.names(t.towns.filter("budget == %@", Decimal128(12.5))) == ["Oslo"])
        #expect(t.names(t.towns.filter("mayor == %@", t.ada)) == ["Oslo"])
        #expect(t.names(t.towns.filter("population == %@", Int64(50_000))) == ["Moss"])
    }

    @Test func nilArgumentsMatchNil() throws {
        let t = try QueryTowns()
        let noCode: ObjectId? = nil
        #expect(t.names(t.towns.filter("code == %@", noCode as Any)) == ["Bergen", "Moss"])
        #expect(t.names(t.towns.filter("mayor != %@", NSNull())) == ["Oslo"])
        // An optional holding a value is its value.
        let bergen: String? = "Bergen"
        #expect(t.names(t.towns.filter("name == %@", bergen as Any)) == ["Bergen"])
    }

    @Test func arraysSetsAndListsForIn() throws {
        let t = try QueryTowns()
        #expect(t.names(t.towns.filter("name IN %@", ["Oslo", "Moss"])) == ["Moss", "Oslo"])
        #expect(t.names(t.towns.filter("population IN %@", Set([50_000, 285_000]))) == ["Bergen", "Moss"])
        #expect(t.names(t.towns.filter("ANY tags IN %@", t.oslo.tags)) == ["Bergen", "Oslo"])
        #expect(t.names(t.towns.filter("mayor IN %@", [t.ada])) == ["Oslo"])
        #expect(t.names(t.towns.filter("population BETWEEN %@", [60_000, 300_000])) == ["Bergen"])
        #expect(t.names(t.towns.filter("population BETWEEN {%@, %@}", 60_000, 300_000)) == ["Bergen"])
    }

    @Test func percentKNamesTheKeyPath() throws {
        let t = try QueryTowns()
        #expect(t.names(t.towns.filter("%K == %@", "name", "Moss")) == ["Moss"])
        #expect(t.names(t.towns.filter("%K.@count > %d", "citizens", 1)) == ["Oslo"])
        #expect(t.names(t.towns.filter("%K == %@", "mayor.name", "Ada")) == ["Oslo"])
        #expect(t.names(t.towns.filter("%K BEGINSWITH[c] %@ AND %K > %@", "name", "o", "area", 400)) == ["Oslo"])
        // The same text with another key path is another query (its structure depends on the argument).
        #expect(t.names(t.towns.filter("%K == %@", "name", "Oslo")) == ["Oslo"])
        #expect(t.names(t.towns.filter("%K == %@", "coastal", false)) == ["Moss"])
    }

    @Test func printfStyleSpecifiersAreValuesToo() throws {
        let t = try QueryTowns()
        #expect(t.names(t.towns.filter("population > %d", 100_000)) == ["Bergen", "Oslo"])
        #expect(t.names(t.towns.filter("population < %i", 100_000)) == ["Moss"])
        #expect(t.names(t.towns.filter("population == %ld", 285_000)) == ["Bergen"])
        #expect(t.names(t.towns.filter("area > %f", 460.0)) == ["Bergen"])
        #expect(t.names(t.towns.filter("area < %lf", 100.0)) == ["Moss"])
    }

    @Test func percentInsideAStringIsText() throws {
        let t = try QueryTowns()
        try t.realm.write { t.oslo.name = "100%@" }
        #expect(t.names(t.towns.filter("name == '100%@'")) == ["100%@"])
        #expect(t.names(t.towns.filter("name LIKE %@", "100%*")) == ["100%@"])
    }

    @Test func everyQueryableCollectionTakesFormatArguments() throws {
        let t = try QueryTowns()
        #expect(t.names(t.oslo.citizens.filter("age > %@", 10)) == ["Ada"])
        #expect(t.names(t.ada.towns.filter("name == %@", "Oslo")) == ["Oslo"])
        #expect(t.names(t.realm.objects(QueryCitizen.self).filter("age < %d", 30)) == ["Bo", "Dee"])
        #expect(try t.names(t.towns.checkedFilter("%K == %@", "name", "Moss")) == ["Moss"])
        #expect(t.towns.sorted(byKeyPath: "name").index(matching: "population < %@", 100_000) == 1)
    }

    @Test func malformedFormatQueriesAreTypedErrors() throws {
        let t = try QueryTowns()
        #expect(t.rejection("population > %@ AND name == $0", 1, "Oslo")?.contains("not both") == true)
        #expect(t.rejection("name == $0 OR population > %d", "Oslo", 1)?.contains("not both") == true)
        #expect(t.rejection("population > %@ AND area > %@", 1)?.contains("has no argument (1 given)") == true)
        #expect(t.rejection("%K == 1")?.contains("%K has no argument (0 given)") == true)
        #expect(t.rejection("%K == 1", 7)?.contains("%K takes a key path string") == true)
        #expect(t.rejection("%K == 1", "mayor..name")?.contains("is not a key path") == true)
        #expect(t.rejection("%K == 1", "name == 1 OR name")?.contains("is not a key path") == true)
        #expect(t.rejection("%K == 1", "nope")?.contains("QueryTown has no property nope") == true)
        #expect(t.rejection("population > %v", 1)?.contains("unknown format specifier %v") == true)
        #expect(t.rejection("population > %")?.contains("must follow %") == true)
        #expect(t.rejection("population BETWEEN %@", [1])?.contains("array of two bounds") == true)
        #expect(t.rejection("population == %@", ["a": 1])?.contains("not a valid query argument") == true)
    }
}

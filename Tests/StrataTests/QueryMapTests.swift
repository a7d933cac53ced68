import Foundation
import Testing

@testable import Strata

/// Maps in queries, as the Realm SDK documents them: `map['key']` is the value at a key (nil when absent),
/// `@keys` and `@values` the keys and values (a condition holds when it holds for any of them, or with `ALL`/`NONE`
/// for every or none), `@count` the number of entries and `@sum`/`@avg`/`@min`/`@max` aggregate the values; the
/// same in `where { }` as `$0.map["key"]`, `.keys`, `.values`, `.contains`, `.containsAny(in:)`, `.count` and
/// `.sum`/`.avg`/`.min`/`.max`.
@Suite("Query maps: map['key'], @keys, @values, aggregates")
struct QueryMapTests {
    @Test func subscriptReadsTheValueAtAKey() throws {
        let t = try QueryTowns()
        #expect(try t.towns("parks['Oslo'] == 'Frogner'") == ["Oslo"])
        #expect(try t.towns("parks[\"Oslo\"] == 'Frogner'") == ["Oslo"])
        #expect(try t.towns("parks['Oslo'] ==[c] 'FROGNER'") == ["Oslo"])
        #expect(try t.towns("parks['East'] CONTAINS 'ø'") == ["Oslo"])
        #expect(try t.towns("parks['Oslo'].@size == 7") == ["Oslo"])
        #expect(try t.towns("visitors['summer'] > 20") == ["Oslo"])
        #expect(try t.towns("visitors['summer'] >= 10") == ["Bergen", "Oslo"])
        // An absent key reads as nil: == nil holds, comparisons with values do not.
        #expect(try t.towns("visitors['winter'] == nil") == ["Bergen", "Moss"])
        #expect(try t.towns("visitors['winter'] < 10") == ["Oslo"])
        #expect(try t.towns("parks['Oslo'] != 'Frogner'") == ["Bergen", "Moss"])
    }

    @Test func subscriptFollowsALinkAtAKey() throws {
        let t = try QueryTowns()
        #expect(try t.towns("wardens['north'].age < 10") == ["Oslo"])
        #expect(try t.towns("wardens['south'].name == 'Dee'") == ["Bergen"])
        #expect(try t.towns("wardens['south'].name == nil") == ["Moss", "Oslo"])
        #expect(try t.towns("wardens['north'] == %@", t.citizens.filter("name == 'Bo'").first!) == ["Oslo"])
        #expect(t.names(t.towns.where { $0.wardens["north"].age == 8 }) == ["Oslo"])
    }

    @Test func keysValuesAndCounts() throws {
        let t = try QueryTowns()
        #expect(try t.towns("parks.@keys == 'East'") == ["Oslo"])
        #expect(try t.towns("'Bergen' IN parks.@keys") == ["Bergen"])
        #expect(try t.towns("parks.@values == 'Nygård'") == ["Bergen"])
        #expect(try t.towns("ANY visitors.@values > 20") == ["Oslo"])
        #expect(try t.towns("ALL visitors.@values > 6") == ["Bergen", "Moss"])
        #expect(try t.towns("NONE visitors.@values > 6") == ["Moss"])
        #expect(try t.towns("parks.@values BEGINSWITH 'F'") == ["Oslo"])
        #expect(try t.towns("visitors.@count == 2") == ["Oslo"])
        #expect(try t.towns("parks.@size == 0") == ["Moss"])
    }

    @Test func aggregatesOfValues() throws {
        let t = try QueryTowns()
        #expect(try t.towns("visitors.@sum == 35") == ["Oslo"])
        #expect(try t.towns("visitors.@avg == 17.5") == ["Oslo"])
        #expect(try t.towns("visitors.@min == 10") == ["Bergen"])
        #expect(try t.towns("visitors.@max > 20") == ["Oslo"])
    }

    @Test func typeSafeQueriesOverMaps() throws {
        let t = try QueryTowns()
        #expect(t.names(t.towns.where { $0.parks["Oslo"] == "Frogner" }) == ["Oslo"])
        #expect(t.names(t.towns.where { $0.visitors["summer"] > 5 }) == ["Bergen", "Oslo"])
        #expect(t.names(t.towns.where { $0.parks.keys == "Bergen" }) == ["Bergen"])
        #expect(t.names(t.towns.where { $0.parks.keys.starts(with: "E") }) == ["Oslo"])
        #expect(t.names(t.towns.where { $0.parks.values.contains("gård") }) == ["Bergen"])
        #expect(t.names(t.towns.where { $0.parks.contains("Tøyen") }) == ["Oslo"])
        #expect(t.names(t.towns.where { $0.parks.containsAny(in: ["Tøyen", "Nygård"]) }) == ["Bergen", "Oslo"])
        #expect(t.names(t.towns.where { $0.visitors.count == 0 }) == ["Moss"])
        #expect(t.names(t.towns.where { $0.visitors.sum > 20 }) == ["Oslo"])
        #expect(t.names(t.towns.where { $0.visitors.avg == 10 }) == ["Bergen"])
        #expect(t.names(t.towns.where { $0.visitors.min < 10 }) == ["Oslo"])
        #expect(t.names(t.towns.where { $0.visitors.max == 10 }) == ["Bergen"])
    }

    @Test func malformedMapQueriesAreTypedErrors() throws {
        let t = try QueryTowns()
        #expect(t.rejection("name['x'] == 'x'")?.contains("['x'] needs a map; QueryTown.name is not one") == true)
        #expect(t.rejection("parks[Oslo] == 'x'")?.contains("expected a quoted map key") == true)
        #expect(t.rejection("parks['Oslo' == 'x'")?.contains("expected ] to close the map key") == true)
        #expect(t.rejection("parks['Oslo'] > 3")?.contains("cannot be compared with the integer 3") == true)
    }
}

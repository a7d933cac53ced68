import Foundation
import Testing

@testable import Strata

/// The Realm Query Language reference, section by section, on `QueryTowns`: each construct it documents gives
/// the answer the reference states. (Arithmetic and `obj(…)` object literals have their own suites; comparisons
/// between two literal lists are rejected, as core rejects them: see Documentation/Queries.md.)
@Suite("Query language reference: every construct")
struct QueryLanguageReferenceTests {
    @Test func comparisonAndLogicalOperators() throws {
        let t = try QueryTowns()
        #expect(try t.towns("population == 285000") == ["Bergen"])
        #expect(try t.towns("population = 285000") == ["Bergen"])
        #expect(try t.towns("population != 285000") == ["Moss", "Oslo"])
        #expect(try t.towns("population <> 285000") == ["Moss", "Oslo"])
        #expect(try t.towns("population > 285000 OR population < 60000") == ["Moss", "Oslo"])
        #expect(try t.towns("population >= 285000 && area <= 460") == ["Oslo"])
        #expect(try t.towns("!(coastal == true) || population > 500000") == ["Moss", "Oslo"])
        #expect(try t.towns("area BETWEEN {60, 460}") == ["Moss", "Oslo"])
        #expect(try t.towns("TRUEPREDICATE") == ["Bergen", "Moss", "Oslo"])
        #expect(try t.towns("FALSEPREDICATE") == [])
        #expect(try t.towns("code == nil") == ["Bergen", "Moss"])
        #expect(try t.towns("code == NULL") == ["Bergen", "Moss"])
    }

    @Test func listsOnTheRightTakeQuantifiers() throws {
        let t = try QueryTowns()
        // "age == ANY {18, 21}" and "age == {18, 21}" are the same; NONE is the opposite.
        #expect(try t.towns("population == {50000, 285000}") == ["Bergen", "Moss"])
        #expect(try t.towns("population == ANY {50000, 285000}") == ["Bergen", "Moss"])
        #expect(try t.towns("population == NONE {50000, 285000}") == ["Oslo"])
        #expect(try t.towns("population IN {50000, 285000}") == ["Bergen", "Moss"])
        #expect(try t.towns("population > ALL {60000, 200000}") == ["Bergen", "Oslo"])
        #expect(try t.towns("population > ANY {60000, 300000}") == ["Bergen", "Oslo"])
        #expect(try t.towns("population < NONE {60000, 300000}") == ["Oslo"])
        #expect(try t.towns("population == NONE $0", [700_000]) == ["Bergen", "Moss"])
        #expect(try t.towns("ANY tags == {'wet', 'dry'}") == ["Bergen"])
        #expect(try t.towns("ALL tags == {'old', 'big'}") == ["Moss", "Oslo"])
        #expect(
            t.rejection("ALL tags == NONE {'x'}")?.contains("passes through a collection: compare it with ANY") == true)
    }

    @Test func stringOperatorsAndModifiers() throws {
        let t = try QueryTowns()
        #expect(try t.towns("name BEGINSWITH 'B'") == ["Bergen"])
        #expect(try t.towns("name ENDSWITH 'ss'") == ["Moss"])
        #expect(try t.towns("name CONTAINS 'sl'") == ["Oslo"])
        #expect(try t.towns("name CONTAINS[c] 'SL'") == ["Oslo"])
        #expect(try t.towns("name LIKE 'M?ss'") == ["Moss"])
        #expect(try t.towns("name LIKE '*e*'") == ["Bergen"])
        #expect(try t.towns("name ==[c] 'oslo'") == ["Oslo"])
        #expect(try t.towns("parks.@values ==[cd] 'NYGARD'") == ["Bergen"])
    }

    @Test func objectIdUuidBinaryAndDecimalLiterals() throws {
        let t = try QueryTowns()
        #expect(try t.towns("code == oid(6553a6f3c5b2a1e4d8f00001)") == ["Oslo"])
        #expect(try t.towns("registry == uuid(E621E1F8-C36C-495A-93FC-0C247A3E6E5F)") == ["Oslo"])
        #expect(try t.towns("crest == B64\"AQID\"") == ["Oslo"])
        #expect(try t.towns("crest == B64''") == ["Moss"])
        #expect(try t.towns("budget == 12.5") == ["Oslo"])
        #expect(try t.towns("budget > 1.2e1") == ["Oslo"])
        #expect(t.rejection("crest == B64\"%%\"")?.contains("is not base 64") == true)
    }

    @Test func typeOperatorDatesAggregatesAndCollections() throws {
        let t = try QueryTowns()
        #expect(try t.towns("ANY tags.@type == 'string'") == ["Bergen", "Oslo"])
        #expect(try t.towns("founded < 1060-01-01@00:00:00") == ["Oslo"])
        #expect(try t.towns("founded < 1060-01-01T00:00:00") == ["Oslo"])
        #expect(try t.towns("founded > T-8000000000:0") == ["Moss"])
        #expect(try t.towns("founded BETWEEN {1000-01-01@00:00:00, 1100-01-01@00:00:00}") == ["Bergen", "Oslo"])
        #expect(try t.towns("citizens.@avg.age > 30") == ["Bergen"])
        #expect(try t.towns("citizens.@count > 1") == ["Oslo"])
        #expect(try t.towns("citizens.@max.age > 60") == ["Bergen"])
        #expect(try t.towns("ALL citizens.age > 30") == ["Bergen", "Moss"])
        #expect(try t.towns("SOME citizens.age < 10") == ["Oslo"])
        #expect(try t.towns("NONE citizens.age > 30") == ["Moss"])
    }

    @Test func backlinksSubqueriesAndResultOperators() throws {
        let t = try QueryTowns()
        #expect(t.names(t.citizens.filter("@links.QueryTown.citizens.@count == 0")) == ["Dee"])
        #expect(t.names(t.citizens.filter("ANY @links.QueryTown.citizens.name == 'Oslo'")) == ["Ada", "Bo"])
        #expect(t.names(t.citizens.filter("towns.@count == 1 AND towns.population > 500000")) == ["Ada", "Bo"])
        #expect(t.names(t.citizens.filter("@links.@count > 1")) == ["Ada", "Bo"])  // Ada is also mayor, Bo a warden
        #expect(try t.towns("SUBQUERY(citizens, $c, $c.age > 30 AND $c.name BEGINSWITH 'C').@count > 0") == ["Bergen"])
        #expect(t.towns.filter("TRUEPREDICATE SORT(area DESC) LIMIT(2)").map(\.name) == ["Bergen", "Oslo"])
        #expect(t.towns.filter("coastal == true DISTINCT(coastal)").count == 1)
    }
}

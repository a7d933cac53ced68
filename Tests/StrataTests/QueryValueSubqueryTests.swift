import Foundation
import Testing

@testable import Strata

/// Subquery counts over lists and sets of values, as the Realm SDK's typed queries build them
/// (`($0.intList > 5).count > 1` becomes `SUBQUERY(intList, $col1, $col1 > 5).@count > 1`) and as core's query
/// language accepts them: the condition is about each value, every part of it about the same one.
@Suite("Query subquery counts over lists and sets of values")
struct QueryValueSubqueryTests {
    // Oslo rates 5 and 4 and is tagged big, old; Bergen rates 3 and is tagged old, wet; Moss has neither.

    @Test func aTypedCountCountsTheValuesSatisfyingTheCondition() throws {
        let t = try QueryTowns()
        #expect(t.names(t.towns.where { ($0.ratings > 3).count > 1 }) == ["Oslo"])
        #expect(t.names(t.towns.where { ($0.ratings > 4).count == 1 }) == ["Oslo"])
        #expect(t.names(t.towns.where { ($0.ratings >= 3).count == 1 }) == ["Bergen"])
        #expect(t.names(t.towns.where { ($0.ratings > 100).count == 0 }) == ["Bergen", "Moss", "Oslo"])
        #expect(t.names(t.towns.where { ($0.tags == "old").count == 1 }) == ["Bergen", "Oslo"])
        #expect(t.names(t.towns.where { ($0.tags != "old").count == 1 }) == ["Bergen", "Oslo"])
        #expect(t.names(t.towns.where { ($0.labels == "port").count > 0 }) == ["Bergen"])
    }

    @Test func everyConditionOfTheCountHoldsForTheSameValue() throws {
        let t = try QueryTowns()
        // Without the count, 5 > 4 and 4 < 5 are two different ratings of Oslo.
        #expect(t.names(t.towns.where { $0.ratings > 4 && $0.ratings < 5 }) == ["Oslo"])
        #expect(t.names(t.towns.where { ($0.ratings > 4 && $0.ratings < 5).count > 0 }).isEmpty)
        #expect(t.names(t.towns.where { ($0.ratings > 3 && $0.ratings < 5).count == 1 }) == ["Oslo"])
        #expect(t.names(t.towns.where { ($0.ratings == 3 || $0.ratings == 5).count == 1 }) == ["Bergen", "Oslo"])
        #expect(t.names(t.towns.where { (!($0.ratings == 5)).count == 1 }) == ["Bergen", "Oslo"])
    }

    @Test func theQueryLanguageSubqueryAcceptsAListOrSetOfValues() throws {
        let t = try QueryTowns()
        #expect(try t.towns("SUBQUERY(ratings, $r, $r > 3).@count > 1") == ["Oslo"])
        #expect(try t.towns("SUBQUERY(ratings, $r, $r > 3 AND $r < 5).@count == 1") == ["Oslo"])
        #expect(try t.towns("SUBQUERY(tags, $t, $t BEGINSWITH[c] 'W').@count == 1") == ["Bergen"])
        #expect(try t.towns("SUBQUERY(labels, $l, $l IN {'port', 'capital'}).@count == 1") == ["Bergen", "Oslo"])
        #expect(try t.towns("SUBQUERY(ratings, $r, $r * 2 > 9).@count == 1") == ["Oslo"])
        #expect(try t.towns("SUBQUERY(ratings, $r, $r > $0).@count == 2", 3) == ["Oslo"])
    }

    @Test func aValueHasNoPropertiesAndAMapIsNotCounted() throws {
        let t = try QueryTowns()
        let property = t.rejection("SUBQUERY(ratings, $r, $r.age > 3).@count > 0")
        #expect(property?.contains("$r stands for a value of") == true, "\(property ?? "accepted")")
        let map = t.rejection("SUBQUERY(visitors, $v, $v > 3).@count > 0")
        #expect(map?.contains("SUBQUERY needs a collection of objects or values") == true, "\(map ?? "accepted")")
        let two = rejection { try t.towns.checkedWhere { ($0.ratings > 3 && $0.tags == "old").count > 0 } }
        #expect(two?.contains("must all be on one collection") == true, "\(two ?? "accepted")")
    }

    /// The reason `body` is rejected with, nil when it is accepted.
    private func rejection(_ body: () throws -> Results<QueryTown>) -> String? {
        do {
            _ = try body()
            return nil
        } catch let Realm.Error.invalidQuery(_, _, reason) {
            return reason
        } catch {
            return "\(error)"
        }
    }
}

import Foundation
import Testing

@testable import Strata

/// The Realm SDK's type-safe queries over collections (its `Query` reference: "Collections", "Collection
/// Aggregation", "Subquery"): comparing a list or set with an element value holds when some element matches,
/// `.contains(range)` on a collection holds when its `@min` and `@max` lie in the range (every element does, and an
/// empty collection never does), `.min`/`.max`/`.sum`/`.avg` aggregate a collection or, after a property of a
/// collection of objects, that property over the objects (`$0.dogs.age.avg`), and `(condition).count` counts the
/// elements of one collection that satisfy every part of the condition together (RQL `SUBQUERY(…).@count`).
@Suite("Query typed collections: implicit ANY, ranges, aggregates, subquery counts")
struct QueryTypedCollectionTests {
    @Test func comparingACollectionWithAnElementMeansAnyElement() throws {
        let t = try QueryTowns()
        #expect(t.names(t.towns.where { $0.ratings == 5 }) == ["Oslo"])
        #expect(t.names(t.towns.where { $0.ratings != 5 }) == ["Bergen", "Oslo"])
        #expect(t.names(t.towns.where { $0.ratings > 3 }) == ["Oslo"])
        #expect(t.names(t.towns.where { $0.ratings <= 3 }) == ["Bergen"])
        #expect(t.names(t.towns.where { $0.tags == "old" }) == ["Bergen", "Oslo"])
        #expect(t.names(t.towns.where { $0.labels == "port" }) == ["Bergen"])
        // Through a list of objects, a property compares for any object.
        #expect(t.names(t.towns.where { $0.citizens.age > 50 }) == ["Bergen"])
        #expect(t.names(t.towns.where { $0.citizens.name == "Bo" }) == ["Oslo"])
    }

    @Test func aRangeOnACollectionHoldsWhenEveryElementIsInIt() throws {
        let t = try QueryTowns()
        #expect(t.names(t.towns.where { $0.ratings.contains(4...5) }) == ["Oslo"])
        #expect(t.names(t.towns.where { $0.ratings.contains(3..<5) }) == ["Bergen"])
        // Moss has no ratings: an empty collection is in no range.
        #expect(t.names(t.towns.where { $0.ratings.contains(1...10) }) == ["Bergen", "Oslo"])
        #expect(t.names(t.towns.where { $0.visitors.contains(5...30) }) == ["Bergen", "Oslo"])
        #expect(t.names(t.towns.where { $0.visitors.contains(10...30) }) == ["Bergen"])
    }

    @Test func aggregatesOfACollectionAndOfAPropertyThroughOne() throws {
        let t = try QueryTowns()
        #expect(t.names(t.towns.where { $0.ratings.min == 3 }) == ["Bergen"])
        #expect(t.names(t.towns.where { $0.ratings.max == 5 }) == ["Oslo"])
        #expect(t.names(t.towns.where { $0.ratings.sum == 9 }) == ["Oslo"])
        #expect(t.names(t.towns.where { $0.ratings.avg > 4 }) == ["Oslo"])
        #expect(t.names(t.towns.where { $0.visitors.sum == 35 }) == ["Oslo"])
        // Ada 36 and Bo 8 live in Oslo, Cy 61 in Bergen.
        #expect(t.names(t.towns.where { $0.citizens.age.avg > 30 }) == ["Bergen"])
        #expect(t.names(t.towns.where { $0.citizens.age.sum == 44 }) == ["Oslo"])
        #expect(t.names(t.towns.where { $0.citizens.age.min < 10 }) == ["Oslo"])
        #expect(t.names(t.towns.where { $0.citizens.age.max == 61 }) == ["Bergen"])
        #expect(t.names(t.towns.where { $0.citizens.count == 2 }) == ["Oslo"])
    }

    @Test func anAggregateOfAPropertyNeedsACollection() throws {
        let t = try QueryTowns()
        #expect(throws: Realm.Error.self) { try t.towns.checkedWhere { $0.population.avg > 3 } }
        let reason = rejection { try t.towns.checkedWhere { $0.population.avg > 3 } }
        #expect(reason?.contains("@avg needs a collection") == true, "\(reason ?? "accepted")")
    }

    @Test func subqueryCountsTheElementsSatisfyingEveryCondition() throws {
        let t = try QueryTowns()
        #expect(t.names(t.towns.where { ($0.citizens.age > 5).count > 1 }) == ["Oslo"])
        #expect(t.names(t.towns.where { ($0.citizens.age > 5).count == 1 }) == ["Bergen"])
        #expect(t.names(t.towns.where { ($0.citizens.age > 100).count == 0 }) == ["Bergen", "Moss", "Oslo"])
        #expect(
            t.names(t.towns.where { ($0.citizens.name == "Ada" && $0.citizens.age > 30).count == 1 }) == ["Oslo"])
        // Bo is 8 and Ada 36: without the subquery each condition may hold for a different citizen.
        #expect(t.names(t.towns.where { $0.citizens.name == "Bo" && $0.citizens.age > 30 }) == ["Oslo"])
        #expect(t.names(t.towns.where { ($0.citizens.name == "Bo" && $0.citizens.age > 30).count > 0 }).isEmpty)
        #expect(t.names(t.towns.where { ($0.citizens.age > 5).count > 1 || $0.name == "Moss" }) == ["Moss", "Oslo"])
    }

    @Test func aSubqueryIsAboutTheElementsOfOneCollection() throws {
        let t = try QueryTowns()
        let mixed = rejection { try t.towns.checkedWhere { ($0.citizens.age > 5 && $0.name == "Oslo").count > 0 } }
        #expect(mixed?.contains("name is not a property of the objects of a collection") == true, "\(mixed ?? "")")
        let two = rejection {
            try t.towns.checkedWhere { ($0.citizens.age > 5 && $0.mayor.towns.name == "Oslo").count > 0 }
        }
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

import Foundation
import Testing

@testable import Strata

/// Lists and sets of primitive values in queries, as the Realm SDK documents them: `'big' IN tags` holds when the
/// value is one of the elements, a comparison on the collection holds for any element (`ANY` is implied; `ALL`
/// and `NONE` ask for every or no element, and hold for an empty collection), `@count`/`@size` count the elements,
/// `@size` of a string or data property is its length in bytes, and `@sum`/`@avg`/`@min`/`@max` aggregate numbers.
@Suite("Query primitive collections: IN, ANY/ALL/NONE, @count, @size")
struct QueryPrimitiveCollectionTests {
    @Test func aValueInACollection() throws {
        let t = try QueryTowns()
        #expect(try t.towns("'big' IN tags") == ["Oslo"])
        #expect(try t.towns("'old' IN tags") == ["Bergen", "Oslo"])
        #expect(try t.towns("'capital' IN labels") == ["Oslo"])
        #expect(try t.towns("5 IN ratings") == ["Oslo"])
        #expect(try t.towns("$0 IN tags", "wet") == ["Bergen"])
        #expect(try t.towns("%@ IN labels", "port") == ["Bergen"])
        #expect(try t.towns("NOT 'big' IN tags") == ["Bergen", "Moss"])
        #expect(try t.towns("'old' IN tags AND 'wet' IN tags") == ["Bergen"])
        #expect(try t.towns("'BIG' IN[c] tags") == ["Oslo"])
        #expect(
            t.rejection("'x' IN name")?.contains("needs a collection on its right; QueryTown.name is a single value")
                == true)
    }

    @Test func quantifiersOverPrimitives() throws {
        let t = try QueryTowns()
        #expect(try t.towns("ANY tags == 'big'") == ["Oslo"])
        #expect(try t.towns("tags == 'old'") == ["Bergen", "Oslo"])
        #expect(try t.towns("ALL tags == 'old'") == ["Moss"])
        #expect(try t.towns("NONE tags == 'big'") == ["Bergen", "Moss"])
        #expect(try t.towns("ANY ratings > 4") == ["Oslo"])
        #expect(try t.towns("ALL ratings >= 4") == ["Moss", "Oslo"])
        #expect(try t.towns("ANY labels BEGINSWITH 'c'") == ["Oslo"])
        #expect(try t.towns("ANY tags IN {'wet', 'dry'}") == ["Bergen"])
    }

    @Test func countsAndSizes() throws {
        let t = try QueryTowns()
        #expect(try t.towns("tags.@count == 2") == ["Bergen", "Oslo"])
        #expect(try t.towns("tags.@size == 0") == ["Moss"])
        #expect(try t.towns("labels.@count == 1") == ["Bergen", "Oslo"])
        #expect(try t.towns("name.@size == 4") == ["Moss", "Oslo"])
        #expect(try t.towns("crest.@size == 0") == ["Moss"])
        #expect(try t.towns("crest.@size == 3") == ["Oslo"])
    }

    @Test func aggregatesOfNumbers() throws {
        let t = try QueryTowns()
        #expect(try t.towns("ratings.@sum == 9") == ["Oslo"])
        #expect(try t.towns("ratings.@avg == 4.5") == ["Oslo"])
        #expect(try t.towns("ratings.@min == 3") == ["Bergen"])
        #expect(try t.towns("ratings.@max >= 3") == ["Bergen", "Oslo"])
    }

    @Test func typeSafeQueriesOverPrimitives() throws {
        let t = try QueryTowns()
        #expect(t.names(t.towns.where { $0.tags.contains("big") }) == ["Oslo"])
        #expect(t.names(t.towns.where { $0.labels.containsAny(in: ["port", "x"]) }) == ["Bergen"])
        #expect(t.names(t.towns.where { $0.ratings.count == 1 }) == ["Bergen"])
        #expect(t.names(t.towns.where { $0.ratings.sum > 5 }) == ["Oslo"])
    }
}

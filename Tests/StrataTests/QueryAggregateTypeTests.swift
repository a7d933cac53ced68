import Foundation
import Testing

@testable import Strata

/// `.avg` of a list or map in `where { }` has the SDK's type, the collection's element (or value) type, as
/// `.min`, `.max` and `.sum` do: Realm Swift code compares it with a value of that type (`$0.ratings.avg >
/// threshold` with an `Int` threshold), which must compile and run here. The average itself is still exact (4.5
/// for 5 and 4), compared by value with the constant.
@Suite("Type-safe aggregate types")
struct QueryAggregateTypeTests {
    @Test func avgOfAListHasTheElementType() throws {
        let t = try QueryTowns()
        let threshold = 4
        let average: (Query<QueryTown>) -> Query<Int> = { $0.ratings.avg }
        #expect(t.names(t.towns.where { average($0) > threshold }) == ["Oslo"])
        #expect(t.names(t.towns.where { $0.ratings.avg == 3 }) == ["Bergen"])
        // 4.5 is not the integer 4: the average is compared by value.
        #expect(t.names(t.towns.where { $0.ratings.avg == threshold }) == [])
    }

    @Test func avgOfAMapHasTheValueType() throws {
        let t = try QueryTowns()
        let visitors = 10
        let average: (Query<QueryTown>) -> Query<Int> = { $0.visitors.avg }
        #expect(t.names(t.towns.where { average($0) == visitors }) == ["Bergen"])
        #expect(t.names(t.towns.where { $0.visitors.avg > visitors }) == ["Oslo"])
    }
}

import Foundation
import Testing

@testable import Strata

final class LimitItem: Object {
    @Persisted var age = 0
    @Persisted var name = ""
    @Persisted var friends: List<LimitItem>
    @Persisted var best: LimitItem?
}

/// Long and deeply nested queries: flat chains of thousands of terms run (fast, in one level), nesting past
/// `QueryLimits` is a typed `invalidQuery` error at the offending token, never a stack overflow; the same for
/// type-safe queries built with thousands of operators.
@Suite("Query limits")
struct QueryLimitTests {
    /// Ten items aged 0…9, each the friend and `best` of the next.
    private func items() throws -> Results<LimitItem> {
        let realm = try Realm(
            configuration: Realm.Configuration(inMemoryIdentifier: "limits-\(UUID())", objectTypes: [LimitItem.self]))
        try realm.write {
            var previous: LimitItem?
            for age in 0..<10 {
                let item = realm.create(LimitItem.self, value: ["age": age, "name": "n\(age)"])
                if let previous {
                    item.friends.append(previous)
                    item.best = previous
                }
                previous = item
            }
        }
        return realm.objects(LimitItem.self)
    }

    /// `results.count` outside a write (compiled conditions, column scans) and inside one (the general
    /// evaluator): both must give the same answer.
    private func counts(_ results: Results<LimitItem>) throws -> [Int] {
        [results.count, try results.realm!.write { results.count }]
    }

    /// The error `body` throws, which must be an `invalidQuery`.
    private func invalidQuery(_ body: () throws -> Any) -> (position: Int, reason: String)? {
        do {
            _ = try body()
        } catch Realm.Error.invalidQuery(_, let position, let reason) {
            return (position, reason)
        } catch {
            Issue.record("unexpected error \(error)")
        }
        return nil
    }

    @Test func longFlatChainsOfTermsRun() throws {
        let items = try items()
        let ors = (0..<10_000).map { "age == \($0 * 3)" }.joined(separator: " OR ")
        #expect(try counts(items.filter(ors)) == [4, 4])  // 0, 3, 6, 9
        let ands = (0..<10_000).map { "age != \($0 + 5)" }.joined(separator: " AND ")
        #expect(try counts(items.checkedFilter(ands)) == [5, 5])  // 0…4
        let grouped = (0..<5_000).map { "(age == \($0) AND name != 'n1')" }.joined(separator: " || ")
        #expect(try counts(items.checkedFilter(grouped)) == [9, 9])
        let list = "age IN {" + (0..<10_000).map { "\($0 * 2)" }.joined(separator: ", ") + "}"
        #expect(try counts(items.checkedFilter(list)) == [5, 5])
        // Through a list's objects as well.
        let owner = items.filter("age == 9").first!
        #expect(try owner.friends.checkedFilter(ors).count == 0)
    }

    @Test func typeSafeChainsBuiltInALoopRun() throws {
        let items = try items()
        let chain = items.where { item in
            var query = item.age == 0
            for age in 1..<10_000 { query = query || item.age == age * 3 }
            return query
        }
        #expect(try counts(chain) == [4, 4])
        // Built the other way round, each new operand on the left.
        let reversed = items.where { item in
            var query = item.age != 0
            for age in 1..<10_000 { query = item.age != age + 4 && query }
            return query
        }
        #expect(try counts(reversed) == [4, 4])  // 1…4
        // Describing and releasing such a query recurses neither.
        var described = ""
        _ = items.where { item in
            var query = item.age == 0
            for age in 1..<20_000 { query = query || item.age == age }
            described = "\(query)"
            return query
        }
        #expect(described.hasPrefix("(\\LimitItem.<Int> == 0 || \\LimitItem.<Int> == 1 || "))
        #expect(described.hasSuffix("\\LimitItem.<Int> == 19999)"))
    }

    @Test func nestingDeeperThanTheLimitIsATypedErrorAtTheOffendingToken() throws {
        let items = try items()
        let depth = QueryLimits.maximumDepth
        // 1000 levels run; the 1001st level's token is the error's position.
        let parentheses = String(repeating: "(", count: depth) + "age > 5" + String(repeating: ")", count: depth)
        #expect(try counts(items.checkedFilter(parentheses)) == [4, 4])
        let tooDeep = String(repeating: "(", count: 20_000) + "age > 5" + String(repeating: ")", count: 20_000)
        let error = invalidQuery { try items.checkedFilter(tooDeep) }
        #expect(error?.position == depth)
        #expect(error?.reason.contains("more than 1000 levels deep") == true)

        let nots = String(repeating: "NOT ", count: depth) + "age > 5"
        #expect(try counts(items.checkedFilter(nots)) == [4, 4])  // an even number of NOTs
        #expect(invalidQuery { try items.checkedFilter("NOT " + nots) }?.position == 4 * depth)
        let notGroups = String(repeating: "NOT (", count: 10_000) + "age > 5" + String(repeating: ")", count: 10_000)
        // NOT and ( each open a level: the 1001st is the 501st NOT.
        #expect(invalidQuery { try items.checkedFilter(notGroups) }?.position == 5 * 500)

        // Alternating AND and OR cannot be flattened: every level nests.
        var alternating = "age > 5"
        for level in 0..<(depth - 1) {
            alternating = "(\(alternating) \(level % 2 == 0 ? "AND age != 100" : "OR age == 100"))"
        }
        #expect(try counts(items.checkedFilter(alternating)) == [4, 4])
        #expect(invalidQuery { try items.checkedFilter("((" + alternating + "))") }?.position == depth)
    }

    @Test func typeSafeNestingDeeperThanTheLimitIsATypedError() throws {
        let items = try items()
        func nots(_ count: Int) -> (Query<LimitItem>) -> Query<Bool> {
            { item in
                var query = item.age > 5
                for _ in 0..<count { query = !query }
                return query
            }
        }
        #expect(try counts(items.checkedWhere(nots(QueryLimits.maximumDepth))) == [4, 4])
        let error = invalidQuery { try items.checkedWhere(nots(10_000)) }
        #expect(error?.reason.contains("more than 1000 levels deep") == true)
        // Alternating && and || nests one level each.
        let alternating = invalidQuery {
            try items.checkedWhere { item in
                var query = item.age > 5
                for level in 0..<5_000 {
                    query = level % 2 == 0 ? (query && item.age != 100) : (query || item.age == 100)
                }
                return query
            }
        }
        #expect(alternating?.reason.contains("more than 1000 levels deep") == true)
    }

    @Test func subqueriesListsAndArgumentsHaveTheirOwnLimits() throws {
        let items = try items()
        func subqueries(_ count: Int) -> String {
            var text = "SUBQUERY(friends, $f0, "
            for level in 1..<count { text += "SUBQUERY($f\(level - 1).friends, $f\(level), " }
            return text + "$f\(count - 1).age >= 0" + String(repeating: ").@count > 0", count: count)
        }
        // Item i reaches i - 1 friends deep: ten levels hold for the one item with nine ancestors… and none more.
        #expect(try counts(items.checkedFilter(subqueries(QueryLimits.maximumSubqueryDepth))) == [0, 0])
        #expect(try counts(items.checkedFilter(subqueries(9))) == [1, 1])
        let tooMany = subqueries(QueryLimits.maximumSubqueryDepth + 1)
        let error = invalidQuery { try items.checkedFilter(tooMany) }
        #expect(error?.reason == "SUBQUERY nests more than 10 levels deep")
        #expect(
            error?.position
                == tooMany.distance(from: tooMany.startIndex, to: tooMany.range(of: "SUBQUERY($f9")!.lowerBound))

        #expect(invalidQuery { try items.checkedFilter("age IN {1, {2, 3}}") }?.position == 11)
        #expect(
            invalidQuery { try items.checkedFilter("age IN $0", [[1], [2]]) }?.reason.contains("not other lists")
                == true)
        // A path through many links runs (as a walk, not as nested semi-joins).
        let path = String(repeating: "best.", count: 2_000) + "age >= 0"
        #expect(try counts(items.checkedFilter(path)) == [0, 0])
        #expect(try counts(items.checkedFilter(String(repeating: "best.", count: 9) + "age == 0")) == [1, 1])
    }

    @Test func termsAndLengthAreLimited() throws {
        let items = try items()
        let terms = QueryLimits.maximumTerms
        // The IN, its values and the last comparison are terms.
        let atLimit = "age IN {" + (0..<(terms - 2)).map { "\($0 % 7)" }.joined(separator: ",") + "} OR age == 9"
        #expect(try counts(items.checkedFilter(atLimit)) == [8, 8])
        let overLimit = "age IN {" + (0..<(terms - 1)).map { "\($0 % 7)" }.joined(separator: ",") + "} OR age == 9"
        let error = invalidQuery { try items.checkedFilter(overLimit) }
        #expect(error?.position == overLimit.count - "age == 9".count)
        #expect(error?.reason.contains("more than 100000 terms") == true)

        let long = "name == '" + String(repeating: "x", count: QueryLimits.maximumLength) + "'"
        let tooLong = invalidQuery { try items.checkedFilter(long) }
        #expect(tooLong?.position == QueryLimits.maximumLength)
        #expect(tooLong?.reason.contains("longer than 16777216 bytes") == true)
    }
}

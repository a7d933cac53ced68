import Foundation
import Testing

@testable import Strata

final class Ticket: Object {
    @Persisted var ref = ObjectId()
    @Persisted var token = UUID()
    @Persisted var age = 0
    @Persisted var group = ""
}

@Suite("Query language: oid/uuid literals and the order of SORT, DISTINCT, LIMIT")
struct QueryClauseTests {
    static let ref = "507f1f77bcf86cd799439011"
    static let token = "E621E1F8-C36C-495A-93FC-0C247A3E6E5F"

    /// Ten tickets, ages 0…9, created in the order 3 7 1 9 5 0 8 2 6 4; groups by age parity ("even"/"odd"); the
    /// ticket of age 7 has `ref` and `token`.
    private func tickets() throws -> Realm {
        let realm = try Realm(
            configuration: Realm.Configuration(inMemoryIdentifier: "clauses-\(UUID())", objectTypes: [Ticket.self]))
        try realm.write {
            for age in [3, 7, 1, 9, 5, 0, 8, 2, 6, 4] {
                let ticket = realm.create(Ticket.self, value: ["age": age, "group": age % 2 == 0 ? "even" : "odd"])
                if age == 7 {
                    ticket.ref = try! ObjectId(string: Self.ref)
                    ticket.token = UUID(uuidString: Self.token)!
                }
            }
        }
        return realm
    }

    @Test func oidAndUUIDLiteralsAreAcceptedQuotedAndUnquoted() throws {
        let all = try tickets().objects(Ticket.self)
        let queries = [
            "ref == oid(\(Self.ref))", "ref == oid('\(Self.ref)')", "ref == oid(\"\(Self.ref)\")",
            "ref == OID( \(Self.ref) )", "ref IN {oid(aaaaaaaaaaaaaaaaaaaaaaaa), oid(\(Self.ref))}",
            "token == uuid(\(Self.token))", "token == uuid('\(Self.token)')",
            "token == uuid(\(Self.token.lowercased()))",
            "token == UUID(\(Self.token)) AND ref == oid(\(Self.ref))",
        ]
        for query in queries {
            #expect(try all.checkedFilter(query).map(\.age) == [7], "\(query)")
        }
        #expect(try all.checkedFilter("ref != oid(\(Self.ref))").count == 9)
        #expect(try all.checkedFilter("token == uuid(00000000-0000-0000-0000-000000000000)").isEmpty)
    }

    @Test func malformedOidAndUUIDLiteralsPointAtTheValue() throws {
        let all = try tickets().objects(Ticket.self)
        let cases: [(String, Int, String)] = [
            ("ref == oid(507f1f77bcf86cd79943901)", 11, "'507f1f77bcf86cd79943901' is not an ObjectId"),
            ("ref == oid('507f1f77bcf86cd79943901z')", 11, "is not an ObjectId"),
            ("ref == oid(  zz)", 13, "'zz' is not an ObjectId"),
            ("ref == oid()", 11, "expected 24 hexadecimal digits in oid(…), found ')'"),
            ("ref == oid(\(Self.ref)", 35, ") to close oid("),
            ("ref == oid(\(Self.ref) x)", 36, ") to close oid("),
            ("token == uuid(E621E1F8-C36C-495A)", 14, "'E621E1F8-C36C-495A' is not a UUID"),
            ("token == uuid($0)", 14, "expected a UUID"),
        ]
        for (query, position, reason) in cases {
            all.expectInvalidQuery(query, reason: reason, position: position)
        }
    }

    @Test func sortDistinctAndLimitApplyInTheOrderWritten() throws {
        let all = try tickets().objects(Ticket.self)
        func ages(_ query: String) -> [Int] { all.filter(query).map(\.age) }
        // LIMIT first: the first five created (3 7 1 9 5), then sorted.
        #expect(ages("TRUEPREDICATE LIMIT(5) SORT(age ASC)") == [1, 3, 5, 7, 9])
        // SORT first: the five oldest.
        #expect(ages("TRUEPREDICATE SORT(age DESC) LIMIT(5)") == [9, 8, 7, 6, 5])
        #expect(ages("TRUEPREDICATE SORT(age DESC) LIMIT(5) SORT(age ASC)") == [5, 6, 7, 8, 9])
        #expect(ages("age > 2 LIMIT(4) LIMIT(2)") == [3, 7])
        // DISTINCT keeps the first of each group in the order at that point (creation order: 3 odd, 0 even).
        #expect(ages("TRUEPREDICATE DISTINCT(group) SORT(age DESC)") == [3, 0])
        #expect(ages("TRUEPREDICATE SORT(age DESC) DISTINCT(group)") == [9, 8])
        #expect(ages("TRUEPREDICATE SORT(age ASC) DISTINCT(group) LIMIT(1)") == [0])
        // A later SORT leads and an earlier one breaks its ties (sorts are stable), as the Realm SDK merges them.
        #expect(ages("TRUEPREDICATE SORT(age DESC) SORT(group ASC)") == [8, 6, 4, 2, 0, 9, 7, 5, 3, 1])
        // The same as chaining the calls in that order.
        #expect(
            all.filter("TRUEPREDICATE LIMIT(5)").sorted(byKeyPath: "age").map(\.age)
                == ages("TRUEPREDICATE LIMIT(5) SORT(age ASC)"))
    }

    @Test func orderedClausesStayLiveAcrossWrites() throws {
        let realm = try tickets()
        let all = realm.objects(Ticket.self)
        let firstFiveSorted = all.filter("age >= 0 LIMIT(5) SORT(age ASC)")
        let oldestThree = all.filter("age >= 0 SORT(age DESC) LIMIT(3)")
        let frozen = oldestThree.freeze()
        #expect(firstFiveSorted.map(\.age) == [1, 3, 5, 7, 9])
        #expect(oldestThree.map(\.age) == [9, 8, 7])
        try realm.write {
            // A new oldest ticket joins the top three at once, even before the commit; created last, it is not
            // among the first five created.
            realm.create(Ticket.self, value: ["age": 20, "group": "even"])
            #expect(oldestThree.map(\.age) == [20, 9, 8])
            #expect(firstFiveSorted.map(\.age) == [1, 3, 5, 7, 9])
        }
        try realm.write {
            realm.delete(all.filter("age == 7"))
        }
        // The first five created are now 3 1 9 5 0.
        #expect(firstFiveSorted.map(\.age) == [0, 1, 3, 5, 9])
        #expect(oldestThree.map(\.age) == [20, 9, 8])
        try realm.write { all.filter("age == 20").first?.age = -1 }
        #expect(oldestThree.map(\.age) == [9, 8, 6])
        #expect(frozen.map(\.age) == [9, 8, 7])
    }
}

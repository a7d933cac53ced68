import Foundation
import Testing

@testable import Strata

/// An item with numbers to compute with.
final class ArithmeticItem: Object {
    @Persisted var name = ""
    @Persisted var priority = 0
    @Persisted var progressMinutes = 0
    @Persisted var price = 0.0
    @Persisted var tax: Double?
    @Persisted var cost = Decimal128(0)
    @Persisted var label = ""
    @Persisted var extra: AnyRealmValue = .none
    @Persisted var scores: List<Int>
}

/// Arithmetic in the Realm Query Language, as its reference defines it: `*`, `/`, `+`, `-` and parentheses on
/// either side of a comparison, with properties, literals and arguments as operands (`2 * priority > 6`,
/// `progressMinutes * priority == 90`, `priority >= 2 * (2 - 1) + 2`). The type-safe `where { }` has no arithmetic in
/// the SDK. Malformed or ill-typed expressions are `invalidQuery` errors.
@Suite("Arithmetic in the query language")
struct QueryArithmeticTests {
    private func items() throws -> Results<ArithmeticItem> {
        let realm = try Realm(
            configuration: Realm.Configuration(
                inMemoryIdentifier: "arithmetic-\(UUID())", objectTypes: [ArithmeticItem.self]))
        try realm.write {
            // name, priority, progressMinutes, price, tax, cost, extra
            let rows: [(String, Int, Int, Double, Double?, Decimal128, AnyRealmValue)] = [
                ("a", 1, 90, 5, 1, 10, .int(4)),
                ("b", 3, 30, 8, 3, 2.5, .string("x")),
                ("c", 4, 10, 9.5, nil, 7, .double(1.5)),
                ("d", 9, 10, 2, 0.5, 0, .none),
            ]
            for (name, priority, minutes, price, tax, cost, extra) in rows {
                let item = realm.create(
                    ArithmeticItem.self,
                    value: [
                        "name": name, "priority": priority, "progressMinutes": minutes, "price": price, "cost": cost,
                        "label": name,
                    ])
                item.tax = tax
                item.extra = extra
                item.scores.append(objectsIn: [priority, priority * 2])
            }
        }
        return realm.objects(ArithmeticItem.self)
    }

    private func names(_ results: Results<ArithmeticItem>) -> [String] { results.map(\.name).sorted() }

    @Test func theReferenceExamples() throws {
        let items = try items()
        #expect(names(items.filter("2 * priority > 6")) == ["c", "d"])
        #expect(names(items.filter("priority >= 2 * (2 - 1) + 2")) == ["c", "d"])
        #expect(names(items.filter("progressMinutes * priority == 90")) == ["a", "b", "d"])
    }

    @Test func operatorsPrecedenceAndParentheses() throws {
        let items = try items()
        #expect(names(items.filter("priority * 2 + 1 == 7")) == ["b"])
        #expect(names(items.filter("priority + 2 * 3 == 7")) == ["a"])
        #expect(names(items.filter("(priority + 2) * 3 == 15")) == ["b"])
        #expect(names(items.filter("progressMinutes - priority * 10 == 0")) == ["b"])
        #expect(names(items.filter("10 - 2 - priority == 5")) == ["b"])
        #expect(names(items.filter("progressMinutes / priority == 10")) == ["b"])
        // Integers divide as integers.
        #expect(names(items.filter("progressMinutes / 4 == 2")) == ["c", "d"])
        #expect(names(items.filter("(priority * 2 > 6) AND (price + 1 < 10)")) == ["d"])
        #expect(names(items.filter("NOT (priority - 1 == 0)")) == ["b", "c", "d"])
    }

    @Test func propertiesArgumentsAndTypes() throws {
        let items = try items()
        #expect(names(items.filter("price + tax < 10")) == ["a", "d"])
        #expect(names(items.filter("price + tax == nil")) == ["c"])
        #expect(names(items.filter("price * $0 > 15", 2)) == ["b", "c"])
        #expect(names(items.filter("price * %@ > %@", 2.0, 15)) == ["b", "c"])
        #expect(names(items.filter("price / 2 == 2.5")) == ["a"])
        #expect(names(items.filter("cost * 2 == 5")) == ["b"])
        #expect(names(items.filter("extra * 2 == 3")) == ["c"])
        #expect(names(items.filter("scores.@sum * 2 > 20")) == ["c", "d"])
        #expect(names(items.filter("priority * 3 IN {3, 27}")) == ["a", "d"])
        #expect(names(items.filter("priority * 10 > progressMinutes")) == ["c", "d"])
        #expect(names(items.filter("progressMinutes < priority * 10")) == ["c", "d"])
        // A zero divisor in a property gives no value, so no comparison holds.
        #expect(names(items.filter("price / cost > 0")) == ["a", "b", "c"])
    }

    @Test func malformedOrIllTypedExpressionsAreTypedErrors() throws {
        let items = try items()
        items.expectInvalidQuery("priority / 0 > 1", reason: "division by zero", position: 9)
        items.expectInvalidQuery("priority / (2 - 2) > 1", reason: "division by zero")
        items.expectInvalidQuery("price / 0.0 > 1", reason: "division by zero")
        items.expectInvalidQuery("label * 2 > 1", reason: "arithmetic needs numbers; ArithmeticItem.label is")
        items.expectInvalidQuery("priority + 'x' > 1", reason: "arithmetic needs numbers, not")
        items.expectInvalidQuery("priority * $0 > 1", ["x"], reason: "arithmetic needs numbers, not")
        items.expectInvalidQuery("scores * 2 > 1", reason: "passes through a collection")
        items.expectInvalidQuery("priority * > 1", reason: "expected a property, a value or an argument")
        items.expectInvalidQuery("(priority + 1 > 1", reason: ") to close (")
        items.expectInvalidQuery("priority * 2 BEGINSWITH 'x'", reason: "needs a string or data property")
        items.expectInvalidQuery("9223372036854775807 + 1 > priority", reason: "overflows")
    }
}

import Foundation
import Strata
import Testing

final class AggregatedValues: Object {
    @Persisted var ints: List<Int>
    @Persisted var optionalDoubles: List<Double?>
    @Persisted var intSet: MutableSet<Int>
    @Persisted var dates: List<Date>
    @Persisted var decimals: List<Decimal128>
    @Persisted var mixed: List<AnyRealmValue>
    @Persisted var names: List<String>
    @Persisted var scores: Map<String, Int>
}

/// `min()`, `max()`, `sum()`, `average()`, `sorted(ascending:)` and `distinct()` on collections of values, gated by
/// the SDK's `MinMaxType`, `AddableType` and `SortableType`.
@Suite("Value collection aggregates")
struct ValueCollectionAggregateTests {
    private func stored() throws -> AggregatedValues {
        let realm = try Realm(
            configuration: Realm.Configuration(
                inMemoryIdentifier: "value-aggregates-\(UUID())", objectTypes: [AggregatedValues.self]))
        let values = AggregatedValues()
        values.ints.append(objectsIn: [3, 1, 4, 1, 5])
        values.optionalDoubles.append(objectsIn: [2.5, nil, 0.5])
        values.intSet.insert(objectsIn: [10, 20, 30])
        values.dates.append(objectsIn: [Date(timeIntervalSince1970: 20), Date(timeIntervalSince1970: 10)])
        values.decimals.append(objectsIn: [Decimal128(1), Decimal128(2)])
        values.mixed.append(objectsIn: [.int(2), .string("x"), .double(1.5), .none])
        values.names.append(objectsIn: ["b", "a", "b"])
        values.scores["agility"] = 3
        values.scores["speed"] = 9
        try realm.write { realm.add(values) }
        return values
    }

    @Test func minMaxSumAverageOfAListOfIntegers() throws {
        let values = try stored()
        #expect(values.ints.min() == 1)
        #expect(values.ints.max() == 5)
        #expect(values.ints.sum() == 14)
        let mean: Double? = values.ints.average()
        #expect(mean == 2.8)
    }

    @Test func nilValuesAreSkippedAndEmptyCollectionsGiveNilOrZero() throws {
        let values = try stored()
        #expect(values.optionalDoubles.min() == 0.5)
        #expect(values.optionalDoubles.sum() == 3.0)
        let mean: Double? = values.optionalDoubles.average()
        #expect(mean == 1.5)
        let empty = List<Int>()
        #expect(empty.min() == nil && empty.sum() == 0)
        let none: Double? = empty.average()
        #expect(none == nil)
    }

    @Test func aSetOfIntegersSums() throws {
        let values = try stored()
        #expect(values.intSet.sum() == 60)
        #expect(values.intSet.max() == 30)
        #expect(Array(values.intSet.sorted(ascending: false)) == [30, 20, 10])
    }

    @Test func datesDecimalsAndMixedValues() throws {
        let values = try stored()
        #expect(values.dates.min() == Date(timeIntervalSince1970: 10))
        #expect(values.decimals.sum() == Decimal128(3))
        #expect(values.mixed.sum() == .double(3.5))
        #expect(values.mixed.max() == .string("x"))
        #expect(Array(values.mixed.sorted()) == [.none, .double(1.5), .int(2), .string("x")])
    }

    @Test func sortedAndDistinctValues() throws {
        let values = try stored()
        #expect(values.ints.sorted() == [1, 1, 3, 4, 5])
        #expect(Array(values.ints.sorted(ascending: false)) == [5, 4, 3, 1, 1])
        #expect(Array(values.ints.distinct()) == [3, 1, 4, 5])
        #expect(values.names.sorted() == ["a", "b", "b"])
        #expect(AnyRealmCollection(values.ints).sum() == 14)
    }

    @Test func aMapsValues() throws {
        let values = try stored()
        #expect(values.scores.min() == 3)
        #expect(values.scores.max() == 9)
        #expect(values.scores.sum() == 12)
        let mean: Double? = values.scores.average()
        #expect(mean == 6)
        #expect(Array(values.scores.sorted(ascending: false)) == [9, 3])
    }
}

@Suite("Map key-value sequence")
struct MapKeyValueSequenceTests {
    @Test func entriesComeAsKeyValuePairsInKeyOrder() throws {
        let realm = try Realm(
            configuration: Realm.Configuration(
                inMemoryIdentifier: "map-pairs-\(UUID())", objectTypes: [AggregatedValues.self]))
        let values = AggregatedValues()
        values.scores["speed"] = 9
        values.scores["agility"] = 3
        try realm.write { realm.add(values) }
        var seen: [String] = []
        for (key, value) in values.scores.asKeyValueSequence() { seen.append("\(key)=\(value)") }
        #expect(seen == ["agility=3", "speed=9"])
    }
}

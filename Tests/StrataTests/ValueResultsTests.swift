import Foundation
import Testing

@testable import Strata

final class ValueResultsOwner: Object {
    @Persisted var scores: List<Int>
    @Persisted var names: List<String>
    @Persisted var tags: MutableSet<String>
    @Persisted var prices: Map<String, Int>
    @Persisted var optionalScores: List<Int?>
}

/// Collections of values return `Results` from `sorted(ascending:)`, `distinct()`, `filter("self …")` and
/// `where { $0 … }`, as the SDK's collections of primitives do: live collections of the values that can be
/// sorted and filtered again, counted, aggregated, frozen, observed and erased to `AnyRealmCollection`.
@Suite("Results of values")
struct ValueResultsTests {
    private func stored() throws -> (Realm, ValueResultsOwner) {
        let realm = try Realm(
            configuration: Realm.Configuration(
                inMemoryIdentifier: "value-results-\(UUID())", objectTypes: [ValueResultsOwner.self]))
        let owner = ValueResultsOwner()
        owner.scores.append(objectsIn: [3, 1, 4, 1, 5])
        owner.names.append(objectsIn: ["bob", "alice", "anna", "carl"])
        owner.tags.insert(objectsIn: ["x", "a", "m"])
        owner.prices["tea"] = 3
        owner.prices["cake"] = 7
        owner.prices["bun"] = 1
        owner.optionalScores.append(objectsIn: [2, nil, 1])
        try realm.write { realm.add(owner) }
        return (realm, owner)
    }

    @Test func sortedValuesAreLiveResults() throws {
        let (realm, owner) = try stored()
        let ascending: Results<Int> = owner.scores.sorted(ascending: true)
        let descending: Results<Int> = owner.scores.sorted(ascending: false)
        #expect(Array(ascending) == [1, 1, 3, 4, 5])
        #expect(Array(descending) == [5, 4, 3, 1, 1])
        #expect(ascending.count == 5 && ascending[2] == 3 && ascending.realm === realm)
        // Not a copy: a write to the list shows in the same results.
        try realm.write { owner.scores.append(0) }
        #expect(Array(ascending) == [0, 1, 1, 3, 4, 5])
        #expect(descending.last == 0)
    }

    @Test func readingPositionsOneByOneReadsTheListOnceUntilTheNextWrite() throws {
        let (realm, owner) = try stored()
        try realm.write { owner.scores.append(objectsIn: Array(0..<200)) }
        let descending = owner.scores.sorted(ascending: false)
        var total = 0
        for position in 0..<descending.count { total += descending[position] }
        #expect(total == 14 + (0..<200).reduce(0, +))
        let identity = try #require(descending.values).identity
        #expect(identity.evaluations == 1)
        // A write (a refresh too) changes what the results hold: the next read reads the list again.
        try realm.write { owner.scores.append(1000) }
        #expect(descending[0] == 1000 && descending.count == 206)
        #expect(identity.evaluations == 2)
    }

    @Test func distinctValuesOfAListSetAndMap() throws {
        let (realm, owner) = try stored()
        let distinct: Results<Int> = owner.scores.distinct()
        #expect(Array(distinct) == [3, 1, 4, 5])
        try realm.write { owner.scores.append(9) }
        #expect(Array(distinct) == [3, 1, 4, 5, 9])
        let tags: Results<String> = owner.tags.sorted(ascending: true)
        #expect(Array(tags) == ["a", "m", "x"])
        let prices: Results<Int> = owner.prices.sorted(ascending: false)
        #expect(Array(prices) == [7, 3, 1])
        #expect(Array(owner.prices.distinct().sorted(ascending: true)) == [1, 3, 7])
    }

    @Test func filterWithSelfInTheQueryLanguage() throws {
        let (realm, owner) = try stored()
        let big: Results<Int> = owner.scores.filter("self > 1")
        #expect(Array(big) == [3, 4, 5])
        #expect(Array(owner.scores.filter("self > $0", 3)) == [4, 5])
        #expect(Array(owner.scores.filter("self IN {1, 5}")) == [1, 1, 5])
        #expect(Array(owner.names.filter("self BEGINSWITH 'a'")) == ["alice", "anna"])
        #expect(Array(owner.prices.filter("self >= 3").sorted(ascending: true)) == [3, 7])
        #expect(Array(owner.optionalScores.filter("self == nil")) == [nil])
        // Results of values narrow and sort again, and follow writes.
        let sortedBig = big.filter("self < 5").sorted(ascending: false)
        #expect(Array(sortedBig) == [4, 3])
        try realm.write { owner.scores.append(2) }
        #expect(Array(sortedBig) == [4, 3, 2])
        #expect(Array(owner.scores.filter("self > 1 SORT(self DESC) LIMIT(2)")) == [5, 4])
    }

    @Test func aQueryOnAnythingButSelfThrows() throws {
        let (_, owner) = try stored()
        #expect(throws: Realm.Error.self) { try owner.scores.filter("self > 0").checkedFilter("age > 1") }
    }

    @Test func typeSafeWhereOnValues() throws {
        let (_, owner) = try stored()
        let big: Results<Int> = owner.scores.where { $0 > 1 }
        #expect(Array(big) == [3, 4, 5])
        #expect(Array(big.where { $0 != 4 }) == [3, 5])
        #expect(Array(owner.names.where { $0.starts(with: "a") }) == ["alice", "anna"])
        #expect(Array(owner.prices.where { $0 < 5 }.sorted(ascending: true)) == [1, 3])
    }

    @Test func resultsOfValuesAggregate() throws {
        let (_, owner) = try stored()
        let big = owner.scores.filter("self > 1")
        #expect(big.min() == 3)
        #expect(big.max() == 5)
        #expect(big.sum() == 12)
        let mean: Double? = big.average()
        #expect(mean == 4)
        #expect(owner.optionalScores.sorted(ascending: true).sum() == 3)
    }

    @Test func frozenResultsOfValuesKeepTheirVersion() throws {
        let (realm, owner) = try stored()
        let live = owner.scores.sorted(ascending: true)
        let frozen = live.freeze()
        #expect(frozen.isFrozen && !live.isFrozen)
        try realm.write { owner.scores.append(0) }
        #expect(Array(frozen) == [1, 1, 3, 4, 5])
        #expect(Array(live) == [0, 1, 1, 3, 4, 5])
        #expect(Array(frozen.thaw() ?? live) == [0, 1, 1, 3, 4, 5])
    }

    @Test func resultsOfValuesAreRealmCollections() throws {
        let (_, owner) = try stored()
        func total<C: RealmCollection>(_ collection: C) -> Int where C.Element == Int {
            collection.reduce(0, +)
        }
        let erased = AnyRealmCollection(owner.scores.filter("self > 3"))
        #expect(Array(erased) == [4, 5])
        #expect(total(erased) == 9)
        #expect(total(owner.scores.sorted(ascending: true)) == 14)
        #expect(Array(AnyRealmCollection(owner.scores).sorted(ascending: false)) == [5, 4, 3, 1, 1])
        let results = owner.scores.sorted(ascending: true)
        #expect(results == results)
        #expect(results != owner.scores.sorted(ascending: true))
        #expect(results.description.hasPrefix("Results<int>"))
    }

    @Test func observingResultsOfValuesReportsTheirChanges() throws {
        let (realm, owner) = try stored()
        let big = owner.scores.filter("self > 2").sorted(ascending: true)
        final class Changes { var updates: [(deletions: [Int], insertions: [Int])] = [] }
        let changes = Changes()
        let token = big.observe { change in
            if case .update(_, let deletions, let insertions, _) = change {
                changes.updates.append((deletions, insertions))
            }
        }
        defer { token.invalidate() }
        try realm.write { owner.scores.append(2) }
        #expect(changes.updates.isEmpty)
        try realm.write { owner.scores.append(6) }
        #expect(changes.updates.count == 1)
        #expect(changes.updates.last?.insertions == [3])
    }

    @Test func unmanagedCollectionsSortTheirValues() {
        let scores = List<Int>()
        scores.append(objectsIn: [2, 9, 2])
        let sorted = scores.sorted(ascending: false)
        #expect(Array(sorted) == [9, 2, 2])
        #expect(sorted.realm == nil)
        scores.append(10)
        #expect(Array(sorted) == [10, 9, 2, 2])
        #expect(Array(scores.distinct()) == [2, 9, 10])
    }
}

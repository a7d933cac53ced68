import Foundation
import Strata
import Testing

/// A rank stored as its number: sorting by it sorts by the number, not by any order of its own.
struct SortRank: CustomPersistable {
    var level: Int
    init(persistedValue: Int) { level = persistedValue }
    var persistableValue: Int { level }
}

/// A code stored as a string that not every string makes.
struct SortCode: FailableCustomPersistable {
    var code: String
    init?(persistedValue: String) {
        guard persistedValue.count == 3 else { return nil }
        code = persistedValue
    }
    var persistableValue: String { code }
}

final class SortPlayer: Object {
    @Persisted var name = ""
    @Persisted var rank = SortRank(persistedValue: 0)
    @Persisted var bestRank: SortRank?
    @Persisted var code = SortCode(persistedValue: "aaa")!
    @Persisted var team: SortCode?
}

/// `sorted(by:)` takes a key path to a custom-persisted property whose persisted type sorts, as in the SDK, and
/// orders by the persisted value.
@Suite("Sorting by custom-persisted properties")
struct CustomPersistedSortTests {
    private func players() throws -> Results<SortPlayer> {
        let realm = try Realm(
            configuration: Realm.Configuration(
                inMemoryIdentifier: "custom-sort-\(UUID())", objectTypes: [SortPlayer.self]))
        try realm.write {
            for (name, rank, best, code, team) in [
                ("ann", 3, 1 as Int?, "ccc", "xyz" as String?), ("bob", 10, nil, "aaa", nil),
                ("cid", 2, 7, "bbb", "abc"),
            ] {
                let player = SortPlayer()
                player.name = name
                player.rank = SortRank(persistedValue: rank)
                player.bestRank = best.map(SortRank.init(persistedValue:))
                player.code = SortCode(persistedValue: code)!
                player.team = team.flatMap(SortCode.init(persistedValue:))
                realm.add(player)
            }
        }
        return realm.objects(SortPlayer.self)
    }

    @Test func sortsByThePersistedValueOfACustomType() throws {
        let players = try players()
        // By number: 2, 3, 10 (a string order would put 10 first).
        #expect(players.sorted(by: \.rank).map(\.name) == ["cid", "ann", "bob"])
        #expect(players.sorted(by: \.rank, ascending: false).map(\.name) == ["bob", "ann", "cid"])
        #expect(players.sorted(by: \.bestRank).map(\.name) == ["bob", "ann", "cid"])
    }

    @Test func sortsByThePersistedValueOfAFailableCustomType() throws {
        let players = try players()
        #expect(players.sorted(by: \.code).map(\.name) == ["bob", "cid", "ann"])
        #expect(players.sorted(by: \.team, ascending: false).map(\.name) == ["ann", "cid", "bob"])
        #expect(AnyRealmCollection(players).sorted(by: \.code).map(\.name) == ["bob", "cid", "ann"])
    }
}

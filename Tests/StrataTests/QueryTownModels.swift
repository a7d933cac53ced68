import Foundation
import Testing

@testable import Strata

/// A town for the query-language tests: primitive lists and sets, maps, links and every literal type, so that
/// each construct of the Realm Query Language reference has a property to run on.
final class QueryTown: Object {
    @Persisted var name = ""
    @Persisted var population = 0
    @Persisted var area = 0.0
    @Persisted var coastal = false
    @Persisted var founded = Date(timeIntervalSince1970: 0)
    @Persisted var code: ObjectId?
    @Persisted var registry: UUID?
    @Persisted var budget: Decimal128?
    @Persisted var crest: Data?
    @Persisted var tags: List<String>
    @Persisted var labels: MutableSet<String>
    @Persisted var ratings: List<Int>
    @Persisted var parks: Map<String, String>
    @Persisted var visitors: Map<String, Int>
    @Persisted var wardens: Map<String, QueryCitizen?>
    @Persisted var mayor: QueryCitizen?
    @Persisted var citizens: List<QueryCitizen>
}

/// A person living in a `QueryTown`.
final class QueryCitizen: Object {
    @Persisted var name = ""
    @Persisted var age = 0
    @Persisted(originProperty: "citizens") var towns: LinkingObjects<QueryTown>
}

/// Three towns and four citizens:
///
/// | town | population | area (coastal) | founded | tags | labels | ratings | parks | visitors | crest | citizens (age) |
/// |---|---|---|---|---|---|---|---|---|---|---|
/// | Oslo | 700000 | 454.0 (yes) | 1048-01-01 | big, old | capital | 5, 4 | Oslo: Frogner, East: Tøyen | summer 30, winter 5 | 3 bytes | Ada (36), Bo (8) |
/// | Bergen | 285000 | 465.0 (yes) | 1070-01-01 | old, wet | port | 3 | Bergen: Nygård | summer 10 | nil | Cy (61) |
/// | Moss | 50000 | 63.0 (no) | 1720-01-01 | — | — | — | — | — | empty | — |
///
/// Dee (20) lives nowhere. Oslo's mayor is Ada, its north warden (a map of links) Bo; Bergen's south warden is Dee. Oslo has code `6553a6f3c5b2a1e4d8f00001`, registry
/// `E621E1F8-C36C-495A-93FC-0C247A3E6E5F` and budget 12.5; the others have nil.
struct QueryTowns {
    let realm: Realm
    var towns: Results<QueryTown> { realm.objects(QueryTown.self) }
    var citizens: Results<QueryCitizen> { realm.objects(QueryCitizen.self) }
    var oslo: QueryTown { towns.filter("name == 'Oslo'").first! }
    var ada: QueryCitizen { citizens.filter("name == 'Ada'").first! }

    static let osloCode = try! ObjectId(string: "6553a6f3c5b2a1e4d8f00001")
    static let osloRegistry = UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!

    init() throws {
        realm = try Realm(
            configuration: Realm.Configuration(
                inMemoryIdentifier: "query-towns-\(UUID())", objectTypes: [QueryTown.self, QueryCitizen.self]))
        func year(_ year: Int) -> Date {
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = TimeZone(identifier: "UTC")!
            return calendar.date(from: DateComponents(year: year, month: 1, day: 1))!
        }
        try realm.write {
            let people = [("Ada", 36), ("Bo", 8), ("Cy", 61), ("Dee", 20)].map { name, age in
                realm.create(QueryCitizen.self, value: ["name": name, "age": age])
            }
            let oslo = realm.create(
                QueryTown.self,
                value: ["name": "Oslo", "population": 700_000, "area": 454.0, "founded": year(1048), "coastal": true]
                    as [String: Any])
            oslo.code = Self.osloCode
            oslo.registry = Self.osloRegistry
            oslo.budget = Decimal128(12.5)
            oslo.crest = Data([1, 2, 3])
            oslo.tags.append(objectsIn: ["big", "old"])
            oslo.labels.insert("capital")
            oslo.ratings.append(objectsIn: [5, 4])
            oslo.parks["Oslo"] = "Frogner"
            oslo.parks["East"] = "Tøyen"
            oslo.visitors["summer"] = 30
            oslo.visitors["winter"] = 5
            oslo.citizens.append(objectsIn: [people[0], people[1]])
            oslo.mayor = people[0]
            oslo.wardens["north"] = people[1]
            let bergen = realm.create(
                QueryTown.self,
                value: ["name": "Bergen", "population": 285_000, "area": 465.0, "founded": year(1070), "coastal": true]
                    as [String: Any])
            bergen.tags.append(objectsIn: ["old", "wet"])
            bergen.labels.insert("port")
            bergen.ratings.append(3)
            bergen.parks["Bergen"] = "Nygård"
            bergen.visitors["summer"] = 10
            bergen.citizens.append(people[2])
            bergen.wardens["south"] = people[3]
            let moss = realm.create(
                QueryTown.self,
                value: ["name": "Moss", "population": 50_000, "area": 63.0, "founded": year(1720)] as [String: Any])
            moss.crest = Data()
        }
    }

    /// The names of `results`, sorted.
    func names(_ results: Results<QueryTown>) -> [String] { results.map(\.name).sorted() }
    /// The names of `results`, sorted.
    func names(_ results: Results<QueryCitizen>) -> [String] { results.map(\.name).sorted() }

    /// The sorted names of the towns matching `query` with `args`.
    func towns(_ query: String, _ args: Any...) throws -> [String] {
        names(try realm.objects(QueryTown.self).narrowed(query, args))
    }

    /// The reason `query` with `args` is rejected, or nil when it is accepted. Any error other than
    /// `invalidQuery` is recorded as an issue.
    func rejection(_ query: String, _ args: Any..., sourceLocation: SourceLocation = #_sourceLocation) -> String? {
        do {
            _ = try realm.objects(QueryTown.self).narrowed(query, args)
            return nil
        } catch let Realm.Error.invalidQuery(text, _, reason) {
            #expect(text == query, sourceLocation: sourceLocation)
            return reason
        } catch {
            Issue.record("\(query): \(error)", sourceLocation: sourceLocation)
            return "\(error)"
        }
    }
}

import Foundation
import Testing

@testable import Strata

final class Courier: Object {
    @Persisted var name = ""
    @Persisted var depot: CourierDepot?
    @Persisted var office: CourierOffice?
}

final class CourierDepot: EmbeddedObject {
    @Persisted var city = ""
}

final class CourierOffice: Object {
    @Persisted var city = ""
}

final class CourierView: Projection<Courier> {
    @Projected(\Courier.name) var name
    @Projected(\Courier.depot?.city) var depotCity
    @Projected(\Courier.office?.city) var officeCity
}

/// A projection frozen and thawed again is live as the SDK documents `thaw()`: its properties, those read through an
/// embedded object or a link included, show what later commits wrote.
@Suite("Thawed projections")
struct ThawedProjectionTests {
    @Test func aThawedProjectionSeesLaterCommitsThroughItsLinks() async throws {
        let realm = try Realm(
            configuration: Realm.Configuration(
                inMemoryIdentifier: "thawed-projection-\(UUID())",
                objectTypes: [Courier.self, CourierDepot.self, CourierOffice.self]))
        let courier = try realm.write {
            realm.create(
                Courier.self, value: ["name": "Ann", "depot": ["city": "Oslo"], "office": ["city": "Bergen"]])
        }
        let frozen = CourierView(projecting: courier).freeze()
        #expect(frozen.isFrozen)
        let thawed = try #require(frozen.thaw())
        #expect(!thawed.isFrozen)
        #expect(thawed.depotCity == "Oslo")
        #expect(thawed.officeCity == "Bergen")
        try realm.write {
            courier.name = "Anna"
            courier.depot?.city = "Trondheim"
            courier.office?.city = "Tromsø"
        }
        #expect(thawed.name == "Anna")
        #expect(thawed.depotCity == "Trondheim")
        #expect(thawed.officeCity == "Tromsø")
        // Projections from a query, thawed on another actor's Realm, as well.
        let fromQuery = try #require(realm.objects(CourierView.self).first?.freeze())
        let frozenData = Frozen(fromQuery)
        let configuration = realm.configuration
        let city = try await Task.detached {
            let other = try Realm(configuration: configuration)
            let live = try #require(frozenData.value.thaw())
            try other.write { live.rootObject?.depot?.city = "Bodø" }
            return live.depotCity
        }.value
        #expect(city == "Bodø")
        realm.refresh()
        #expect(thawed.depotCity == "Bodø")
        // The frozen one keeps its version.
        #expect(frozen.depotCity == "Oslo")
        #expect(frozen.officeCity == "Bergen")
    }
}

import Strata
import Testing

/// `GeoPolygon(outerRing:holes:)` takes its holes one argument each, as in the SDK, besides the array form.
@Suite("GeoPolygon variadic holes")
struct GeoPolygonVariadicHolesTests {
    static let outer = [(0.0, 0.0), (0.0, 10.0), (10.0, 10.0), (10.0, 0.0), (0.0, 0.0)]
    static let west = [(2.0, 2.0), (2.0, 4.0), (4.0, 4.0), (4.0, 2.0), (2.0, 2.0)]
    static let east = [(6.0, 6.0), (6.0, 8.0), (8.0, 8.0), (8.0, 6.0), (6.0, 6.0)]

    @Test func pairsWithVariadicHoles() throws {
        let variadic = try #require(GeoPolygon(outerRing: Self.outer, holes: Self.west, Self.east))
        let array = try #require(GeoPolygon(outerRing: Self.outer, holes: [Self.west, Self.east]))
        #expect(variadic == array)
        #expect(variadic.holes.count == 2)
        let none = try #require(GeoPolygon(outerRing: Self.outer))
        #expect(none.holes.isEmpty)
    }

    @Test func pointsWithVariadicHoles() throws {
        func points(_ ring: [(Double, Double)]) -> [GeoPoint] {
            ring.map { GeoPoint(latitude: $0.0, longitude: $0.1)! }
        }
        let variadic = try #require(
            GeoPolygon(outerRing: points(Self.outer), holes: points(Self.west), points(Self.east)))
        #expect(variadic.holes == [points(Self.west), points(Self.east)])
        let single = try #require(GeoPolygon(outerRing: points(Self.outer), holes: points(Self.west)))
        #expect(single.holes == [points(Self.west)])
    }

    @Test func anOpenHoleStillFails() {
        let open = [(2.0, 2.0), (2.0, 4.0), (4.0, 4.0), (4.0, 2.0)]
        #expect(GeoPolygon(outerRing: Self.outer, holes: Self.west, open) == nil)
    }
}

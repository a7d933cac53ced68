import Foundation
import Testing

@testable import Strata

/// A point from latitude and longitude that the test knows to be in range.
private func point(_ latitude: Double, _ longitude: Double) -> GeoPoint {
    GeoPoint(latitude: latitude, longitude: longitude)!
}

/// The property and reason of the error a shape's query-time check throws, or `nil` if the shape is valid.
private func validationFailure(_ shape: some GeoShape) -> (property: String, reason: String)? {
    do {
        _ = try shape.geoRegion()
        return nil
    } catch {
        guard case .invalidValue(_, let property, let reason) = error else { return ("unexpected", "\(error)") }
        return (property, reason)
    }
}

/// A shape type that queries do not know.
private struct Triangle: GeoShape {
    var description: String { "triangle" }
}

@Suite("Geospatial")
struct GeospatialTests {
    // MARK: Points

    @Test func pointRangesAreInclusive() {
        for (latitude, longitude) in [(90.0, 0.0), (-90, 0), (0, 180), (0, -180), (-90, -180), (12.3456789, 98.7654)] {
            let point = GeoPoint(latitude: latitude, longitude: longitude)
            #expect(point?.latitude == latitude)
            #expect(point?.longitude == longitude)
            #expect(point?.altitude == 0)
        }
    }

    @Test(arguments: [
        (90.000000001, 0.0, 0.0), (-90.000000001, 0, 0), (0, 180.000000001, 0), (0, -180.000000001, 0),
        (Double.nan, 0, 0), (0, Double.nan, 0), (Double.infinity, 0, 0), (0, 0, -1), (0, 0, Double.nan),
        (0, 0, Double.infinity),
    ])
    func pointOutOfRangeIsNil(latitude: Double, longitude: Double, altitude: Double) {
        #expect(GeoPoint(latitude: latitude, longitude: longitude, altitude: altitude) == nil)
    }

    @Test func pointEqualityIncludesAltitude() {
        #expect(GeoPoint(1, 2, 3) == GeoPoint(latitude: 1, longitude: 2, altitude: 3))
        #expect(GeoPoint(1, 2, 3) != GeoPoint(1, 2, 4))
        #expect(GeoPoint(1, 2) != GeoPoint(2, 1))
        #expect(Set([point(1, 2), point(1, 2), point(2, 1)]).count == 2)
        #expect(point(48.8566, 2.3522).description == "GeoPoint(latitude: 48.8566, longitude: 2.3522)")
    }

    @Test func parisToLondonIsAbout343Kilometers() {
        let paris = point(48.8566, 2.3522)
        let london = point(51.5074, -0.1278)
        let radians = paris.angularDistance(to: london)
        // The usual figure uses the mean Earth radius, 6371 km.
        #expect(abs(radians * 6371 - 343.56) < 0.01)
        #expect(abs(Distance.radians(radians)!.asKilometers() - 343.94) < 0.01)
        #expect(london.angularDistance(to: paris) == radians)
        #expect(paris.angularDistance(to: paris) == 0)
        // Antipodes are half a circle apart, and the formula stays accurate there.
        #expect(abs(point(0, 0).angularDistance(to: point(0, 180)) - .pi) < 1e-15)
        #expect(abs(point(90, 0).angularDistance(to: point(-90, 0)) - .pi) < 1e-15)
    }

    // MARK: Distance

    @Test func distanceConvertsWithRealmsEarthRadius() throws {
        #expect(try #require(Distance.kilometers(6378.1)).radians == 1)
        #expect(abs(try #require(Distance.kilometers(40075)).radians - 2 * .pi) < 2 * .pi * 1e-4)
        #expect(abs(try #require(Distance.miles(24901)).radians - 2 * .pi) < 2 * .pi * 1e-4)
        #expect(abs(try #require(Distance.miles(1)).asKilometers() - 1.609344) < 1e-12)
        #expect(abs(try #require(Distance.radians(1)).asMiles() - 3963.168) < 0.001)
        #expect(try #require(Distance.degrees(180)).radians == .pi)
        #expect(abs(try #require(Distance.radians(.pi / 2)).asDegrees() - 90) < 1e-12)
        #expect(abs(try #require(Distance.kilometers(25)).asKilometers() - 25) < 1e-12)
        #expect(abs(try #require(Distance.miles(10)).asMiles() - 10) < 1e-12)
        #expect(try #require(Distance.kilometers(0)).radians == 0)
    }

    @Test func negativeOrNaNDistanceIsNil() {
        #expect(Distance.kilometers(-1) == nil)
        #expect(Distance.miles(-0.5) == nil)
        #expect(Distance.degrees(-90) == nil)
        #expect(Distance.radians(-20) == nil)
        #expect(Distance.kilometers(.nan) == nil)
        #expect(Distance.radians(.nan) == nil)
        #expect(Distance.kilometers(1) == Distance.kilometers(1))
        #expect(Distance.kilometers(25.01) != Distance.kilometers(25.02))
        #expect(Distance.degrees(180) == Distance.radians(.pi))
    }

    // MARK: Boxes

    @Test func boxFromTuplesChecksCorners() throws {
        let box = try #require(GeoBox(bottomLeft: (0, 0), topRight: (10, 20)))
        #expect(box.bottomLeft == point(0, 0))
        #expect(box.topRight == point(10, 20))
        #expect(box == GeoBox(bottomLeft: point(0, 0), topRight: point(10, 20)))
        #expect(box != GeoBox(bottomLeft: (0, 0), topRight: (20, 10)))
        #expect(GeoBox(bottomLeft: (-91, 0), topRight: (10, 10)) == nil)
        #expect(GeoBox(bottomLeft: (0, 0), topRight: (10, 181)) == nil)
        #expect(box.description == "geoBox([0.0, 0.0], [20.0, 10.0])")
    }

    @Test func boxContainsItsEdgesAndCorners() throws {
        let box = try #require(GeoBox(bottomLeft: (0, 0), topRight: (10, 20)))
        #expect(box.contains(point(5, 5)))
        #expect(box.contains(point(0, 0)))
        #expect(box.contains(point(10, 20)))
        #expect(box.contains(point(0, 20)))
        #expect(box.contains(point(10, 7)))
        #expect(!box.contains(point(10.000001, 7)))
        #expect(!box.contains(point(-0.000001, 7)))
        #expect(!box.contains(point(5, 20.000001)))
        #expect(!box.contains(point(5, -0.000001)))
        #expect(!box.contains(point(-5, -160)))
    }

    @Test func boxWithLeftGreaterThanRightCrossesTheAntimeridian() throws {
        let box = try #require(GeoBox(bottomLeft: (-10, 170), topRight: (10, -170)))
        for longitude in [170.0, 175, 180, -180, -175, -170] {
            #expect(box.contains(point(0, longitude)), "longitude \(longitude)")
        }
        for longitude in [169.9, -169.9, 0, 90, -90] {
            #expect(!box.contains(point(0, longitude)), "longitude \(longitude)")
        }
        #expect(!box.contains(point(11, 180)))
    }

    @Test func longitudes180AndMinus180AreOneMeridian() throws {
        let westOfAntimeridian = try #require(GeoBox(bottomLeft: (0, 170), topRight: (10, 180)))
        #expect(westOfAntimeridian.contains(point(5, -180)))
        #expect(!westOfAntimeridian.contains(point(5, -179)))
        let eastOfAntimeridian = try #require(GeoBox(bottomLeft: (0, -180), topRight: (10, -170)))
        #expect(eastOfAntimeridian.contains(point(5, 180)))
        #expect(eastOfAntimeridian.contains(point(5, -175)))
        #expect(!eastOfAntimeridian.contains(point(5, 179)))
        #expect(!eastOfAntimeridian.contains(point(5, 0)))
        let world = try #require(GeoBox(bottomLeft: (-90, -180), topRight: (90, 180)))
        for sample in [point(0, 0), point(90, 0), point(-90, 180), point(-45, -180), point(12, 123)] {
            #expect(world.contains(sample))
        }
    }

    @Test func invalidBoxFailsAtQueryTimeAndMatchesNothing() throws {
        let upsideDown = try #require(GeoBox(bottomLeft: (10, 0), topRight: (0, 10)))
        let failure = try #require(validationFailure(upsideDown))
        #expect(failure.reason.contains("above the top-right latitude"))
        #expect(!upsideDown.contains(point(5, 5)))
        #expect(validationFailure(GeoBox(bottomLeft: (0, 180), topRight: (10, -180))!) != nil)
        #expect(validationFailure(GeoBox(bottomLeft: (0, -180), topRight: (10, -180))!) == nil)
    }

    // MARK: Circles

    @Test func circleConstruction() throws {
        let center = point(0, 70)
        #expect(GeoCircle(center: center, radiusInRadians: 0)?.radians == 0)
        #expect(GeoCircle(center: center, radiusInRadians: 500)?.radians == 500)
        #expect(GeoCircle(center: center, radiusInRadians: -1) == nil)
        #expect(GeoCircle(center: center, radiusInRadians: .nan) == nil)
        #expect(GeoCircle(center: (0, 70), radiusInRadians: -500) == nil)
        #expect(GeoCircle(center: (91, 70), radiusInRadians: 1) == nil)
        #expect(GeoCircle(center: (0, 181), radius: .kilometers(1)!) == nil)
        let circle = GeoCircle(center: center, radius: .degrees(180)!)
        #expect(circle.radians == .pi)
        #expect(circle == GeoCircle(center: (0, 70), radiusInRadians: .pi))
        #expect(circle != GeoCircle(center: (0, 71), radiusInRadians: .pi))
        #expect(GeoCircle(center: (48.5, 2.25), radiusInRadians: 0.5)?.description == "geoCircle([2.25, 48.5], 0.5)")
    }

    @Test func circleContainsPointsWithinItsGreatCircleRadius() throws {
        let paris = point(48.8566, 2.3522)
        let london = point(51.5074, -0.1278)
        // Paris–London is 343.94 km on Realm's sphere (radius 6378.1 km).
        #expect(GeoCircle(center: paris, radius: .kilometers(344.5)!).contains(london))
        #expect(!GeoCircle(center: paris, radius: .kilometers(343.5)!).contains(london))
        #expect(GeoCircle(center: paris, radius: .miles(214)!).contains(london))
        #expect(!GeoCircle(center: paris, radius: .miles(213)!).contains(london))
        let distance = paris.angularDistance(to: london)
        #expect(GeoCircle(center: paris, radiusInRadians: distance + 1e-12)!.contains(london))
        #expect(!GeoCircle(center: paris, radiusInRadians: distance - 1e-12)!.contains(london))
        #expect(GeoCircle(center: paris, radiusInRadians: 0)!.contains(paris))
        #expect(!GeoCircle(center: paris, radiusInRadians: 0)!.contains(london))
    }

    @Test func circleAcrossThePoleAndTheAntimeridian() throws {
        let nearPole = GeoCircle(center: point(89, 0), radius: .degrees(2)!)
        #expect(nearPole.contains(point(90, 0)))
        #expect(nearPole.contains(point(89.5, 180)))  // 1.5° away, over the pole
        #expect(!nearPole.contains(point(88.5, 180)))  // 2.5° away
        #expect(nearPole.contains(point(87.5, 0)))
        #expect(!nearPole.contains(point(86.5, 0)))
        let pacific = GeoCircle(center: point(0, 179.5), radius: .degrees(1)!)
        #expect(pacific.contains(point(0, -179.8)))
        #expect(pacific.contains(point(0.5, -180)))
        #expect(!pacific.contains(point(0, 178)))
        #expect(!pacific.contains(point(0, -178)))
    }

    @Test func circleOfHalfACircleOrMoreCoversTheEarth() throws {
        let circle = try #require(GeoCircle(center: (10, 20), radiusInRadians: .pi))
        #expect(circle.contains(point(-10, -160)))
        #expect(try #require(GeoCircle(center: (10, 20), radiusInRadians: 10)).contains(point(-10, -160)))
        #expect(!GeoCircle(center: (10, 20), radiusInRadians: 3.14)!.contains(point(-10, -160)))
    }

    // MARK: Polygons

    @Test func polygonRingsMustBeClosedWithThreeDistinctPoints() {
        let square = [point(0, 0), point(0, 1), point(1, 1), point(1, 0), point(0, 0)]
        #expect(GeoPolygon(outerRing: square) != nil)
        #expect(GeoPolygon(outerRing: square)?.holes == [])
        // Too few points.
        #expect(GeoPolygon(outerRing: [point(0, 0)]) == nil)
        #expect(GeoPolygon(outerRing: [point(0, 0), point(1, 1), point(0, 0)]) == nil)
        // Not closed.
        #expect(GeoPolygon(outerRing: [point(0, 0), point(1, 1), point(2, 0), point(3, 3)]) == nil)
        // Four points but only two distinct.
        #expect(GeoPolygon(outerRing: [point(0, 0), point(1, 1), point(1, 1), point(0, 0)]) == nil)
        #expect(GeoPolygon(outerRing: [point(0, 0), point(1, 1), point(0, 0), point(0, 0)]) == nil)
        // The same rules apply to holes.
        #expect(GeoPolygon(outerRing: square, holes: [[point(0.5, 0.5)]]) == nil)
        #expect(GeoPolygon(outerRing: square, holes: [square, [point(0, 0), point(1, 1), point(2, 2)]]) == nil)
        #expect(GeoPolygon(outerRing: square, holes: [square]) != nil)
        // Tuples are (latitude, longitude) and are range-checked.
        #expect(GeoPolygon(outerRing: [(0, 0), (0, 1), (1, 1), (0, 0)]) != nil)
        #expect(GeoPolygon(outerRing: [(0, 0), (0, 181), (1, 1), (0, 0)]) == nil)
        #expect(
            GeoPolygon(outerRing: [(0, 0), (0, 1), (1, 1), (0, 0)], holes: [[(0, 0), (95, 0), (1, 1), (0, 0)]]) == nil)
        #expect(GeoPolygon(outerRing: [(0, 0), (0, 1), (1, 1), (0, 0)], holes: [[(0, 0)]]) == nil)
    }

    @Test func polygonEqualityAndDescription() throws {
        let polygon = try #require(
            GeoPolygon(outerRing: [(0, 0), (0, 10), (5, 4), (0, 0)], holes: [[(1, 1), (1, 2), (2, 2), (1, 1)]]))
        #expect(polygon.outerRing == [point(0, 0), point(0, 10), point(5, 4), point(0, 0)])
        #expect(polygon.holes == [[point(1, 1), point(1, 2), point(2, 2), point(1, 1)]])
        #expect(
            polygon
                == GeoPolygon(outerRing: [(0, 0), (0, 10), (5, 4), (0, 0)], holes: [[(1, 1), (1, 2), (2, 2), (1, 1)]]))
        #expect(polygon != GeoPolygon(outerRing: [(0, 0), (0, 10), (5, 4), (0, 0)]))
        #expect(
            polygon.description
                == "geoPolygon({[0.0, 0.0], [10.0, 0.0], [4.0, 5.0], [0.0, 0.0]}, {[1.0, 1.0], [2.0, 1.0], [2.0, 2.0], [1.0, 1.0]})"
        )
    }

    @Test func pointInAHoleIsOutsideThePolygon() throws {
        let polygon = try #require(
            GeoPolygon(
                outerRing: [(0, 0), (0, 10), (10, 10), (10, 0), (0, 0)],
                holes: [[(4, 4), (4, 6), (6, 6), (6, 4), (4, 4)]]))
        #expect(polygon.contains(point(2, 2)))
        #expect(polygon.contains(point(8, 5)))
        #expect(!polygon.contains(point(5, 5)))
        #expect(!polygon.contains(point(4.5, 5.5)))
        #expect(!polygon.contains(point(-1, 5)))
        #expect(!polygon.contains(point(5, 11)))
        #expect(!polygon.contains(point(-5, -175)))
        // Boundaries are inside: the outer ring's equator and meridian edges, a hole's meridian edge, vertices.
        #expect(polygon.contains(point(0, 5)))
        #expect(!polygon.contains(point(-0.000001, 5)))
        #expect(polygon.contains(point(5, 0)))
        #expect(polygon.contains(point(5, 10)))
        #expect(!polygon.contains(point(5, 10.000001)))
        #expect(polygon.contains(point(5, 4)))
        #expect(!polygon.contains(point(5, 4.000001)))
        #expect(polygon.contains(point(0, 0)))
        #expect(polygon.contains(point(10, 10)))
        #expect(polygon.contains(point(6, 6)))
        // Without the hole its middle is inside.
        #expect(GeoPolygon(outerRing: polygon.outerRing)!.contains(point(5, 5)))
    }

    @Test func polygonEdgesAreGreatCircleArcs() throws {
        // The north edge runs from (60, -30) to (60, 30). Its great-circle arc bows north, reaching latitude
        // atan(tan 60° / cos 30°) = 63.435° at longitude 0; the south edge, from (50, 30) to (50, -30), reaches
        // atan(tan 50° / cos 30°) = 53.995° there.
        let polygon = try #require(GeoPolygon(outerRing: [(50, -30), (50, 30), (60, 30), (60, -30), (50, -30)]))
        #expect(polygon.contains(point(62, 0)))  // north of the line of latitude 60 but south of the arc
        #expect(polygon.contains(point(63.43, 0)))
        #expect(!polygon.contains(point(63.44, 0)))
        #expect(!polygon.contains(point(52, 0)))  // north of latitude 50 but south of the arc
        #expect(!polygon.contains(point(53.99, 0)))
        #expect(polygon.contains(point(54, 0)))
        #expect(polygon.contains(point(60, 30)))
        // A box with the same corners follows the lines of latitude instead.
        let box = try #require(GeoBox(bottomLeft: (50, -30), topRight: (60, 30)))
        #expect(!box.contains(point(62, 0)))
        #expect(box.contains(point(52, 0)))
    }

    @Test func ringDirectionDoesNotMatter() throws {
        let ring = [point(50, -30), point(50, 30), point(60, 30), point(60, -30), point(50, -30)]
        let forward = try #require(GeoPolygon(outerRing: ring))
        let backward = try #require(GeoPolygon(outerRing: ring.reversed()))
        for sample in [point(55, 0), point(62, 0), point(52, 0), point(0, 0), point(-55, 180), point(90, 0)] {
            #expect(forward.contains(sample) == backward.contains(sample), "\(sample)")
        }
        #expect(backward.contains(point(55, 0)))
        #expect(!backward.contains(point(-55, -180)))
    }

    @Test func polygonAcrossTheAntimeridian() throws {
        let polygon = try #require(GeoPolygon(outerRing: [(10, 170), (10, -170), (-10, -170), (-10, 170), (10, 170)]))
        for longitude in [171.0, 175, 180, -180, -175, -171] {
            #expect(polygon.contains(point(0, longitude)), "longitude \(longitude)")
        }
        for longitude in [169.0, -169, 0, 90, -90] {
            #expect(!polygon.contains(point(0, longitude)), "longitude \(longitude)")
        }
        #expect(!polygon.contains(point(11, 180)))
    }

    @Test func polygonAroundAPole() throws {
        // Four vertices on latitude 80; each edge bows poleward to 82.893° midway between its ends.
        let polygon = try #require(GeoPolygon(outerRing: [(80, 0), (80, 90), (80, 180), (80, -90), (80, 0)]))
        #expect(polygon.contains(point(90, 0)))
        #expect(polygon.contains(point(85, 123)))
        #expect(polygon.contains(point(84, 45)))
        #expect(!polygon.contains(point(82, 45)))  // north of latitude 80 but south of the edge
        #expect(polygon.contains(point(82, 0)))  // north of a vertex
        #expect(!polygon.contains(point(79, 0)))
        #expect(!polygon.contains(point(-90, 0)))
        #expect(!polygon.contains(point(0, 0)))
        #expect(polygon.contains(point(80, 90)))
    }

    @Test func pointsWhoseAntipodeIsOnTheRing() throws {
        let polygon = try #require(GeoPolygon(outerRing: [(0, 0), (0, 10), (10, 10), (10, 0), (0, 0)]))
        #expect(!polygon.contains(point(0, 180)))  // antipode of a vertex
        #expect(!polygon.contains(point(0, -175)))  // antipode of a point on an edge
        #expect(!polygon.contains(point(-5, -170)))  // antipode of a point on a meridian edge
        #expect(!polygon.contains(point(-5, -175)))  // antipode of an inside point
        #expect(polygon.contains(point(5, 5)))

        // A band 10° tall and 190° long: (0, 0) is inside and its antipode (0, 180) is on the band's east edge.
        let north = [-10.0, 30, 70, 110, 150, 180].map { (5.0, $0) }
        let south = [180.0, 150, 110, 70, 30, -10].map { (-5.0, $0) }
        let band = try #require(GeoPolygon(outerRing: north + south + [north[0]]))
        #expect(band.contains(point(0, 0)))
        #expect(band.contains(point(5, 0)))  // the antipode of a vertex; the north edge bows north to 5.24° here
        #expect(band.contains(point(0, 90)))
        #expect(band.contains(point(0, 180)))
        #expect(!band.contains(point(0, -90)))
        #expect(!band.contains(point(0, -170)))

        // A band 210° long holds both (0, 0) and its antipode (0, 180), yet covers far less than half the Earth.
        let longNorth = [-10.0, 30, 70, 110, 150, -170, -160].map { (5.0, $0) }
        let longSouth = [-160.0, -170, 150, 110, 70, 30, -10].map { (-5.0, $0) }
        let longBand = try #require(GeoPolygon(outerRing: longNorth + longSouth + [longNorth[0]]))
        for longitude in [0.0, 90, 180, -165] {
            #expect(longBand.contains(point(0, longitude)), "longitude \(longitude)")
        }
        #expect(!longBand.contains(point(0, -90)))
        #expect(!longBand.contains(point(20, 180)))
        #expect(!longBand.contains(point(90, 0)))
    }

    @Test func convexPolygonsAgreeWithHalfSpaceTest() throws {
        // Random convex polygons (vertices on a small circle, in azimuth order, either direction) against an
        // independent test: a point is inside a convex ring if it is on the same side of every edge's plane.
        var random = SplitMix64(seed: 0x5EED)
        var checked = 0
        for _ in 0..<200 {
            let center = randomUnitVector(&random)
            let radius = Double.random(in: 0.01...1.2, using: &random)
            let east = normalize(cross(abs(center.z) < 0.9 ? (0, 0, 1) : (1, 0, 0), center))
            let north = cross(center, east)
            var azimuths = (0..<Int.random(in: 3...9, using: &random)).map { _ in
                Double.random(in: 0..<(2 * .pi), using: &random)
            }.sorted()
            if Bool.random(using: &random) { azimuths.reverse() }
            let vertices = azimuths.map { azimuth in
                normalize(
                    add(
                        scale(center, cos(radius)),
                        scale(add(scale(east, cos(azimuth)), scale(north, sin(azimuth))), sin(radius))))
            }
            let ring = vertices.map(geoPoint) + [geoPoint(vertices[0])]
            let polygon = try #require(GeoPolygon(outerRing: ring))
            let region = try polygon.geoRegion()
            let orientation = determinant(vertices[0], vertices[1], vertices[2]) > 0 ? 1.0 : -1.0
            for _ in 0..<50 {
                let sample = geoPoint(randomUnitVector(&random, near: center, within: radius * 1.5))
                let vector = unitVector(sample)
                let sides = vertices.indices.map { i in
                    orientation * determinant(vertices[i], vertices[(i + 1) % vertices.count], vector)
                }
                guard sides.allSatisfy({ abs($0) > 1e-9 }) else { continue }  // too near an edge to judge
                #expect(region.contains(sample) == sides.allSatisfy { $0 > 0 }, "\(sample) in \(polygon)")
                checked += 1
            }
        }
        #expect(checked > 9000)
    }

    // MARK: Query-time checks

    @Test func selfCrossingRingFailsAtQueryTime() throws {
        let bowTie = try #require(GeoPolygon(outerRing: [(0, 0), (10, 10), (0, 10), (10, 0), (0, 0)]))
        let failure = try #require(validationFailure(bowTie))
        #expect(failure.property == "outerRing")
        #expect(failure.reason.contains("crosses itself"))
        #expect(!bowTie.contains(point(5, 1)))
    }

    @Test func degenerateRingsFailAtQueryTime() throws {
        // Repeats a vertex that is not adjacent.
        let figureEight = try #require(
            GeoPolygon(outerRing: [(0, 0), (0, 5), (5, 5), (0, 5), (5, 0), (0, 0)]))
        #expect(validationFailure(figureEight)?.reason.contains("repeats the vertex [5.0, 0.0]") == true)
        // Goes out and straight back along one great circle.
        let spike = try #require(GeoPolygon(outerRing: [(0, 0), (0, 10), (0, 5), (5, 5), (0, 0)]))
        #expect(validationFailure(spike)?.reason.contains("doubles back on itself at [10.0, 0.0]") == true)
        // Joins two antipodal points, so the edge could run anywhere.
        let antipodal = try #require(GeoPolygon(outerRing: [(0, 0), (0, 180), (45, 90), (0, 0)]))
        #expect(validationFailure(antipodal)?.reason.contains("antipodal") == true)
        // Longitudes 180 and -180 are one point, so this ring has only two distinct vertices.
        let wrapped = try #require(GeoPolygon(outerRing: [(0, 170), (0, 180), (0, -180), (0, 170)]))
        #expect(validationFailure(wrapped)?.reason.contains("has 2 distinct vertices") == true)
        // The closing point need only match the first point's latitude and longitude.
        let closed = try #require(GeoPolygon(outerRing: [GeoPoint(0, 0, 5)!, point(0, 1), point(1, 1), point(0, 0)]))
        #expect(validationFailure(closed) == nil)
    }

    @Test func holesMustLieInsideTheOuterRingWithoutTouchingEdges() throws {
        let square = [(0.0, 0.0), (0.0, 10.0), (10.0, 10.0), (10.0, 0.0), (0.0, 0.0)]
        let outside = try #require(GeoPolygon(outerRing: square, holes: [[(20, 20), (20, 21), (21, 21), (20, 20)]]))
        #expect(validationFailure(outside)?.property == "holes[0]")
        #expect(validationFailure(outside)?.reason.contains("not inside the outer ring") == true)
        let crossing = try #require(GeoPolygon(outerRing: square, holes: [[(5, 5), (5, 15), (6, 15), (5, 5)]]))
        #expect(validationFailure(crossing)?.reason.contains("crosses the outer ring") == true)
        let sharedEdge = try #require(GeoPolygon(outerRing: square, holes: [[(0, 0), (0, 10), (5, 5), (0, 0)]]))
        #expect(validationFailure(sharedEdge)?.reason.contains("shares an edge with the outer ring") == true)
        let nested = try #require(
            GeoPolygon(
                outerRing: square,
                holes: [[(1, 1), (1, 9), (9, 9), (9, 1), (1, 1)], [(4, 4), (4, 6), (6, 6), (6, 4), (4, 4)]]))
        #expect(validationFailure(nested)?.property == "holes[1]")
        #expect(validationFailure(nested)?.reason.contains("overlaps holes[0]") == true)
        let crossingHoles = try #require(
            GeoPolygon(
                outerRing: square,
                holes: [[(1, 1), (1, 5), (5, 5), (5, 1), (1, 1)], [(3, 3), (3, 7), (7, 7), (7, 3), (3, 3)]]))
        #expect(validationFailure(crossingHoles)?.reason.contains("crosses holes[0]") == true)
        // Holes may touch the outer ring and each other at a vertex.
        let touching = try #require(
            GeoPolygon(
                outerRing: square,
                holes: [[(0, 0), (2, 4), (4, 2), (0, 0)], [(4, 2), (6, 6), (4, 6), (4, 2)]]))
        #expect(validationFailure(touching) == nil)
        #expect(touching.contains(point(0, 0)))
        #expect(!touching.contains(point(2.5, 2.5)))
        #expect(touching.contains(point(8, 8)))
    }

    // MARK: Realm's reference results

    /// Shapes and the people they hold in Realm's own geospatial tests, computed there with S2.
    @Test func matchesRealmResults() throws {
        let people = [
            "Diana": point(40.7128, -74.0060),  // New York
            "Maria": point(55.6761, 12.5683),  // Copenhagen
            "Tomas": point(55.6280, 12.0826),  // Roskilde
            "Alba": point(-76, -76),  // Antarctica
        ]
        func matches(_ shape: some GeoShape) throws -> Set<String> {
            let region = try shape.geoRegion()
            return Set(people.filter { region.contains($0.value) }.keys)
        }
        let copenhagenToRoskilde = [(40.0096192, -75.5175781), (60, 20), (20, 20), (-75.5175781, -75.5175781)]
        let newYorkSliver = [(40.7129, -75.0), (40.7129, -74), (40.7126, -74), (40.7129, -75)]
        let antarcticSquare = [(-77.0, -77.0), (-77, -75), (-75, -75), (-75, -77), (-77, -77)]

        #expect(try matches(GeoBox(bottomLeft: (55.6281, 12.0826), topRight: (55.6762, 12.5684))!) == ["Maria"])
        #expect(
            try matches(GeoBox(bottomLeft: (55.6279, 12.0825), topRight: (55.6762, 12.5684))!) == ["Maria", "Tomas"])
        #expect(try matches(GeoBox(bottomLeft: (0, -75), topRight: (60, 15))!) == ["Diana", "Maria", "Tomas"])
        #expect(
            try matches(
                GeoPolygon(outerRing: [
                    (55.6281, 12.0826), (55.6761, 12.0826), (55.6761, 12.5684), (55.6281, 12.5684), (55.6281, 12.0826),
                ])!) == ["Maria"])
        #expect(try matches(GeoPolygon(outerRing: [(55, 12), (55.67, 12.5), (55.67, 11.5), (55, 12)])!) == ["Tomas"])
        let large = try #require(GeoPolygon(outerRing: copenhagenToRoskilde + [copenhagenToRoskilde[0]]))
        #expect(try matches(large) == ["Diana", "Maria", "Tomas"])
        let largerOuter = [(50.0, -80.0), (62, 22), (22, 22), (-80, -80), (50, -80)]
        #expect(
            try matches(
                GeoPolygon(
                    outerRing: [(50, -80), (61, 21), (21, 21), (-80, -80), (50, -80)],
                    holes: [copenhagenToRoskilde + [copenhagenToRoskilde[0]]])!) == ["Alba"])
        #expect(
            try matches(GeoPolygon(outerRing: largerOuter, holes: [newYorkSliver])!) == ["Maria", "Tomas", "Alba"])
        #expect(
            try matches(GeoPolygon(outerRing: largerOuter, holes: [newYorkSliver, antarcticSquare])!) == [
                "Maria", "Tomas",
            ])
        #expect(try matches(GeoCircle(center: (55.67, 12.56), radiusInRadians: 0.001)!) == ["Maria"])
        #expect(try matches(GeoCircle(center: (55.67, 12.56), radius: .kilometers(10)!)!) == ["Maria"])
        #expect(try matches(GeoCircle(center: (55.67, 12.56), radius: .kilometers(100)!)!) == ["Maria", "Tomas"])
        #expect(try matches(GeoCircle(center: (45, -20), radius: .kilometers(5000)!)!) == ["Diana", "Maria", "Tomas"])
    }

    // MARK: Stored points and the protocol

    @Test func readsGeoJSONPoints() throws {
        let paris = try #require(GeoPoint(geoJSONType: "Point", coordinates: [2.3522, 48.8566]))
        #expect(paris.latitude == 48.8566)
        #expect(paris.longitude == 2.3522)
        #expect(paris.altitude == 0)
        #expect(GeoPoint(geoJSONType: "point", coordinates: [1, 2]) == point(2, 1))
        #expect(GeoPoint(geoJSONType: "POINT", coordinates: [1, 2]) == point(2, 1))
        #expect(GeoPoint(geoJSONType: "Point", coordinates: [1, 2, 30])?.altitude == 30)
        #expect(GeoPoint(geoJSONType: "Point", coordinates: [1, 2, -30]) == point(2, 1))
        #expect(GeoPoint(geoJSONType: "Polygon", coordinates: [1, 2]) == nil)
        #expect(GeoPoint(geoJSONType: "Points", coordinates: [1, 2]) == nil)
        #expect(GeoPoint(geoJSONType: "", coordinates: [1, 2]) == nil)
        #expect(GeoPoint(geoJSONType: "Point", coordinates: [1]) == nil)
        #expect(GeoPoint(geoJSONType: "Point", coordinates: []) == nil)
        #expect(GeoPoint(geoJSONType: "Point", coordinates: [181, 0]) == nil)
        #expect(GeoPoint(geoJSONType: "Point", coordinates: [0, -91]) == nil)
        #expect(GeoPoint(geoJSONType: "Point", coordinates: [.nan, 0]) == nil)
        // Longitude comes first: [2.35, 48.85] is Paris, not a point off Somalia.
        let nearParis = GeoCircle(center: point(48.85, 2.35), radius: .kilometers(5)!)
        #expect(nearParis.contains(try #require(GeoPoint(geoJSONType: "Point", coordinates: [2.3522, 48.8566]))))
    }

    @Test func shapesWorkThroughTheProtocol() throws {
        let shapes: [any RLMGeospatial] = [
            try #require(GeoBox(bottomLeft: (0, 0), topRight: (10, 10))),
            try #require(GeoCircle(center: (5, 5), radius: .kilometers(100)!)),
            try #require(GeoPolygon(outerRing: [(0, 0), (0, 10), (10, 10), (10, 0), (0, 0)])),
        ]
        for shape in shapes {
            #expect(shape.contains(point(5, 5)), "\(shape)")
            #expect(!shape.contains(point(-5, -5)), "\(shape)")
            #expect(try shape.geoRegion().contains(point(5.1, 4.9)), "\(shape)")
        }
        let unknown: any GeoShape = Triangle()
        #expect(validationFailure(unknown)?.reason.contains("accepts only GeoBox, GeoCircle and GeoPolygon") == true)
        #expect(!unknown.contains(point(0, 0)))
    }
}

// MARK: - Independent helpers for the randomized test

private typealias Triple = (x: Double, y: Double, z: Double)

private struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

private func add(_ a: Triple, _ b: Triple) -> Triple { (a.x + b.x, a.y + b.y, a.z + b.z) }
private func scale(_ a: Triple, _ factor: Double) -> Triple { (a.x * factor, a.y * factor, a.z * factor) }
private func dot(_ a: Triple, _ b: Triple) -> Double { a.x * b.x + a.y * b.y + a.z * b.z }
private func cross(_ a: Triple, _ b: Triple) -> Triple {
    (a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x)
}
private func normalize(_ a: Triple) -> Triple { scale(a, 1 / dot(a, a).squareRoot()) }
private func determinant(_ a: Triple, _ b: Triple, _ c: Triple) -> Double { dot(cross(a, b), c) }

private func unitVector(_ point: GeoPoint) -> Triple {
    let latitude = point.latitude * .pi / 180
    let longitude = point.longitude * .pi / 180
    return (cos(latitude) * cos(longitude), cos(latitude) * sin(longitude), sin(latitude))
}

private func geoPoint(_ vector: Triple) -> GeoPoint {
    point(asin(max(-1, min(1, vector.z))) * 180 / .pi, atan2(vector.y, vector.x) * 180 / .pi)
}

private func randomUnitVector(_ random: inout SplitMix64) -> Triple {
    let z = Double.random(in: -1...1, using: &random)
    let longitude = Double.random(in: -Double.pi..<Double.pi, using: &random)
    let r = (1 - z * z).squareRoot()
    return (r * cos(longitude), r * sin(longitude), z)
}

private func randomUnitVector(_ random: inout SplitMix64, near center: Triple, within angle: Double) -> Triple {
    while true {
        let candidate = randomUnitVector(&random)
        if dot(candidate, center) >= cos(angle) { return candidate }
    }
}

// MARK: - geoWithin queries

/// The seeds' GeoJSON-compatible embedded point.
final class CustomGeoPoint: EmbeddedObject {
    @Persisted private var type: String = "Point"
    @Persisted private var coordinates: List<Double>
    var latitude: Double { coordinates[1] }
    var longitude: Double { coordinates[0] }
    convenience init(_ latitude: Double, _ longitude: Double) {
        self.init()
        // Longitude comes first in the coordinates array of a GeoJSON document.
        coordinates.append(objectsIn: [longitude, latitude])
    }
}

final class Venue: Object {
    @Persisted var name = ""
    @Persisted var location: CustomGeoPoint?
    @Persisted var branches: List<CustomGeoPoint>
}

@Suite("geoWithin queries")
struct GeoWithinQueryTests {
    private func venues() throws -> (Realm, [(String, Double, Double)]) {
        let realm = try Realm(
            configuration: Realm.Configuration(inMemoryIdentifier: "geo-\(UUID())", objectTypes: [Venue.self]))
        let places = [
            ("Paris", 48.8566, 2.3522), ("London", 51.5074, -0.1278), ("Zurich", 47.3769, 8.5417),
            ("Reykjavik", 64.1466, -21.9426), ("Fiji", -17.7134, 178.065), ("Samoa", -13.759, -172.1046),
            ("Cape Town", -33.9249, 18.4241),
        ]
        try realm.write {
            for (name, latitude, longitude) in places {
                let venue = realm.create(Venue.self, value: ["name": name])
                venue.location = CustomGeoPoint(latitude, longitude)
                venue.branches.append(CustomGeoPoint(-latitude, longitude))
            }
            realm.create(Venue.self, value: ["name": "Nowhere"])
        }
        return (realm, places)
    }

    @Test func shapesSelectTheVenuesInside() throws {
        let (realm, places) = try venues()
        let venues = realm.objects(Venue.self)
        let europe = GeoBox(bottomLeft: (35, -25), topRight: (70, 30))!
        let nearParis = GeoCircle(center: (48.8566, 2.3522), radius: .kilometers(500)!)!
        let pacific = GeoBox(bottomLeft: (-30, 170), topRight: (0, -170))!  // across the antimeridian
        let triangle = GeoPolygon(outerRing: [(40, -5), (55, -5), (45, 15), (40, -5)])!
        let shapes: [(any GeoShape, [String])] = [
            (europe, ["London", "Paris", "Reykjavik", "Zurich"]), (nearParis, ["London", "Paris", "Zurich"]),
            (pacific, ["Fiji", "Samoa"]), (triangle, ["London", "Paris", "Zurich"]),
        ]
        for (shape, expected) in shapes {
            let region = try shape.geoRegion()
            let reference = places.filter { region.contains(GeoPoint(latitude: $0.1, longitude: $0.2)!) }.map(\.0)
            #expect(reference.sorted() == expected, "\(shape)")
            #expect(venues.filter("location GEOWITHIN $0", shape).map(\.name).sorted() == expected, "\(shape)")
            #expect(venues.filter("location GEOWITHIN \(shape)").map(\.name).sorted() == expected, "\(shape)")
            #expect(venues.where { $0.location.geoWithin(shape) }.map(\.name).sorted() == expected, "\(shape)")
        }
        // Through a list of points: any of them.
        #expect(
            venues.where { $0.branches.geoWithin(GeoBox(bottomLeft: (-70, -25), topRight: (-35, 30))!) }.map(\.name)
                .sorted() == ["London", "Paris", "Reykjavik", "Zurich"])
        #expect(
            venues.filter("NOT location GEOWITHIN $0", europe).map(\.name).sorted() == [
                "Cape Town", "Fiji", "Nowhere", "Samoa",
            ])
    }

    @Test func badShapesAndPropertiesAreQueryErrors() throws {
        let (realm, _) = try venues()
        let venues = realm.objects(Venue.self)
        let crossing = GeoPolygon(outerRing: [(0, 0), (10, 10), (0, 10), (10, 0), (0, 0)])!
        for (query, arguments, reason) in [
            (
                "name GEOWITHIN $0", [GeoBox(bottomLeft: (0, 0), topRight: (1, 1))!] as [Any],
                "GEOWITHIN needs an embedded point"
            ),
            ("location GEOWITHIN $0", [3], "needs a GeoBox, GeoCircle or GeoPolygon"),
            ("location GEOWITHIN $0", [crossing], "invalid shape"),
            ("location GEOWITHIN geoBox([0, 0], [1, 100])", [], "out of range"),
            ("location GEOWITHIN geoPolygon({[0, 0], [1, 0], [1, 1]})", [], "rings are not closed"),
            ("location GEOWITHIN geoCircle([0, 0])", [], ", between the center and the radius"),
        ] {
            venues.expectInvalidQuery(query, arguments, reason: reason)
        }
    }
}

import Foundation

// Geospatial values for `geoWithin` queries, following the Realm Swift SDK (10.47 and later).
//
// Geometry is spherical, as in Realm (which uses Google's S2 library): a point is a unit vector, a polygon's edges
// are great-circle arcs, a circle is the set of points within an angle of its centre, and a box is a range of
// latitudes and longitudes. Points on the boundary of any shape are inside it.

// MARK: - GeoPoint

/// A point on the Earth's surface, given by latitude and longitude in degrees.
///
/// Points are the corners of ``GeoBox`` and ``GeoPolygon`` and the centre of ``GeoCircle``. A point cannot be a
/// property type: to store one, give an embedded object a `type` property holding `"Point"` and a `coordinates`
/// list holding longitude then latitude (the GeoJSON layout), and query that object with `geoWithin`.
///
/// ```swift
/// let paris = GeoPoint(latitude: 48.8566, longitude: 2.3522)!
/// let nowhere = GeoPoint(latitude: 91, longitude: 0)  // nil: latitude is above 90
/// ```
public struct GeoPoint: Hashable, Sendable, CustomStringConvertible {
    /// The latitude in degrees, from -90 (the South Pole) to 90 (the North Pole).
    public let latitude: Double
    /// The longitude in degrees, from -180 to 180; both ends name the antimeridian.
    public let longitude: Double
    /// The altitude, zero or more. It is kept with the point but no query uses it.
    public let altitude: Double

    /// Creates a point, or returns `nil` if a value is out of range.
    ///
    /// - Parameters:
    ///   - latitude: Degrees from -90 to 90, inclusive.
    ///   - longitude: Degrees from -180 to 180, inclusive.
    ///   - altitude: A finite value of zero or more; queries ignore it.
    public init?(latitude: Double, longitude: Double, altitude: Double = 0) {
        guard (-90...90).contains(latitude), (-180...180).contains(longitude), altitude >= 0, altitude.isFinite
        else { return nil }
        self.latitude = latitude
        self.longitude = longitude
        self.altitude = altitude
    }

    /// Creates a point from unlabeled latitude, longitude and altitude, or returns `nil` if a value is out of
    /// range; the same as ``init(latitude:longitude:altitude:)``.
    ///
    /// - Parameters:
    ///   - latitude: Degrees from -90 to 90, inclusive.
    ///   - longitude: Degrees from -180 to 180, inclusive.
    ///   - altitude: A finite value of zero or more; queries ignore it.
    public init?(_ latitude: Double, _ longitude: Double, _ altitude: Double = 0) {
        self.init(latitude: latitude, longitude: longitude, altitude: altitude)
    }

    /// The point as `GeoPoint(latitude: …, longitude: …)`.
    public var description: String {
        "GeoPoint(latitude: \(latitude), longitude: \(longitude))"
    }

    /// Whether two points have the same latitude and longitude, whatever their altitudes.
    fileprivate func hasSameCoordinates(as other: GeoPoint) -> Bool {
        latitude == other.latitude && longitude == other.longitude
    }

    /// The point in GeoJSON order, `[longitude, latitude]`, as the query language writes positions.
    fileprivate var position: String { "[\(longitude), \(latitude)]" }
}

extension GeoPoint {
    /// Reads the point stored in an embedded GeoJSON-style object: its `type` and `coordinates` properties.
    ///
    /// This is what a `geoWithin` query sees of each object. As in Realm, `type` must be `"Point"` in any letter
    /// case; `coordinates` holds longitude then latitude, and a third value, if present, is the altitude (ignored
    /// unless it is finite and not negative).
    ///
    /// - Parameters:
    ///   - type: The object's `type` property.
    ///   - coordinates: The object's `coordinates` list.
    /// - Returns: `nil` (the object matches no shape) if `type` is not `"Point"`, there are fewer than two
    ///   coordinates, or the longitude or latitude is out of range.
    init?(geoJSONType type: String, coordinates: [Double]) {
        guard type == "Point" || (type.utf8.count == 5 && type.lowercased() == "point"), coordinates.count >= 2
        else { return nil }
        var altitude = 0.0
        if coordinates.count > 2, coordinates[2] >= 0, coordinates[2].isFinite {
            altitude = coordinates[2]
        }
        self.init(latitude: coordinates[1], longitude: coordinates[0], altitude: altitude)
    }

    /// The great-circle distance to another point, in radians (multiply by a radius to get a length).
    ///
    /// - Parameter other: The other point.
    /// - Returns: The angle between the two points at the Earth's centre, from 0 to π.
    func angularDistance(to other: GeoPoint) -> Double {
        Vector3(self).angle(to: Vector3(other))
    }
}

// MARK: - Distance

/// A distance along the Earth's surface, held as the angle it spans at the Earth's centre, in radians.
///
/// Conversions use Realm's spherical Earth, whose radius is 6378.1 km (the equatorial radius), with a mile of
/// 1.609344 km: one radian is 6378.1 km, or about 3963.2 miles.
///
/// ```swift
/// let radius = Distance.kilometers(25)!
/// print(radius.radians)     // 0.00391966...
/// print(radius.asMiles())   // 15.534...
/// let circle = GeoCircle(center: GeoPoint(latitude: 48.8566, longitude: 2.3522)!, radius: radius)
/// ```
public struct Distance: Hashable, Sendable {
    /// The Earth's radius in kilometres that Realm converts distances with.
    static let earthRadiusKilometers = 6378.1
    /// The length of a mile in kilometres.
    static let kilometersPerMile = 1.609344

    /// The distance in radians: the angle it spans at the Earth's centre.
    public let radians: Double

    private init?(checkedRadians: Double) {
        guard checkedRadians >= 0 else { return nil }
        radians = checkedRadians
    }

    /// A distance in kilometres, or `nil` if `kilometers` is negative or NaN.
    ///
    /// - Parameter kilometers: The distance in kilometres.
    /// - Returns: The distance, converted to radians with an Earth radius of 6378.1 km.
    public static func kilometers(_ kilometers: Double) -> Distance? {
        Distance(checkedRadians: kilometers / earthRadiusKilometers)
    }

    /// A distance in miles, or `nil` if `miles` is negative or NaN.
    ///
    /// - Parameter miles: The distance in miles.
    /// - Returns: The distance, converted to radians with an Earth radius of 6378.1 km.
    public static func miles(_ miles: Double) -> Distance? {
        Distance(checkedRadians: miles * kilometersPerMile / earthRadiusKilometers)
    }

    /// A distance given as an angle in degrees, or `nil` if `degrees` is negative or NaN.
    ///
    /// - Parameter degrees: The angle the distance spans at the Earth's centre, in degrees.
    /// - Returns: The distance.
    public static func degrees(_ degrees: Double) -> Distance? {
        Distance(checkedRadians: degrees * .pi / 180)
    }

    /// A distance given as an angle in radians, or `nil` if `radians` is negative or NaN.
    ///
    /// - Parameter radians: The angle the distance spans at the Earth's centre, in radians.
    /// - Returns: The distance.
    public static func radians(_ radians: Double) -> Distance? {
        Distance(checkedRadians: radians)
    }

    /// The distance in kilometres, with an Earth radius of 6378.1 km.
    ///
    /// - Returns: ``radians`` times 6378.1.
    public func asKilometers() -> Double {
        radians * Self.earthRadiusKilometers
    }

    /// The distance in miles, with an Earth radius of 6378.1 km.
    ///
    /// - Returns: ``radians`` times about 3963.2.
    public func asMiles() -> Double {
        radians * Self.earthRadiusKilometers / Self.kilometersPerMile
    }

    /// The distance as an angle in degrees.
    ///
    /// - Returns: ``radians`` times 180 / π.
    public func asDegrees() -> Double {
        radians * 180 / .pi
    }
}

// MARK: - Shapes

/// A region of the Earth's surface that a `geoWithin` query tests stored points against: a ``GeoBox``, a
/// ``GeoCircle`` or a ``GeoPolygon``.
///
/// Points on a shape's boundary are inside it. The protocol has no public requirements and queries accept only
/// the three shapes above; a query given any other conforming type fails with
/// ``RealmError/invalidValue(type:property:reason:)``. The `description` of each shape is its query-language literal,
/// such as `geoBox([0.0, 0.0], [10.0, 10.0])`.
///
/// ```swift
/// let shapes: [any GeoShape] = [
///     GeoBox(bottomLeft: (48.8, 2.2), topRight: (48.9, 2.5))!,
///     GeoCircle(center: (48.8566, 2.3522), radius: .kilometers(10)!)!,
/// ]
/// let paris = realm.objects(Place.self).where { $0.location.geoWithin(shapes[0]) }
/// ```
public protocol GeoShape: Sendable, CustomStringConvertible {}

/// The Realm Swift name of ``GeoShape``, so code written for Realm compiles unchanged.
public typealias RLMGeospatial = GeoShape

/// A range of latitudes and longitudes on the Earth's surface, for `geoWithin` queries.
///
/// Unlike a ``GeoPolygon`` with the same corners, a box's south and north sides follow lines of latitude (its west
/// and east sides are meridians). The box holds every point whose latitude is from `bottomLeft.latitude` through
/// `topRight.latitude` and whose longitude runs east from `bottomLeft.longitude` through `topRight.longitude`;
/// all four sides are inside. When the left longitude is greater than the right one the box crosses the
/// antimeridian: from 170 to -170 covers 20 degrees of longitude, not 340. Longitudes -180 and 180 are the same
/// meridian. A box whose bottom latitude is above its top latitude is invalid, and a query using it fails.
///
/// ```swift
/// // Central Paris.
/// let paris = GeoBox(bottomLeft: (48.815, 2.224), topRight: (48.902, 2.470))!
/// // A band around Fiji, across the antimeridian.
/// let fiji = GeoBox(
///     bottomLeft: GeoPoint(latitude: -21, longitude: 176)!,
///     topRight: GeoPoint(latitude: -12, longitude: -178)!)
/// ```
public struct GeoBox: GeoShape, Hashable {
    /// The south-west corner: the lowest latitude and the western longitude.
    public let bottomLeft: GeoPoint
    /// The north-east corner: the highest latitude and the eastern longitude.
    public let topRight: GeoPoint

    /// Creates a box from its south-west and north-east corners.
    ///
    /// - Parameters:
    ///   - bottomLeft: The lowest latitude and the western longitude.
    ///   - topRight: The highest latitude and the eastern longitude.
    public init(bottomLeft: GeoPoint, topRight: GeoPoint) {
        self.bottomLeft = bottomLeft
        self.topRight = topRight
    }

    /// Creates a box from `(latitude, longitude)` pairs for its corners, or returns `nil` if a corner is out of
    /// range.
    ///
    /// - Parameters:
    ///   - bottomLeft: The lowest latitude and the western longitude, in degrees.
    ///   - topRight: The highest latitude and the eastern longitude, in degrees.
    public init?(bottomLeft: (Double, Double), topRight: (Double, Double)) {
        guard let bottomLeft = GeoPoint(latitude: bottomLeft.0, longitude: bottomLeft.1),
            let topRight = GeoPoint(latitude: topRight.0, longitude: topRight.1)
        else { return nil }
        self.init(bottomLeft: bottomLeft, topRight: topRight)
    }

    /// The box in the query language: `geoBox([left, bottom], [right, top])`, longitude first.
    public var description: String {
        "geoBox(\(bottomLeft.position), \(topRight.position))"
    }
}

/// A circle on the Earth's surface, for `geoWithin` queries: every point within a great-circle distance of its
/// centre, including the points exactly at that distance.
///
/// The radius is an angle at the Earth's centre, in radians; ``Distance`` converts kilometres, miles and degrees.
/// A radius of π or more covers the whole Earth.
///
/// ```swift
/// let paris = GeoPoint(latitude: 48.8566, longitude: 2.3522)!
/// let nearParis = GeoCircle(center: paris, radius: .kilometers(50)!)
/// let nearLondon = GeoCircle(center: (51.5074, -0.1278), radiusInRadians: 0.01)!
/// ```
public struct GeoCircle: GeoShape, Hashable {
    /// The centre of the circle.
    public let center: GeoPoint
    /// The radius, in radians: the angle at the Earth's centre between the circle's centre and its edge.
    public let radians: Double

    /// Creates a circle from its centre and its radius in radians, or returns `nil` if the radius is negative or
    /// NaN.
    ///
    /// - Parameters:
    ///   - center: The centre of the circle.
    ///   - radiusInRadians: The radius, as an angle at the Earth's centre.
    public init?(center: GeoPoint, radiusInRadians: Double) {
        guard radiusInRadians >= 0 else { return nil }
        self.center = center
        self.radians = radiusInRadians
    }

    /// Creates a circle from its centre and its radius.
    ///
    /// - Parameters:
    ///   - center: The centre of the circle.
    ///   - radius: The radius, for example `.kilometers(5)!`.
    public init(center: GeoPoint, radius: Distance) {
        self.center = center
        self.radians = radius.radians
    }

    /// Creates a circle from a `(latitude, longitude)` centre and a radius in radians, or returns `nil` if the
    /// centre is out of range or the radius is negative or NaN.
    ///
    /// - Parameters:
    ///   - center: The latitude and longitude of the centre, in degrees.
    ///   - radiusInRadians: The radius, as an angle at the Earth's centre.
    public init?(center: (Double, Double), radiusInRadians: Double) {
        guard let point = GeoPoint(latitude: center.0, longitude: center.1) else { return nil }
        self.init(center: point, radiusInRadians: radiusInRadians)
    }

    /// Creates a circle from a `(latitude, longitude)` centre and a radius, or returns `nil` if the centre is out
    /// of range.
    ///
    /// - Parameters:
    ///   - center: The latitude and longitude of the centre, in degrees.
    ///   - radius: The radius, for example `.miles(3)!`.
    public init?(center: (Double, Double), radius: Distance) {
        guard let point = GeoPoint(latitude: center.0, longitude: center.1) else { return nil }
        self.init(center: point, radius: radius)
    }

    /// The circle in the query language: `geoCircle([longitude, latitude], radians)`.
    public var description: String {
        "geoCircle(\(center.position), \(radians))"
    }
}

/// A polygon on the Earth's surface, with optional holes, for `geoWithin` queries.
///
/// Each ring is a closed list of points: the last point repeats the first, so a triangle takes four points. Edges
/// are great-circle arcs (the shortest path between their ends), not lines of latitude, so an east-west edge
/// bows towards the nearer pole. As in Realm, the direction of a ring does not matter: a ring encloses the
/// smaller of the two regions it separates, so a polygon never covers more than half the Earth. It may cross
/// the antimeridian and may contain a pole.
///
/// A point is inside the polygon if it is inside the outer ring and not inside any hole; points on the outer
/// ring or on a hole's boundary (within about 1e-12 radians, a few micrometres) are inside. The initializers
/// check only the shape of the input; the geometry is checked, as in Realm, when a query uses the polygon, which
/// then fails if a ring crosses itself, repeats a vertex, doubles back, or has an edge between antipodal points,
/// or if a hole is not inside the outer ring, crosses or shares an edge with another ring, or lies in another
/// hole.
///
/// ```swift
/// // A square around central Paris with a hole around the Île de la Cité.
/// let paris = GeoPolygon(
///     outerRing: [(48.80, 2.20), (48.80, 2.50), (48.92, 2.50), (48.92, 2.20), (48.80, 2.20)],
///     holes: [[(48.850, 2.340), (48.850, 2.355), (48.858, 2.355), (48.858, 2.340), (48.850, 2.340)]])!
/// ```
public struct GeoPolygon: GeoShape, Hashable {
    /// The outer boundary, closed: its last point equals its first.
    public let outerRing: [GeoPoint]
    /// Regions cut out of the polygon, each closed like ``outerRing``.
    public let holes: [[GeoPoint]]

    /// Creates a polygon from its outer ring and holes, or returns `nil` if a ring is not closed or has fewer than
    /// three distinct points.
    ///
    /// - Parameters:
    ///   - outerRing: At least four points, the last equal to the first, with at least three distinct.
    ///   - holes: Rings of the same form inside the outer ring.
    public init?(outerRing: [GeoPoint], holes: [[GeoPoint]] = []) {
        guard Self.isClosedRing(outerRing), holes.allSatisfy(Self.isClosedRing) else { return nil }
        self.outerRing = outerRing
        self.holes = holes
    }

    /// Creates a polygon from `(latitude, longitude)` pairs, or returns `nil` if a point is out of range, a ring
    /// is not closed, or a ring has fewer than three distinct points.
    ///
    /// - Parameters:
    ///   - outerRing: At least four pairs, the last equal to the first, with at least three distinct.
    ///   - holes: Rings of the same form inside the outer ring.
    public init?(outerRing: [(Double, Double)], holes: [[(Double, Double)]] = []) {
        func points(_ ring: [(Double, Double)]) -> [GeoPoint]? {
            var points: [GeoPoint] = []
            points.reserveCapacity(ring.count)
            for pair in ring {
                guard let point = GeoPoint(latitude: pair.0, longitude: pair.1) else { return nil }
                points.append(point)
            }
            return points
        }
        guard let outer = points(outerRing) else { return nil }
        var holePoints: [[GeoPoint]] = []
        for hole in holes {
            guard let ring = points(hole) else { return nil }
            holePoints.append(ring)
        }
        self.init(outerRing: outer, holes: holePoints)
    }

    /// Creates a polygon from its outer ring and any number of holes, each passed as its own argument (the SDK's
    /// variadic form), or returns `nil` if a ring is not closed or has fewer than three distinct points.
    ///
    /// ```swift
    /// let withTwoHoles = GeoPolygon(outerRing: outer, holes: firstHole, secondHole)
    /// ```
    ///
    /// - Parameters:
    ///   - outerRing: At least four points, the last equal to the first, with at least three distinct.
    ///   - holes: Rings of the same form inside the outer ring.
    public init?(outerRing: [GeoPoint], holes: [GeoPoint]...) {
        self.init(outerRing: outerRing, holes: holes)
    }

    /// Creates a polygon from `(latitude, longitude)` pairs with any number of holes, each passed as its own
    /// argument (the SDK's variadic form), or returns `nil` if a point is out of range, a ring is not closed, or
    /// a ring has fewer than three distinct points.
    ///
    /// - Parameters:
    ///   - outerRing: At least four pairs, the last equal to the first, with at least three distinct.
    ///   - holes: Rings of the same form inside the outer ring.
    public init?(outerRing: [(Double, Double)], holes: [(Double, Double)]...) {
        self.init(outerRing: outerRing, holes: holes)
    }

    /// The polygon in the query language: `geoPolygon({[lon, lat], …}, {…})`, the outer ring first.
    public var description: String {
        let rings = ([outerRing] + holes).map { ring in
            "{" + ring.map(\.position).joined(separator: ", ") + "}"
        }
        return "geoPolygon(" + rings.joined(separator: ", ") + ")"
    }

    /// Whether a ring has at least four points, ends where it starts and has three distinct points.
    private static func isClosedRing(_ ring: [GeoPoint]) -> Bool {
        guard ring.count >= 4, let first = ring.first, let last = ring.last, first.hasSameCoordinates(as: last)
        else { return false }
        var distinct: [GeoPoint] = []
        for point in ring.dropLast() where !distinct.contains(where: { $0.hasSameCoordinates(as: point) }) {
            distinct.append(point)
            if distinct.count == 3 { return true }
        }
        return false
    }
}

// MARK: - Query support

extension GeoShape {
    /// Checks the shape as Realm does when a query runs and prepares it for testing many points.
    ///
    /// The query engine calls this once per `geoWithin` query, then ``GeoRegion/contains(_:)`` for each object's
    /// point (read with ``GeoPoint/init(geoJSONType:coordinates:)``).
    ///
    /// - Returns: The shape in a form that answers containment without repeating the set-up work.
    /// - Throws: ``RealmError/invalidValue(type:property:reason:)`` naming the shape (and, for a polygon, the
    ///   ring) if the shape is invalid, or if it is not a ``GeoBox``, ``GeoCircle`` or ``GeoPolygon``.
    func geoRegion() throws(Realm.Error) -> GeoRegion {
        switch self {
        case let box as GeoBox: return try GeoRegion(box: box)
        case let circle as GeoCircle: return GeoRegion(circle: circle)
        case let polygon as GeoPolygon: return try GeoRegion(polygon: polygon)
        default:
            throw .invalidValue(
                type: "\(Self.self)", property: "",
                reason: "geoWithin accepts only GeoBox, GeoCircle and GeoPolygon")
        }
    }

    /// Whether a point lies in the shape, its boundary included; `false` for every point if the shape is invalid.
    ///
    /// Each call prepares the shape again; to test many points, prepare it once with ``geoRegion()``.
    ///
    /// - Parameter point: The point to test.
    /// - Returns: `true` if the point is inside the shape or on its boundary.
    func contains(_ point: GeoPoint) -> Bool {
        (try? geoRegion())?.contains(point) ?? false
    }
}

/// A checked ``GeoShape`` prepared for containment tests: a polygon's vertices are unit vectors and its rings'
/// orientation is known, so each test costs a few dot products and one `atan2` per edge.
struct GeoRegion: Sendable {
    private enum Kind: Sendable {
        case box(LatitudeLongitudeRange)
        case circle(center: Vector3, radius: Double)
        case polygon(outer: SphericalLoop, holes: [SphericalLoop])
    }

    private let kind: Kind

    /// Prepares a box.
    ///
    /// - Parameter box: The box.
    /// - Throws: ``RealmError/invalidValue(type:property:reason:)`` if the bottom latitude is above the top one,
    ///   or the longitudes run from 180 to -180 (an empty range, as in Realm).
    init(box: GeoBox) throws(Realm.Error) {
        kind = .box(try LatitudeLongitudeRange(box))
    }

    /// Prepares a circle; every ``GeoCircle`` is valid.
    ///
    /// - Parameter circle: The circle.
    init(circle: GeoCircle) {
        kind = .circle(center: Vector3(circle.center), radius: circle.radians)
    }

    /// Checks and prepares a polygon.
    ///
    /// - Parameter polygon: The polygon.
    /// - Throws: ``RealmError/invalidValue(type:property:reason:)`` whose property names the ring at fault
    ///   (`outerRing` or `holes[i]`).
    init(polygon: GeoPolygon) throws(Realm.Error) {
        let outer = try SphericalLoop(ring: polygon.outerRing, name: "outerRing")
        var holes: [SphericalLoop] = []
        for (index, ring) in polygon.holes.enumerated() {
            let name = "holes[\(index)]"
            let hole = try SphericalLoop(ring: ring, name: name)
            if hole.sharesEdge(with: outer) {
                throw SphericalLoop.error(name, "shares an edge with the outer ring")
            }
            if hole.crosses(outer) {
                throw SphericalLoop.error(name, "crosses the outer ring")
            }
            if hole.samplePoints.contains(where: { outer.side(of: $0) == .outside }) {
                throw SphericalLoop.error(name, "is not inside the outer ring")
            }
            for (otherIndex, other) in holes.enumerated() {
                if hole.sharesEdge(with: other) {
                    throw SphericalLoop.error(name, "shares an edge with holes[\(otherIndex)]")
                }
                if hole.crosses(other) {
                    throw SphericalLoop.error(name, "crosses holes[\(otherIndex)]")
                }
                if hole.samplePoints.contains(where: { other.side(of: $0) == .inside })
                    || other.samplePoints.contains(where: { hole.side(of: $0) == .inside })
                {
                    throw SphericalLoop.error(name, "overlaps holes[\(otherIndex)]; holes cannot overlap or nest")
                }
            }
            holes.append(hole)
        }
        kind = .polygon(outer: outer, holes: holes)
    }

    /// Whether a point lies in the region, its boundary included.
    ///
    /// - Parameter point: The point to test.
    /// - Returns: `true` if the point is inside the region or on its boundary.
    func contains(_ point: GeoPoint) -> Bool {
        switch kind {
        case .box(let range):
            return range.contains(point)
        case .circle(let center, let radius):
            return radius >= .pi || center.angle(to: Vector3(point)) <= radius
        case .polygon(let outer, let holes):
            let vector = Vector3(point)
            switch outer.side(of: vector) {
            case .outside: return false
            case .boundary: return true
            case .inside: return !holes.contains { $0.side(of: vector) == .inside }
            }
        }
    }
}

// MARK: - Spherical geometry

/// A box as a closed latitude interval and a closed longitude interval that may wrap across the antimeridian.
private struct LatitudeLongitudeRange: Sendable {
    let south: Double
    let north: Double
    /// The western longitude; -180 is stored as 180 unless the range is the whole circle.
    let west: Double
    /// The eastern longitude; -180 is stored as 180 unless the range is empty.
    let east: Double

    init(_ box: GeoBox) throws(Realm.Error) {
        south = box.bottomLeft.latitude
        north = box.topRight.latitude
        let left = box.bottomLeft.longitude
        let right = box.topRight.longitude
        // -180 and 180 are one meridian. Fold -180 to 180 except where that would change the range:
        // [-180, 180] stays the whole circle and [180, -180] stays empty (Realm's S2 rectangle rules).
        west = left == -180 && right != 180 ? 180 : left
        east = right == -180 && left != 180 ? 180 : right
        guard south <= north else {
            throw .invalidValue(
                type: "GeoBox", property: "",
                reason: "the bottom-left latitude \(south) is above the top-right latitude \(north)")
        }
        guard !(west == 180 && east == -180) else {
            throw .invalidValue(type: "GeoBox", property: "", reason: "longitudes from 180 to -180 are an empty range")
        }
    }

    func contains(_ point: GeoPoint) -> Bool {
        guard point.latitude >= south, point.latitude <= north else { return false }
        let longitude = point.longitude == -180 ? 180 : point.longitude
        if west <= east {
            return longitude >= west && longitude <= east
        }
        return longitude >= west || longitude <= east  // crosses the antimeridian
    }
}

/// A vector in 3D; points on the Earth are unit vectors (x towards 0°N 0°E, z towards the North Pole).
private struct Vector3: Sendable {
    var x: Double
    var y: Double
    var z: Double

    static func + (lhs: Vector3, rhs: Vector3) -> Vector3 {
        Vector3(x: lhs.x + rhs.x, y: lhs.y + rhs.y, z: lhs.z + rhs.z)
    }

    static func - (lhs: Vector3, rhs: Vector3) -> Vector3 {
        Vector3(x: lhs.x - rhs.x, y: lhs.y - rhs.y, z: lhs.z - rhs.z)
    }

    static prefix func - (vector: Vector3) -> Vector3 {
        Vector3(x: -vector.x, y: -vector.y, z: -vector.z)
    }

    static func * (vector: Vector3, scale: Double) -> Vector3 {
        Vector3(x: vector.x * scale, y: vector.y * scale, z: vector.z * scale)
    }

    func dot(_ other: Vector3) -> Double {
        x * other.x + y * other.y + z * other.z
    }

    func cross(_ other: Vector3) -> Vector3 {
        Vector3(x: y * other.z - z * other.y, y: z * other.x - x * other.z, z: x * other.y - y * other.x)
    }

    var length: Double { dot(self).squareRoot() }

    var normalized: Vector3 { self * (1 / length) }

    /// The angle between two unit vectors, accurate at every size (unlike `acos` of the dot product near 0 and
    /// π, or the haversine formula near π).
    func angle(to other: Vector3) -> Double {
        atan2(cross(other).length, dot(other))
    }

    /// Whether two unit vectors are the same point, within ``SphericalLoop/tolerance``.
    func isClose(to other: Vector3) -> Bool {
        (self - other).length <= SphericalLoop.tolerance
    }
}

extension Vector3 {
    /// The unit vector of a point. Sines and cosines of whole multiples of 90° are exact, so the poles, the
    /// equator, the prime meridian and the antimeridian land exactly on their axes and planes.
    init(_ point: GeoPoint) {
        let (sinLatitude, cosLatitude) = sinCos(degrees: point.latitude)
        let (sinLongitude, cosLongitude) = sinCos(degrees: point.longitude)
        self.init(x: cosLatitude * cosLongitude, y: cosLatitude * sinLongitude, z: sinLatitude)
    }
}

/// The sine and cosine of an angle in degrees, exact when the angle is a whole multiple of 90°.
private func sinCos(degrees: Double) -> (sin: Double, cos: Double) {
    let quadrant = (degrees / 90).rounded()
    let radians = (degrees - quadrant * 90) * .pi / 180
    let sine = sin(radians)
    let cosine = cos(radians)
    switch Int(quadrant) & 3 {
    case 0: return (sine, cosine)
    case 1: return (cosine, -sine)
    case 2: return (-sine, -cosine)
    default: return (-cosine, sine)
    }
}

/// Whether the great-circle arcs `a`–`b` and `c`–`d` (each shorter than a half circle) cross at a point inside
/// both. Arcs that only touch, share an end or lie on one great circle do not cross.
private func arcsCross(_ a: Vector3, _ b: Vector3, _ c: Vector3, _ d: Vector3) -> Bool {
    // c and d must lie on opposite sides of the plane of a-b, a and b on opposite sides of the plane of c-d, and
    // the two great circles must meet on the arcs rather than at the antipodal crossing: the orientations of
    // (a, c, b), (b, d, a), (c, b, d) and (d, a, c) all agree.
    let normalAB = a.cross(b)
    let acb = -normalAB.dot(c)
    let bda = normalAB.dot(d)
    guard acb * bda > 0 else { return false }
    let normalCD = c.cross(d)
    let cbd = -normalCD.dot(b)
    let dac = normalCD.dot(a)
    return acb * cbd > 0 && acb * dac > 0
}

/// One ring of a polygon, checked and prepared: distinct unit-vector vertices joined by great-circle arcs, and
/// which side of the ring is its interior.
///
/// The region on the left of the edges has area `A = 2π − T`, where `T` is the ring's total turning angle
/// (Gauss-Bonnet); the interior is the smaller region, so it is the left one when `T ≥ 0`. To place a point `p`,
/// fan the ring out from the antipode `q = −p`: the signed areas of the triangles `(q, vᵢ, vᵢ₊₁)` add up to `A`
/// when `p` is outside the left region and to `A − 4π` when it is inside. (The fan covers each point `x` as many
/// times, with sign, as the arc from `x` on to `p` crosses the ring, which is 1 for `x` in the left region, less 1
/// if `p` is in it; integrating over the sphere gives `A − 4π` or `A`.) Unlike a winding number around `p` alone,
/// this tells the inside from the outside even when a region longer than a half circle holds both `p` and `−p`,
/// and nothing is undefined unless `p` is on the ring, which is checked first.
private struct SphericalLoop: Sendable {
    enum Side {
        case inside
        case boundary
        case outside
    }

    /// How close, in radians (about 6 µm on the Earth), a point must be to a vertex or edge to count as on it.
    static let tolerance = 1e-12

    let vertices: [Vector3]
    /// `normals[i]` is `vertices[i] × vertices[i + 1]` (the last edge wraps to vertex 0).
    private let normals: [Vector3]
    private let normalLengths: [Double]
    /// `edgeDots[i]` is `vertices[i] · vertices[i + 1]`.
    private let edgeDots: [Double]
    /// Half the area of the region on the left of the edges as listed.
    private let halfLeftArea: Double
    /// Whether the interior is on the left of the edges as listed, that is, the ring runs counter-clockwise.
    private let interiorOnLeft: Bool

    static func error(_ ring: String, _ reason: String) -> Realm.Error {
        .invalidValue(type: "GeoPolygon", property: ring, reason: reason)
    }

    /// Checks a closed ring and prepares it.
    ///
    /// - Parameters:
    ///   - ring: The ring, its last point equal to its first.
    ///   - name: The ring's name in errors: `outerRing` or `holes[i]`.
    init(ring: [GeoPoint], name: String) throws(Realm.Error) {
        // Drop repeated adjacent points and the closing point.
        var points: [GeoPoint] = []
        var vertices: [Vector3] = []
        for point in ring {
            let vector = Vector3(point)
            if let last = vertices.last, last.isClose(to: vector) { continue }
            points.append(point)
            vertices.append(vector)
        }
        while vertices.count > 1, vertices[vertices.count - 1].isClose(to: vertices[0]) {
            vertices.removeLast()
            points.removeLast()
        }
        let count = vertices.count
        guard count >= 3 else {
            throw Self.error(name, "has \(count) distinct vertices; a ring needs at least 3")
        }
        for i in 0..<count {
            for j in (i + 1)..<count where vertices[i].isClose(to: vertices[j]) {
                throw Self.error(name, "repeats the vertex \(points[j].position)")
            }
        }

        var normals: [Vector3] = []
        var normalLengths: [Double] = []
        var edgeDots: [Double] = []
        for i in 0..<count {
            let a = vertices[i]
            let b = vertices[(i + 1) % count]
            if a.isClose(to: -b) {
                throw Self.error(
                    name,
                    "has an edge between the antipodal points \(points[i].position) and "
                        + "\(points[(i + 1) % count].position), whose path is undefined")
            }
            let normal = a.cross(b)
            normals.append(normal)
            normalLengths.append(normal.length)
            edgeDots.append(a.dot(b))
        }

        // Total turning angle, and a check that the ring never doubles back along its own edge.
        var turning = 0.0
        for i in 0..<count {
            let next = (i + 1) % count
            let sine = normals[i].dot(vertices[(i + 2) % count])
            let cosine = normals[i].dot(normals[next])
            if abs(sine) <= Self.tolerance * normalLengths[i], cosine < 0 {
                throw Self.error(name, "doubles back on itself at \(points[next].position)")
            }
            turning += atan2(sine, cosine)
        }

        for i in 0..<(count - 2) {
            for j in (i + 2)..<count where !(i == 0 && j == count - 1) {
                if arcsCross(vertices[i], vertices[i + 1], vertices[j], vertices[(j + 1) % count]) {
                    throw Self.error(
                        name,
                        "crosses itself: the edges from \(points[i].position) and from \(points[j].position) cross")
                }
            }
        }

        self.vertices = vertices
        self.normals = normals
        self.normalLengths = normalLengths
        self.edgeDots = edgeDots
        // The turning angle is 2π minus the area on the left; a negative sum means the left is the larger side.
        // Exactly half the sphere (a sum of 0, such as the equator) keeps the left side, as S2 does.
        self.interiorOnLeft = turning >= 0
        self.halfLeftArea = .pi - turning / 2
    }

    /// The vertices and the midpoints of the edges: points on the ring used to check how rings lie relative to
    /// each other.
    var samplePoints: [Vector3] {
        var points = vertices
        for i in vertices.indices {
            points.append((vertices[i] + vertices[(i + 1) % vertices.count]).normalized)
        }
        return points
    }

    /// Whether a point lies inside the ring, on its boundary, or outside.
    func side(of point: Vector3) -> Side {
        let antipode = -point
        let count = vertices.count
        // Half the signed area of the fan of triangles (antipode, vᵢ, vᵢ₊₁), each from
        // tan(E / 2) = det(q, a, b) / (1 + a·b + q·a + q·b) (Van Oosterom and Strackee).
        var halfFanArea = 0.0
        var dotStart = antipode.dot(vertices[0])
        for i in 0..<count {
            let dotEnd = antipode.dot(vertices[i + 1 == count ? 0 : i + 1])
            let determinant = antipode.dot(normals[i])
            if abs(determinant) <= Self.tolerance * normalLengths[i], isOnArc(point, edge: i) { return .boundary }
            halfFanArea += atan2(determinant, 1 + edgeDots[i] + dotStart + dotEnd)
            dotStart = dotEnd
        }
        // The fan's area is A − 4π if the point is in the left region and A otherwise.
        let inLeftRegion = halfLeftArea - halfFanArea > .pi
        return inLeftRegion == interiorOnLeft ? .inside : .outside
    }

    /// Whether a point on (or within tolerance of) the great circle of an edge lies between the edge's ends.
    private func isOnArc(_ point: Vector3, edge i: Int) -> Bool {
        let start = vertices[i]
        let end = vertices[(i + 1) % vertices.count]
        let slack = -Self.tolerance * normalLengths[i]
        return start.cross(point).dot(normals[i]) >= slack && point.cross(end).dot(normals[i]) >= slack
    }

    /// Whether an edge of this ring crosses an edge of another.
    func crosses(_ other: SphericalLoop) -> Bool {
        let count = vertices.count
        let otherCount = other.vertices.count
        for i in 0..<count {
            for j in 0..<otherCount
            where arcsCross(
                vertices[i], vertices[(i + 1) % count], other.vertices[j], other.vertices[(j + 1) % otherCount])
            {
                return true
            }
        }
        return false
    }

    /// Whether the two rings have an edge in common, in either direction.
    func sharesEdge(with other: SphericalLoop) -> Bool {
        let count = vertices.count
        let otherCount = other.vertices.count
        for i in 0..<count {
            let a = vertices[i]
            let b = vertices[(i + 1) % count]
            for j in 0..<otherCount {
                let c = other.vertices[j]
                let d = other.vertices[(j + 1) % otherCount]
                if (a.isClose(to: c) && b.isClose(to: d)) || (a.isClose(to: d) && b.isClose(to: c)) { return true }
            }
        }
        return false
    }
}

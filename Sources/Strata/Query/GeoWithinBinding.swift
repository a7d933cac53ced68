import Foundation
import StrataStorage

// Binding `GEOWITHIN`: the embedded point's columns and the shape written in the query.

extension QueryBinder {
    /// `location GEOWITHIN shape`.
    func bindGeoWithin(_ operand: RQLOperand, _ shapeOperand: RQLOperand, at position: Int) throws(Realm.Error)
        -> BoundPredicate
    {
        guard let path = try bindPathOperand(operand), path.type == .object, let className = path.objectClassName
        else {
            throw failure("GEOWITHIN needs an embedded point (type and coordinates) on its left", at: position)
        }
        let binding = try realm.bindingForQuery(className)
        let properties = binding.table.schema.properties
        guard let type = binding.table.propertyIndex(named: "type"), properties[type].type == .string,
            binding.table.infos[type].collection == nil,
            let coordinates = binding.table.propertyIndex(named: "coordinates"),
            properties[coordinates].type == .double,
            binding.table.infos[coordinates].collection == .list
        else {
            throw failure(
                "GEOWITHIN needs a GeoJSON point: \(className) must have type: String and coordinates: List<Double>",
                at: position)
        }
        let shape: any GeoShape
        switch shapeOperand {
        case .argument(let number, let at):
            guard number < arguments.count else {
                throw failure("$\(number) has no argument (\(arguments.count) given)", at: at)
            }
            guard let argument = arguments[number] as? any GeoShape else {
                throw failure("GEOWITHIN needs a GeoBox, GeoCircle or GeoPolygon argument", at: at)
            }
            shape = argument
        case .shape(let literal, let at):
            guard let written = Self.shape(literal) else {
                throw failure("the shape's coordinates are out of range or its rings are not closed", at: at)
            }
            shape = written
        default:
            throw failure(
                "GEOWITHIN needs a shape: geoBox, geoCircle, geoPolygon or an argument", at: shapeOperand.position)
        }
        let region: GeoRegion
        do {
            region = try shape.geoRegion()
        } catch {
            throw failure("invalid shape \(shape): \(error)", at: shapeOperand.position)
        }
        return .geoWithin(path, GeoPointColumns(binding: binding, type: type, coordinates: coordinates), region)
    }

    /// A shape written in the query (coordinates as [longitude, latitude]).
    static func shape(_ literal: GeoShapeLiteral) -> (any GeoShape)? {
        func point(_ coordinate: GeoShapeLiteral.Coordinate) -> GeoPoint? {
            GeoPoint(latitude: coordinate.latitude, longitude: coordinate.longitude)
        }
        switch literal {
        case .box(let bottomLeft, let topRight):
            guard let low = point(bottomLeft), let high = point(topRight) else { return nil }
            return GeoBox(bottomLeft: low, topRight: high)
        case .circle(let center, let radians):
            return point(center).flatMap { GeoCircle(center: $0, radiusInRadians: radians) }
        case .polygon(let rings):
            var points: [[GeoPoint]] = []
            for ring in rings {
                var converted: [GeoPoint] = []
                for coordinate in ring {
                    guard let point = point(coordinate) else { return nil }
                    converted.append(point)
                }
                points.append(converted)
            }
            guard let outer = points.first else { return nil }
            return GeoPolygon(outerRing: outer, holes: Array(points.dropFirst()))
        }
    }
}

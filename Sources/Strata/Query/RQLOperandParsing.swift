import Foundation
import StrataStorage

// The grammar's operands: literals, typed literals (`oid(…)`, `uuid(…)`, dates), object literals, lists,
// arguments, `SUBQUERY(…)`, geospatial shapes and key paths.

extension RQLParser {
    mutating func operand() throws(Realm.Error) -> RQLOperand {
        let start = position
        switch current {
        case .string(let value):
            advance()
            return .literal(.string(value), position: start)
        case .integer(let value):
            advance()
            return .literal(.int(value), position: start)
        case .number(let value):
            advance()
            return .literal(.double(value), position: start)
        case .date(let value):
            advance()
            return .literal(.date(value), position: start)
        case .data(let value):
            advance()
            return .literal(.data(value), position: start)
        case .argument(let number):
            advance()
            return .argument(number, position: start)
        case .symbol("-"):
            advance()
            switch current {
            case .integer(let value):
                advance()
                return .literal(.int(-value), position: start)
            case .number(let value):
                advance()
                return .literal(.double(-value), position: start)
            default: throw failure("expected a number after -", at: position)
            }
        case .symbol("{"):
            advance()
            var elements: [RQLOperand] = []
            if !accept(symbol: "}") {
                repeat {
                    try countTerm(at: position)
                    // Lists hold values: a nested list would only be flattened, and parsing nests once per level.
                    if current == .symbol("{") { throw failure("a list cannot hold another list", at: position) }
                    elements.append(try operand())
                } while accept(symbol: ",")
                try expect(symbol: "}", "} to close the list")
            }
            return .list(elements, position: start)
        case .identifier(let name):
            switch name.uppercased() {
            case "NIL", "NULL":
                advance()
                return .literal(.null, position: start)
            case "TRUE":
                advance()
                return .literal(.bool(true), position: start)
            case "FALSE":
                advance()
                return .literal(.bool(false), position: start)
            case "OID", "UUID":
                if index + 1 < tokens.count, tokens[index + 1].token == .symbol("(") {
                    return try typedLiteral(name.uppercased())
                }
            case "SUBQUERY":
                if index + 1 < tokens.count, tokens[index + 1].token == .symbol("(") { return try subquery() }
            case "OBJ":
                if index + 1 < tokens.count, tokens[index + 1].token == .symbol("(") { return try objectLiteral() }
            case "GEOBOX", "GEOCIRCLE", "GEOPOLYGON":
                if index + 1 < tokens.count, tokens[index + 1].token == .symbol("(") {
                    return try shape(name.uppercased())
                }
            default: break
            }
            return try keyPath()
        case .at, .variable:
            return try keyPath()
        default:
            throw failure("expected a property, a value or an argument, found \(describe(current))", at: start)
        }
    }

    /// `oid(…)` and `uuid(…)`, with the value written bare (`oid(507f1f77bcf86cd799439011)`) or quoted
    /// (`oid('507f1f77bcf86cd799439011')`). A malformed value is reported at the value.
    private mutating func typedLiteral(_ kind: String) throws(Realm.Error) -> RQLOperand {
        let start = position
        let name = kind.lowercased()
        advance()
        advance()
        let valuePosition = position
        let raw: String
        switch current {
        case .string(let text), .bareValue(let text): raw = text
        default:
            let expected =
                kind == "OID" ? "24 hexadecimal digits" : "a UUID such as E621E1F8-C36C-495A-93FC-0C247A3E6E5F"
            throw failure("expected \(expected) in \(name)(…), found \(describe(current))", at: valuePosition)
        }
        advance()
        try expect(symbol: ")", ") to close \(name)(")
        if kind == "OID" {
            guard let id = try? ObjectId(string: raw) else {
                throw failure("'\(raw)' is not an ObjectId (24 hexadecimal digits)", at: valuePosition)
            }
            return .literal(.objectId(id), position: start)
        }
        guard let uuid = UUID(uuidString: raw) else { throw failure("'\(raw)' is not a UUID", at: valuePosition) }
        return .literal(.uuid(uuid), position: start)
    }

    /// `obj('Class', primaryKey)`, as core's grammar has it: a quoted class name, then the primary key as a
    /// string, a number, `oid(…)`, `uuid(…)` or nil.
    private mutating func objectLiteral() throws(Realm.Error) -> RQLOperand {
        let start = position
        advance()
        advance()
        guard case .string(let className) = current else {
            throw failure("expected the class name as a string in obj(…), found \(describe(current))", at: position)
        }
        advance()
        try expect(symbol: ",", ", then the primary key in obj('\(className)', …)")
        let keyPosition = position
        guard case .literal(let key, _) = try operand() else {
            throw failure(
                "the primary key in obj('\(className)', …) must be written as a value (a string, a number, oid(…) "
                    + "or uuid(…))", at: keyPosition)
        }
        try expect(symbol: ")", ") to close obj(")
        return .object(className: className, primaryKey: key, position: start)
    }

    /// `SUBQUERY(collection, $x, predicate).@count`.
    mutating func subquery() throws(Realm.Error) -> RQLOperand {
        let start = position
        try enterLevel(at: start)
        subqueries += 1
        defer {
            depth -= 1
            subqueries -= 1
        }
        guard subqueries <= QueryLimits.maximumSubqueryDepth else {
            throw failure(QueryLimits.subqueryReason, at: start)
        }
        advance()
        advance()
        guard case .keyPath(let collection, _) = try keyPath() else {
            throw failure("expected the collection SUBQUERY runs over", at: position)
        }
        try expect(symbol: ",", ", after the collection of SUBQUERY")
        guard case .variable(let variable) = current else {
            throw failure("expected a variable such as $x, found \(describe(current))", at: position)
        }
        advance()
        try expect(symbol: ",", ", after the variable of SUBQUERY")
        let predicate = try orExpression()
        try expect(symbol: ")", ") to close SUBQUERY")
        guard accept(symbol: "."), case .at(let name) = current, name == "count" || name == "size" else {
            throw failure("SUBQUERY(…) must be followed by .@count", at: position)
        }
        advance()
        return .subquery(collection: collection, variable: variable, predicate: predicate, position: start)
    }

    /// A number literal, possibly negative.
    mutating func number() throws(Realm.Error) -> Double {
        let negative = accept(symbol: "-")
        let value: Double
        switch current {
        case .integer(let integer): value = Double(integer)
        case .number(let number): value = number
        default: throw failure("expected a number, found \(describe(current))", at: position)
        }
        advance()
        return negative ? -value : value
    }

    /// `[longitude, latitude]`.
    mutating func coordinate() throws(Realm.Error) -> GeoShapeLiteral.Coordinate {
        try expect(symbol: "[", "[ to open a [longitude, latitude] pair")
        let longitude = try number()
        try expect(symbol: ",", ", between longitude and latitude")
        let latitude = try number()
        try expect(symbol: "]", "] to close a [longitude, latitude] pair")
        return GeoShapeLiteral.Coordinate(longitude: longitude, latitude: latitude)
    }

    /// `geoBox([lon, lat], [lon, lat])`, `geoCircle([lon, lat], radians)`,
    /// `geoPolygon({[lon, lat], …}, {…hole…}, …)`.
    mutating func shape(_ kind: String) throws(Realm.Error) -> RQLOperand {
        let start = position
        advance()
        advance()
        let literal: GeoShapeLiteral
        switch kind {
        case "GEOBOX":
            let bottomLeft = try coordinate()
            try expect(symbol: ",", ", between the corners of geoBox")
            literal = .box(bottomLeft: bottomLeft, topRight: try coordinate())
        case "GEOCIRCLE":
            let center = try coordinate()
            try expect(symbol: ",", ", between the center and the radius of geoCircle")
            literal = .circle(center: center, radians: try number())
        default:
            var rings: [[GeoShapeLiteral.Coordinate]] = []
            repeat {
                try expect(symbol: "{", "{ to open a ring of geoPolygon")
                var ring: [GeoShapeLiteral.Coordinate] = []
                repeat { ring.append(try coordinate()) } while accept(symbol: ",")
                try expect(symbol: "}", "} to close a ring of geoPolygon")
                rings.append(ring)
            } while accept(symbol: ",")
            literal = .polygon(rings)
        }
        try expect(symbol: ")", ") to close \(kind.lowercased())")
        return .shape(literal, position: start)
    }

    mutating func keyPath() throws(Realm.Error) -> RQLOperand {
        let start = position
        var components: [String] = []
        while true {
            switch current {
            case .identifier(let name): components.append(name)
            case .at(let name): components.append("@" + name)
            case .variable(let name) where components.isEmpty: components.append(name)
            default:
                throw failure("expected a property name, found \(describe(current))", at: position)
            }
            advance()
            while current == .symbol("[") {
                // `parks['Oslo']`: the value at a key of a map, as a component `[Oslo` (no property name starts
                // with `[`). `extra[0]`, `extra[FIRST]`, `extra[LAST]`, `extra[SIZE]`, `extra[*]`: a position in
                // (or all of) a mixed value's nested collection, as a component `]0`, `]FIRST`, … (nor with `]`).
                advance()
                switch current {
                case .string(let key): components.append("[" + key)
                case .integer(let index) where index >= 0: components.append("]\(index)")
                case .symbol("*"): components.append("]*")
                case .identifier(let word) where ["FIRST", "LAST", "SIZE"].contains(word.uppercased()):
                    components.append("]" + word.uppercased())
                default:
                    throw failure(
                        "expected a quoted map key, a position, FIRST, LAST, SIZE or * inside [ ], found \(describe(current))",
                        at: position)
                }
                advance()
                try expect(symbol: "]", "] to close the map key or position")
            }
            guard accept(symbol: ".") else { break }
        }
        return .keyPath(components, position: start)
    }
}

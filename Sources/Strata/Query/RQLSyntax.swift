import Foundation
import StrataStorage

/// The Realm Query Language, parsed: a predicate tree over key paths, literals and `$n` arguments, before it is
/// bound to a schema (see `QueryBinder`). Positions are UTF-8 offsets into the query text, for error messages.
struct RQLQuery {
    var predicate: RQLPredicate
    /// The trailing `SORT(…)`, `DISTINCT(…)` and `LIMIT(…)` clauses, in the order they are written: each applies
    /// to what the ones before it produced.
    var ordering: [RQLOrdering] = []
}

/// One trailing clause of a query.
enum RQLOrdering {
    case sort([(keyPath: String, ascending: Bool)])
    case distinct([String])
    case limit(Int)
}

indirect enum RQLPredicate {
    case constant(Bool)
    /// Every operand holds. A chain `a AND b AND c` is one node with three operands (see ``all(_:)``), so that long
    /// chains do not nest.
    case and([RQLPredicate])
    /// At least one operand holds; flattened like `and`.
    case or([RQLPredicate])
    case not(RQLPredicate)
    case compare(RQLComparison)
    case between(RQLOperand, low: RQLOperand, high: RQLOperand, quantifier: RQLQuantifier?, position: Int)
    /// `property TEXT 'words'`: a full-text search.
    case text(RQLOperand, RQLOperand, position: Int)
    /// `property GEOWITHIN shape`.
    case geoWithin(RQLOperand, RQLOperand, position: Int)

    /// `operands` joined by AND, with operands that are ANDs themselves spliced in: the chain stays one level
    /// deep however it was grouped. One operand is returned as it is.
    static func all(_ operands: [RQLPredicate]) -> RQLPredicate {
        guard operands.count != 1 else { return operands[0] }
        var flat: [RQLPredicate] = []
        flat.reserveCapacity(operands.count)
        for operand in operands {
            if case .and(let inner) = operand { flat += inner } else { flat.append(operand) }
        }
        return .and(flat)
    }

    /// `operands` joined by OR, flattened as ``all(_:)`` flattens AND.
    static func any(_ operands: [RQLPredicate]) -> RQLPredicate {
        guard operands.count != 1 else { return operands[0] }
        var flat: [RQLPredicate] = []
        flat.reserveCapacity(operands.count)
        for operand in operands {
            if case .or(let inner) = operand { flat += inner } else { flat.append(operand) }
        }
        return .or(flat)
    }
}

struct RQLComparison {
    var left: RQLOperand
    var op: RQLOperator
    var right: RQLOperand
    var caseInsensitive = false
    var diacriticInsensitive = false
    var quantifier: RQLQuantifier?
    /// `ANY`, `ALL` or `NONE` before a list on the right (`age == NONE {18, 21}`); a list without one means `ANY`.
    var listQuantifier: RQLQuantifier?
    var position: Int
}

enum RQLOperator: String {
    case equal = "=="
    case notEqual = "!="
    case less = "<"
    case lessOrEqual = "<="
    case greater = ">"
    case greaterOrEqual = ">="
    case beginsWith = "BEGINSWITH"
    case endsWith = "ENDSWITH"
    case contains = "CONTAINS"
    case like = "LIKE"
    case `in` = "IN"
}

enum RQLQuantifier: String {
    case any = "ANY"
    case all = "ALL"
    case none = "NONE"
}

indirect enum RQLOperand {
    /// Property names and `@` operators (`@count`, `@sum`...), as written.
    case keyPath([String], position: Int)
    case literal(_StoredValue, position: Int)
    case argument(Int, position: Int)
    case list([RQLOperand], position: Int)
    /// `SUBQUERY(collection, $x, predicate).@count`: how many elements of the collection match.
    case subquery(collection: [String], variable: String, predicate: RQLPredicate, position: Int)
    /// `geoBox(…)`, `geoCircle(…)`, `geoPolygon(…)` written in the query.
    case shape(GeoShapeLiteral, position: Int)
    /// `left * right`, `left / right`, `left + right`, `left - right` (see `QueryArithmetic`).
    case arithmetic(ArithmeticOperator, RQLOperand, RQLOperand, position: Int)
    /// `obj('Person', 3)`: the object of class `className` whose primary key is `primaryKey` (see
    /// `QueryObjectLiteral`).
    case object(className: String, primaryKey: _StoredValue, position: Int)

    var position: Int {
        switch self {
        case .keyPath(_, let position), .literal(_, let position), .argument(_, let position),
            .list(_, let position), .subquery(_, _, _, let position), .shape(_, let position),
            .object(_, _, let position):
            position
        // An expression is where it starts (its own position, the operator's, is for errors about the operator).
        case .arithmetic(_, let left, _, _): left.position
        }
    }
}

/// A shape written in the query text (`geoBox`, `geoCircle`, `geoPolygon`); coordinates as GeoJSON orders them.
enum GeoShapeLiteral {
    struct Coordinate {
        var longitude: Double
        var latitude: Double
    }
    case box(bottomLeft: Coordinate, topRight: Coordinate)
    case circle(center: Coordinate, radians: Double)
    /// The outer ring first, then the holes.
    case polygon([[Coordinate]])
}

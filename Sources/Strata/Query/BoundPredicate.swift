import Foundation
import StrataStorage

/// A predicate bound to a class, ready to run against rows.
indirect enum BoundPredicate {
    case constant(Bool)
    /// Every operand holds (a flat chain: see `RQLPredicate.and`).
    case and([BoundPredicate])
    /// At least one operand holds.
    case or([BoundPredicate])
    case not(BoundPredicate)
    case compare(BoundPath, RQLOperator, BoundOperand, options: CompareOptions, quantifier: RQLQuantifier?)
    case between(BoundPath, _StoredValue, _StoredValue, quantifier: RQLQuantifier?)
    /// `TEXT`: the string (any of them, through a collection) satisfies the full-text search.
    case text(BoundPath, FullText.Search)
    /// `GEOWITHIN`: the GeoJSON point (any of them, through a collection) lies in the region.
    case geoWithin(BoundPath, GeoPointColumns, GeoRegion)
}

/// Where a GeoJSON-style embedded point keeps its `type` and `coordinates` ([longitude, latitude]).
struct GeoPointColumns {
    let binding: TableBinding
    let type: Int
    let coordinates: Int
}

enum BoundOperand {
    case value(_StoredValue)
    case values([_StoredValue])
    case path(BoundPath)
}

struct CompareOptions {
    var caseInsensitive = false
    var diacriticInsensitive = false
}

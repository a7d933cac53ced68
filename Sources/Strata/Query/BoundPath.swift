import Foundation
import StrataStorage

/// A key path resolved against the schema: each step a property of a known class, or an `@` operator.
struct BoundPath {
    enum Step {
        /// Property `index` of `binding`'s class (a value, a to-one link, or a collection).
        case property(TableBinding, Int)
        /// `@count` / `@size`: elements of the collection before it, or bytes of a string or data.
        case count
        /// `@sum`, `@avg`, `@min`, `@max` over the values before it.
        case aggregate(String)
        /// `@keys` of the map before it.
        case keys
        /// `map['key']`: the value at this key of the map before it (nil when the key is absent).
        case mapValue(String)
        /// The objects linking to the object before it through any of these (origin class, link property) pairs:
        /// a `LinkingObjects` property, `@links.Class.property`, or (all of them) `@links`.
        case backlinks([(origin: TableBinding, property: Int)])
        /// `SUBQUERY(…).@count`: how many objects (or values) of the collection before it satisfy the predicate.
        case subqueryCount(BoundPredicate)
        /// `$x` in `SUBQUERY(scores, $x, $x > 5)` over a list or set of values: the element being tested (the only
        /// step of its path); `.null` as bound, each element's value while it is counted (see `atElement`).
        case element(_StoredValue)
        /// `@type`: the name of each value's type.
        case type
        /// `extra[0]`, `extra['key']`, `extra[SIZE]`, …: into the nested collection of each mixed value.
        case mixedElement(MixedSubscript)
        /// `age * 2`: the value of an arithmetic expression over the object (the only step of its path).
        case arithmetic(BoundArithmetic)
    }

    var steps: [Step]
    /// The type the path produces and whether it produces several values (it passes through a collection).
    var type: PropertyType
    var isOptional: Bool
    var isMultiple: Bool
    var objectClassName: String?
    /// `Class.property.property`, for messages.
    var text: String
    /// The column of a one-step path over a plain value: read straight from the row.
    var directColumn: (column: Int, info: _PropertyInfo)?
}

extension BoundPath.Step {
    /// Whether the step produces the objects of a collection: a list, set or map of links, or backlinks.
    var isObjectCollection: Bool {
        switch self {
        case .property(let binding, let index):
            binding.table.infos[index].collection != nil && binding.table.infos[index].type == .object
        case .backlinks: true
        default: false
        }
    }
}

extension BoundPath.Step {
    /// Whether the step reads from objects (so a link before it is followed rather than produced as a value).
    var followsObjects: Bool {
        switch self {
        case .property, .backlinks: true
        default: false
        }
    }
}

extension RQLOperand {
    /// Whether the operand names a property (a key path, a SUBQUERY count, or an expression reading one) rather
    /// than a value.
    var isPath: Bool {
        readsProperty
    }
}

import Foundation
import Strata

extension AsymmetricValue {
    /// This value as the parameter text of `column` (nil for SQL NULL), after checking that it fits the column: one
    /// value as ``SyncValue/sqlText(for:)`` gives it, an embedded object or a collection as plain JSON (a mixed
    /// value, or a collection's mixed elements, in the tagged form so that their kind survives).
    ///
    /// - Throws: ``SyncError`` for a value of another kind or shape than the property's, or an element of a
    ///   collection of mixed values holding a list or dictionary.
    func sqlText(for column: ServerColumn, type: String) throws -> String? {
        switch (column.shape, self) {
        case (.value, _):
            if column.property.type == .any, let mixed = mixedValue {
                // A mixed value, nested lists and dictionaries included, in its tagged form.
                guard mixed.fitsMixed else {
                    throw SyncError.valueTypeMismatch(
                        type: type, property: column.name, expected: column.property.type.rawValue, found: mixed.kind)
                }
                return try SyncJSON.text(mixed)
            }
            try check(self, fits: column, type: type)
            if case .value(let value) = self { return try value.sqlText(for: column) }
            return try SyncJSON.text(AsymmetricJSON(value: self, isMixed: false))
        case (.list, .list(let elements)), (.set, .list(let elements)):
            for element in elements { try check(element, fits: column, type: type) }
            return try SyncJSON.text(AsymmetricJSON(value: self, isMixed: column.property.type == .any))
        case (.map, .map(let entries)):
            for element in entries.values { try check(element, fits: column, type: type) }
            return try SyncJSON.text(AsymmetricJSON(value: self, isMixed: column.property.type == .any))
        default:
            throw SyncError.invalidChange(
                type: type, property: column.name, reason: "\(shapeName) does not fit a \(column.shape) property")
        }
    }

    /// Checks one value (or one element of a collection) against `column`'s element type.
    private func check(_ value: AsymmetricValue, fits column: ServerColumn, type: String) throws {
        switch value {
        case .value(let value):
            guard value.fits(column) else {
                throw SyncError.valueTypeMismatch(
                    type: type, property: column.name, expected: column.property.type.rawValue, found: value.kind)
            }
        case .embedded:
            guard case .embedded = column.link else {
                throw SyncError.valueTypeMismatch(
                    type: type, property: column.name, expected: column.property.type.rawValue, found: "embedded")
            }
        case .list, .map:
            let reason =
                column.property.type == .any
                ? "an element of a collection of mixed values cannot hold a list or dictionary"
                : column.shape == .value ? "\(value.shapeName) does not fit one value" : "collections do not nest"
            throw SyncError.invalidChange(type: type, property: column.name, reason: reason)
        }
    }

    /// This value as a mixed value: a nested list or map as a `list` or `dictionary`; nil when it holds an
    /// embedded object (which a mixed value cannot).
    private var mixedValue: SyncValue? {
        switch self {
        case .value(let value): return value
        case .embedded: return nil
        case .list(let elements):
            var values: [SyncValue] = []
            for element in elements {
                guard let value = element.mixedValue else { return nil }
                values.append(value)
            }
            return .list(values)
        case .map(let entries):
            var values: [String: SyncValue] = [:]
            for (key, element) in entries {
                guard let value = element.mixedValue else { return nil }
                values[key] = value
            }
            return .dictionary(values)
        }
    }

    private var shapeName: String {
        switch self {
        case .value: "one value"
        case .embedded: "an embedded object"
        case .list: "a list"
        case .map: "a map"
        }
    }
}

/// An ``AsymmetricValue`` as the JSON of a `jsonb` column: ``PlainJSON`` for values (the tagged ``SyncValue``
/// form for mixed ones), objects for embedded objects and maps, arrays for lists and sets.
private struct AsymmetricJSON: Encodable {
    let value: AsymmetricValue
    /// Whether values are mixed (tagged).
    let isMixed: Bool

    func encode(to encoder: any Encoder) throws {
        switch value {
        case .value(let value):
            var container = encoder.singleValueContainer()
            if isMixed { try container.encode(value) } else { try container.encode(PlainJSON.value(value)) }
        case .embedded(let values):
            var container = encoder.container(keyedBy: PlainJSON.AnyKey.self)
            for (key, value) in values {
                try container.encode(AsymmetricJSON(value: value, isMixed: false), forKey: PlainJSON.AnyKey(key))
            }
        case .map(let entries):
            var container = encoder.container(keyedBy: PlainJSON.AnyKey.self)
            for (key, value) in entries {
                try container.encode(AsymmetricJSON(value: value, isMixed: isMixed), forKey: PlainJSON.AnyKey(key))
            }
        case .list(let elements):
            var container = encoder.unkeyedContainer()
            for element in elements { try container.encode(AsymmetricJSON(value: element, isMixed: isMixed)) }
        }
    }
}

import Foundation
@_spi(StrataSync) import Strata

/// Downloaded values as Strata values: plain values and links, mixed values with their kind (a typed link found by
/// its class and primary key, a nested list or dictionary rebuilt whole), and embedded objects, updated in place.
extension LocalApply {
    /// Sets `property` of `object` to the downloaded `value`. An embedded object that is there already is
    /// updated in place, property by property (nested ones too), so accessors to it stay valid; a new one is
    /// created from the value.
    func set(_ value: SyncValue, property: Property, of object: ObjectBase) throws {
        let name = property.columnName
        if property.type == .object, !property.isArray, !property.isSet, !property.isMap,
            let className = property.objectClassName, let embedded = realm.schema[className: className],
            embedded.isEmbedded
        {
            guard case .embedded(let values) = value else {
                object[name] = nil
                return
            }
            guard let current = object[name] as? ObjectBase else {
                object[name] = try embeddedValues(values, schema: embedded)
                return
            }
            for field in embedded.properties {
                guard let fieldValue = values[field.columnName] else { continue }
                try set(fieldValue, property: field, of: current)
            }
            return
        }
        object[name] = try localValue(value, property: property)
    }

    /// The Strata value of a change-format value for `property` (one value, or one element of a collection):
    /// what the dynamic subscript takes.
    func localValue(_ value: SyncValue, property: Property) throws -> Any? {
        if property.type == .any { return try mixedValue(value) }
        switch value {
        case .null: return nil
        case .bool(let value): return value
        case .int(let value): return Int(value)
        case .float(let value): return value
        case .double(let value): return value
        case .string(let value): return value
        case .data(let value): return value
        case .date(let seconds): return Date(timeIntervalSince1970: seconds)
        case .decimal128(let text): return try Decimal128(string: text)
        case .objectId(let hex): return try ObjectId(string: hex)
        case .uuid(let value): return value
        case .link(let key):
            guard let target = property.objectClassName else { return nil }
            return realm.dynamicObject(ofType: target, forPrimaryKey: try Self.primaryKey(key))
        case .embedded(let values):
            guard let className = property.objectClassName, let embedded = realm.schema[className: className] else {
                return nil
            }
            return try embeddedValues(values, schema: embedded)
        case .list(let elements):
            // An embedded object's list or set property (one value per element).
            return try elements.map { try localValue($0, property: property) as Any }
        case .dictionary(let entries):
            var result: [String: Any] = [:]
            for (key, element) in entries { result[key] = try localValue(element, property: property) as Any }
            return result
        case .typedLink:
            throw SyncError.valueTypeMismatch(
                type: "", property: property.columnName, expected: property.type.rawValue, found: value.kind)
        }
    }

    /// A downloaded mixed value: a typed link to the object of that class and key (nil when it is not in this
    /// file, as a link to an object this replica has deleted or not received), a nested list or dictionary
    /// rebuilt whole.
    func mixedValue(_ value: SyncValue) throws -> AnyRealmValue {
        switch value {
        case .null: return .none
        case .bool(let value): return .bool(value)
        case .int(let value): return .int(Int(value))
        case .float(let value): return .float(value)
        case .double(let value): return .double(value)
        case .string(let value): return .string(value)
        case .data(let value): return .data(value)
        case .date(let seconds): return .date(Date(timeIntervalSince1970: seconds))
        case .decimal128(let text): return .decimal128(try Decimal128(string: text))
        case .objectId(let hex): return .objectId(try ObjectId(string: hex))
        case .uuid(let value): return .uuid(value)
        case .typedLink(let type, let key):
            guard let target = schema.types[type], key.isPrimaryKey(of: target.primaryKey.property.type),
                let object = realm.dynamicObject(ofType: type, forPrimaryKey: try Self.primaryKey(key))
            else { return .none }
            return .object(object)
        case .list(let elements): return .fromArray(try elements.map(mixedValue))
        case .dictionary(let entries): return .fromDictionary(try entries.mapValues(mixedValue))
        case .link, .embedded:
            throw SyncError.valueTypeMismatch(type: "", property: "", expected: "any", found: value.kind)
        }
    }

    /// A new embedded object's values as the dynamic subscript takes them (a dictionary by property name).
    private func embeddedValues(_ values: [String: SyncValue], schema embedded: ObjectSchema) throws -> [String: Any] {
        var result: [String: Any] = [:]
        for field in embedded.properties {
            guard let value = values[field.columnName] else { continue }
            guard let local = try localValue(value, property: field) else { continue }
            result[field.name] = local
        }
        return result
    }
}

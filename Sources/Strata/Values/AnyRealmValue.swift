public import Foundation

/// A value of any supported type: a primitive, a link to an object of any type, or a nested `List` or `Map`
/// of mixed values.
///
/// ```swift
/// class Dog: Object {
///     @Persisted var companion: AnyRealmValue
/// }
/// dog.companion = .string("Fluffy")
/// dog.companion = .object(cat)
/// dog.companion = AnyRealmValue.fromDictionary(["name": .string("Rex"), "tags": .fromArray([.int(1)])])
/// ```
/// Mixed lists and maps nest at most 100 levels deep. Sets and embedded objects cannot be stored in a mixed
/// value (``RealmError/invalidValue(type:property:reason:)`` fails the write). A mixed property is never
/// optional: `.none` is its nil.
public enum AnyRealmValue: Hashable {
    /// No value (nil).
    case none
    /// An integer.
    case int(Int)
    /// A boolean.
    case bool(Bool)
    /// A single-precision number.
    case float(Float)
    /// A double-precision number.
    case double(Double)
    /// A string.
    case string(String)
    /// Bytes.
    case data(Data)
    /// A date.
    case date(Date)
    /// An ObjectId.
    case objectId(ObjectId)
    /// A decimal number.
    case decimal128(Decimal128)
    /// A UUID.
    case uuid(UUID)
    /// A link to an object of any type (not an embedded object).
    case object(Object)
    /// A nested list of mixed values.
    case list(List<AnyRealmValue>)
    /// A nested dictionary of mixed values.
    case dictionary(Map<String, AnyRealmValue>)

    /// An unmanaged nested list holding `elements`.
    public static func fromArray(_ elements: [AnyRealmValue]) -> AnyRealmValue {
        let list = List<AnyRealmValue>()
        list.append(objectsIn: elements)
        return .list(list)
    }

    /// An unmanaged nested dictionary holding `entries`.
    public static func fromDictionary(_ entries: [String: AnyRealmValue]) -> AnyRealmValue {
        let map = Map<String, AnyRealmValue>()
        for (key, value) in entries.sorted(by: { $0.key < $1.key }) { map[key] = value }
        return .dictionary(map)
    }

    /// The integer, or nil for another case.
    public var intValue: Int? { if case .int(let value) = self { value } else { nil } }
    /// The boolean, or nil for another case.
    public var boolValue: Bool? { if case .bool(let value) = self { value } else { nil } }
    /// The float, or nil for another case.
    public var floatValue: Float? { if case .float(let value) = self { value } else { nil } }
    /// The double, or nil for another case.
    public var doubleValue: Double? { if case .double(let value) = self { value } else { nil } }
    /// The string, or nil for another case.
    public var stringValue: String? { if case .string(let value) = self { value } else { nil } }
    /// The data, or nil for another case.
    public var dataValue: Data? { if case .data(let value) = self { value } else { nil } }
    /// The date, or nil for another case.
    public var dateValue: Date? { if case .date(let value) = self { value } else { nil } }
    /// The ObjectId, or nil for another case.
    public var objectIdValue: ObjectId? { if case .objectId(let value) = self { value } else { nil } }
    /// The decimal, or nil for another case.
    public var decimal128Value: Decimal128? { if case .decimal128(let value) = self { value } else { nil } }
    /// The UUID, or nil for another case.
    public var uuidValue: UUID? { if case .uuid(let value) = self { value } else { nil } }
    /// The nested list, or nil for another case.
    public var listValue: List<AnyRealmValue>? { if case .list(let value) = self { value } else { nil } }
    /// The nested dictionary, or nil for another case.
    public var dictionaryValue: Map<String, AnyRealmValue>? {
        if case .dictionary(let value) = self { value } else { nil }
    }
    /// The linked object, read by property name, or nil for another case.
    public var dynamicObject: DynamicObject? {
        guard case .object(let object) = self else { return nil }
        if let dynamic = object as? DynamicObject { return dynamic }
        guard let managed = object.managed,
            let binding = try? managed.realm.dynamicBinding(managed.table.className)
        else { return nil }
        return managed.realm.object(binding, key: managed.key) as? DynamicObject
    }

    /// The linked object as `type`, or nil for another case or type.
    public func object<T: Object>(_ type: T.Type) -> T? {
        guard case .object(let object) = self else { return nil }
        return object as? T
    }

    /// Objects are equal when they are the same stored object (or the same unmanaged instance), collections
    /// when they are the same collection; other cases compare their values.
    public static func == (lhs: AnyRealmValue, rhs: AnyRealmValue) -> Bool {
        switch (lhs, rhs) {
        case (.list(let a), .list(let b)): a === b || (a.realm != nil && a.isSameStoredCollection(as: b))
        case (.dictionary(let a), .dictionary(let b)): a === b || (a.realm != nil && a.isSameStoredCollection(as: b))
        default: ListElements.equal(lhs._stored, rhs._stored)
        }
    }

    /// Hashes the case and its value (objects by identity of the stored object).
    public func hash(into hasher: inout Hasher) {
        switch self {
        case .none: hasher.combine(0)
        case .int(let value): hasher.combine(value)
        case .bool(let value): hasher.combine(value)
        case .float(let value): hasher.combine(value)
        case .double(let value): hasher.combine(value)
        case .string(let value): hasher.combine(value)
        case .data(let value): hasher.combine(value)
        case .date(let value): hasher.combine(value)
        case .objectId(let value): hasher.combine(value)
        case .decimal128(let value): hasher.combine(value)
        case .uuid(let value): hasher.combine(value)
        case .object(let object):
            if let managed = object.managed {
                hasher.combine(managed.table.className)
                hasher.combine(managed.key)
            } else {
                hasher.combine(ObjectIdentifier(object))
            }
        case .list: hasher.combine(13)
        case .dictionary: hasher.combine(14)
        }
    }
}

extension AnyRealmValue: _Persistable, RealmCollectionValue {
    /// See ``_Persistable``: a mixed value (nil is `.none`).
    public static var _propertyInfo: _PropertyInfo { _PropertyInfo(type: .any, isOptional: true) }
    /// See ``_Persistable``: `.none`.
    public static func _defaultValue() -> AnyRealmValue { .none }
    /// See ``_Persistable``.
    public static func _fromStored(_ stored: _StoredValue) -> AnyRealmValue? {
        switch stored {
        case .null: return AnyRealmValue.none
        case .int(let value): return .int(Int(value))
        case .bool(let value): return .bool(value)
        case .float(let value): return .float(value)
        case .double(let value): return .double(value)
        case .string(let value): return .string(value)
        case .data(let value): return .data(value)
        case .date(let value): return .date(value)
        case .objectId(let value): return .objectId(value)
        case .decimal128(let value): return .decimal128(value)
        case .uuid(let value): return .uuid(value)
        case .object(let object): return (object as? Object).map { .object($0) }
        case .collection(let collection):
            if let list = collection as? List<AnyRealmValue> { return .list(list) }
            if let map = collection as? Map<String, AnyRealmValue> { return .dictionary(map) }
            return nil
        case .mixed: return nil
        }
    }
    /// See ``_Persistable``.
    public var _stored: _StoredValue {
        switch self {
        case .none: .null
        case .int(let value): .int(Int64(value))
        case .bool(let value): .bool(value)
        case .float(let value): .float(value)
        case .double(let value): .double(value)
        case .string(let value): .string(value)
        case .data(let value): .data(value)
        case .date(let value): .date(value)
        case .objectId(let value): .objectId(value)
        case .decimal128(let value): .decimal128(value)
        case .uuid(let value): .uuid(value)
        case .object(let object): .object(object)
        case .list(let list): .collection(list)
        case .dictionary(let map): .collection(map)
        }
    }
}

extension AnyRealmValue: Codable {
    /// Decodes JSON-like data: null, booleans, numbers (integers when exact), strings, arrays and objects
    /// (as nested lists and dictionaries).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .none
        } else if let bool = try? container.decode(Bool.self) {
            self = .bool(bool)
        } else if let int = try? container.decode(Int.self) {
            self = .int(int)
        } else if let double = try? container.decode(Double.self) {
            self = .double(double)
        } else if let string = try? container.decode(String.self) {
            self = .string(string)
        } else if let array = try? container.decode([AnyRealmValue].self) {
            self = .fromArray(array)
        } else {
            self = .fromDictionary(try container.decode([String: AnyRealmValue].self))
        }
    }

    /// Encodes the value: primitives as themselves, dates as their default encoding, data as base64, ObjectIds
    /// and UUIDs and decimals as strings, objects as their primary key when they have one, collections as
    /// arrays and objects.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .none: try container.encodeNil()
        case .int(let value): try container.encode(value)
        case .bool(let value): try container.encode(value)
        case .float(let value): try container.encode(value)
        case .double(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .data(let value): try container.encode(value)
        case .date(let value): try container.encode(value)
        case .objectId(let value): try container.encode(value)
        case .decimal128(let value): try container.encode(value)
        case .uuid(let value): try container.encode(value)
        case .object(let object):
            if let key = object.objectSchema.primaryKeyProperty, let value = object[key.columnName] {
                try container.encode("\(value)")
            } else {
                try container.encodeNil()
            }
        case .list(let list): try container.encode(Array(list))
        case .dictionary(let map):
            try container.encode(Dictionary(uniqueKeysWithValues: map.map { ($0.key, $0.value) }))
        }
    }
}

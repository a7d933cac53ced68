import Foundation

/// What the object layer does differently for each property type, in one table: the value a required property
/// gets where it has none, whether a row keeps the type in its fixed slot or its tail, which stored case holds a
/// value of it, the looser values `create(_:value:)` and key-value coding accept for it, and the element type of
/// a collection of it read without the app's model classes.
///
/// Adding a property type adds one entry here (CONTRIBUTING.md lists the other places). The row encoding
/// (`Tables/Tables.swift`), set keys, mixed tags and query comparison stay `switch`es in their own files: they run
/// for every value written or read, where a `switch` costs less than a call through this table.
struct PropertyCodec {
    /// The value a required property of the type gets where it has none (a migration adding the property): a
    /// fresh one for `UUID` and `ObjectId`, whose zero would collide; `.null` where the type has no zero.
    let zeroValue: () -> _StoredValue
    /// Whether rows keep values of the type as bytes in their tail rather than in their fixed slot.
    let isVariableSize: Bool
    /// Whether `value` is the stored case of the type (a link as the object, not as its key).
    let holds: (_ value: _StoredValue) -> Bool
    /// `value`, of a Swift type other than the property's own, as the type's stored value when it converts
    /// exactly or by the SDK's loose rules (an `Int` for a `Double`, a string for an `ObjectId`); nil otherwise.
    let converted: (_ value: Any) -> _StoredValue?
    /// The collection element types of the type, required and optional, with objects as `DynamicObject`s (nil:
    /// the type has no collections).
    let elements: (required: any RealmCollectionValue.Type, optional: any RealmCollectionValue.Type)?
}

extension PropertyType {
    /// The type's entry in the table of ``PropertyCodec``s.
    var codec: PropertyCodec {
        switch self {
        case .bool:
            PropertyCodec(
                zeroValue: { .bool(false) }, isVariableSize: false,
                holds: { if case .bool = $0 { true } else { false } }, converted: { _ in nil },
                elements: (Bool.self, Bool?.self))
        case .int:
            PropertyCodec(
                zeroValue: { .int(0) }, isVariableSize: false,
                holds: { if case .int = $0 { true } else { false } },
                converted: { value in
                    if let int = value as? Int { return .int(Int64(int)) }
                    if let int = value as? any BinaryInteger, let exact = Int64(exactly: int) { return .int(exact) }
                    return nil
                },
                elements: (Int.self, Int?.self))
        case .float:
            PropertyCodec(
                zeroValue: { .float(0) }, isVariableSize: false,
                holds: { if case .float = $0 { true } else { false } },
                converted: { value in
                    if let double = value as? Double { return .float(Float(double)) }
                    if let int = value as? Int { return .float(Float(int)) }
                    return nil
                },
                elements: (Float.self, Float?.self))
        case .double:
            PropertyCodec(
                zeroValue: { .double(0) }, isVariableSize: false,
                holds: { if case .double = $0 { true } else { false } },
                converted: { value in
                    if let double = value as? Double { return .double(double) }
                    if let float = value as? Float { return .double(Double(float)) }
                    if let int = value as? Int { return .double(Double(int)) }
                    return nil
                },
                elements: (Double.self, Double?.self))
        case .string:
            PropertyCodec(
                zeroValue: { .string("") }, isVariableSize: true,
                holds: { if case .string = $0 { true } else { false } }, converted: { _ in nil },
                elements: (String.self, String?.self))
        case .data:
            PropertyCodec(
                zeroValue: { .data(Data()) }, isVariableSize: true,
                holds: { if case .data = $0 { true } else { false } }, converted: { _ in nil },
                elements: (Data.self, Data?.self))
        case .date:
            PropertyCodec(
                zeroValue: { .date(Date(timeIntervalSinceReferenceDate: 0)) }, isVariableSize: false,
                holds: { if case .date = $0 { true } else { false } }, converted: { _ in nil },
                elements: (Date.self, Date?.self))
        case .decimal128:
            PropertyCodec(
                zeroValue: { .decimal128(0) }, isVariableSize: true,
                holds: { if case .decimal128 = $0 { true } else { false } },
                converted: { value in
                    if let int = value as? Int { return .decimal128(Decimal128(int)) }
                    if let double = value as? Double { return .decimal128(Decimal128(double)) }
                    if let string = value as? String, let decimal = try? Decimal128(string: string) {
                        return .decimal128(decimal)
                    }
                    return nil
                },
                elements: (Decimal128.self, Decimal128?.self))
        case .objectId:
            PropertyCodec(
                zeroValue: { .objectId(.generate()) }, isVariableSize: true,
                holds: { if case .objectId = $0 { true } else { false } },
                converted: { value in
                    guard let string = value as? String, let id = try? ObjectId(string: string) else { return nil }
                    return .objectId(id)
                },
                elements: (ObjectId.self, ObjectId?.self))
        case .uuid:
            PropertyCodec(
                zeroValue: { .uuid(UUID()) }, isVariableSize: true,
                holds: { if case .uuid = $0 { true } else { false } },
                converted: { value in
                    guard let string = value as? String, let uuid = UUID(uuidString: string) else { return nil }
                    return .uuid(uuid)
                },
                elements: (UUID.self, UUID?.self))
        case .object:
            // Links: a dictionary or array describing a new object converts with the target's schema, which only
            // the property knows (see `StoredValueConversion.stored(from:as:)`).
            PropertyCodec(
                zeroValue: { .null }, isVariableSize: false,
                holds: { if case .object = $0 { true } else { false } }, converted: { _ in nil },
                elements: (DynamicObject.self, DynamicObject?.self))
        case .linkingObjects:
            PropertyCodec(
                zeroValue: { .null }, isVariableSize: false, holds: { _ in false }, converted: { _ in nil },
                elements: nil)
        case .any:
            PropertyCodec(
                zeroValue: { .null }, isVariableSize: true, holds: { _ in true }, converted: { _ in nil },
                elements: (AnyRealmValue.self, AnyRealmValue.self))
        }
    }

    /// Whether rows keep values of the type as bytes in their tail rather than in their fixed slot.
    var isVariableSize: Bool { codec.isVariableSize }
}

// MARK: Stored values, case by case

extension StoredValueConversion {
    /// A stored value as `Any` for dynamic access (nil for null).
    static func any(from stored: _StoredValue) -> Any? {
        switch stored {
        case .null: nil
        case .int(let value): Int(value)
        case .bool(let value): value
        case .float(let value): value
        case .double(let value): value
        case .string(let value): value
        case .data(let value): value
        case .date(let value): value
        case .objectId(let value): value
        case .uuid(let value): value
        case .decimal128(let value): value
        case .object(let value): value
        case .collection(let value): value
        case .mixed: nil
        }
    }
}

/// Equality of stored elements, for `index(of:)`.
enum ListElements {
    static func equal(_ lhs: _StoredValue, _ rhs: _StoredValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): true
        case (.int(let a), .int(let b)): a == b
        case (.bool(let a), .bool(let b)): a == b
        case (.float(let a), .float(let b)): a == b
        case (.double(let a), .double(let b)): a == b
        case (.string(let a), .string(let b)): a == b
        case (.data(let a), .data(let b)): a == b
        case (.date(let a), .date(let b)): a == b
        case (.objectId(let a), .objectId(let b)): a == b
        case (.uuid(let a), .uuid(let b)): a == b
        case (.decimal128(let a), .decimal128(let b)): a == b
        case (.object(let a), .object(let b)): a.isSameObject(as: b)
        default: false
        }
    }
}

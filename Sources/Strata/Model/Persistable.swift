public import Foundation
public import StrataStorage

/// A value as the object layer stores it. Part of the machinery behind ``_Persistable``; not for direct use.
public enum _StoredValue {
    case null
    case int(Int64)
    case bool(Bool)
    case float(Float)
    case double(Double)
    case string(String)
    case data(Data)
    case date(Date)
    case objectId(ObjectId)
    case uuid(UUID)
    case decimal128(Decimal128)
    case object(ObjectBase)
    /// A collection property's container (`List`); its elements are stored outside the row.
    case collection(AnyObject)
    /// A mixed value as stored (`AnyRealmValue` bytes: links and nested collections by reference).
    case mixed([UInt8])
}

/// The collection kinds a property can hold values in. Part of the machinery behind ``_Persistable``.
public enum _CollectionKind: String, Sendable, Hashable, Codable {
    case list, set, map
}

/// How a Swift type is persisted. Part of the machinery behind ``_Persistable``; not for direct use.
public struct _PropertyInfo: @unchecked Sendable {
    /// The stored type.
    public var type: PropertyType
    /// Whether nil is allowed.
    public var isOptional: Bool
    /// The model class of links and embedded objects.
    public var objectType: ObjectBase.Type?
    /// Bits of an integer type narrower than `Int64` (0 for everything else); used to reject values that do
    /// not fit.
    public var integerBits: Int
    /// The collection the property holds values of this type in, if any.
    public var collection: _CollectionKind?

    /// Whether the property is a `List` of values of this type.
    public var isList: Bool {
        get { collection == .list }
        set { collection = newValue ? .list : (collection == .list ? nil : collection) }
    }

    /// Whether the property is a collection (its elements are stored outside the row).
    public var isCollection: Bool { collection != nil }

    /// Describes a stored type.
    public init(
        type: PropertyType, isOptional: Bool = false, objectType: ObjectBase.Type? = nil, integerBits: Int = 0,
        collection: _CollectionKind? = nil
    ) {
        self.type = type
        self.isOptional = isOptional
        self.objectType = objectType
        self.integerBits = integerBits
        self.collection = collection
    }
}

/// A type that can be the value of a `@Persisted` property.
///
/// Every type listed in the documentation conforms (`Bool`, the integer types, `Float`, `Double`, `String`,
/// `Data`, `Date`, `Decimal128`, `UUID`, `ObjectId`, their optionals, optional links to `Object` subclasses,
/// optional `EmbeddedObject` subclasses). Conform your own types through ``PersistableEnum``,
/// ``CustomPersistable`` or ``FailableCustomPersistable``, not directly.
public protocol _Persistable {
    /// How the type is stored.
    static var _propertyInfo: _PropertyInfo { get }
    /// The value of a property declared without an initial value.
    static func _defaultValue() -> Self
    /// The value read back from storage; nil if `stored` cannot be this type.
    static func _fromStored(_ stored: _StoredValue) -> Self?
    /// The value to store.
    var _stored: _StoredValue { get }
    /// The value of `column` read straight from a stored row, or nil to take the general path (links,
    /// projections). A fast path for the common scalar types: no intermediate `_StoredValue`.
    static func _read(from row: RowView, column: Int) -> Self?
    /// Whether the type is a collection held by reference (`List`, `MutableSet`, `Map`): its accessor reads no
    /// row, so a managed object hands the collection out without looking its row up.
    static var _isReferenceCollection: Bool { get }
}

extension _Persistable {
    /// See ``_Persistable``: the general path.
    @inlinable
    public static func _read(from row: RowView, column: Int) -> Self? { nil }

    /// See ``_Persistable``: a value read from the row.
    @inlinable
    public static var _isReferenceCollection: Bool { false }

    /// What an accessor that records key paths (type-safe queries) returns: any value of the type.
    @inlinable
    public static func _recordingPlaceholder() -> Self { _defaultValue() }
}

extension Bool: _Persistable {
    /// See ``_Persistable``.
    public static var _propertyInfo: _PropertyInfo { _PropertyInfo(type: .bool) }
    /// See ``_Persistable``.
    public static func _defaultValue() -> Bool { false }
    /// See ``_Persistable``.
    public static func _fromStored(_ stored: _StoredValue) -> Bool? {
        if case .bool(let value) = stored { return value }
        return nil
    }
    /// See ``_Persistable``.
    public var _stored: _StoredValue { .bool(self) }
    /// See ``_Persistable``.
    @inlinable
    public static func _read(from row: RowView, column: Int) -> Bool? { row.bool(column) }
}

/// The integer types share one stored representation, a 64-bit integer.
public protocol _PersistableInteger: FixedWidthInteger, SignedInteger, _Persistable {}

extension _PersistableInteger {
    /// See ``_Persistable``.
    public static var _propertyInfo: _PropertyInfo {
        _PropertyInfo(type: .int, integerBits: bitWidth < 64 ? bitWidth : 0)
    }
    /// See ``_Persistable``.
    public static func _defaultValue() -> Self { 0 }
    /// See ``_Persistable``.
    public static func _fromStored(_ stored: _StoredValue) -> Self? {
        if case .int(let value) = stored { return Self(exactly: value) }
        return nil
    }
    /// See ``_Persistable``.
    public var _stored: _StoredValue { .int(Int64(self)) }
    /// See ``_Persistable``.
    @inlinable
    public static func _read(from row: RowView, column: Int) -> Self? { Self(exactly: row.int(column)) }
}

extension Int: _PersistableInteger {}
extension Int8: _PersistableInteger {}
extension Int16: _PersistableInteger {}
extension Int32: _PersistableInteger {}
extension Int64: _PersistableInteger {}

extension Float: _Persistable {
    /// See ``_Persistable``.
    public static var _propertyInfo: _PropertyInfo { _PropertyInfo(type: .float) }
    /// See ``_Persistable``.
    public static func _defaultValue() -> Float { 0 }
    /// See ``_Persistable``.
    public static func _fromStored(_ stored: _StoredValue) -> Float? {
        if case .float(let value) = stored { return value }
        return nil
    }
    /// See ``_Persistable``.
    public var _stored: _StoredValue { .float(self) }
    /// See ``_Persistable``.
    @inlinable
    public static func _read(from row: RowView, column: Int) -> Float? { row.float(column) }
}

extension Double: _Persistable {
    /// See ``_Persistable``.
    public static var _propertyInfo: _PropertyInfo { _PropertyInfo(type: .double) }
    /// See ``_Persistable``.
    public static func _defaultValue() -> Double { 0 }
    /// See ``_Persistable``.
    public static func _fromStored(_ stored: _StoredValue) -> Double? {
        if case .double(let value) = stored { return value }
        return nil
    }
    /// See ``_Persistable``.
    public var _stored: _StoredValue { .double(self) }
    /// See ``_Persistable``.
    @inlinable
    public static func _read(from row: RowView, column: Int) -> Double? { row.double(column) }
}

extension String: _Persistable {
    /// See ``_Persistable``.
    public static var _propertyInfo: _PropertyInfo { _PropertyInfo(type: .string) }
    /// See ``_Persistable``.
    public static func _defaultValue() -> String { "" }
    /// See ``_Persistable``.
    public static func _fromStored(_ stored: _StoredValue) -> String? {
        if case .string(let value) = stored { return value }
        return nil
    }
    /// See ``_Persistable``.
    public var _stored: _StoredValue { .string(self) }
    /// See ``_Persistable``.
    @inlinable
    public static func _read(from row: RowView, column: Int) -> String? { row.string(column) }
}

extension Data: _Persistable {
    /// See ``_Persistable``.
    public static var _propertyInfo: _PropertyInfo { _PropertyInfo(type: .data) }
    /// See ``_Persistable``.
    public static func _defaultValue() -> Data { Data() }
    /// See ``_Persistable``.
    public static func _fromStored(_ stored: _StoredValue) -> Data? {
        if case .data(let value) = stored { return value }
        return nil
    }
    /// See ``_Persistable``.
    public var _stored: _StoredValue { .data(self) }
}

extension Date: _Persistable {
    /// See ``_Persistable``.
    public static var _propertyInfo: _PropertyInfo { _PropertyInfo(type: .date) }
    /// See ``_Persistable``.
    public static func _defaultValue() -> Date { Date(timeIntervalSinceReferenceDate: 0) }
    /// See ``_Persistable``.
    public static func _fromStored(_ stored: _StoredValue) -> Date? {
        if case .date(let value) = stored { return value }
        return nil
    }
    /// See ``_Persistable``.
    public var _stored: _StoredValue { .date(self) }
    /// See ``_Persistable``.
    @inlinable
    public static func _read(from row: RowView, column: Int) -> Date? {
        Date(timeIntervalSinceReferenceDate: row.double(column))
    }
}

extension UUID: _Persistable {
    /// See ``_Persistable``.
    public static var _propertyInfo: _PropertyInfo { _PropertyInfo(type: .uuid) }
    /// See ``_Persistable``.
    public static func _defaultValue() -> UUID { UUID() }
    /// See ``_Persistable``.
    public static func _fromStored(_ stored: _StoredValue) -> UUID? {
        if case .uuid(let value) = stored { return value }
        return nil
    }
    /// See ``_Persistable``.
    public var _stored: _StoredValue { .uuid(self) }
}

extension ObjectId: _Persistable {
    /// See ``_Persistable``.
    public static var _propertyInfo: _PropertyInfo { _PropertyInfo(type: .objectId) }
    /// See ``_Persistable``.
    public static func _defaultValue() -> ObjectId { .generate() }
    /// See ``_Persistable``.
    public static func _fromStored(_ stored: _StoredValue) -> ObjectId? {
        if case .objectId(let value) = stored { return value }
        return nil
    }
    /// See ``_Persistable``.
    public var _stored: _StoredValue { .objectId(self) }
}

extension Decimal128: _Persistable {
    /// See ``_Persistable``.
    public static var _propertyInfo: _PropertyInfo { _PropertyInfo(type: .decimal128) }
    /// See ``_Persistable``.
    public static func _defaultValue() -> Decimal128 { 0 }
    /// See ``_Persistable``.
    public static func _fromStored(_ stored: _StoredValue) -> Decimal128? {
        if case .decimal128(let value) = stored { return value }
        return nil
    }
    /// See ``_Persistable``.
    public var _stored: _StoredValue { .decimal128(self) }
}

extension Optional: _Persistable where Wrapped: _Persistable {
    /// See ``_Persistable``.
    public static var _propertyInfo: _PropertyInfo {
        var info = Wrapped._propertyInfo
        info.isOptional = true
        return info
    }
    /// See ``_Persistable``.
    public static func _defaultValue() -> Wrapped? { nil }
    /// See ``_Persistable``.
    public static func _fromStored(_ stored: _StoredValue) -> Wrapped?? {
        if case .null = stored { return .some(nil) }
        // A stored value the wrapped type rejects (a FailableCustomPersistable that cannot convert it) reads as nil.
        return .some(Wrapped._fromStored(stored))
    }
    /// See ``_Persistable``.
    public var _stored: _StoredValue {
        switch self {
        case .none: .null
        case .some(let value): value._stored
        }
    }
    /// See ``_Persistable``.
    @inlinable
    public static func _read(from row: RowView, column: Int) -> Wrapped?? {
        if row.isNull(column) { return .some(nil) }
        return Wrapped._read(from: row, column: column).map { .some($0) }
    }
}

/// An enum persisted as its raw value.
///
/// ```swift
/// enum Mood: String, PersistableEnum { case happy, grumpy }
/// class Dog: Object { @Persisted var mood: Mood = .happy }
/// ```
/// A stored raw value that matches no case reads as the first case. Enums are collection values too:
/// `List<Mood>`, `MutableSet<Mood>` and `Map<String, Mood>` need no further conformance. An enum sorts by its raw
/// value (`sorted(by: \.mood)`, `moods.sorted()`), as in the SDK.
public protocol PersistableEnum: RawRepresentable, CaseIterable, RealmCollectionValue, SortableType
where RawValue: _Persistable {}

extension PersistableEnum {
    /// See ``_Persistable``.
    public static var _propertyInfo: _PropertyInfo { RawValue._propertyInfo }
    /// See ``_Persistable``.
    public static func _defaultValue() -> Self { allCases.first! }
    /// See ``_Persistable``.
    public static func _fromStored(_ stored: _StoredValue) -> Self? {
        guard let raw = RawValue._fromStored(stored) else { return nil }
        return Self(rawValue: raw) ?? allCases.first
    }
    /// See ``_Persistable``.
    public var _stored: _StoredValue { rawValue._stored }
}

/// A type persisted through another, supported type (a type projection).
///
/// ```swift
/// struct Email: CustomPersistable {
///     var address: String
///     init(persistedValue: String) { address = persistedValue }
///     var persistableValue: String { address }
/// }
/// ```
/// Custom types are collection values too: `List<Email>`, `MutableSet<Email>` and `Map<String, Email>` need no
/// further conformance.
public protocol CustomPersistable: RealmCollectionValue {
    /// The supported type the value is stored as.
    associatedtype PersistedType: _Persistable
    /// Rebuilds the value from what was stored.
    init(persistedValue: PersistedType)
    /// The value to store.
    var persistableValue: PersistedType { get }
}

extension CustomPersistable {
    /// See ``_Persistable``. A type persisted as an embedded object is stored as a nullable link even when the
    /// property is not optional; a missing object reads as the type's value for a default embedded object.
    public static var _propertyInfo: _PropertyInfo {
        var info = PersistedType._propertyInfo
        if info.type == .object { info.isOptional = true }
        return info
    }
    /// See ``_Persistable``.
    public static func _defaultValue() -> Self { Self(persistedValue: PersistedType._defaultValue()) }
    /// See ``_Persistable``.
    public static func _fromStored(_ stored: _StoredValue) -> Self? {
        if case .null = stored, PersistedType._propertyInfo.type == .object {
            return Self(persistedValue: PersistedType._defaultValue())
        }
        return PersistedType._fromStored(stored).map { Self(persistedValue: $0) }
    }
    /// See ``_Persistable``.
    public var _stored: _StoredValue { persistableValue._stored }
}

/// Like ``CustomPersistable``, for types that cannot represent every stored value (the Realm Swift SDK's `URL`
/// example, persisted as a `String`).
///
/// ```swift
/// extension URL: FailableCustomPersistable {
///     public init?(persistedValue: String) { self.init(string: persistedValue) }
///     public var persistableValue: String { absoluteString }
/// }
/// class Club: Object { @Persisted var url: URL? }
/// ```
///
/// `init(persistedValue:)` returns nil for a stored value the type rejects (one written by another version of
/// the app, or through dynamic access such as `club["url"] = ""`). That value stays stored as it is, and dynamic
/// access, the query language and `.persistableValue` in `where {}` still see it; reading it through the type:
/// - from an optional property or an optional collection element (`URL?`, `List<URL?>`) gives `nil`, and so does
///   a `Map` lookup by key;
/// - from a non-optional property or element stops the process with a message naming the type and property (the
///   Realm SDK force-unwraps it too). Declare failable types optional, as the SDK advises.
///
/// A non-optional property declared without an initial value starts as `init(persistedValue:)` of the persisted
/// type's default (`""`, `0`…); if the type rejects that too, creating an instance stops the process with a
/// message asking for an initial value.
public protocol FailableCustomPersistable: RealmCollectionValue {
    /// The supported type the value is stored as.
    associatedtype PersistedType: _Persistable
    /// Rebuilds the value from what was stored, or nil if it cannot.
    init?(persistedValue: PersistedType)
    /// The value to store.
    var persistableValue: PersistedType { get }
}

extension FailableCustomPersistable {
    /// See ``_Persistable``.
    public static var _propertyInfo: _PropertyInfo {
        var info = PersistedType._propertyInfo
        if info.type == .object { info.isOptional = true }
        return info
    }
    /// See ``_Persistable``.
    public static func _defaultValue() -> Self {
        guard let value = Self(persistedValue: PersistedType._defaultValue()) else {
            fatalError(
                "\(Self.self) has no value for the default \(PersistedType.self); give the property an initial value")
        }
        return value
    }
    /// See ``_Persistable``.
    public static func _fromStored(_ stored: _StoredValue) -> Self? {
        PersistedType._fromStored(stored).flatMap { Self(persistedValue: $0) }
    }
    /// See ``_Persistable``.
    public var _stored: _StoredValue { persistableValue._stored }
}

import StrataStorage

/// The kind of index a `@Persisted(indexed:)` property gets.
public enum IndexType: Sendable, Hashable {
    /// An ordered index for equality, `IN` and range queries.
    case general
    /// A full-text index over words (String properties only).
    case fullText
}

/// Attributes declared on a `@Persisted` property.
struct PersistedAttributes: Sendable, Hashable {
    var primaryKey = false
    var index: IndexType?
}

/// The boxes created on this thread by objects whose initialisation has not finished: `@Persisted` pushes each
/// box as the object's stored properties are initialised, and `ObjectBase.init` — which runs after them — takes
/// its own from the top. Objects created in property initialisers finish first and take theirs first, so the
/// stack discipline holds. This is how an object knows its boxes without `Mirror`, which costs microseconds.
final class BoxStack {
    var boxes: [AnyPersistedBox] = []
    /// The last type whose box count was looked up on this thread, and that count (objects are usually
    /// created many of one type at a time).
    var lastType: ObjectIdentifier?
    var lastCount = 0
    static let local = ThreadLocal { BoxStack() }
}

/// Type-erased access to a property's storage (the same box for every access to one property of one object).
@usableFromInline
class AnyPersistedBox {
    let attributes: PersistedAttributes
    /// The property's index in the managed object's schema, cached after the first managed access.
    @usableFromInline var column = -1

    init(attributes: PersistedAttributes) {
        self.attributes = attributes
        BoxStack.local.value.boxes.append(self)
    }

    var info: _PropertyInfo { fatalError("abstract") }
    /// The unmanaged value.
    var stored: _StoredValue { fatalError("abstract") }
    /// Sets the unmanaged value; false if `stored` does not fit the property's type.
    func setStored(_ stored: _StoredValue) -> Bool { fatalError("abstract") }
    /// The unmanaged value as `Any`.
    var anyValue: Any { fatalError("abstract") }
    /// Sets the unmanaged value from `Any`; false if the value has another type.
    func setAny(_ value: Any?) -> Bool { fatalError("abstract") }
}

@usableFromInline
final class PersistedBox<Value: _Persistable>: AnyPersistedBox {
    /// nil only for a type without a default (a non-optional link), which schema discovery rejects.
    @usableFromInline var storage: Value?

    @inlinable
    var value: Value {
        get {
            guard let storage else { fatalError("\(Value.self) has no default value; declare the property optional") }
            return storage
        }
        set { storage = newValue }
    }

    init(_ value: Value?, attributes: PersistedAttributes) {
        self.storage = value
        super.init(attributes: attributes)
    }

    /// A box holding the type's default value, if it has one.
    static func withDefault(attributes: PersistedAttributes) -> PersistedBox {
        let info = Value._propertyInfo
        let hasDefault = !(info.type == .object && !info.isOptional && !(info.objectType is EmbeddedObject.Type))
        return PersistedBox(hasDefault ? Value._defaultValue() : nil, attributes: attributes)
    }

    override var info: _PropertyInfo { Value._propertyInfo }
    override var stored: _StoredValue { value._stored }
    override func setStored(_ stored: _StoredValue) -> Bool {
        guard let value = Value._fromStored(stored) else { return false }
        self.value = value
        return true
    }
    override var anyValue: Any { value }
    override func setAny(_ value: Any?) -> Bool {
        if let typed = value as? Value {
            self.value = typed
            return true
        }
        guard let stored = StoredValueConversion.stored(from: value, as: Value._propertyInfo) else { return false }
        return setStored(stored)
    }
}

/// Implemented by `Persisted` so that schema discovery can find its box through `Mirror`.
protocol PersistedProperty {
    var anyBox: AnyPersistedBox { get }
}

/// Declares a stored property of an object type.
///
/// ```swift
/// class Dog: Object {
///     @Persisted(primaryKey: true) var id = ObjectId.generate()
///     @Persisted var name = ""
///     @Persisted var age: Int?
///     @Persisted var owner: Person?
/// }
/// ```
/// Properties without `@Persisted` are ignored: not stored, not queryable.
@propertyWrapper
public struct Persisted<Value: _Persistable>: PersistedProperty {
    @usableFromInline let box: PersistedBox<Value>
    var anyBox: AnyPersistedBox { box }

    /// A property with its type's default value: 0, false, "", empty data, nil, a new ObjectId or UUID.
    public init() { box = PersistedBox.withDefault(attributes: PersistedAttributes()) }

    /// A property with an initial value.
    public init(wrappedValue: Value) { box = PersistedBox(wrappedValue, attributes: PersistedAttributes()) }

    /// A primary key (Int, String, UUID, ObjectId, their optionals, or enums over Int or String).
    public init(primaryKey: Bool) {
        box = PersistedBox.withDefault(attributes: PersistedAttributes(primaryKey: primaryKey))
    }

    /// A primary key with an initial value.
    public init(wrappedValue: Value, primaryKey: Bool) {
        box = PersistedBox(wrappedValue, attributes: PersistedAttributes(primaryKey: primaryKey))
    }

    /// An indexed property.
    public init(indexed: Bool) {
        box = PersistedBox.withDefault(attributes: PersistedAttributes(index: indexed ? .general : nil))
    }

    /// An indexed property with an initial value.
    public init(wrappedValue: Value, indexed: Bool) {
        box = PersistedBox(wrappedValue, attributes: PersistedAttributes(index: indexed ? .general : nil))
    }

    /// A property with an index of the given kind.
    public init(indexed: IndexType) {
        box = PersistedBox.withDefault(attributes: PersistedAttributes(index: indexed))
    }

    /// A property with an index of the given kind and an initial value.
    public init(wrappedValue: Value, indexed: IndexType) {
        box = PersistedBox(wrappedValue, attributes: PersistedAttributes(index: indexed))
    }

    /// Not available: `@Persisted` works only inside `ObjectBase` subclasses.
    @available(
        *, unavailable, message: "@Persisted can only be used on properties of Object or EmbeddedObject subclasses"
    )
    public var wrappedValue: Value {
        get { fatalError("@Persisted can only be used inside ObjectBase subclasses") }
        // swift-format-ignore
        set { fatalError("@Persisted can only be used inside ObjectBase subclasses") }
    }

    /// Reads and writes go to the object's Realm when it is managed, to the property's own storage otherwise.
    /// Inlinable so that each model's accessors are specialised for their value type.
    @inlinable
    public static subscript<EnclosingSelf: ObjectBase>(
        _enclosingInstance object: EnclosingSelf,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<EnclosingSelf, Value>,
        storage storageKeyPath: ReferenceWritableKeyPath<EnclosingSelf, Persisted<Value>>
    ) -> Value {
        get {
            let box = object[keyPath: storageKeyPath].box
            guard let managed = object.managed else { return box.value }
            let column = managed.column(of: box, object: object, storage: storageKeyPath)
            return managed.read(column: column, as: Value.self)
        }
        set {
            let box = object[keyPath: storageKeyPath].box
            guard let managed = object.managed else {
                box.value = newValue
                return
            }
            let column = managed.column(of: box, object: object, storage: storageKeyPath)
            managed.write(column: column, newValue._stored)
        }
    }
}

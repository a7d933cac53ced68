import StrataStorage

/// The kind of index a `@Persisted(indexed:)` property gets.
public enum IndexType: Sendable, Hashable {
    /// An ordered index for equality, `IN` and range queries.
    case general
    /// A full-text index over words (String properties only).
    case fullText
}

/// Attributes declared on a `@Persisted` property.
@usableFromInline
struct PersistedAttributes: Sendable, Hashable {
    @usableFromInline var primaryKey = false
    @usableFromInline var index: IndexType?
    /// For `LinkingObjects`: the property of the origin type whose links they follow back.
    @usableFromInline var originProperty: String?

    @inlinable
    init(primaryKey: Bool = false, index: IndexType? = nil, originProperty: String? = nil) {
        self.primaryKey = primaryKey
        self.index = index
        self.originProperty = originProperty
    }
}

/// The boxes created on this thread by objects whose initialisation has not finished: `@Persisted` pushes each
/// box as the object's stored properties are initialised, and `ObjectBase.init` — which runs after them — takes
/// its own from the top. Objects created in property initialisers finish first and take theirs first, so the
/// stack discipline holds. This is how an object knows its boxes without `Mirror`, which costs microseconds.
///
/// Boxes no object claims are told apart by their reference count: a box of an object under construction is
/// held by the object's storage as well as by this stack, while a box only this stack holds is an orphan — one a
/// decoder replaced (`Persisted.init(from:)`), one of a decoding that failed, or one of a `@Persisted` local
/// variable or plain type's property whose variable has gone.
///
/// Its state is thread-local, so no two accesses can overlap: the properties skip Swift's run-time exclusivity
/// check, which cost ~80 instructions per access, several per created object.
@usableFromInline
final class BoxStack {
    @exclusivity(unchecked) var boxes: [PersistedBox] = []
    /// The last type whose box count was looked up on this thread, and that count (objects are usually
    /// created many of one type at a time).
    @exclusivity(unchecked) var lastType: ObjectIdentifier?
    @exclusivity(unchecked) var lastCount = 0
    /// Boxes created on this thread so far (schema discovery compares it with a type's box count to learn
    /// whether its property initialisers create other objects).
    @exclusivity(unchecked) var created = 0
    /// Set while the Realm creates an accessor for a stored object of a type whose initialisers create no
    /// other objects: its properties take their columns from here instead of allocating boxes. Not retained:
    /// `Realm.accessor(for:)` holds the managed object, the type and the columns while the initialiser runs.
    @exclusivity(unchecked) var accessorOwner: Unmanaged<ManagedObject>?
    /// The class whose accessor is being created (an initialiser creating another object traps).
    @exclusivity(unchecked) var accessorType: ObjectIdentifier?
    @exclusivity(unchecked) var accessorColumns = UnsafeBufferPointer<Int>(start: nil, count: 0)
    @exclusivity(unchecked) var accessorNext = 0
    static let local = ThreadLocal { BoxStack() }

    /// Whether only this stack holds the box at `index` (see the type's comment).
    func isOrphan(at index: Int) -> Bool { isKnownUniquelyReferenced(&boxes[index]) }

    /// Whether any box in `range` is an orphan: one uniqueness check of the array for all of them, where
    /// ``isOrphan(at:)`` makes the array unique before checking each box.
    func containsOrphan(in range: Range<Int>) -> Bool {
        boxes.withUnsafeMutableBufferPointer { buffer in
            range.contains { isKnownUniquelyReferenced(&buffer[$0]) }
        }
    }

    /// Empties the stack if it holds only orphans. An object still under construction below always holds at
    /// least one of its boxes — the one whose value is being initialised or decoded while a nested object claims
    /// its own — so orphans sharing the stack with such an object wait until it has finished.
    func dropOrphansIfAlone() {
        for index in boxes.indices where !isOrphan(at: index) { return }
        boxes.removeAll()
    }
}

/// A property's storage: the unmanaged value, as it will be stored, and what the managed accessor learned.
///
/// Not generic on purpose: every object creation allocates one box per property, and a generic class would
/// look its metadata up at run time on each allocation and deallocation.
@usableFromInline
final class PersistedBox {
    let attributes: PersistedAttributes
    /// The property's index in the managed object's schema, cached after the first managed access.
    @exclusivity(unchecked) @usableFromInline var column = -1
    /// The unmanaged value, in its stored form.
    @exclusivity(unchecked) @usableFromInline var stored: _StoredValue
    /// The property's Swift type.
    let valueType: any _Persistable.Type

    /// The managed object whose property this box is, once the object is managed (encoding reads through it).
    /// Not retained: the object whose storage holds this box holds its managed object (`ObjectBase.managed`) for
    /// as long as it lives, and only encoding that object reads this. Retaining it cost a retain per property
    /// when an object was added and a release per property when it was freed.
    @exclusivity(unchecked) var owner: Unmanaged<ManagedObject>?

    /// A box for a `@Persisted` initialiser (which pushes it on the thread's stack, see `push(_:on:)`).
    @usableFromInline
    init(stored: _StoredValue, valueType: any _Persistable.Type, attributes: PersistedAttributes) {
        self.stored = stored
        self.valueType = valueType
        self.attributes = attributes
    }

    /// What a `@Persisted` initialiser needs from the thread's box stack, in one look-up (a thread-local read
    /// costs ~50 instructions, and this runs for every property of every object created): when the Realm is
    /// creating an accessor (see `AccessorCreationSlot`, or `BoxStack.accessorOwner` when another thread held that
    /// slot), its managed object and the property the next initialiser of that object declares; otherwise no
    /// owner, and the stack to push the new box on (`push`). The stack is nil only with an owner.
    @usableFromInline
    static func accessorProperty() -> (owner: Unmanaged<ManagedObject>?, property: Int, stack: Unmanaged<BoxStack>?) {
        let next = AccessorCreationSlot.withSlot { slot, thread in slot.isHeld(by: thread) ? slot.nextProperty() : nil }
        if let next { return (next.owner, next.column, nil) }
        return BoxStack.local.withValue { stack in
            let unmanaged = Unmanaged.passUnretained(stack)
            guard let owner = stack.accessorOwner else { return (nil, -1, unmanaged) }
            let next = stack.accessorNext
            guard next < stack.accessorColumns.count else { return (nil, -1, unmanaged) }
            stack.accessorNext = next &+ 1
            return (owner, stack.accessorColumns[next], unmanaged)
        }
    }

    /// Pushes a new box on `stack` (this thread's, from `accessorProperty()`; threads keep theirs alive) for its
    /// object to claim.
    @usableFromInline
    static func push(_ box: PersistedBox, on stack: Unmanaged<BoxStack>) {
        stack._withUnsafeGuaranteedRef { stack in
            stack.boxes.append(box)
            stack.created &+= 1
        }
    }

    /// A box made by a decoder to replace the one a property initialiser made (not pushed on the stack: the
    /// replaced box stays there as an orphan, which tells the object to find its boxes with `Mirror`). A nil value
    /// (the key was missing) takes the type's default.
    init(decoded stored: _StoredValue?, valueType: any _Persistable.Type) {
        func defaultValue<Value: _Persistable>(_ type: Value.Type) -> _StoredValue {
            let info = Value._propertyInfo
            let hasDefault =
                info.isCollection
                || !(info.type == .object && !info.isOptional && !(info.objectType is EmbeddedObject.Type))
            return hasDefault ? Value._defaultValue()._stored : .null
        }
        self.stored = stored ?? defaultValue(valueType)
        self.valueType = valueType
        self.attributes = PersistedAttributes()
    }

    /// A box holding `Value`'s default (null for a type without one, a non-optional link, which schema discovery
    /// rejects).
    @usableFromInline
    static func withDefault<Value: _Persistable>(_ type: Value.Type, attributes: PersistedAttributes) -> PersistedBox {
        let info = Value._propertyInfo
        let hasDefault =
            info.isCollection
            || !(info.type == .object && !info.isOptional && !(info.objectType is EmbeddedObject.Type))
        return PersistedBox(
            stored: hasDefault ? Value._defaultValue()._stored : .null, valueType: type, attributes: attributes)
    }

    /// The unmanaged value as `Value`.
    @inlinable
    func value<Value: _Persistable>(as type: Value.Type) -> Value {
        guard let value = Value._fromStored(stored) else {
            fatalError("\(Value.self) has no default value; declare the property optional")
        }
        return value
    }

    var info: _PropertyInfo { valueType._propertyInfo }

    /// Sets the unmanaged value; false if `stored` does not fit the property's type.
    func setStored(_ stored: _StoredValue) -> Bool {
        func fits<Value: _Persistable>(_ type: Value.Type) -> Bool { Value._fromStored(stored) != nil }
        guard fits(valueType) else { return false }
        self.stored = stored
        return true
    }

    /// The unmanaged value for dynamic access, in its persisted form (nil for null).
    var anyValue: Any? { StoredValueConversion.any(from: stored) }
}

/// Implemented by `Persisted` so that schema discovery can find its box through `Mirror`.
protocol PersistedProperty {
    /// nil in accessors the Realm created for stored objects (they have no unmanaged storage).
    var anyBox: PersistedBox? { get }
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
    /// The unmanaged storage; nil in accessors the Realm created for stored objects.
    @usableFromInline let box: PersistedBox?
    /// In accessors the Realm created: the object's managed state and this property's index. Not retained: the
    /// object itself holds its managed state (`ObjectBase.managed`) for as long as this storage exists, and
    /// reads use it without reference counting.
    @usableFromInline let owner: Unmanaged<ManagedObject>?
    @usableFromInline let property: Int
    var anyBox: PersistedBox? { box }

    init(box: PersistedBox) {
        self.box = box
        self.owner = nil
        self.property = -1
    }

    /// Storage for an accessor the Realm is creating, if it is creating one; otherwise an unmanaged box.
    @inlinable
    init(_ makeBox: () -> PersistedBox) {
        let slot = PersistedBox.accessorProperty()
        if let accessorOwner = slot.owner {
            box = nil
            owner = accessorOwner
            property = slot.property
        } else {
            let box = makeBox()
            PersistedBox.push(box, on: slot.stack.unsafelyUnwrapped)
            self.box = box
            owner = nil
            property = -1
        }
    }

    /// A property with its type's default value: 0, false, "", empty data, nil, a new ObjectId or UUID.
    @inlinable
    public init() { self.init { PersistedBox.withDefault(Value.self, attributes: PersistedAttributes()) } }

    /// A property with an initial value.
    @inlinable
    public init(wrappedValue: Value) {
        self.init {
            PersistedBox(stored: wrappedValue._stored, valueType: Value.self, attributes: PersistedAttributes())
        }
    }

    /// A primary key (Int, String, UUID, ObjectId, their optionals, or enums over Int or String).
    @inlinable
    public init(primaryKey: Bool) {
        self.init { PersistedBox.withDefault(Value.self, attributes: PersistedAttributes(primaryKey: primaryKey)) }
    }

    /// A primary key with an initial value.
    @inlinable
    public init(wrappedValue: Value, primaryKey: Bool) {
        self.init {
            PersistedBox(
                stored: wrappedValue._stored, valueType: Value.self,
                attributes: PersistedAttributes(primaryKey: primaryKey))
        }
    }

    /// An indexed property.
    @inlinable
    public init(indexed: Bool) {
        self.init {
            PersistedBox.withDefault(Value.self, attributes: PersistedAttributes(index: indexed ? .general : nil))
        }
    }

    /// An indexed property with an initial value.
    @inlinable
    public init(wrappedValue: Value, indexed: Bool) {
        self.init {
            PersistedBox(
                stored: wrappedValue._stored, valueType: Value.self,
                attributes: PersistedAttributes(index: indexed ? .general : nil))
        }
    }

    /// A property with an index of the given kind.
    @inlinable
    public init(indexed: IndexType) {
        self.init { PersistedBox.withDefault(Value.self, attributes: PersistedAttributes(index: indexed)) }
    }

    /// A property with an index of the given kind and an initial value.
    @inlinable
    public init(wrappedValue: Value, indexed: IndexType) {
        self.init {
            PersistedBox(
                stored: wrappedValue._stored, valueType: Value.self, attributes: PersistedAttributes(index: indexed))
        }
    }

    /// The value, for `@Persisted` outside a model class (a local variable, a property of another type): an
    /// unmanaged value, as in the Realm Swift SDK. Inside `Object` and `EmbeddedObject` subclasses the property
    /// reads and writes through its object instead.
    ///
    /// ```swift
    /// @Persisted var scores: List<Int>
    /// scores.append(3)   // an unmanaged list, to add to an object later
    /// ```
    public var wrappedValue: Value {
        get {
            if let owner { return owner._withUnsafeGuaranteedRef { $0.read(column: property, as: Value.self) } }
            return box.unsafelyUnwrapped.value(as: Value.self)
        }
        nonmutating set {
            if let owner {
                owner._withUnsafeGuaranteedRef { $0.write(column: property, newValue._stored) }
                return
            }
            box.unsafelyUnwrapped.stored = newValue._stored
        }
    }

    /// Reads and writes go to the object's Realm when it is managed, to the property's own storage otherwise.
    /// Inlinable so that each model's accessors are specialised for their value type.
    @inlinable @inline(__always)
    public static subscript<EnclosingSelf: ObjectBase>(
        _enclosingInstance object: EnclosingSelf,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<EnclosingSelf, Value>,
        storage storageKeyPath: ReferenceWritableKeyPath<EnclosingSelf, Persisted<Value>>
    ) -> Value {
        get {
            let storage = object[keyPath: storageKeyPath]
            if let owner = storage.owner {
                let value =
                    Value._isReferenceCollection
                    ? owner._withUnsafeGuaranteedRef {
                        object.heldCollection($0, property: storage.property, as: Value.self)
                    }
                    : owner._withUnsafeGuaranteedRef { $0.read(column: storage.property, as: Value.self) }
                if object.isObservationTracked() { object.observationAccess(property: storage.property, box: nil) }
                return value
            }
            let box = storage.box.unsafelyUnwrapped
            guard let managed = object.managed else {
                if object.isObservationTracked() { object.observationAccess(property: -1, box: box) }
                return box.value(as: Value.self)
            }
            let column = managed.column(of: box, object: object)
            let value =
                Value._isReferenceCollection
                ? object.heldCollection(managed, property: column, as: Value.self)
                : managed.read(column: column, as: Value.self)
            if object.isObservationTracked() { object.observationAccess(property: column, box: nil) }
            return value
        }
        set {
            let storage = object[keyPath: storageKeyPath]
            if let owner = storage.owner {
                owner._withUnsafeGuaranteedRef { $0.write(column: storage.property, newValue._stored) }
                return
            }
            let box = storage.box.unsafelyUnwrapped
            guard let managed = object.managed else {
                if object.observation == nil {
                    box.stored = newValue._stored
                } else {
                    object.observedMutation(box: box) { box.stored = newValue._stored }
                }
                return
            }
            let column = managed.column(of: box, object: object)
            managed.write(column: column, newValue._stored)
        }
    }
}

extension Persisted where Value: _LinkingObjectsMarker {
    /// The inverse of the links held by property `originProperty` of the linking type: every object whose
    /// `originProperty` (a to-one link, or a `List`, `MutableSet` or `Map` of links) points at this object.
    ///
    /// ```swift
    /// class Dog: Object {
    ///     @Persisted(originProperty: "dogs") var owners: LinkingObjects<Person>
    /// }
    /// ```
    @inlinable
    public init(originProperty: String) {
        self.init {
            PersistedBox.withDefault(Value.self, attributes: PersistedAttributes(originProperty: originProperty))
        }
    }
}

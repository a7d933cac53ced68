import Foundation

/// The common root of every model class. Subclass ``Object``, ``EmbeddedObject`` or ``AsymmetricObject``.
open class ObjectBase {
    /// Set when the object is managed by a Realm; nil while unmanaged. `final`, as ``observation``: the
    /// `@Persisted` accessors inlined into model classes then read the field itself, where they called a getter
    /// that returned it retained (two calls, a retain and a release per property set on a new object).
    @exclusivity(unchecked) @usableFromInline final var managed: ManagedObject?
    /// The `@Persisted` boxes of this object, in initialisation order (empty if they could not be claimed).
    @exclusivity(unchecked) var boxes: [PersistedBox] = []
    /// Set once a Swift Observation tracking read one of the object's properties (see `ObservationSupport`).
    @exclusivity(unchecked) @usableFromInline final var observation: ObjectObservation?
    /// The managed `List`, `MutableSet` and `Map` accessors this object handed out, by property (see
    /// `heldCollection`).
    @exclusivity(unchecked) var heldCollections = PropertySlots<AnyObject>()

    /// A new, unmanaged instance with each property's initial value.
    public required init() {
        let accessor = AccessorCreationSlot.withSlot { slot, thread in
            slot.isHeld(by: thread) ? slot.owner.map { ($0, slot.type) } : nil
        }
        if let (owner, type) = accessor {
            // An accessor the Realm is creating on this thread (see `AccessorCreationSlot`): no boxes.
            guard type == ObjectIdentifier(Swift.type(of: self)) else {
                Self.trapCreatedDuringAccessor(owner: owner, created: Swift.type(of: self))
            }
            managed = owner.takeUnretainedValue()
            return
        }
        BoxStack.local.withValue { stack in
            if let owner = stack.accessorOwner {
                // An accessor the Realm is creating: its properties read through `owner`, it has no boxes.
                guard stack.accessorType == ObjectIdentifier(Swift.type(of: self)) else {
                    Self.trapCreatedDuringAccessor(owner: owner, created: Swift.type(of: self))
                }
                managed = owner.takeUnretainedValue()
            } else {
                claimBoxes(from: stack)
            }
        }
    }

    /// The trap for an object of type `created` made by the initialiser of an accessor being created for `owner`.
    private static func trapCreatedDuringAccessor(owner: Unmanaged<ManagedObject>, created: ObjectBase.Type) -> Never {
        let className = owner._withUnsafeGuaranteedRef { $0.table.className }
        fatalError(
            "\(className)'s initialiser created a \(created) while Strata was creating an accessor for a stored "
                + "object; create it lazily instead")
    }

    /// Takes this object's boxes, which its `@Persisted` initialisers just pushed, from the top of `stack`.
    private func claimBoxes(from stack: BoxStack) {
        let type = ObjectIdentifier(Swift.type(of: self))
        let count: Int
        if stack.lastType == type {
            count = stack.lastCount
        } else {
            count = SchemaRegistry.shared.boxCount(of: self)
            stack.lastType = type
            stack.lastCount = count
        }
        let height = stack.boxes.count
        guard count > 0 && count <= height else { return }
        // An orphan among this object's boxes: a decoder replaced it, so Mirror finds the object's real ones.
        let replaced = stack.containsOrphan(in: height - count..<height)
        if !replaced { boxes = Array(stack.boxes[(height - count)...]) }
        if count == height {
            // The common case, an object created on its own: emptied in place, keeping the stack's buffer
            // (`removeSubrange` goes through the generic `replaceSubrange`, ~700 instructions for five boxes).
            stack.boxes.removeAll(keepingCapacity: true)
        } else {
            stack.boxes.removeSubrange((height - count)..<height)
        }
        if !stack.boxes.isEmpty { stack.dropOrphansIfAlone() }
    }

    /// A new, unmanaged instance with values copied from `value`: a `[String: Any]` keyed by property name, an
    /// array of values in declared order, or another object with the same properties. Values for links and
    /// embedded objects may themselves be dictionaries, arrays or objects.
    ///
    /// A value of the wrong type traps with a message naming the type and property.
    public convenience init(value: Any) {
        self.init()
        do {
            try ObjectValues.apply(value, to: self, schema: try SchemaRegistry.shared.table(for: type(of: self)))
        } catch {
            fatalError("\(error)")
        }
    }

    /// The Realm managing this object; nil while unmanaged.
    public var realm: Realm? { managed?.realm }

    /// Whether the object was deleted or its Realm invalidated. Always false while unmanaged.
    public var isInvalidated: Bool { managed.map { !$0.exists } ?? false }

    /// Whether the object is a frozen snapshot (see ``freeze()``).
    public var isFrozen: Bool { managed?.realm.frozen ?? false }

    /// The persisted class name. Override to store the class under another name.
    open class func className() -> String {
        let name = String(describing: self)
        return name.split(separator: ".").last.map(String.init) ?? name
    }

    /// Maps Swift property names to persisted names (`["firstName": "first_name"]`). Default: none.
    open class func propertiesMapping() -> [String: String] { [:] }

    /// The schema of this object's type; for a managed ``DynamicObject``, the schema of its stored class. As in the
    /// SDK, linking objects are in ``ObjectSchema/computedProperties``, not in ``ObjectSchema/properties``.
    public var objectSchema: ObjectSchema {
        if let managed { return managed.table.schema.withComputedPropertiesApart }
        do {
            return try SchemaRegistry.shared.table(for: type(of: self)).schema.withComputedPropertiesApart
        } catch {
            fatalError("\(error)")
        }
    }

    /// Whether `other` is this object or another accessor for the same stored object.
    public func isSameObject(as other: ObjectBase?) -> Bool {
        guard let other else { return false }
        if self === other { return true }
        guard let mine = managed, let theirs = other.managed else { return false }
        return mine.realm === theirs.realm && mine.table === theirs.table && mine.key == theirs.key
    }

    /// The value of the property with persisted or Swift name `key`; nil for unknown names. Setting an unknown
    /// name or a value of the wrong type fails the write transaction (managed objects) or traps with a message
    /// naming the type and property (unmanaged ones).
    public subscript(key: String) -> Any? {
        get {
            guard let table = managed?.table ?? (try? SchemaRegistry.shared.table(for: type(of: self))),
                let index = table.propertyIndex(named: key)
            else { return nil }
            if let managed {
                return managed.readAny(property: index)
            }
            return table.box(of: self, property: index).anyValue
        }
        set {
            do {
                let table = try managed?.table ?? SchemaRegistry.shared.table(for: type(of: self))
                guard let index = table.propertyIndex(named: key) else {
                    throw Realm.Error.invalidValue(
                        type: table.schema.className, property: key, reason: "no such property")
                }
                try ObjectValues.set(newValue, property: index, of: self, table: table)
            } catch {
                // Like every mutator of a managed object: the write transaction fails and rolls back whole.
                if let managed, managed.realm.transactionForMutation("setting \(key)") != nil {
                    managed.realm.fail(error)
                    return
                }
                fatalError("\(error)")
            }
        }
    }
}

/// A top-level object type. Subclass it and declare properties with `@Persisted`.
///
/// ```swift
/// class Dog: Object {
///     @Persisted var name = ""
///     @Persisted var age = 0
/// }
/// ```
open class Object: ObjectBase {}

/// An object owned by exactly one parent object: it is stored with its parent, deleted with it, and has no
/// primary key.
open class EmbeddedObject: ObjectBase {}

/// An object type that is created and then only delivered to an outbox consumer (see `Realm.create`).
open class AsymmetricObject: ObjectBase {}

extension ObjectBase: _Persistable {
    /// Links and embedded objects are stored as references to their own rows.
    public static var _propertyInfo: _PropertyInfo { _PropertyInfo(type: .object, objectType: self) }
    /// Links must be optional; a non-optional link has no default.
    public static func _defaultValue() -> Self {
        // An embedded object persisted through a CustomPersistable type has a default: a new, unmanaged object.
        guard self is EmbeddedObject.Type else {
            fatalError("a link to \(self) must be declared optional (`\(self)?`)")
        }
        return self.init()
    }
    /// See ``_Persistable``.
    public static func _fromStored(_ stored: _StoredValue) -> Self? {
        if case .object(let object) = stored { return object as? Self }
        return nil
    }
    /// See ``_Persistable``.
    public var _stored: _StoredValue { .object(self) }
}

/// An object of any stored class, read and written by property name: `object["name"]`, or as a member
/// (`object.name`, as in the Realm SDK). Returned by `Realm.dynamicObjects(_:)`; links read as `DynamicObject`s of
/// their target class.
///
/// ```swift
/// for dog in realm.dynamicObjects("Dog") {
///     print(dog["name"] as? String ?? "", dog.age as? Int ?? 0)
/// }
/// ```
@dynamicMemberLookup
public final class DynamicObject: Object {
    /// The property `member`, as ``ObjectBase/subscript(_:)`` reads and writes it: `dog.name` is `dog["name"]`.
    public subscript(dynamicMember member: String) -> Any? {
        get { self[member] }
        set { self[member] = newValue }
    }

    /// The stored class this object belongs to ("DynamicObject" while unmanaged).
    public var className: String { managed?.table.className ?? "DynamicObject" }

    /// The key that identifies this object among the objects of its class in the file; nil while unmanaged.
    ///
    /// Keys come from a counter of the class that never goes backwards, so they follow insertion order and a
    /// deleted object's key is not handed to another object. They name objects of classes without a primary
    /// key, as `strata dump` does for links to such objects:
    ///
    /// ```swift
    /// for visit in realm.dynamicObjects("Visit") {
    ///     print(visit.objectKey ?? 0, visit["note"] as? String ?? "")
    /// }
    /// ```
    public var objectKey: Int64? { managed?.key }
}

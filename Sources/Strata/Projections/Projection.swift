import Foundation

/// What every class projection is. ``Projection`` conforms; do not conform other types.
///
/// Projections are queryable (`realm.objects(PersonProjection.self)`), observable
/// (``observe(keyPaths:_:)-([String]?,_)``, ``changes``), and can be frozen and moved between isolation domains like
/// objects.
public protocol ProjectionObservable: AnyObject, ThreadConfined, RealmCollectionValue {
    /// The model class the projection reads from.
    associatedtype Root: ObjectBase
    /// A projection of `object`.
    init(projecting object: Root)
    /// The object the projection reads from (see ``Projection/rootObject``).
    var _projectionRoot: Root { get }
}

/// A view model over one object: the properties declared with ``Projected`` read from (and, inside a write
/// transaction, write to) the root object, renamed, reached through links and embedded objects, or mapped
/// from a collection of objects to a collection of values.
///
/// ```swift
/// class PersonProjection: Projection<Person> {
///     @Projected(\Person.firstName) var firstName                  // passthrough
///     @Projected(\Person.address?.city) var homeCity               // rename, through an embedded object
///     @Projected(\Person.friends.projectTo.firstName) var firstFriendsName: ProjectedCollection<String>
/// }
///
/// let people = realm.objects(PersonProjection.self).where { $0.homeCity == "Lisbon" }
/// for await change in people.first!.changes { … }   // only projected properties count as changes
/// ```
///
/// A projection is live like its root object: it reads the Realm's current version. Properties of the root that
/// are not projected are excluded: changes to them do not notify the projection's observers.
open class Projection<Root: ObjectBase>: ProjectionObservable, CustomStringConvertible, Hashable {
    /// The object this projection reads from and writes to.
    @usableFromInline let root: Root

    /// A projection of `object` (managed or not).
    public required init(projecting object: Root) { root = object }

    /// The object the projection reads from; nil once it was deleted.
    public var rootObject: Root? { root.isInvalidated ? nil : root }

    /// See ``ProjectionObservable``.
    public var _projectionRoot: Root { root }

    /// The Realm of the root object; nil while it is unmanaged.
    public var realm: Realm? { root.realm }

    /// Whether the root object was deleted.
    public var isInvalidated: Bool { root.isInvalidated }

    /// Whether the projection reads a frozen snapshot.
    public var isFrozen: Bool { root.isFrozen }

    /// A projection of the frozen root object: readable from any thread, pinned to the version its Realm reads
    /// now (wrap it in ``Frozen`` to hand it to another task). Traps while the root is unmanaged.
    public func freeze() -> Self { Self(projecting: root.freeze()) }

    /// A live projection in a Realm of the calling isolation (actor or thread); nil if the root was deleted. A
    /// live projection is returned as it is.
    public func thaw(_isolation: isolated (any Actor)? = #isolation) -> Self? {
        guard isFrozen else { return self }
        return root.thaw(_isolation: _isolation).map { Self(projecting: $0) }
    }

    /// The projected properties and their values, by the names the projection gives them.
    public var description: String {
        let lines = ProjectionSchema.declared(in: self).map { property in
            "\t\(property.name) = \(describeProjected(property.access.value(in: root)))"
        }
        return "\(Self.self) {\n\(lines.joined(separator: "\n"))\n}"
    }

    /// Projections of the same object are equal.
    public static func == (lhs: Projection<Root>, rhs: Projection<Root>) -> Bool {
        lhs.root.isSameObject(as: rhs.root)
    }

    /// Hashes the root object's identity.
    public func hash(into hasher: inout Hasher) {
        if let managed = root.managed {
            hasher.combine(managed.table.className)
            hasher.combine(managed.key)
        } else {
            hasher.combine(ObjectIdentifier(root))
        }
    }

    // MARK: _Persistable: a projection is stored as a link to its root object.

    /// See ``_Persistable``: a link to the root object's class.
    public static var _propertyInfo: _PropertyInfo { _PropertyInfo(type: .object, objectType: Root.self) }
    /// See ``_Persistable``: projections have no default value.
    public static func _defaultValue() -> Self {
        fatalError("\(Self.self) has no default value: declare a link to a projection optional")
    }
    /// See ``_Persistable``: a projection of the stored object.
    public static func _fromStored(_ stored: _StoredValue) -> Self? {
        guard case .object(let object) = stored, let root = object as? Root else { return nil }
        return Self(projecting: root)
    }
    /// See ``_Persistable``: the root object.
    public var _stored: _StoredValue { .object(root) }
    /// See ``RealmCollectionValue``: a projection of `object`.
    public static func _fromObject(_ object: consuming ObjectBase) -> Self? {
        guard let root = object as? Root else { return nil }
        return Self(projecting: root)
    }
}

extension Projection: RealmRebindable {
    func rebound(to realm: Realm) -> Self? { root.rebound(to: realm).map { Self(projecting: $0) } }
}

/// A property of a ``Projection``: reads the root object at `keyPath` and, inside a write transaction, writes
/// there.
///
/// ```swift
/// @Projected(\Person.firstName) var name                 // renamed
/// @Projected(\Person.address?.city) var homeCity         // through an embedded object or link (nil when absent)
/// @Projected(\Person.friends.projectTo.firstName) var friendNames: ProjectedCollection<String>
/// ```
///
/// Setting a property whose key path goes through an optional link writes to the linked object; it traps when
/// the link is nil. ``ProjectedCollection``s are read-only: change the underlying list instead.
@propertyWrapper
public struct Projected<T: ObjectBase, Value> {
    /// Where the value is read on the root object.
    @usableFromInline let keyPath: KeyPath<T, Value>

    /// A property that reads `keyPath` on the root object.
    @inlinable
    public init(_ keyPath: KeyPath<T, Value>) { self.keyPath = keyPath }

    /// Not available: `@Projected` works only inside `Projection` subclasses.
    @available(*, unavailable, message: "@Projected can only be used on properties of Projection subclasses")
    public var wrappedValue: Value {
        get { fatalError("@Projected can only be used inside Projection subclasses") }
        // swift-format-ignore
        set { fatalError("@Projected can only be used inside Projection subclasses") }
    }

    /// Reads go to the root object at the projected key path; writes too.
    @inlinable
    public static subscript<EnclosingSelf: Projection<T>>(
        _enclosingInstance projection: EnclosingSelf,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<EnclosingSelf, Value>,
        storage storageKeyPath: ReferenceWritableKeyPath<EnclosingSelf, Self>
    ) -> Value {
        get {
            let keyPath = projection[keyPath: storageKeyPath].keyPath
            // A persisted property of the root is read straight from its row (the reader is found once per Realm
            // and key path); other key paths go through Swift's key-path machinery.
            if let managed = projection.root.managed, let reader = managed.projectedReader(keyPath) {
                return reader._withUnsafeGuaranteedRef {
                    unsafeDowncast($0, to: ProjectedReader<Value>.self).read(managed)
                }
            }
            return projection.root[keyPath: keyPath]
        }
        set { write(newValue, keyPath: projection[keyPath: storageKeyPath].keyPath, projection: projection) }
    }

    /// Sets the root object's property at `keyPath`.
    @usableFromInline
    static func write(_ value: Value, keyPath: KeyPath<T, Value>, projection: Projection<T>) {
        if let writable = keyPath as? ReferenceWritableKeyPath<T, Value> {
            projection.root[keyPath: writable] = value
        } else {
            writeThroughLinks(value, keyPath: keyPath, projection: projection)
        }
    }

    /// Sets the property at the end of a key path through optional links (`\Person.address?.city`).
    private static func writeThroughLinks(_ value: Value, keyPath: KeyPath<T, Value>, projection: Projection<T>) {
        let what = "\(type(of: projection)): \(keyPath)"
        guard let realm = projection.root.realm else {
            fatalError("\(what) cannot be set on an unmanaged object: set the root object's properties instead")
        }
        if value is any RealmCollection {
            fatalError("\(what) is a read-only collection: change the underlying collection instead")
        }
        let path: [String]
        do {
            path = try realm.propertyPath(of: keyPath, query: what)
        } catch {
            fatalError("\(error)")
        }
        var object: ObjectBase = projection.root
        for (position, name) in path.dropLast().enumerated() {
            guard let next = object[name] as? ObjectBase else {
                // Like every invalid mutation of a managed object: the write transaction fails and rolls back.
                let error = Realm.Error.invalidValue(
                    type: "\(type(of: projection))", property: "\(keyPath)",
                    reason: "cannot be set: \(T.self).\(path[...position].joined(separator: ".")) is nil")
                guard realm.transactionForMutation("setting \(what)") != nil else { fatalError("\(error)") }
                realm.fail(error)
                return
            }
            object = next
        }
        object[path[path.count - 1]] = flattenedOptional(value)
    }
}

/// Reads one persisted property of a managed object, for ``Projected`` properties that project one.
@usableFromInline
final class ProjectedReader<Value> {
    @usableFromInline let read: (ManagedObject) -> Value

    init(_ read: @escaping (ManagedObject) -> Value) { self.read = read }

    /// A reader of property `column` as `Value`; specialised for the common stored types so that a read costs
    /// what the model's own accessor costs.
    static func make(column: Int) -> AnyObject? {
        func reader<V: _Persistable>(_ type: V.Type) -> AnyObject {
            ProjectedReader<V> { $0.read(column: column, as: V.self) }
        }
        // Spelled out per type: each closure is compiled for its concrete type (no generic metadata per read).
        switch Value.self {
        case is Int.Type: return ProjectedReader<Int> { $0.read(column: column, as: Int.self) }
        case is Double.Type: return ProjectedReader<Double> { $0.read(column: column, as: Double.self) }
        case is String.Type: return ProjectedReader<String> { $0.read(column: column, as: String.self) }
        case is Bool.Type: return ProjectedReader<Bool> { $0.read(column: column, as: Bool.self) }
        case is Date.Type: return ProjectedReader<Date> { $0.read(column: column, as: Date.self) }
        case is Float.Type: return ProjectedReader<Float> { $0.read(column: column, as: Float.self) }
        case is Int64.Type: return ProjectedReader<Int64> { $0.read(column: column, as: Int64.self) }
        case is Int32.Type: return ProjectedReader<Int32> { $0.read(column: column, as: Int32.self) }
        case is Data.Type: return ProjectedReader<Data> { $0.read(column: column, as: Data.self) }
        case is UUID.Type: return ProjectedReader<UUID> { $0.read(column: column, as: UUID.self) }
        case is ObjectId.Type: return ProjectedReader<ObjectId> { $0.read(column: column, as: ObjectId.self) }
        case is Decimal128.Type: return ProjectedReader<Decimal128> { $0.read(column: column, as: Decimal128.self) }
        case is Int?.Type: return ProjectedReader<Int?> { $0.read(column: column, as: Int?.self) }
        case is Double?.Type: return ProjectedReader<Double?> { $0.read(column: column, as: Double?.self) }
        case is String?.Type: return ProjectedReader<String?> { $0.read(column: column, as: String?.self) }
        case is Bool?.Type: return ProjectedReader<Bool?> { $0.read(column: column, as: Bool?.self) }
        case is Date?.Type: return ProjectedReader<Date?> { $0.read(column: column, as: Date?.self) }
        default:
            guard let persistable = Value.self as? any _Persistable.Type else { return nil }
            return reader(persistable)
        }
    }
}

/// A ``Projected`` property seen without its types.
protocol AnyProjected {
    /// The value at the projected key path of `root`.
    func value(in root: ObjectBase) -> Any
    /// The projected key path.
    var anyKeyPath: AnyKeyPath { get }
}

extension Projected: AnyProjected {
    func value(in root: ObjectBase) -> Any {
        guard let root = root as? T else { fatalError("\(type(of: root)) is not \(T.self)") }
        return root[keyPath: keyPath]
    }

    var anyKeyPath: AnyKeyPath { keyPath }
}

/// How `description` shows a projected value.
private func describeProjected(_ value: Any) -> String {
    guard let value = flattenedOptional(value) else { return "nil" }
    if let string = value as? String { return "\"\(string)\"" }
    if let collection = value as? any RealmCollection {
        return "[\(projectedElements(collection).map(describeProjected).joined(separator: ", "))]"
    }
    return "\(value)"
}

/// The elements of `collection`, as values.
func projectedElements(_ collection: any RealmCollection) -> [Any] {
    func elements<C: RealmCollection>(_ collection: C) -> [Any] { collection.map { $0 as Any } }
    return elements(collection)
}

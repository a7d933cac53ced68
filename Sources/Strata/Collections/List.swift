public import Foundation

/// Type-erased operations on a collection (`List`, `MutableSet`), for dynamic access, `init(value:)` and
/// writing a new object's collections.
protocol AnyRealmList: AnyObject {
    /// Replaces the elements with `elements`, converted to the element type.
    func replaceAll(with elements: [Any], type: String, property: String) throws(Realm.Error)
    /// The elements in their stored form.
    var storedElements: [_StoredValue] { get }
    /// The elements for dynamic access.
    var anyElements: [Any] { get }
}

/// Creates the managed collection accessor for a property (its element type is only known statically).
protocol ManagedCollectionFactory {
    static func managedCollection(owner: ManagedObject, property: Int) -> Any
}

/// A collection type held by reference (`List`, `MutableSet`, `Map`). Its schema keeps the type, so that the
/// owner's accessor makes the managed collection and hands it out without a dynamic cast or a bridge to `AnyObject`
/// on each access (see `ManagedObject.collection(property:as:)`): a collection property read in a loop
/// (`bag.settings[key]`) makes one each time, since the owner keeps it only weakly.
protocol ManagedReferenceCollection: AnyObject {
    static func managedReference(owner: ManagedObject, property: Int) -> AnyObject
}

/// A `List`, `MutableSet` or `Map` that an unmanaged object holds, which `add` turns into the managed collection
/// of the new object (as the SDK does), so that a reference taken before `add` keeps working.
protocol AdoptableCollection: AnyObject {
    /// Becomes the live view of property `property` of `owner`; false (and unchanged) if already managed.
    func adopt(owner: ManagedObject, property: Int) -> Bool
}

/// `List`, `MutableSet` and `Map`: how they are persisted. Part of the machinery behind ``_Persistable``; not for
/// direct use.
public protocol _PersistedCollection: _Persistable, AnyObject {
    /// An empty, unmanaged collection.
    init()
    /// Which collection the type is.
    static var _collectionKind: _CollectionKind { get }
    /// How one element (a map's value) is stored.
    static var _elementPropertyInfo: _PropertyInfo { get }
}

extension _PersistedCollection {
    /// See ``_Persistable``: the element's stored type, in a collection.
    public static var _propertyInfo: _PropertyInfo {
        var info = _elementPropertyInfo
        info.collection = _collectionKind
        return info
    }
    /// See ``_Persistable``: an empty unmanaged collection.
    public static func _defaultValue() -> Self { Self() }
    /// See ``_Persistable``.
    public static func _fromStored(_ stored: _StoredValue) -> Self? {
        if case .collection(let collection) = stored { return collection as? Self }
        return nil
    }
    /// See ``_Persistable``.
    public var _stored: _StoredValue { .collection(self) }
    /// See ``_Persistable``: a collection, read without its owner's row.
    @inlinable
    public static var _isReferenceCollection: Bool { true }
}

/// Where a `List`, `MutableSet` or `Map` keeps its contents: in memory while unmanaged, in its owner's trees once
/// managed.
enum CollectionBacking<Stored> {
    case unmanaged([Stored])
    case managed(ManagedObject, property: Int)

    /// The owning object and property while managed.
    var managedSource: (owner: ManagedObject, property: Int)? {
        if case .managed(let owner, let property) = self { return (owner, property) }
        return nil
    }
}

/// An ordered collection of values or objects, stored with its owning object.
///
/// ```swift
/// class Person: Object {
///     @Persisted var dogs: List<Dog>
///     @Persisted var nicknames: List<String>
/// }
/// try realm.write { person.dogs.append(rex) }
/// ```
/// An unmanaged list holds its elements in memory. The list of a managed object is a live view of the stored
/// elements: positional reads, inserts and removals cost O(log n) (a counted B+tree). Mutating a managed list
/// outside a write transaction traps; an invalid element fails the write transaction.
public final class List<Element: RealmCollectionValue>: RandomAccessCollection, MutableCollection {
    private var backing: CollectionBacking<Element>
    /// While unmanaged: the registrar of the trackings that read the list (see `CollectionObservation`).
    private var observation: CollectionObservation?

    /// Registers a read of the unmanaged list with a running `withObservationTracking`.
    private func observeUnmanagedRead() {
        if let observation {
            observation.access()
        } else if let registrar = unmanagedTrackingRegistrar() {
            let observation = CollectionObservation(registrar: registrar, contents: nil)
            self.observation = observation
            observation.access()
        }
    }

    /// The owning object and property while managed; nil while unmanaged.
    var managedSource: (owner: ManagedObject, property: Int)? { backing.managedSource }

    /// An empty, unmanaged list.
    public init() { backing = .unmanaged([]) }

    /// For a list or dictionary nested in a mixed value: its id in the property's nested-collection tree (0
    /// for a property's own collection), and its nesting level.
    var nested: UInt64 = 0
    var level = 0

    init(owner: ManagedObject, property: Int, nested: UInt64 = 0, level: Int = 0) {
        backing = .managed(owner, property: property)
        self.nested = nested
        self.level = level
    }

    /// Whether `other` is a view of the same stored collection.
    func isSameStoredCollection(as other: List<Element>) -> Bool {
        ManagedObject.sameCollection(managedSource, nested, other.managedSource, other.nested)
    }

    // MARK: Collection

    /// 0.
    public var startIndex: Int { 0 }
    /// The number of elements.
    public var endIndex: Int { count }

    /// The number of elements.
    public var count: Int {
        switch backing {
        case .unmanaged(let elements):
            observeUnmanagedRead()
            return elements.count
        case .managed(let owner, let property):
            owner.observeCollectionRead(property: property, nested: nested)
            return owner.realm.collectionCount(owner, property: property, nested: nested)
        }
    }

    /// The element at `position`; setting it replaces the element (inside a write transaction when managed).
    public subscript(position: Int) -> Element {
        get {
            switch backing {
            case .unmanaged(let elements):
                observeUnmanagedRead()
                CollectionIndex.check(position, count: elements.count, in: "List<\(Element.self)>")
                return elements[position]
            case .managed(let owner, let property):
                owner.observeCollectionRead(property: property, nested: nested)
                CollectionIndex.check(
                    position, count: owner.realm.collectionCount(owner, property: property, nested: nested),
                    in: owner.realm.collectionName(owner, property))
                let stored = owner.realm.collectionElement(
                    owner, property: property, nested: nested, level: level, at: position)
                guard let element = Element._fromStored(stored) else {
                    return owner.realm.unreadableElement(stored, of: owner, property: property, as: Element.self)
                }
                return element
            }
        }
        set { replace(index: position, object: newValue) }
    }

    /// Iterates over the elements; a managed collection reads them all with one cursor when iteration starts.
    public func makeIterator() -> IndexingIterator<[Element]> {
        switch backing {
        case .unmanaged(let elements):
            observeUnmanagedRead()
            return elements.makeIterator()
        case .managed(let owner, let property):
            owner.observeCollectionRead(property: property, nested: nested)
            return owner.realm.collectionElements(
                owner, property: property, nested: nested, level: level, as: Element.self
            ).makeIterator()
        }
    }

    /// The Realm of the owning object; nil while unmanaged.
    public var realm: Realm? {
        if case .managed(let owner, _) = backing { return owner.realm }
        return nil
    }

    /// Whether the owning object was deleted.
    public var isInvalidated: Bool {
        if case .managed(let owner, _) = backing { return !owner.exists }
        return false
    }

    // MARK: Mutation

    /// Adds `element` at the end.
    public func append(_ element: Element) {
        switch backing {
        case .unmanaged: insert(element, at: count)
        case .managed(let owner, let property):
            // Counted inside the write, once: `insert(at: count)` would count the list twice.
            owner.realm.listInsert(owner, property: property, nested: nested, level: level, element._stored, at: nil)
        }
    }

    /// Adds every element of `elements` at the end, in order.
    public func append<S: Sequence>(objectsIn elements: S) where S.Element == Element {
        for element in elements { append(element) }
    }

    /// Inserts `element` at `index` (0...count). An index outside that range fails the write transaction (see
    /// ``remove(at:)``).
    public func insert(_ element: Element, at index: Int) {
        switch backing {
        case .unmanaged(var elements):
            CollectionIndex.checkInsertion(index, count: elements.count, in: "List<\(Element.self)>")
            backing = .unmanaged([])
            elements.insert(element, at: index)
            backing = .unmanaged(elements)
            observation?.changed()
        case .managed(let owner, let property):
            owner.realm.listInsert(owner, property: property, nested: nested, level: level, element._stored, at: index)
        }
    }

    /// Removes the element at `index`.
    ///
    /// An index outside the list (`0..<count`) is the Realm SDK's range error: inside a write transaction it
    /// fails the transaction, which `write` rolls back and reports as
    /// ``RealmError/invalidValue(type:property:reason:)`` ("Person.dogs: index 999 is out of bounds (must be less than
    /// 3)"); on an unmanaged list it stops the process with that message, as `Array` does. The same holds for every
    /// positional mutation of a list.
    public func remove(at index: Int) {
        switch backing {
        case .unmanaged(var elements):
            CollectionIndex.check(index, count: elements.count, in: "List<\(Element.self)>")
            backing = .unmanaged([])
            elements.remove(at: index)
            backing = .unmanaged(elements)
            observation?.changed()
        case .managed(let owner, let property):
            owner.realm.listRemove(owner, property: property, nested: nested, at: index)
        }
    }

    /// Removes every element.
    public func removeAll() {
        switch backing {
        case .unmanaged:
            backing = .unmanaged([])
            observation?.changed()
        case .managed(let owner, let property): owner.realm.listRemoveAll(owner, property: property, nested: nested)
        }
    }

    /// Replaces the element at `index` with `object`.
    public func replace(index: Int, object: Element) {
        switch backing {
        case .unmanaged(var elements):
            CollectionIndex.check(index, count: elements.count, in: "List<\(Element.self)>")
            backing = .unmanaged([])
            elements[index] = object
            backing = .unmanaged(elements)
            observation?.changed()
        case .managed(let owner, let property):
            owner.realm.listReplace(
                owner, property: property, nested: nested, level: level, at: index, with: object._stored)
        }
    }

    /// Moves the element at `from` so that it ends up at index `to`.
    public func move(from: Int, to: Int) {
        if case .managed(let owner, let property) = backing {
            owner.realm.listMove(owner, property: property, nested: nested, from: from, to: to)
            return
        }
        CollectionIndex.check(from, count: count, in: "List<\(Element.self)>")
        CollectionIndex.check(to, count: count, in: "List<\(Element.self)>")
        guard from != to else { return }
        let element = self[from]
        remove(at: from)
        insert(element, at: to)
    }

    /// Exchanges the elements at `i` and `j`.
    public func swapAt(_ i: Int, _ j: Int) {
        if case .managed(let owner, let property) = backing {
            owner.realm.listSwap(owner, property: property, nested: nested, i, j)
            return
        }
        CollectionIndex.check(i, count: count, in: "List<\(Element.self)>")
        CollectionIndex.check(j, count: count, in: "List<\(Element.self)>")
        guard i != j else { return }
        let first = self[i]
        let second = self[j]
        replace(index: i, object: second)
        replace(index: j, object: first)
    }

    /// The index of the first element equal to `element` (for objects: the same stored object), or nil.
    public func index(of element: Element) -> Int? {
        let target = element._stored
        return indices.first { ListElements.equal(self[$0]._stored, target) }
    }

    /// The elements at `indexes`, in order, as the SDK's `objects(at:)`. An index out of range traps naming the list,
    /// the index and the count.
    public func objects(at indexes: IndexSet) -> [Element] { indexes.map { self[$0] } }
}

/// `List` and `MutableSet` share how their elements are listed and converted.
protocol ElementCollection: AnyRealmList, Sequence where Element: _Persistable {}

extension ElementCollection {
    var storedElements: [_StoredValue] { map(\._stored) }
    var anyElements: [Any] { map { StoredValueConversion.any(from: $0._stored) ?? Optional<Any>.none as Any } }
}

/// Converts loosely typed elements (from arrays given by name) to a collection's element type.
enum CollectionElements {
    static func convert<Element: _Persistable>(_ element: Any, type: String, property: String) throws(Realm.Error)
        -> Element
    {
        if let typed = element as? Element { return typed }
        if let stored = StoredValueConversion.stored(from: element, as: Element._propertyInfo),
            let typed = Element._fromStored(stored)
        {
            return typed
        }
        throw .invalidValue(
            type: type, property: property, reason: "\(Swift.type(of: element)) is not a \(Element.self)")
    }

    /// Each of `elements` converted (see ``convert(_:type:property:)``); throws at the first that cannot be.
    static func convert<Element: _Persistable>(_ elements: [Any], type: String, property: String)
        throws(Realm.Error) -> [Element]
    {
        var converted: [Element] = []
        converted.reserveCapacity(elements.count)
        for element in elements { converted.append(try convert(element, type: type, property: property)) }
        return converted
    }
}

extension List: ElementCollection {
    func replaceAll(with elements: [Any], type: String, property: String) throws(Realm.Error) {
        let converted: [Element] = try CollectionElements.convert(elements, type: type, property: property)
        removeAll()
        append(objectsIn: converted)
    }
}

extension List: ManagedCollectionFactory, ManagedReferenceCollection, AdoptableCollection {
    static func managedCollection(owner: ManagedObject, property: Int) -> Any {
        List(owner: owner, property: property)
    }

    static func managedReference(owner: ManagedObject, property: Int) -> AnyObject {
        List(owner: owner, property: property)
    }

    func adopt(owner: ManagedObject, property: Int) -> Bool {
        guard case .unmanaged = backing else { return false }
        backing = .managed(owner, property: property)
        return true
    }
}

extension List: _PersistedCollection {
    /// See ``_PersistedCollection``: a list of the element type.
    public static var _collectionKind: _CollectionKind { .list }
    /// See ``_PersistedCollection``. A custom type persisted as an embedded object describes itself as an optional
    /// link (a property of that type may hold none); as a list element it is always there.
    public static var _elementPropertyInfo: _PropertyInfo {
        var info = Element._propertyInfo
        if info.type == .object, info.isOptional, !(Element.self is any _QueryOptional.Type),
            !(Element.self is ObjectBase.Type)
        {
            info.isOptional = false
        }
        return info
    }
}

extension List: Encodable where Element: Encodable {
    /// Encodes the elements as an array.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.unkeyedContainer()
        for element in self {
            // Objects nest: links that form a cycle throw instead (see `EncodingCycles`).
            try EncodingCycles.nest(element, at: container.codingPath + [EncodingCycles.Position(container.count)]) {
                try container.encode(element)
            }
        }
    }
}

extension List: Decodable where Element: Decodable {
    /// An unmanaged list of the decoded elements.
    public convenience init(from decoder: any Decoder) throws {
        self.init()
        var container = try decoder.unkeyedContainer()
        while !container.isAtEnd { append(try container.decode(Element.self)) }
    }
}

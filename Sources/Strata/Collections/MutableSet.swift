/// A collection of distinct values or objects, stored with its owning object.
///
/// ```swift
/// class Person: Object {
///     @Persisted var citiesVisited: MutableSet<String>
/// }
/// try realm.write { person.citiesVisited.insert("Oslo") }
/// ```
/// Elements are distinct by value (objects: by identity of the stored object). A managed set is a live view whose
/// elements come in a stable order (by their stored encoding); `contains`, `insert` and `remove` cost O(log n).
/// Floating-point zeros are one element (-0.0 == 0.0); Decimal128 elements are distinct by their exact encoding.
public final class MutableSet<Element: RealmCollectionValue>: RandomAccessCollection {
    private var backing: CollectionBacking<Element>

    /// The owning object and property while managed; nil while unmanaged.
    var managedSource: (owner: ManagedObject, property: Int)? { backing.managedSource }

    /// An empty, unmanaged set.
    public init() { backing = .unmanaged([]) }

    init(owner: ManagedObject, property: Int) { backing = .managed(owner, property: property) }

    /// 0.
    public var startIndex: Int { 0 }
    /// The number of elements.
    public var endIndex: Int { count }

    /// The number of elements.
    public var count: Int {
        switch backing {
        case .unmanaged(let elements): return elements.count
        case .managed(let owner, let property):
            owner.observeCollectionRead(property: property, nested: 0)
            return owner.realm.collectionCount(owner, property: property)
        }
    }

    /// The element at `position` in the set's order.
    public subscript(position: Int) -> Element {
        switch backing {
        case .unmanaged(let elements):
            CollectionIndex.check(position, count: elements.count, in: "MutableSet<\(Element.self)>")
            return elements[position]
        case .managed(let owner, let property):
            owner.observeCollectionRead(property: property, nested: 0)
            CollectionIndex.check(
                position, count: owner.realm.collectionCount(owner, property: property),
                in: owner.realm.collectionName(owner, property))
            let stored = owner.realm.collectionElement(owner, property: property, at: position)
            guard let element = Element._fromStored(stored) else {
                return owner.realm.unreadableElement(stored, of: owner, property: property, as: Element.self)
            }
            return element
        }
    }

    /// Iterates over the elements; a managed collection reads them all with one cursor when iteration starts.
    public func makeIterator() -> IndexingIterator<[Element]> {
        switch backing {
        case .unmanaged(let elements): return elements.makeIterator()
        case .managed(let owner, let property):
            owner.observeCollectionRead(property: property, nested: 0)
            return owner.realm.collectionElements(owner, property: property, as: Element.self).makeIterator()
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

    /// Whether `element` is in the set.
    public func contains(_ element: Element) -> Bool {
        switch backing {
        case .unmanaged(let elements):
            let target = element._stored
            return elements.contains { ListElements.equal($0._stored, target) }
        case .managed(let owner, let property):
            owner.observeCollectionRead(property: property, nested: 0)
            return owner.realm.setContains(owner, property: property, element._stored)
        }
    }

    /// Adds `element` unless it is already present.
    public func insert(_ element: Element) {
        switch backing {
        case .unmanaged(var elements):
            guard !contains(element) else { return }
            backing = .unmanaged([])
            elements.append(element)
            backing = .unmanaged(elements)
        case .managed(let owner, let property):
            owner.realm.setInsert(owner, property: property, element._stored)
        }
    }

    /// Adds every element of `elements`.
    public func insert<S: Sequence>(objectsIn elements: S) where S.Element == Element {
        for element in elements { insert(element) }
    }

    /// Removes `element` if present.
    public func remove(_ element: Element) {
        switch backing {
        case .unmanaged(var elements):
            let target = element._stored
            backing = .unmanaged([])
            elements.removeAll { ListElements.equal($0._stored, target) }
            backing = .unmanaged(elements)
        case .managed(let owner, let property):
            owner.realm.setRemove(owner, property: property, element._stored)
        }
    }

    /// Removes every element.
    public func removeAll() {
        switch backing {
        case .unmanaged: backing = .unmanaged([])
        case .managed(let owner, let property): owner.realm.setRemoveAll(owner, property: property)
        }
    }

    /// Adds the elements of `other`.
    public func formUnion<S: Sequence>(_ other: S) where S.Element == Element { insert(objectsIn: other) }

    /// Keeps only the elements that are also in `other`.
    public func formIntersection<S: Sequence>(_ other: S) where S.Element == Element {
        let keep = Array(other).map(\._stored)
        for element in Array(self) where !keep.contains(where: { ListElements.equal($0, element._stored) }) {
            remove(element)
        }
    }

    /// Removes the elements of `other`.
    public func subtract<S: Sequence>(_ other: S) where S.Element == Element {
        for element in other { remove(element) }
    }

    /// Whether every element is in `other`.
    public func isSubset<S: Sequence>(of other: S) -> Bool where S.Element == Element {
        let others = Array(other).map(\._stored)
        return allSatisfy { element in others.contains { ListElements.equal($0, element._stored) } }
    }

    /// Whether the set shares an element with `other`.
    public func intersects<S: Sequence>(_ other: S) -> Bool where S.Element == Element {
        other.contains { contains($0) }
    }
}

extension MutableSet: ElementCollection {
    func replaceAll(with elements: [Any], type: String, property: String) throws(Realm.Error) {
        let converted: [Element] = try CollectionElements.convert(elements, type: type, property: property)
        removeAll()
        insert(objectsIn: converted)
    }
}

extension MutableSet: ManagedCollectionFactory, ManagedReferenceCollection, AdoptableCollection {
    static func managedCollection(owner: ManagedObject, property: Int) -> Any {
        MutableSet(owner: owner, property: property)
    }

    static func managedReference(owner: ManagedObject, property: Int) -> AnyObject {
        MutableSet(owner: owner, property: property)
    }

    func adopt(owner: ManagedObject, property: Int) -> Bool {
        guard case .unmanaged = backing else { return false }
        backing = .managed(owner, property: property)
        return true
    }
}

extension MutableSet: _PersistedCollection {
    /// See ``_PersistedCollection``: a set of the element type.
    public static var _collectionKind: _CollectionKind { .set }
    /// See ``_PersistedCollection``.
    public static var _elementPropertyInfo: _PropertyInfo { Element._propertyInfo }
}

extension MutableSet: Encodable where Element: Encodable {
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

extension MutableSet: Decodable where Element: Decodable {
    /// An unmanaged set of the decoded elements.
    public convenience init(from decoder: any Decoder) throws {
        self.init()
        var container = try decoder.unkeyedContainer()
        while !container.isAtEnd { insert(try container.decode(Element.self)) }
    }
}

/// Marks `LinkingObjects`, the only value type `@Persisted(originProperty:)` accepts. Not for other types.
public protocol _LinkingObjectsMarker {}

/// The objects that link to an object through one property: the inverse of a relationship, kept up to date by
/// the Realm.
///
/// ```swift
/// class Person: Object {
///     @Persisted var dogs: List<Dog>
/// }
/// class Dog: Object {
///     @Persisted(originProperty: "dogs") var owners: LinkingObjects<Person>
/// }
/// ```
/// The origin property may be a to-one link, or a `List`, `MutableSet` or `Map` of links. The origin type may
/// be an `EmbeddedObject`, as in the SDK: the target then lists the embedded objects that link to it, wherever
/// they are embedded (directly in a parent, in a list or in a map of embedded objects).
///
/// ```swift
/// class Address: EmbeddedObject {
///     @Persisted var city: City?
/// }
/// class City: Object {
///     @Persisted(originProperty: "city") var addresses: LinkingObjects<Address>
/// }
/// ```
/// An origin object appears once per link it holds (a list holding the same dog twice lists its person twice),
/// in the order the origin objects were created. Linking objects are computed: they cannot be set, and an
/// unmanaged object has none.
public struct LinkingObjects<Element: ObjectBase>: RandomAccessCollection, _LinkingObjectsMarker {
    /// The managed object whose backlinks these are and the `LinkingObjects` property; nil while unmanaged.
    let source: LinkingSource

    init(source: LinkingSource) { self.source = source }

    /// Unmanaged, empty linking objects of `type` through `property` (the Realm Swift SDK's older declaration
    /// style; prefer `@Persisted(originProperty:)`).
    public init(fromType type: Element.Type, property: String) { source = LinkingSource(owner: nil, property: -1) }

    /// 0.
    public var startIndex: Int { 0 }
    /// The number of links to the object.
    public var endIndex: Int { count }

    /// The number of links to the object through the origin property.
    public var count: Int {
        guard let owner = source.owner else { return 0 }
        owner.observeLinkingRead(property: source.property)
        return owner.realm.backlinkCount(owner, property: source.property)
    }

    /// The origin object at `position`. Reads the object's backlinks up to that point (a prefix scan): to visit
    /// every origin, iterate instead, which reads them once.
    public subscript(position: Int) -> Element {
        let keys = originKeys
        CollectionIndex.check(position, count: keys.count, in: "LinkingObjects<\(Element.self)>")
        return object(forKey: keys[position])
    }

    /// Iterates over the origin objects linking to the object when iteration starts.
    public func makeIterator() -> IndexingIterator<[Element]> {
        originKeys.map(object(forKey:)).makeIterator()
    }

    /// The Realm of the object; nil while unmanaged.
    public var realm: Realm? { source.owner?.realm }

    /// Whether the object was deleted.
    public var isInvalidated: Bool { source.owner.map { !$0.exists } ?? false }

    /// The index of `object` among the origin objects (its first link), or nil.
    public func index(of object: Element) -> Int? {
        guard let managed = object.managed, managed.realm === source.owner?.realm else { return nil }
        return originKeys.firstIndex(of: managed.key)
    }

    private var originKeys: [Int64] {
        guard let owner = source.owner else { return [] }
        owner.observeLinkingRead(property: source.property)
        return owner.realm.backlinkKeys(owner, property: source.property)
    }

    private func object(forKey key: Int64) -> Element {
        guard let owner = source.owner else { fatalError("unmanaged LinkingObjects have no elements") }
        do {
            let realm = owner.realm
            let binding = try realm.binding(for: Element.self)
            guard let element = realm.object(binding, key: key) as? Element else {
                fatalError("LinkingObjects: stored object \(key) is not a \(Element.self)")
            }
            return element
        } catch {
            fatalError("LinkingObjects<\(Element.self)>: \(error)")
        }
    }
}

/// Where `LinkingObjects` read from: a managed object's property, or nothing (unmanaged).
final class LinkingSource {
    let owner: ManagedObject?
    let property: Int

    init(owner: ManagedObject?, property: Int) {
        self.owner = owner
        self.property = property
    }
}

extension LinkingObjects: ManagedCollectionFactory {
    static func managedCollection(owner: ManagedObject, property: Int) -> Any {
        LinkingObjects(source: LinkingSource(owner: owner, property: property))
    }
}

extension LinkingObjects: _Persistable {
    /// See ``_Persistable``: backlinks from `Element`.
    public static var _propertyInfo: _PropertyInfo { _PropertyInfo(type: .linkingObjects, objectType: Element.self) }
    /// See ``_Persistable``: unmanaged linking objects (always empty).
    public static func _defaultValue() -> LinkingObjects {
        LinkingObjects(source: LinkingSource(owner: nil, property: -1))
    }
    /// See ``_Persistable``.
    public static func _fromStored(_ stored: _StoredValue) -> LinkingObjects? {
        switch stored {
        case .collection(let source as LinkingSource): LinkingObjects(source: source)
        case .null: _defaultValue()
        default: nil
        }
    }
    /// See ``_Persistable``.
    public var _stored: _StoredValue { .collection(source) }
}

extension LinkingObjects: Encodable where Element: Encodable {
    /// Encodes the origin objects as an array.
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

extension LinkingObjects: Decodable {
    /// Linking objects are computed: whatever was encoded, the decoded (unmanaged) object has none.
    public init(from decoder: any Decoder) throws { self = Self._defaultValue() }
}

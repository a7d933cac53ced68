import Foundation

/// What every Realm collection is: `Results`, `List`, `MutableSet`, `LinkingObjects`, `ResultsSection` and
/// `AnyRealmCollection`. Write generic code against it:
///
/// ```swift
/// func describe<C: RealmCollection>(_ collection: C) -> String {
///     "\(collection.count) objects in \(collection.realm?.configuration.fileURL?.lastPathComponent ?? "memory")"
/// }
/// ```
///
/// Every collection is ``ThreadConfined`` (`freeze()`, `thaw()`, `isFrozen`, `ThreadSafeReference(to:)`), and has
/// `index(of:)`, `objects(at:)` and `observe(keyPaths:_:)`. Collections of objects also share the query operations
/// (`filter`, `where`, `sorted`, `distinct`, aggregates, `index(matching:)`, `sectioned`), in generic code too:
///
/// ```swift
/// func oldest<C: RealmCollection>(_ dogs: C) -> Int? where C.Element == Dog { dogs.max(ofProperty: "age") }
/// ```
public protocol RealmCollection<Element>: RandomAccessCollection, ThreadConfined, Equatable, CustomStringConvertible
where Index == Int, Element: RealmCollectionValue {
    /// The Realm the collection belongs to; nil while unmanaged.
    var realm: Realm? { get }
    /// Whether the collection can no longer be read (its owning object was deleted).
    var isInvalidated: Bool { get }
}

extension Results: RealmCollection {
    /// Always false: results stay readable while their Realm is open.
    public var isInvalidated: Bool { false }
}
extension List: RealmCollection {}
extension MutableSet: RealmCollection {}
extension LinkingObjects: RealmCollection {}

/// A type-erased Realm collection: any `Results`, `List`, `MutableSet`, `LinkingObjects` or `ResultsSection`
/// behind one type, live like the collection it wraps.
///
/// ```swift
/// let dogs: AnyRealmCollection<Dog> = person.dogs.isEmpty
///     ? AnyRealmCollection(realm.objects(Dog.self)) : AnyRealmCollection(person.dogs)
/// let puppies = dogs.filter("age < 1")
/// ```
public struct AnyRealmCollection<Element: RealmCollectionValue>: RealmCollection {
    let base: any RealmCollection<Element>

    /// Wraps `base`.
    public init<C: RealmCollection>(_ base: C) where C.Element == Element {
        if let erased = base as? AnyRealmCollection<Element> {
            self.base = erased.base
        } else {
            self.base = base
        }
    }

    /// 0.
    public var startIndex: Int { 0 }
    /// The number of elements.
    public var endIndex: Int { base.count }
    /// The number of elements.
    public var count: Int { base.count }
    /// The element at `position`.
    public subscript(position: Int) -> Element { Self.element(of: base, at: position) }
    /// The Realm of the wrapped collection.
    public var realm: Realm? { base.realm }
    /// Whether the wrapped collection can no longer be read.
    public var isInvalidated: Bool { base.isInvalidated }

    private static func element<C: RealmCollection<Element>>(of collection: C, at position: Int) -> Element {
        collection[collection.index(collection.startIndex, offsetBy: position)]
    }
}

extension AnyRealmCollection: _ObjectCollectionQueries where Element: ObjectBase {
    /// See ``_ObjectCollectionQueries``.
    public func _queryResults() -> Results<Element> {
        if let results = base as? Results<Element> { return results }
        func results<Q: _ObjectCollectionQueries>(_ collection: Q) -> Any { collection._queryResults() }
        guard let queryable = base as? any _ObjectCollectionQueries,
            let found = results(queryable) as? Results<Element>
        else {
            fatalError("\(type(of: base)) cannot be queried")
        }
        return found
    }
}

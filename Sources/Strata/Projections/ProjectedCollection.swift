/// A list or set of objects seen as the values of one property of each object: what
/// `\Person.friends.projectTo.firstName` projects. Live: it reads the underlying collection in the Realm's current
/// version, so inserts, removes and moves show at once; observable like other collections (a change to the
/// projected property of an element is a modification). Setting an element sets the projected property of the
/// underlying object; add, remove and move elements on the underlying collection.
///
/// ```swift
/// class PersonProjection: Projection<Person> {
///     @Projected(\Person.friends.projectTo.firstName) var friendNames: ProjectedCollection<String>
/// }
/// let names = Array(projection.friendNames)             // ["Ana", "Rui"]
/// let token = projection.friendNames.observe { change in … }
/// ```
public final class ProjectedCollection<Element: RealmCollectionValue>: RealmCollection, CustomStringConvertible {
    let source: ProjectedSource<Element>

    init(source: ProjectedSource<Element>) { self.source = source }

    /// 0.
    public var startIndex: Int { 0 }
    /// The number of elements.
    public var endIndex: Int { source.count }
    /// The number of elements.
    public var count: Int { source.count }
    /// The projected value of the element at `position`; setting it sets that property of the underlying
    /// object (inside a write transaction, as any change of a managed object).
    ///
    /// ```swift
    /// try realm.write { projection.friendNames[0] = "Ana" }   // person.friends[0].firstName = "Ana"
    /// ```
    public subscript(position: Int) -> Element {
        get { source.element(at: position) }
        set { source.setElement(newValue, at: position) }
    }

    /// The Realm of the underlying collection; nil while it is unmanaged.
    public var realm: Realm? { source.realm }
    /// Whether the object owning the underlying collection was deleted.
    public var isInvalidated: Bool { source.isInvalidated }

    /// The values, in order.
    public var description: String { "ProjectedCollection<\(Element.self)>(\(Array(self)))" }
}

extension ProjectedCollection: ThreadConfined, RealmRebindable {
    /// Whether the collection reads a frozen snapshot.
    public var isFrozen: Bool { realm?.frozen ?? false }

    /// The collection as its Realm reads it now, frozen: readable from any thread. Traps while unmanaged.
    public func freeze() -> ProjectedCollection { ProjectedCollection(source: source.frozen()) }

    /// The live collection in a Realm of the calling isolation; nil if its owning object was deleted.
    public func thaw(_isolation: isolated (any Actor)? = #isolation) -> ProjectedCollection? {
        guard let realm, realm.frozen else { return self }
        do {
            return rebound(to: try Realm.live(for: realm.configuration, isolation: _isolation))
        } catch {
            // A file found damaged (see `Realm.damage`) has nothing to thaw into: nil, as for a deleted owner.
            return realm.survive(error, "thaw(): \(error)", returning: nil)
        }
    }

    func rebound(to realm: Realm) -> ProjectedCollection? {
        source.rebound(to: realm).map { ProjectedCollection(source: $0) }
    }
}

extension ProjectedCollection: ObservableRealmCollection {
    /// Observes the underlying collection with the projected property as the key path: inserts, removes and moves
    /// of elements, and changes to the projected property of an element (other properties are excluded).
    func makeObserver<C>(as collection: C, paths: [[String]]?) -> CollectionObserver<C> {
        source.makeObserver(as: collection)
    }
}

/// The underlying collection of a ``ProjectedCollection`` and the key path it projects, behind one type.
class ProjectedSource<Element> {
    var count: Int { fatalError("abstract") }
    func element(at position: Int) -> Element { fatalError("abstract") }
    func setElement(_ value: Element, at position: Int) { fatalError("abstract") }
    var realm: Realm? { fatalError("abstract") }
    var isInvalidated: Bool { fatalError("abstract") }
    func frozen() -> ProjectedSource<Element> { fatalError("abstract") }
    func rebound(to realm: Realm) -> ProjectedSource<Element>? { fatalError("abstract") }
    func makeObserver<C>(as collection: C) -> CollectionObserver<C> { fatalError("abstract") }
}

/// A ``ProjectedSource`` over a `List` or `MutableSet` of objects.
final class ProjectedElements<
    Base: RealmCollection & ThreadConfined & RealmRebindable & ObservableRealmCollection, Element
>:
    ProjectedSource<Element>
where Base.Element: ObjectBase {
    let base: Base
    let keyPath: KeyPath<Base.Element, Element>

    init(base: Base, keyPath: KeyPath<Base.Element, Element>) {
        self.base = base
        self.keyPath = keyPath
    }

    override var count: Int { base.count }
    override func element(at position: Int) -> Element { base[position][keyPath: keyPath] }

    override func setElement(_ value: Element, at position: Int) {
        let object = base[position]
        if let writable = keyPath as? ReferenceWritableKeyPath<Base.Element, Element> {
            object[keyPath: writable] = value
            return
        }
        // A path through links (`\.address?.city`): set the property at its end, by name.
        guard let realm = base.realm else {
            fatalError("ProjectedCollection(\(keyPath)): a read-only key path on an unmanaged collection")
        }
        do {
            let path = try realm.propertyPath(of: keyPath, query: "ProjectedCollection(\(keyPath))")
            var target: ObjectBase = object
            for name in path.dropLast() {
                guard let next = target[name] as? ObjectBase else {
                    fatalError("ProjectedCollection(\(keyPath))[\(position)]: \(name) is nil, nothing to set")
                }
                target = next
            }
            target[path[path.count - 1]] = flattenedOptional(value)
        } catch {
            fatalError("\(error)")
        }
    }
    override var realm: Realm? { base.realm }
    override var isInvalidated: Bool { base.isInvalidated }
    override func frozen() -> ProjectedSource<Element> { ProjectedElements(base: base.freeze(), keyPath: keyPath) }

    override func rebound(to realm: Realm) -> ProjectedSource<Element>? {
        base.rebound(to: realm).map { ProjectedElements(base: $0, keyPath: keyPath) }
    }

    override func makeObserver<C>(as collection: C) -> CollectionObserver<C> {
        guard let realm = base.realm else { fatalError("observe: unmanaged collections cannot be observed") }
        let path: [String]
        do {
            path = try realm.propertyPath(of: keyPath, query: "observe: ProjectedCollection(\(keyPath))")
        } catch {
            fatalError("\(error)")
        }
        return base.makeObserver(as: collection, paths: [path])
    }
}

/// Maps each object of a list or set to one of its properties (`person.friends.projectTo.firstName`), for
/// ``Projected`` collection properties.
@dynamicMemberLookup
public struct ElementMapper<Element: ObjectBase> {
    private enum Base {
        case list(List<Element>)
        case set(MutableSet<Element>)
    }

    private let base: Base

    init(_ list: List<Element>) { base = .list(list) }
    init(_ set: MutableSet<Element>) { base = .set(set) }

    /// The collection of each element's value at `keyPath`.
    public subscript<V: RealmCollectionValue>(dynamicMember keyPath: KeyPath<Element, V>) -> ProjectedCollection<V> {
        switch base {
        case .list(let list):
            record(keyPath, owner: list.managedSource?.owner)
            return ProjectedCollection(source: ProjectedElements(base: list, keyPath: keyPath))
        case .set(let set):
            record(keyPath, owner: set.managedSource?.owner)
            return ProjectedCollection(source: ProjectedElements(base: set, keyPath: keyPath))
        }
    }

    /// When `owner` records a key path (a projection's schema is being read), reads `keyPath` on a recording
    /// element so that the path continues into the elements.
    private func record<V>(_ keyPath: KeyPath<Element, V>, owner: ManagedObject?) {
        guard let owner, let recorder = owner.recorder, let binding = try? owner.realm.binding(for: Element.self),
            let element = owner.realm.recordingAccessor(binding, recorder: recorder) as? Element
        else { return }
        _ = element[keyPath: keyPath]
    }
}

extension List where Element: ObjectBase {
    /// The list's objects mapped to one of their properties: `list.projectTo.name` is a ``ProjectedCollection``
    /// of names (used in ``Projected`` key paths).
    public var projectTo: ElementMapper<Element> { ElementMapper(self) }
}

extension MutableSet where Element: ObjectBase {
    /// The set's objects mapped to one of their properties: `set.projectTo.name` is a ``ProjectedCollection``
    /// of names (used in ``Projected`` key paths).
    public var projectTo: ElementMapper<Element> { ElementMapper(self) }
}

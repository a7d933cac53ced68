import Observation
import Synchronization

// How collections take part in Swift Observation: reading `count`, an element or iterating a managed `Results`,
// `List`, `MutableSet`, `Map` or `LinkingObjects` inside `withObservationTracking` registers "the collection's
// contents".
//
// Collections are values or short-lived accessors (`person.dogs` makes a new `List` each time, `Results` is a
// struct), so the registrar cannot live in them. It lives in a `CollectionObservation` that the Realm's
// `ObservationTracker` keeps per collection identity (the query, or the owning object's property), made only
// when the read finds a running tracking with the same probe objects use (`Realm.observationTrackingRuns`).
// The observation remembers what the collection held (object keys, stored values) without holding the Realm
// (the Realm holds it: a strong reference back would keep every Realm with a tracked collection open), and when
// the Realm advances it compares: a different content (or, for `Results`, a modified matching object) fires.
// A tracking fires once, so a fired observation is dropped; one whose tracking ended through another change
// stays until its collection changes or its Realm is invalidated.

/// Which stored collection a tracked read was of: equal for every accessor of the same collection.
enum ObservedCollection: Hashable {
    /// Results of `element` type over `binding`'s class, narrowed by `query` (nil: every object).
    case results(element: ObjectIdentifier, binding: ObjectIdentifier, query: ObjectIdentifier?)
    /// The list, set, map or linking objects of property `property` of object `key` of `binding`'s class.
    case property(binding: ObjectIdentifier, key: Int64, property: Int)
}

/// What a tracked collection held when it was read, and whether a later version of its Realm changed it.
/// Holds no Realm: it is handed the one it belongs to.
protocol CollectionContents: AnyObject {
    /// Whether `realm`, now at a newer version (`changes`: what differs since the last check), holds other
    /// contents; the current contents become the ones compared next time.
    func changed(in realm: Realm, changes: VersionChanges) -> Bool
}

/// The registrar trackings of one collection register with, and what the collection held.
final class CollectionObservation: Observable {
    let registrar: ObservationRegistrar
    /// Nil for an unmanaged collection, which reports its own mutations.
    let contents: (any CollectionContents)?
    /// What changed since the observation last compared the contents, and whether the Realm advanced since.
    var pending = VersionChanges()
    var advanced = false

    init(registrar: ObservationRegistrar = ObservationRegistrar(), contents: (any CollectionContents)?) {
        self.registrar = registrar
        self.contents = contents
    }

    /// The one property a tracking reads: the collection's contents.
    var observedContents: Int { 0 }

    /// Registers a read of the contents with the running tracking (nothing when none runs).
    func access() { registrar.access(self, keyPath: \.observedContents) }

    /// Tells the trackings of the contents that they changed.
    func changed() { registrar.withMutation(of: self, keyPath: \.observedContents) {} }
}

extension Realm {
    /// The spare registrar, when a `withObservationTracking` runs on this thread (it just recorded the spare's
    /// probe); nil otherwise, and always for a frozen Realm. One call into the Observation library when no
    /// tracking runs.
    func observationTrackingRuns() -> ObservationSpare? {
        guard !frozen else { return nil }
        let spare: ObservationSpare
        if let existing = observationSpare {
            spare = existing
        } else {
            spare = ObservationSpare()
            observationSpare = spare
        }
        return spare.detectsTracking() ? spare : nil
    }

    /// Registers a read of collection `identity` with the running tracking, if one runs; `contents` says what
    /// the collection holds now (called only under tracking; nil: the collection cannot be tracked).
    @inline(__always)
    func observeCollectionRead(
        _ identity: @autoclosure () -> ObservedCollection, contents: () -> (any CollectionContents)?
    ) {
        guard let spare = observationTrackingRuns() else { return }
        observationTracker.collectionRead(identity(), spare: spare, contents: contents)
    }
}

extension ObservationTracker {
    /// The observation of `identity` (made from `spare` with `contents` if it has none yet) registers the read.
    func collectionRead(
        _ identity: ObservedCollection, spare: ObservationSpare, contents: () -> (any CollectionContents)?
    ) {
        if let existing = collections[identity] {
            existing.access()
            return
        }
        guard let contents = contents() else { return }
        // The tracking just registered the probe with the spare: the spare becomes this collection's registrar.
        let observation = CollectionObservation(registrar: spare.registrar, contents: contents)
        realm.observationSpare = ObservationSpare()
        collections[identity] = observation
        registerWithRealm()
        observation.access()
    }
}

// MARK: What each collection holds

/// The object keys of a `Results`, in order: another order, another object, or a modified matching object
/// (a change `observe` would report) changes it.
final class ResultsContents<Element: RealmCollectionValue>: CollectionContents {
    private let binding: TableBinding
    private let query: ResultsQuery?
    /// The properties whose changes count as modifications (projections: the projected ones); nil for all.
    private let paths: [[String]]?
    private let isObjects: Bool
    private var keys: [Int64]

    init(_ results: Results<Element>) {
        binding = results.binding
        query = results.query
        isObjects = Element.self is ObjectBase.Type || Element.self is any ProjectionObservable.Type
        if let projection = Element.self as? any ProjectionObservable.Type {
            paths = results.owner.projectionPaths(projection, nil)
        } else {
            paths = nil
        }
        keys = results.observedKeys()
    }

    func changed(in realm: Realm, changes: VersionChanges) -> Bool {
        let now = Results<Element>(realm: realm, binding: binding, query: query).observedKeys()
        defer { keys = now }
        if now != keys { return true }
        guard isObjects, !changes.isEmpty else { return false }
        let checker = ModificationChecker(realm: realm, changes: changes, paths: paths, root: binding.className)
        return now.contains { checker.isModified(binding, $0) }
    }
}

/// The stored elements of a list or set (links as object keys), or the entries of a map: only another content
/// changes it, not a change of an object it links to (that object's own reads register it).
final class ElementContents: CollectionContents {
    private let binding: TableBinding
    private let key: Int64
    private let property: Int
    private let isMap: Bool
    private var elements: [QueryHashKey]

    init(owner: ManagedObject, property: Int, isMap: Bool) {
        binding = owner.binding
        key = owner.key
        self.property = property
        self.isMap = isMap
        elements = []
        elements = read(owner.realm)
    }

    /// The elements now; none once the owner is deleted.
    private func read(_ realm: Realm) -> [QueryHashKey] {
        do {
            if isMap {
                return try realm.queryMapEntries(binding, property: property, key: key).flatMap {
                    [QueryHashKey(.string($0.key)), QueryHashKey($0.value)]
                }
            }
            return try realm.queryCollectionValues(binding, property: property, key: key).map(QueryHashKey.init)
        } catch {
            realm.noteDamage(error)
            return []
        }
    }

    func changed(in realm: Realm, changes: VersionChanges) -> Bool {
        // The collection's trees belong to its object: a version that did not touch the object kept them.
        guard changes.unknown || changes.classes[binding.className]?.touches(key) == true else { return false }
        let now = read(realm)
        defer { elements = now }
        return now != elements
    }
}

/// The keys of the objects linking to an object through one property, one per link.
final class LinkingContents: CollectionContents {
    private let originClass: String
    private let originProperty: String
    private let target: Int64
    private var origins: [Int64]

    init?(owner: ManagedObject, property: Int) {
        let schema = owner.binding.table.schema.properties[property]
        guard let originClass = schema.objectClassName, let originProperty = schema.linkOriginPropertyName else {
            return nil
        }
        self.originClass = originClass
        self.originProperty = originProperty
        target = owner.key
        origins = []
        origins = read(owner.realm)
    }

    private func read(_ realm: Realm) -> [Int64] {
        do {
            return try realm.backlinks(originClass: originClass, originProperty: originProperty, target: target)
                .flatMap { repeatElement($0.origin, count: $0.count) }
        } catch {
            realm.noteDamage(error)
            return []
        }
    }

    func changed(in realm: Realm, changes: VersionChanges) -> Bool {
        guard changes.unknown || changes.classes[originClass] != nil else { return false }
        let now = read(realm)
        defer { origins = now }
        return now != origins
    }
}

// MARK: The reads that register

extension Results {
    /// Registers a read of these results with a running `withObservationTracking`.
    @inline(__always)
    func observeRead() {
        owner.observeCollectionRead(
            .results(
                element: ObjectIdentifier(Element.self), binding: ObjectIdentifier(binding),
                query: query.map(ObjectIdentifier.init))
        ) { ResultsContents(self) }
    }
}

extension ManagedObject {
    /// Registers a read of this object's collection property `property` (a list, set or map: `isMap`; nested
    /// collections in mixed values are not tracked) with a running `withObservationTracking`.
    @inline(__always)
    func observeCollectionRead(property: Int, nested: UInt64, isMap: Bool = false) {
        guard nested == 0 else { return }
        realm.observeCollectionRead(
            .property(binding: ObjectIdentifier(binding), key: key, property: property)
        ) { ElementContents(owner: self, property: property, isMap: isMap) }
    }

    /// Registers a read of this object's `LinkingObjects` property `property` with a running tracking.
    @inline(__always)
    func observeLinkingRead(property: Int) {
        realm.observeCollectionRead(
            .property(binding: ObjectIdentifier(binding), key: key, property: property)
        ) { LinkingContents(owner: self, property: property) }
    }
}

/// The spare registrar of unmanaged collections (which have no Realm to keep one), used from any thread.
private let unmanagedSpare = Mutex(ObservationSpare())

/// A registrar for an unmanaged collection, when a `withObservationTracking` runs on this thread (it just
/// registered with it); nil otherwise, at the cost of one call and no allocation.
func unmanagedTrackingRegistrar() -> ObservationRegistrar? {
    unmanagedSpare.withLock { spare in
        guard spare.detectsTracking() else { return nil }
        defer { spare = ObservationSpare() }
        return spare.registrar
    }
}

public import Observation
import Synchronization

// How objects take part in Swift Observation (`withObservationTracking`, SwiftUI's `@Observable` views).
//
// Every object is `Observable`. A property read registers with the object's `ObservationRegistrar` only while
// some `withObservationTracking` runs on the calling thread, which Strata cannot ask directly: the tracking
// state is private to the Observation library, and the only way to consult it is a registrar's `access`. So a
// managed object's read offers a fixed probe key path to a spare registrar its Realm keeps: only a running
// tracking records the access, and recording it hashes the probe's index (see `ObservationProbeIndex`), which
// counts. When the count moved, the spare becomes the object's registrar (the tracking just registered with it,
// so nothing is left behind in a shared registrar) and the Realm makes a new spare. Without tracking, a read
// costs one call that finds no tracking, and no allocation; objects that were never tracked carry no registrar.
//
// A tracked object's Realm keeps a weak list of them (`ObservationTracker`, one of the Realm's observers); when
// the Realm advances to a version that changed a tracked property, the tracker calls the registrar's
// `withMutation` for that property on the Realm's isolation (where it delivers its other notifications), which
// fires the tracking's `onChange`. Frozen Realms have no spare: frozen objects are never tracked.

/// The index of the probe key path: hashing it (which only a running tracking does, to record the access) counts.
struct ObservationProbeIndex: Hashable, Sendable {
    static func == (lhs: Self, rhs: Self) -> Bool { true }

    func hash(into hasher: inout Hasher) {
        observationDetections.count.add(1, ordering: .relaxed)
        hasher.combine(0)
    }
}

/// How many times a tracking recorded the probe. A class instance in a global rather than a static `Atomic`:
/// reaching a global generic value (`Atomic<Int>`) looked its type metadata up on every read.
let observationDetections = ObservationDetections()

/// The counter behind ``observationDetections``.
final class ObservationDetections: Sendable {
    let count = Atomic<Int>(0)
}

/// A Realm's spare registrar, in a class of its own: `ObservationRegistrar` is a resilient type, so holding it
/// in an optional of the Realm copied it through its value witnesses on every read; here it is used in place.
/// The spare also holds what the probe needs (the counter and the key path, which are globals), so that a read
/// reaches no global: each global's first use check (`swift_once`) cost as much as the rest of the probe's setup.
final class ObservationSpare {
    let detections = observationDetections
    let probeKeyPath = ObjectBase.observationProbeKeyPath
    let registrar = ObservationRegistrar()

    /// Whether a tracking runs on this thread: it records the probe's access, which counts.
    @inline(__always)
    func detectsTracking(of object: ObjectBase) -> Bool {
        let before = detections.count.load(ordering: .relaxed)
        registrar.access(object, keyPath: probeKeyPath)
        // Another thread's tracking may also have counted: then this object merely gets a registrar early.
        return detections.count.load(ordering: .relaxed) != before
    }

    /// Whether a tracking runs on this thread, for a read that has no object (a collection's).
    func detectsTracking() -> Bool {
        let before = observationDetections.count.load(ordering: .relaxed)
        registrar.access(collectionProbe, keyPath: CollectionProbe.keyPath)
        return observationDetections.count.load(ordering: .relaxed) != before
    }
}

/// The subject of the probe a collection's read offers (a registrar's `access` takes one; it is not kept).
final class CollectionProbe: Observable, Sendable {
    subscript(strataObservationProbe index: ObservationProbeIndex) -> Int { 0 }

    /// `\CollectionProbe.[strataObservationProbe:]`, built once. (A key path is immutable.)
    nonisolated(unsafe) static let keyPath: KeyPath<CollectionProbe, Int> =
        \CollectionProbe.[strataObservationProbe: ObservationProbeIndex()]
}

/// The one ``CollectionProbe``.
let collectionProbe = CollectionProbe()

extension ObjectBase {
    /// The probe's property: never read, never mutated; its key path only detects a running tracking.
    subscript(strataObservationProbe index: ObservationProbeIndex) -> Int { 0 }

    /// `\ObjectBase.[strataObservationProbe:]`, built once.
    /// (A key path is immutable; its index is `Sendable`.)
    nonisolated(unsafe) static let observationProbeKeyPath: KeyPath<ObjectBase, Int> =
        \ObjectBase.[
            strataObservationProbe: ObservationProbeIndex()]

    /// Whether a read of this object's properties must register with Swift Observation: the object is already
    /// tracked, or a tracking runs now on this thread (the object then gets its registrar). False for frozen
    /// objects. Not inlined: the common answer (no tracking) costs one call into the Observation library.
    ///
    /// The common case (a managed object without registrar, whose Realm has a spare) works on borrowed references:
    /// the object holds its managed state, which holds its Realm, which holds its spare until a tracking takes it,
    /// and nothing in between can release them. Retaining them cost more than the probe itself (a Realm is
    /// referenced weakly by the Realm cache, so its reference count lives in a side table, the slow path).
    @usableFromInline @inline(never)
    final func isObservationTracked() -> Bool {
        switch observationProbe() {
        case .untracked: return false
        case .probe(let spare):
            guard spare._withUnsafeGuaranteedRef({ $0.detectsTracking(of: self) }) else { return false }
            adoptSpare()
            return true
        case .other: return isObservationTrackedSlowly()
        }
    }

    /// What `isObservationTracked` does for this object, found without retaining anything.
    private enum ObservationProbe {
        /// Probe the Realm's spare.
        case probe(Unmanaged<ObservationSpare>)
        /// Never tracked (a frozen object).
        case untracked
        /// Already tracked, unmanaged, or a Realm without a spare yet.
        case other
    }

    @inline(__always)
    private func observationProbe() -> ObservationProbe {
        guard observation == nil, let managed else { return .other }
        return Unmanaged.passUnretained(managed)._withUnsafeGuaranteedRef { managed in
            Unmanaged.passUnretained(managed.realm)._withUnsafeGuaranteedRef { realm in
                if let spare = realm.observationSpare { return .probe(Unmanaged.passUnretained(spare)) }
                return realm.frozen ? .untracked : .other
            }
        }
    }

    /// A tracking just registered with the Realm's spare: it becomes this object's registrar.
    private func adoptSpare() {
        guard let realm = managed?.realm, let spare = realm.observationSpare else { return }
        let tracked = ObjectObservation(registrar: spare.registrar)
        tracked.reportedByRealm = true
        observation = tracked
        realm.observationSpare = ObservationSpare()
        realm.observationTracker.track(self)
    }

    /// `isObservationTracked` for an object already tracked, unmanaged, or of a Realm that has no spare yet.
    private func isObservationTrackedSlowly() -> Bool {
        if let observation {
            // An object tracked while unmanaged and added to a Realm since: its Realm now reports its changes.
            if let managed, !observation.reportedByRealm, !managed.realm.frozen {
                observation.reportedByRealm = true
                managed.realm.observationTracker.track(self)
            }
            return true
        }
        guard let managed else {
            // Unmanaged: reads through property accessors are not a hot path, so the registrar is made at once.
            observation = ObjectObservation()
            return true
        }
        let realm = managed.realm
        guard !realm.frozen else { return false }
        let spare = ObservationSpare()
        realm.observationSpare = spare
        guard spare.detectsTracking(of: self) else { return false }
        adoptSpare()
        return true
    }

    /// Registers a read of property `property` (its index in the schema) — or, unmanaged, of the property whose
    /// storage is `box` — with the running tracking.
    @usableFromInline
    final func observationAccess(property: Int, box: AnyObject?) {
        guard let observation else { return }
        let observed = ObservedProperty(index: property, box: box.map(ObjectIdentifier.init))
        observation.registrar.access(self, keyPath: \ObjectBase.[strataObserved: observed])
        if box == nil { observation.properties.insert(property) }
    }

    /// Sets an unmanaged property's value (`box` is its storage), telling the trackings that read it.
    @usableFromInline
    final func observedMutation(box: AnyObject, _ mutation: () -> Void) {
        guard let observation else { return mutation() }
        let observed = ObservedProperty(index: -1, box: ObjectIdentifier(box))
        observation.registrar.withMutation(of: self, keyPath: \ObjectBase.[strataObserved: observed], mutation)
    }

    /// The key path a tracking records for a property: the registrar is the object's own, so the property's
    /// index identifies it (building it costs an allocation, paid only under tracking; the property's own key
    /// path would be materialised on every read).
    subscript(strataObserved property: ObservedProperty) -> Int { 0 }

    /// Tells the trackings of property `index` that it changed.
    func reportChange(ofProperty index: Int) {
        observation?.registrar.withMutation(
            of: self, keyPath: \ObjectBase.[strataObserved: ObservedProperty(index: index, box: nil)]
        ) {}
    }
}

/// A property as Swift Observation sees it: its index in the object's schema, or its storage while unmanaged.
struct ObservedProperty: Hashable, Sendable {
    let index: Int
    let box: ObjectIdentifier?
}

/// Every model object can be observed with Swift Observation: reading a persisted property in
/// `withObservationTracking`'s `apply` closure (or in a SwiftUI view's body) registers it. For a managed object
/// the tracking's `onChange` fires once a version that changed that property (a commit of any Realm, thread or
/// process) reaches the object's Realm, on the Realm's isolation; for an unmanaged object, when the property is
/// set. Frozen objects never change, so they never fire.
///
/// ```swift
/// withObservationTracking {
///     _ = dog.name
/// } onChange: {
///     print("the dog's name changed")
/// }
/// ```
extension ObjectBase: Observable {}

/// A tracked object's registrar, and how to report a change of each property a tracking read.
@usableFromInline
final class ObjectObservation {
    let registrar: ObservationRegistrar
    /// The indices of the managed properties trackings read.
    var properties: Set<Int> = []
    /// Whether the object's Realm reports its changes (set once the object is managed and tracked).
    var reportedByRealm = false

    init(registrar: ObservationRegistrar = ObservationRegistrar()) {
        self.registrar = registrar
    }
}

/// The objects of one Realm read under Swift Observation: when the Realm advances, those whose read properties
/// changed (or that were deleted) are reported to their registrars.
final class ObservationTracker: RealmObserver {
    private struct Entry {
        weak var object: ObjectBase?
    }

    private var entries: [Entry] = []
    /// Changes to report at the next delivery, once per object and property.
    private var pending: [PendingKey: (object: ObjectBase, property: Int)] = [:]
    /// The collections read under tracking (see `CollectionObservation`).
    var collections: [ObservedCollection: CollectionObservation] = [:]
    private var registered = false
    unowned let realm: Realm

    private struct PendingKey: Hashable {
        let object: ObjectIdentifier
        let property: Int
    }

    init(realm: Realm) {
        self.realm = realm
    }

    func track(_ object: ObjectBase) {
        registerWithRealm()
        entries.removeAll { $0.object == nil }
        entries.append(Entry(object: object))
    }

    /// Becomes one of the Realm's observers (once): it learns of every version the Realm advances to.
    func registerWithRealm() {
        guard !registered else { return }
        registered = true
        realm.addObserver(self)
    }

    func advanced(_ step: VersionStep) {
        let changes = step.changes
        for observation in collections.values {
            observation.pending.merge(changes)
            observation.advanced = true
        }
        for entry in entries {
            guard let object = entry.object, let managed = object.managed, let observation = object.observation,
                !observation.properties.isEmpty
            else { continue }
            let table = managed.binding.table
            let classChanges = changes.classes[managed.binding.className]
            let id = ObjectIdentifier(object)
            if changes.unknown || classChanges?.insertedOrDeleted.contains(managed.key) == true {
                for property in observation.properties {
                    pending[PendingKey(object: id, property: property)] = (object, property)
                }
                continue
            }
            guard let names = classChanges?.modified[managed.key] else { continue }
            for name in names {
                if let index = table.propertyIndex(named: name), observation.properties.contains(index) {
                    pending[PendingKey(object: id, property: index)] = (object, index)
                }
            }
        }
    }

    func deliver() {
        // A change handler may read (and so track) again: it works on the list as it is now.
        let due = pending.values
        pending = [:]
        for (object, property) in due { object.reportChange(ofProperty: property) }
        deliverCollectionChanges()
    }

    /// Fires the trackings of the collections the Realm's new version changed. A tracking fires once, so their
    /// observations are dropped first: a change handler that tracks again makes a new one.
    private func deliverCollectionChanges() {
        var changed: [CollectionObservation] = []
        for (identity, observation) in collections where observation.advanced {
            let changes = observation.pending
            observation.pending = VersionChanges()
            observation.advanced = false
            if observation.contents?.changed(in: realm, changes: changes) == true {
                collections[identity] = nil
                changed.append(observation)
            }
        }
        for observation in changed { observation.changed() }
    }

    func end() { collections = [:] }
}

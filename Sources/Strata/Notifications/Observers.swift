import StrataStorage

/// Something told when its Realm advances to a newer version and when to deliver what it learned.
///
/// A Realm holds its observers weakly; a ``NotificationToken`` or an `AsyncSequence`'s iterator keeps each one
/// alive, so dropping either ends the observation.
protocol RealmObserver: AnyObject {
    /// The Realm moved from `old` to `new` (already its current version); `step` says which objects differ
    /// (computed once, for the first observer that asks).
    func advanced(_ step: VersionStep)
    /// Hands what was learned since the last delivery to the observer's consumer.
    func deliver()
    /// The Realm was invalidated: the observation ends.
    func end()
}

/// One advance of a Realm: the two versions, and the object changes between them, computed on first use.
final class VersionStep {
    let old: ReadTransaction
    let new: ReadTransaction
    private let schema: [String: StoredClass]
    private var computed: VersionChanges?

    /// A step from `old` to `new`; `changes`, when given, were computed for exactly these versions elsewhere
    /// (by the coordinator, off the Realm's actor).
    init(old: ReadTransaction, new: ReadTransaction, schema: [String: StoredClass], changes: VersionChanges? = nil) {
        self.old = old
        self.new = new
        self.schema = schema
        computed = changes
    }

    /// The changes between the versions. A damaged page makes every object count as possibly changed rather
    /// than hide a change.
    var changes: VersionChanges {
        if let computed { return computed }
        let changes = VersionChanges.computed(old, new, schema: schema)
        computed = changes
        return changes
    }
}

extension VersionChanges {
    /// ``between(_:_:schema:)``, with a comparison that fails reported as "anything may have changed".
    static func computed(_ old: ReadTransaction, _ new: ReadTransaction, schema: [String: StoredClass])
        -> VersionChanges
    {
        do {
            return try between(old, new, schema: schema)
        } catch {
            var unknown = VersionChanges()
            unknown.unknown = true
            return unknown
        }
    }
}

/// The observers of one Realm, held weakly.
final class ObserverList {
    private struct Entry {
        weak var observer: (any RealmObserver)?
    }

    private var entries: [Entry] = []

    func add(_ observer: any RealmObserver) {
        entries.removeAll { $0.observer == nil }
        entries.append(Entry(observer: observer))
    }

    private var live: [any RealmObserver] { entries.compactMap(\.observer) }

    /// Tells every observer that `realm` moved from `old` to `new` (`changes`: what differs, if already known).
    func advanced(from old: ReadTransaction, to new: ReadTransaction, realm: Realm, changes: VersionChanges? = nil) {
        let observers = live
        guard !observers.isEmpty else { return }
        let step = VersionStep(old: old, new: new, schema: realm.schemaClasses(), changes: changes)
        for observer in observers { observer.advanced(step) }
    }

    /// Delivers pending changes (in registration order). Observers added by a callback wait for the next round.
    func deliver() {
        for observer in live { observer.deliver() }
    }

    func invalidated() {
        for observer in live { observer.end() }
    }
}

/// An observer whose consumer is a callback (``handler``) or an `AsyncSequence` that pulls with
/// ``nextChange()`` when woken.
class ChangeObserver<Change>: RealmObserver {
    /// Called for callbacks; nil for `AsyncSequence`s.
    var handler: ((Change) -> Void)?
    let waiter = Waiter()
    let cancelled = CancelFlag()

    /// What changed since the last delivery, or nil when nothing did; the current state becomes the delivered one.
    func nextChange() -> Change? { fatalError("abstract") }

    /// Whether the observed value is gone and its last change was delivered (objects after `.deleted`).
    var isFinished: Bool { false }

    func advanced(_ step: VersionStep) {}

    func deliver() {
        guard !cancelled.isSet else { return }
        guard let handler else {
            waiter.signal()
            return
        }
        if let change = nextChange() { handler(change) }
    }

    func end() { waiter.end() }

    /// For an `AsyncSequence` on a task-confined Realm: how its `next()` refreshes the Realm after other commits.
    var taskDelivery: TaskDelivery?

    /// Suspends an `AsyncSequence`'s `next()` until there may be a change to hand out. On a task-confined Realm
    /// it first refreshes the Realm, here in its own task, when another Realm or process committed a newer
    /// version (the coordinator woke this wait).
    func waitForChange(isolation: isolated (any Actor)? = #isolation) async {
        if taskDelivery?.refreshIfBehind() == true { return }
        await waiter.wait()
    }

    /// A token that keeps this observer alive and stops its deliveries when invalidated.
    func token() -> NotificationToken {
        let cancelled = self.cancelled
        return NotificationToken(self) { cancelled.set() }
    }
}

extension Realm {
    /// Registers `observer`: it learns of every version this Realm advances to, which happens automatically
    /// after commits when the Realm lives on an actor.
    func addObserver(_ observer: any RealmObserver) {
        checkThread()
        guard !frozen else { fatalError("observe: frozen values never change") }
        observers.add(observer)
        let prepared = (observer as? any PreparingObserver)?.preparedIdentities
        let wakeup = Coordinator.for(self).observing(self, prepared: prepared)
        if let wakeup, let sequence = observer as? any TaskWokenObserver { sequence.woken(by: wakeup, realm: self) }
    }

    /// The persisted names of `keyPaths` (`\Dog.name`); traps for one that names no persisted property.
    func propertyNames(_ keyPaths: [AnyKeyPath], in context: String) -> [String] {
        do {
            return try keyPaths.map { (keyPath) throws(Realm.Error) in
                try propertyName(of: keyPath, query: "\(context)(keyPaths: \(keyPath))")
            }
        } catch {
            fatalError("\(error)")
        }
    }
}

/// An observer that an `AsyncSequence` may pull from: on a task-confined Realm, the coordinator's wakeup resumes
/// its waits.
protocol TaskWokenObserver {
    func woken(by wakeup: TaskWakeup, realm: Realm)
}

extension ChangeObserver: TaskWokenObserver {
    /// Sequences only (callbacks are delivered when the task refreshes, or when one of its sequences does).
    func woken(by wakeup: TaskWakeup, realm: Realm) {
        guard handler == nil else { return }
        taskDelivery = TaskDelivery(realm: realm, wakeup: wakeup)
        wakeup.register(waiter)
    }
}

/// An observer whose work can partly run off its Realm's actor.
protocol PreparingObserver {
    var preparedIdentities: (any AnyPreparedIdentities)? { get }
}

extension IdentityObserver: PreparingObserver {
    var preparedIdentities: (any AnyPreparedIdentities)? { prepared }
}

/// Keeps an observation alive; ``invalidate()`` (or dropping the token) ends it.
///
/// ```swift
/// let token = dogs.observe { change in
///     if case .update(_, let deletions, let insertions, let modifications) = change { … }
/// }
/// …
/// token.invalidate()
/// ```
public final class NotificationToken: @unchecked Sendable {
    private let state: Locked<(any AnyObject)?>
    private let stop: @Sendable () -> Void

    init(_ observer: any AnyObject, stop: @escaping @Sendable () -> Void) {
        state = Locked(observer)
        self.stop = stop
    }

    /// Ends the observation: its block is not called again. Safe to call more than once, from any thread.
    public func invalidate() {
        let observer = state.withLock { state -> (any AnyObject)? in
            defer { state = nil }
            return state
        }
        if observer != nil { stop() }
    }

    deinit { invalidate() }
}

/// A flag set from any thread and read on the observer's own.
final class CancelFlag: @unchecked Sendable {
    private let state = Locked(false)
    var isSet: Bool { state.withLock { $0 } }
    func set() { state.withLock { $0 = true } }
}

/// Wakes a consumer suspended in an `AsyncSequence`'s `next()`; signals and ends may come from any thread.
final class Waiter: @unchecked Sendable {
    private struct State {
        var signalled = false
        var ended = false
        var continuation: CheckedContinuation<Void, Never>?
    }

    private let state = Locked(State())

    var isEnded: Bool { state.withLock { $0.ended } }

    /// Wakes the consumer (or lets its next wait return at once).
    func signal() { resume { $0.signalled = true } }

    /// Ends the sequence: the consumer's waits return at once from now on.
    func end() { resume { $0.ended = true } }

    private func resume(after update: (inout State) -> Void) {
        let continuation = state.withLock { state -> CheckedContinuation<Void, Never>? in
            update(&state)
            defer { state.continuation = nil }
            return state.continuation
        }
        continuation?.resume()
    }

    /// Suspends until a signal (consuming it), the end, or the task's cancellation (which ends the sequence).
    func wait(isolation: isolated (any Actor)? = #isolation) async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state -> Bool in
                    if state.signalled || state.ended {
                        state.signalled = false
                        return true
                    }
                    state.continuation = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            end()
        }
        state.withLock { $0.signalled = false }
    }
}

/// Decides whether an object present before and after a change was modified: its own stored properties (or,
/// with key paths, those the paths name) and, without key paths, the objects it links to, up to four links
/// away.
struct ModificationChecker {
    let realm: Realm
    let changes: VersionChanges
    let paths: [[String]]?
    /// Whether any class other than the root's changed (links need following only then).
    private let othersChanged: Bool

    init(realm: Realm, changes: VersionChanges, paths: [[String]]?, root: String) {
        self.realm = realm
        self.changes = changes
        self.paths = paths
        othersChanged = changes.classes.keys.contains { $0 != root }
    }

    static let maximumDepth = 4

    func isModified(_ binding: TableBinding, _ key: Int64) -> Bool {
        if changes.unknown { return true }
        if let paths { return paths.contains { pathChanged(binding, key, $0[...]) } }
        if changes.classes[binding.className]?.touches(key) == true { return true }
        return othersChanged && linkedChanged(binding, key, depth: 1)
    }

    /// The properties of object `key` that changed, by persisted name, limited to the first component of the
    /// key paths when there are some (a path through a link reports the link property).
    func changedProperties(_ binding: TableBinding, _ key: Int64) -> Set<String> {
        let own =
            changes.unknown
            ? Set(binding.table.schema.properties.map(\.columnName))
            : changes.classes[binding.className]?.modified[key] ?? []
        guard let paths else { return own }
        var names: Set<String> = []
        for path in paths {
            guard let first = path.first, let index = binding.table.propertyIndex(named: first) else { continue }
            let name = binding.table.schema.properties[index].columnName
            let throughLinks = path.count > 1 || binding.table.infos[index].type == .linkingObjects
            if own.contains(name) || (throughLinks && pathChanged(binding, key, path[...])) { names.insert(name) }
        }
        return names
    }

    private func pathChanged(_ binding: TableBinding, _ key: Int64, _ path: ArraySlice<String>) -> Bool {
        guard let first = path.first, let index = binding.table.propertyIndex(named: first) else { return false }
        let name = binding.table.schema.properties[index].columnName
        if changes.classes[binding.className]?.modified[key]?.contains(name) == true { return true }
        if path.count == 1, binding.table.infos[index].type == .linkingObjects {
            return realm.backlinksGained(binding, property: index, key: key, changes: changes)
        }
        guard path.count > 1, let target = targetBinding(binding, index) else { return false }
        return linkTargets(binding, index, key).contains { target2 in
            changes.classes[target.className]?.insertedOrDeleted.contains(target2) != true
                && pathChanged(target, target2, path.dropFirst())
        }
    }

    private func linkedChanged(_ binding: TableBinding, _ key: Int64, depth: Int) -> Bool {
        guard depth <= Self.maximumDepth else { return false }
        for (index, info) in binding.table.infos.enumerated() where info.type == .object {
            guard let target = targetBinding(binding, index) else { continue }
            for linked in linkTargets(binding, index, key) {
                if changes.classes[target.className]?.touches(linked) == true { return true }
                if linkedChanged(target, linked, depth: depth + 1) { return true }
            }
        }
        return false
    }

    private func targetBinding(_ binding: TableBinding, _ index: Int) -> TableBinding? {
        if let type = binding.table.infos[index].objectType { return try? realm.binding(for: type) }
        guard let name = binding.table.schema.properties[index].objectClassName else { return nil }
        return try? realm.dynamicBinding(name)
    }

    /// The objects property `index` of object `key` links to, in the Realm's current version (for a
    /// `LinkingObjects` property: the objects linking to it).
    private func linkTargets(_ binding: TableBinding, _ index: Int, _ key: Int64) -> [Int64] {
        let info = binding.table.infos[index]
        let values: [_StoredValue]
        if info.type == .linkingObjects {
            return realm.backlinkKeys(of: binding, property: index, key: key)
        } else if info.isCollection {
            values = (try? realm.queryCollectionValues(binding, property: index, key: key)) ?? []
        } else {
            let value = try? realm.withRow(binding, key: key) { row in
                RowCodec.get(row, column: binding.columns[index], info: info)
            }
            values = value.map { [$0] } ?? []
        }
        return values.compactMap {
            switch $0 {
            case .int(let target): target
            case .object(let object): object.managed?.key
            default: nil
            }
        }
    }

    /// Traps with a message naming the type and key path when a path does not name persisted properties (through
    /// links) of `binding`'s class.
    static func validate(_ paths: [[String]], from binding: TableBinding, realm: Realm) {
        for path in paths {
            var current = binding
            for (position, name) in path.enumerated() {
                guard let index = current.table.propertyIndex(named: name) else {
                    fatalError(
                        "\(Realm.Error.invalidValue(type: current.className, property: name, reason: "key path '\(path.joined(separator: "."))' names no property of \(current.className)"))"
                    )
                }
                guard position < path.count - 1 else { break }
                let info = current.table.infos[index]
                guard info.type == .object || info.type == .linkingObjects,
                    let next = info.objectType.flatMap({ try? realm.binding(for: $0) })
                        ?? current.table.schema.properties[index].objectClassName.flatMap({
                            try? realm.dynamicBinding($0)
                        })
                else {
                    fatalError(
                        "\(Realm.Error.invalidValue(type: current.className, property: name, reason: "key path '\(path.joined(separator: "."))' continues past a property that is not a link"))"
                    )
                }
                current = next
            }
        }
    }
}

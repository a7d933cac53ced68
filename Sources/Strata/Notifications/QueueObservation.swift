public import Dispatch
import StrataStorage

/// Observation delivered on a `DispatchQueue` (the SDK's `observe(on: queue)`): the observed value travels to the
/// queue as a ``ThreadSafeReference``, is resolved there in the queue's own Realm
/// (`Realm(configuration:queue:)`), and observed in it, so every call of the block, the first
/// included, runs on the queue with values that belong to it.
enum QueueObservation {
    /// Starts observing `value` on `queue`: `observe` runs there with the resolved value and returns the token
    /// that keeps that observation; `failed` runs there instead when the value cannot be resolved (deleted since,
    /// or the file cannot be opened on the queue).
    static func start<Value: ThreadConfined>(
        _ value: Value, on queue: DispatchQueue, context: String,
        observe: @escaping (Value) -> NotificationToken, failed: @escaping ((any Error)?) -> Void
    ) -> NotificationToken {
        guard let configuration = value.realm?.configuration else {
            fatalError("\(context): unmanaged values cannot be observed")
        }
        let reference = ThreadSafeReference(to: value)
        let holder = QueueTokenHolder(queue: queue)
        // Built here, where `Value` is known, and run only on the queue.
        let resolveAndObserve = UncheckedBox { (realm: Realm) -> NotificationToken? in
            guard let resolved = realm.resolve(reference) else {
                failed(nil)
                return nil
            }
            return observe(resolved)
        }
        let fail = UncheckedBox(failed)
        queue.async {
            guard !holder.isInvalidated else { return }
            let realm: Realm
            do {
                realm = try Realm(configuration: configuration, queue: queue)
            } catch {
                fail.value(error)
                return
            }
            if let token = resolveAndObserve.value(realm) { holder.keep(token, realm: realm) }
        }
        return NotificationToken(holder) { holder.invalidate() }
    }
}

/// The token of an observation started on a queue, filled in there; invalidating it before then stops the
/// observation from starting. Its Realm is let go of on the queue.
private final class QueueTokenHolder: @unchecked Sendable {
    private struct State {
        var invalidated = false
        var token: NotificationToken?
        var realm: UncheckedBox<Realm>?
    }

    private let state = Locked(State())
    private let queue: DispatchQueue

    init(queue: DispatchQueue) { self.queue = queue }

    var isInvalidated: Bool { state.withLock { $0.invalidated } }

    /// Called on the queue with the observation's token and the queue's Realm (kept while the observation lasts).
    func keep(_ token: NotificationToken, realm: Realm) {
        let kept = state.withLock { state -> Bool in
            guard !state.invalidated else { return false }
            state.token = token
            state.realm = UncheckedBox(realm)
            return true
        }
        if !kept { token.invalidate() }
    }

    /// Ends the observation (from any thread); the queue's Realm is released on the queue.
    func invalidate() {
        let (token, realm) = state.withLock { state in
            state.invalidated = true
            defer {
                state.token = nil
                state.realm = nil
            }
            return (state.token, state.realm)
        }
        token?.invalidate()
        if let realm { queue.async { withExtendedLifetime(realm) {} } }
    }
}

extension RealmCollection where Self: ThreadConfined {
    /// ``observe(keyPaths:_:)-([String]?,_)`` calling `block` on `queue`, as the Realm SDK's `observe(keyPaths:on:_:)`
    /// does: with the collection as a Realm confined to `queue` reads it (`Realm(configuration:queue:)`,
    /// opened for it if needed), the initial call included (which happens on the queue, after `observe` returns).
    /// With `queue` nil, this is ``observe(keyPaths:_:)-([String]?,_)``. The queue must be serial.
    ///
    /// ```swift
    /// let token = realm.objects(Dog.self).observe(on: queue) { change in
    ///     if case .update(let dogs, _, let insertions, _) = change { … }   // on `queue`
    /// }
    /// ```
    public func observe(
        keyPaths: [String]? = nil, on queue: DispatchQueue?, _ block: @escaping (RealmCollectionChange<Self>) -> Void
    ) -> NotificationToken {
        guard let queue else { return observe(keyPaths: keyPaths, block) }
        return QueueObservation.start(
            self, on: queue, context: "observe(on:)",
            observe: { $0.observe(keyPaths: keyPaths, block) },
            failed: { block(.error($0 ?? Realm.Error.invalidatedObject)) })
    }
}

extension RealmCollection where Self: ThreadConfined, Element: ObjectBase {
    /// ``observe(keyPaths:on:_:)-([String]?,_,_)`` with Swift key paths (`\Dog.name`).
    public func observe(
        keyPaths: [PartialKeyPath<Element>], on queue: DispatchQueue?,
        _ block: @escaping (RealmCollectionChange<Self>) -> Void
    ) -> NotificationToken {
        guard let realm else { fatalError("observe: unmanaged collections cannot be observed") }
        return observe(keyPaths: realm.propertyNames(keyPaths, in: "observe"), on: queue, block)
    }
}

extension Map {
    /// ``observe(keyPaths:_:)-([String]?,_)`` calling `block` on `queue` (see ``RealmCollection``'s
    /// `observe(keyPaths:on:_:)`): with the map as read by the queue's Realm, the initial call included. The queue must
    /// be serial.
    public func observe(
        keyPaths: [String]? = nil, on queue: DispatchQueue?, _ block: @escaping (RealmMapChange<Map>) -> Void
    ) -> NotificationToken {
        guard let queue else { return observe(keyPaths: keyPaths, block) }
        return QueueObservation.start(
            self, on: queue, context: "observe(on:)",
            observe: { $0.observe(keyPaths: keyPaths, block) },
            failed: { block(.error($0 ?? Realm.Error.invalidatedObject)) })
    }
}

extension ThreadConfined where Self: ObjectBase {
    /// ``observe(keyPaths:_:)-([String]?,(ObjectChange<Self>)->Void)`` calling `block` on `queue`, as the Realm SDK's
    /// `observe(keyPaths:on:_:)` does: with the object as read by a Realm confined to `queue`. An object deleted
    /// before the observation starts there reports `.deleted`. The queue must be serial.
    ///
    /// ```swift
    /// let token = dog.observe(keyPaths: ["name"], on: queue) { change in
    ///     if case .change(let dog, _) = change { print(dog.name) }   // on `queue`
    /// }
    /// ```
    public func observe(
        keyPaths: [String]? = nil, on queue: DispatchQueue?, _ block: @escaping (ObjectChange<Self>) -> Void
    ) -> NotificationToken {
        guard let queue else { return observe(keyPaths: keyPaths, block) }
        return QueueObservation.start(
            self, on: queue, context: "observe(on:)",
            observe: { $0.observe(keyPaths: keyPaths, block) },
            failed: { error in block(error.map { .error($0) } ?? .deleted) })
    }

    /// ``observe(keyPaths:on:_:)-([String]?,_,_)`` with Swift key paths (`\Dog.name`).
    public func observe(
        keyPaths: [PartialKeyPath<Self>], on queue: DispatchQueue?, _ block: @escaping (ObjectChange<Self>) -> Void
    ) -> NotificationToken {
        observe(keyPaths: propertyNames(keyPaths), on: queue, block)
    }
}

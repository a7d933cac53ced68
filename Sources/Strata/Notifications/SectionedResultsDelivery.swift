public import Dispatch

// Sectioned results and their sections delivered where the caller asks, as the other collections are
// (``QueueObservation``, `observe(keyPaths:on:_:)` with an actor): the sections travel there as a
// ``ThreadSafeReference``, are found again in that queue's or actor's own Realm, and are observed in it.

extension SectionedResults {
    /// `observe(keyPaths:_:)` calling `block` on `queue`, as the Realm SDK's `observe(keyPaths:on:_:)`
    /// does: with the sections as a Realm confined to `queue` reads them (`Realm(configuration:queue:)`,
    /// opened for it if needed), the initial call included (which happens on the queue, after `observe` returns).
    /// With `queue` nil, this is `observe(keyPaths:_:)`. The queue must be serial.
    ///
    /// ```swift
    /// let token = contacts.sectioned(by: \.initial).observe(on: queue) { change in
    ///     if case .update(let sections, _, let insertions, _, _, _) = change { … }   // on `queue`
    /// }
    /// ```
    public func observe(
        keyPaths: [String]? = nil, on queue: DispatchQueue?,
        _ block: @escaping (RealmSectionedResultsChange<SectionedResults>) -> Void
    ) -> NotificationToken {
        guard let queue else { return observe(keyPaths: keyPaths, block) }
        return QueueObservation.start(
            self, on: queue, context: "observe(on:)",
            observe: { $0.observe(keyPaths: keyPaths, block) },
            failed: { block(.error($0 ?? Realm.Error.invalidatedObject)) })
    }

    /// ``observe(keyPaths:on:_:)-([String]?,_,_)`` with the properties named by key paths of the objects' class
    /// (`[\Contact.name]`).
    public func observe<T: ObjectBase>(
        keyPaths: [PartialKeyPath<T>], on queue: DispatchQueue?,
        _ block: @escaping (RealmSectionedResultsChange<SectionedResults>) -> Void
    ) -> NotificationToken {
        observe(keyPaths: sectionedPropertyNames(keyPaths, realm: realm), on: queue, block)
    }

    /// `observe(keyPaths:_:)` calling `block` on `actor` with the sections as a Realm confined to that
    /// actor reads them (opened for it if needed), as the other collections' `observe(keyPaths:on:_:)` with an
    /// actor does.
    public func observe<A: Actor>(
        keyPaths: [String]? = nil, on actor: A, _isolation: isolated (any Actor)? = #isolation,
        _ block: @Sendable @escaping (isolated A, RealmSectionedResultsChange<SectionedResults>) -> Void
    ) async -> NotificationToken {
        await ActorObservation.start(
            ThreadSafeReference(to: self), on: actor, failure: .error(Realm.Error.invalidatedObject),
            observe: { sections, deliver in sections.observe(keyPaths: keyPaths, deliver) }, block: block)
    }
}

extension ResultsSection {
    /// `observe(keyPaths:_:)` calling `block` on `queue` with the section as the queue's own Realm
    /// reads it (see ``SectionedResults``' `observe(keyPaths:on:_:)`). With `queue` nil, this is
    /// `observe(keyPaths:_:)`. The queue must be serial.
    public func observe(
        keyPaths: [String]? = nil, on queue: DispatchQueue?,
        _ block: @escaping (RealmSectionedResultsChange<ResultsSection>) -> Void
    ) -> NotificationToken {
        guard let queue else { return observe(keyPaths: keyPaths, block) }
        return QueueObservation.start(
            self, on: queue, context: "observe(on:)",
            observe: { $0.observe(keyPaths: keyPaths, block) },
            failed: { block(.error($0 ?? Realm.Error.invalidatedObject)) })
    }

    /// `observe(keyPaths:_:)` calling `block` on `actor` with the section as a Realm confined to that
    /// actor reads it (opened for it if needed).
    public func observe<A: Actor>(
        keyPaths: [String]? = nil, on actor: A, _isolation: isolated (any Actor)? = #isolation,
        _ block: @Sendable @escaping (isolated A, RealmSectionedResultsChange<ResultsSection>) -> Void
    ) async -> NotificationToken {
        await ActorObservation.start(
            ThreadSafeReference(to: self), on: actor, failure: .error(Realm.Error.invalidatedObject),
            observe: { section, deliver in section.observe(keyPaths: keyPaths, deliver) }, block: block)
    }
}

extension ResultsSection where Element: ObjectBase {
    /// ``observe(keyPaths:on:_:)-([String]?,_,_)`` with the properties named by key paths of the objects' class
    /// (declared on sections of objects, so that it is chosen over the plain collection form).
    public func observe(
        keyPaths: [PartialKeyPath<Element>], on queue: DispatchQueue?,
        _ block: @escaping (RealmSectionedResultsChange<ResultsSection>) -> Void
    ) -> NotificationToken {
        observe(keyPaths: sectionedPropertyNames(keyPaths, realm: realm), on: queue, block)
    }
}

/// The persisted names of `keyPaths` for `context` (`observe`, `changes`); traps for unmanaged sections.
func sectionedPropertyNames<T: ObjectBase>(
    _ keyPaths: [PartialKeyPath<T>], realm: Realm?, in context: String = "observe"
) -> [String] {
    guard let realm else { fatalError("\(context): unmanaged sectioned results cannot be observed") }
    return realm.propertyNames(keyPaths, in: context)
}

/// Observation delivered on an actor: the referenced value is resolved in the actor's Realm there and observed
/// with `observe`, whose changes reach `block` on the actor; `block` gets `failure` there instead when the value
/// cannot be resolved (deleted since, or the file cannot be opened there).
enum ActorObservation {
    static func start<Value: ThreadConfined, Change, A: Actor>(
        _ reference: ThreadSafeReference<Value>, on actor: A, failure: Change,
        observe: @escaping (Value, _ deliver: @escaping (Change) -> Void) -> NotificationToken,
        block: @Sendable @escaping (isolated A, Change) -> Void,
        _isolation: isolated (any Actor)? = #isolation
    ) async -> NotificationToken {
        let box = TokenBox()
        // Built here (where `Value` is known) and run on `actor`, which is the only place it touches.
        let start = UncheckedBox { (actor: A) in
            guard let configuration = reference.frozen.realm?.configuration,
                let realm = try? Realm.live(for: configuration, isolation: actor),
                let resolved = realm.resolve(reference)
            else {
                let boxed = UncheckedBox(failure)
                actor.assumeIsolated { block($0, boxed.value) }
                return
            }
            box.token = observe(resolved) { change in
                let boxed = UncheckedBox(change)
                actor.assumeIsolated { block($0, boxed.value) }
            }
        }
        await Coordinator.run(on: actor) { actor in start.value(actor) }
        return box.token ?? NotificationToken(box) {}
    }
}

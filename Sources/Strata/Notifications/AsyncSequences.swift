import StrataStorage

/// Follows a Realm's versions for ``Realm/observe(_:)`` and ``Realm/changes``.
final class VersionObserver: ChangeObserver<UInt64> {
    /// Versions advanced to and not yet delivered, oldest first.
    private var versions: [UInt64] = []

    override func advanced(_ step: VersionStep) { versions.append(step.new.version) }

    /// For callbacks: the newest version since the last delivery (one call covers them all).
    override func nextChange() -> UInt64? {
        defer { versions = [] }
        return versions.last
    }

    /// For the sequence: the oldest version not yet handed out.
    func popVersion() -> UInt64? { versions.isEmpty ? nil : versions.removeFirst() }
}

extension Realm {
    /// Calls `block` with `.didChange` each time this Realm advances to a newer version (its own commits
    /// included), where the Realm lives (see ``RealmCollection/observe(keyPaths:_:)-([String]?,_)``).
    public func observe(_ block: @escaping (Notification, Realm) -> Void) -> NotificationToken {
        let observer = VersionObserver()
        observer.handler = { [unowned self] _ in block(.didChange, self) }
        addObserver(observer)
        return observer.token()
    }

    /// Each version this Realm advances to (its own commits included), in order; no initial element. Iterate it
    /// where the Realm lives: its actor, or its task (in a task-confined Realm, a `next()` woken by another commit
    /// refreshes the Realm there). Ends when the task is cancelled or the Realm is invalidated.
    ///
    /// ```swift
    /// for await version in realm.changes { print("now at version", version) }
    /// ```
    public var changes: RealmVersions {
        let observer = VersionObserver()
        addObserver(observer)
        return RealmVersions(observer: observer)
    }
}

/// The versions a Realm advances to (see ``Realm/changes``).
public struct RealmVersions: AsyncSequence {
    /// A version number.
    public typealias Element = UInt64
    /// Never fails.
    public typealias Failure = Never

    let observer: VersionObserver

    /// Starts iterating.
    public func makeAsyncIterator() -> Iterator { Iterator(observer: observer) }

    /// Hands out versions as the Realm reaches them.
    public struct Iterator: AsyncIteratorProtocol {
        let observer: VersionObserver

        /// The next version, waiting for it; nil once the sequence ended.
        public mutating func next(isolation actor: isolated (any Actor)?) async -> UInt64? {
            while !observer.waiter.isEnded && !Task.isCancelled {
                if let version = observer.popVersion() { return version }
                await observer.waitForChange()
            }
            return nil
        }

        /// The next version (from the Realm's isolation).
        public mutating func next() async -> UInt64? { await next(isolation: nil) }
    }
}

/// The changes of a collection as an `AsyncSequence` (see ``RealmCollection/changes``): `.initial` first, then
/// one `.update` per change, coalesced when the consumer is slower than the writers.
public struct RealmCollectionChanges<Collection: RealmCollection>: AsyncSequence {
    /// A change.
    public typealias Element = RealmCollectionChange<Collection>
    /// Never fails: errors arrive as `.error`, which ends the sequence.
    public typealias Failure = Never

    let collection: Collection
    let paths: [[String]]?

    /// Starts observing.
    public func makeAsyncIterator() -> Iterator {
        Iterator(observer: collection.registeredObserver(paths: paths), collection: collection)
    }

    /// Hands out changes.
    public struct Iterator: AsyncIteratorProtocol {
        let observer: CollectionObserver<Collection>
        let collection: Collection
        var started = false

        /// The next change, waiting for one; nil once the sequence ended (task cancelled, Realm invalidated).
        public mutating func next(isolation actor: isolated (any Actor)?) async -> RealmCollectionChange<Collection>? {
            if !started {
                started = true
                return .initial(collection)
            }
            while !observer.waiter.isEnded && !Task.isCancelled {
                if let change = observer.nextChange() { return change }
                await observer.waitForChange()
            }
            return nil
        }

        /// The next change (from the Realm's isolation).
        public mutating func next() async -> RealmCollectionChange<Collection>? { await next(isolation: nil) }
    }
}

/// The changes of an object or projection as an `AsyncSequence` (see `changes` on objects and projections): no
/// initial element; ends after `.deleted`.
public struct ObjectChanges<Model>: AsyncSequence {
    /// A change.
    public typealias Element = ObjectChange<Model>
    /// Never fails.
    public typealias Failure = Never

    let observer: ChangeObserver<ObjectChange<Model>>

    /// Starts iterating (observation started when the sequence was made).
    public func makeAsyncIterator() -> Iterator { Iterator(observer: observer) }

    /// Hands out changes.
    public struct Iterator: AsyncIteratorProtocol {
        let observer: ChangeObserver<ObjectChange<Model>>

        /// The next change, waiting for one; nil once the sequence ended.
        public mutating func next(isolation actor: isolated (any Actor)?) async -> ObjectChange<Model>? {
            while !observer.isFinished && !observer.waiter.isEnded && !Task.isCancelled {
                if let change = observer.nextChange() { return change }
                await observer.waitForChange()
            }
            return nil
        }

        /// The next change (from the Realm's isolation).
        public mutating func next() async -> ObjectChange<Model>? { await next(isolation: nil) }
    }
}

/// Frozen states of a collection as an `AsyncSequence` (see ``RealmCollection/snapshots``).
public struct RealmCollectionSnapshots<Collection: RealmCollection & ThreadConfined>: AsyncSequence {
    /// A frozen state.
    public typealias Element = Frozen<Collection>
    /// Never fails.
    public typealias Failure = Never

    let changes: RealmCollectionChanges<Collection>

    /// Starts observing.
    public func makeAsyncIterator() -> Iterator { Iterator(changes: changes.makeAsyncIterator()) }

    /// Hands out one frozen state per change.
    public struct Iterator: AsyncIteratorProtocol {
        var changes: RealmCollectionChanges<Collection>.Iterator

        /// The state after the next change (the current state first); nil once the sequence ended.
        public mutating func next(isolation actor: isolated (any Actor)?) async -> Frozen<Collection>? {
            switch await changes.next(isolation: actor) {
            case .initial(let collection)?, .update(let collection, _, _, _)?: Frozen(collection)
            case .error?, nil: nil
            }
        }

        /// The next state (from the Realm's isolation).
        public mutating func next() async -> Frozen<Collection>? { await next(isolation: nil) }
    }
}

extension RealmCollection {
    /// The collection's changes as an `AsyncSequence`: `.initial` first, then an `.update` after each change
    /// (see ``observe(keyPaths:_:)-([String]?,_)`` for what counts). Iterate it where the Realm lives — its actor, or
    /// the task whose nonisolated code opened it (there a `next()` woken by another Realm's or process's commit
    /// refreshes the Realm in that task, then yields the change):
    ///
    /// ```swift
    /// for await change in realm.objects(Order.self).where({ $0.open }).changes {
    ///     if case .update(let orders, _, let insertions, _) = change { ship(insertions.map { orders[$0] }) }
    /// }
    /// ```
    ///
    /// Changes that arrive while the loop body runs are merged into one update (never dropped, never out of
    /// order). The sequence ends when the task is cancelled or the Realm is invalidated.
    public var changes: RealmCollectionChanges<Self> { RealmCollectionChanges(collection: self, paths: nil) }

    /// ``changes`` counting only changes to the properties at `keyPaths` (`"name"`, `"owner.name"`) as
    /// modifications.
    public func changes(keyPaths: [String]) -> RealmCollectionChanges<Self> {
        RealmCollectionChanges(collection: self, paths: splitKeyPaths(keyPaths))
    }
}

extension RealmCollection where Self: ThreadConfined {
    /// Frozen states of the collection: the current one first, then one after each change (coalesced like
    /// ``changes``). Each is `Sendable`: hand it to any task.
    public var snapshots: RealmCollectionSnapshots<Self> { RealmCollectionSnapshots(changes: changes) }
}

extension RealmCollection where Element: ObjectBase {
    /// ``changes(keyPaths:)-([String])`` with Swift key paths (`\Dog.name`).
    public func changes(keyPaths: [PartialKeyPath<Element>]) -> RealmCollectionChanges<Self> {
        changes(keyPaths: collectionPropertyNames(keyPaths))
    }

    /// ``observe(keyPaths:_:)-([String]?,_)`` with Swift key paths (`\Dog.name`).
    public func observe(
        keyPaths: [PartialKeyPath<Element>], _ block: @escaping (RealmCollectionChange<Self>) -> Void
    ) -> NotificationToken {
        observe(keyPaths: collectionPropertyNames(keyPaths), block)
    }

    private func collectionPropertyNames(_ keyPaths: [PartialKeyPath<Element>]) -> [String] {
        guard let realm else { fatalError("observe: unmanaged collections cannot be observed") }
        return realm.propertyNames(keyPaths, in: "observe")
    }
}

extension ThreadConfined where Self: ObjectBase {
    /// The object's changes as an `AsyncSequence` (no initial element; ends after `.deleted`). Iterate it where
    /// the Realm lives.
    public var changes: ObjectChanges<Self> { ObjectChanges(observer: registeredObserver(as: self, paths: nil)) }

    /// ``changes`` limited to the properties at `keyPaths` (or paths through links, reported as the link).
    public func changes(keyPaths: [String]) -> ObjectChanges<Self> {
        ObjectChanges(observer: registeredObserver(as: self, paths: splitKeyPaths(keyPaths)))
    }

    /// ``changes(keyPaths:)-([String])`` with Swift key paths (`\Dog.name`).
    public func changes(keyPaths: [PartialKeyPath<Self>]) -> ObjectChanges<Self> {
        changes(keyPaths: propertyNames(keyPaths))
    }
}

import StrataStorage

/// A value confined to the isolation domain (actor, task or thread) of its Realm, unless frozen: `Object`,
/// `EmbeddedObject`, `Realm`, `Results`, `List`, `MutableSet`, `Map`, `LinkingObjects` and `AnyRealmCollection`.
///
/// Move one to another isolation domain as a ``Frozen`` value (read-only, pinned to its version) or a
/// ``ThreadSafeReference`` (resolved there as a live value).
public protocol ThreadConfined {
    /// The Realm the value belongs to; nil while unmanaged.
    var realm: Realm? { get }
    /// Whether the value can no longer be read (deleted, or its owner deleted).
    var isInvalidated: Bool { get }
    /// Whether the value is a frozen snapshot.
    var isFrozen: Bool { get }
    /// An immutable snapshot of the value, pinned to the version its Realm reads now and readable from any
    /// thread (see ``Frozen`` to hand it to other tasks).
    func freeze() -> Self
}

/// A value of one of the confined types that can be moved to another Realm of the same file.
protocol RealmRebindable {
    /// The same object or collection as read by `realm` (a Realm of the same file); nil when it does not exist
    /// in `realm`'s version.
    func rebound(to realm: Realm) -> Self?
}

/// A frozen value that the compiler lets you pass between tasks and actors.
///
/// ```swift
/// let snapshot = Frozen(realm.objects(Account.self))
/// Task.detached {
///     let total = snapshot.value.sum(of: \.balance)   // the version frozen above, on any thread
/// }
/// ```
///
/// Each read of ``value`` hands out a private view of the frozen version (it shares the pinned pages, not the
/// accessor caches), so any number of tasks may read one `Frozen` at once. The version stays pinned while any
/// `Frozen` or frozen value made from it lives.
public struct Frozen<Value: ThreadConfined>: @unchecked Sendable {
    private let frozen: Value

    /// Freezes `value` (call it where the value lives; a frozen value is kept as it is).
    public init(_ value: Value) { frozen = value.isFrozen ? value : value.freeze() }

    /// The frozen value: a view of its own for the caller, readable from any thread.
    public var value: Value {
        if let realm = frozen as? Realm { return realm.frozenCopy() as? Value ?? frozen }
        guard let realm = frozen.realm, let rebindable = frozen as? any RealmRebindable else { return frozen }
        return rebindable.rebound(into: realm.frozenCopy()) as? Value ?? frozen
    }
}

extension RealmRebindable {
    /// `rebound(to:)` behind an existential.
    func rebound(into realm: Realm) -> Any? { rebound(to: realm) }
}

/// Carries a live object, collection or Realm to another isolation domain, where ``Realm/resolve(_:)`` makes it
/// live there.
///
/// ```swift
/// let reference = ThreadSafeReference(to: person)
/// await archive.store(reference)   // actor Archive { func store(_ r: ThreadSafeReference<Person>) { realm.resolve(r) … } }
/// ```
///
/// The reference pins the version it was made at until it goes away; resolving it advances the resolving Realm
/// to at least that version.
public struct ThreadSafeReference<Confined: ThreadConfined>: @unchecked Sendable {
    let frozen: Confined

    /// A reference to `value`, which must be managed.
    public init(to value: Confined) {
        guard value.realm != nil else { fatalError("ThreadSafeReference(to:): \(Confined.self) is unmanaged") }
        frozen = value.isFrozen ? value : value.freeze()
    }
}

extension Realm {
    /// The value `reference` carries, live in this Realm: nil when it was deleted since (or, for a reference to
    /// a Realm of another file, when that file cannot be opened here). Advances this Realm to the reference's
    /// version first when it is older.
    public func resolve<Confined: ThreadConfined>(_ reference: ThreadSafeReference<Confined>) -> Confined? {
        checkThread()
        if let realm = reference.frozen as? Realm {
            if realm.path == path { return self as? Confined }
            return (try? Realm.live(for: realm.configuration, isolation: ownerActor)) as? Confined
        }
        guard let source = reference.frozen.realm, source.path == path else { return nil }
        if !frozen && !isInWriteTransaction && currentSnapshot.version < source.currentSnapshot.version { refresh() }
        guard let rebindable = reference.frozen as? any RealmRebindable else { return nil }
        return rebindable.rebound(into: self) as? Confined
    }

    /// An immutable view of the version this Realm reads, readable from any thread (one at a time; use
    /// ``Frozen`` to share it between tasks). A frozen Realm is returned as it is.
    public func freeze() -> Realm {
        if frozen { return self }
        checkThread()
        return frozenCopy()
    }

    /// A live Realm of the same file for the calling isolation (its actor, or else its thread), at least as new
    /// as this one. A live Realm is returned as it is.
    public func thaw(_isolation: isolated (any Actor)? = #isolation) -> Realm {
        if !frozen { return self }
        do {
            return try Realm.live(for: configuration, isolation: _isolation)
        } catch {
            // No Realm to return: a damaged file stops the process here, saying so.
            fatalError(damage(in: error).map { "thaw(): the file is damaged: \($0)" } ?? "\(error)")
        }
    }

    /// A live Realm of `configuration`'s file for `isolation` (an actor) or else the calling task or thread: the
    /// one this process already has there (kept while in use; refreshed, so at least as new as any frozen value of
    /// this process), or a new one.
    /// In a block of a queue that has a Realm of the file open (``RealmQueue``), outside any actor, that one.
    static func live(for configuration: Configuration, isolation: (any Actor)?) throws -> Realm {
        let realm =
            try (isolation == nil ? openOnCurrentQueue(configuration) : nil)
            ?? cached(configuration, isolation: isolation)
        realm.refresh()
        return realm
    }
}

extension Realm: RealmRebindable, ThreadConfined {
    /// The Realm itself.
    public var realm: Realm? { self }

    /// Always false: a Realm stays readable (``invalidate()`` releases its version until the next read).
    public var isInvalidated: Bool { false }

    func rebound(to realm: Realm) -> Self? { realm.path == path ? realm as? Self : nil }
}

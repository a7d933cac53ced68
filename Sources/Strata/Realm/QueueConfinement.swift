public import Dispatch
import StrataStorage

/// A serial `DispatchQueue` that Realms are confined to (`Realm(configuration:queue:)`).
///
/// Dispatch has no way to ask "which queue runs me?" short of `dispatchPrecondition`, which traps. So each such
/// queue carries a marker set with `setSpecific(key:value:)`, and code asks `DispatchQueue.getSpecific(key:)`
/// whether it runs on a queue with that marker: a plain question that a wrong queue answers with another marker
/// (or none) instead of stopping the process. Blocks of a queue that targets a marked queue see that marker too,
/// which is right: they run serially with it.
final class RealmQueue: @unchecked Sendable {
    /// The queue, kept alive by its Realms (deliveries and asynchronous writes are dispatched to it).
    let queue: DispatchQueue
    /// What the queue's blocks find under ``key``; its identity is the queue's key in the instance cache.
    let marker: QueueMarker

    private init(queue: DispatchQueue, marker: QueueMarker) {
        self.queue = queue
        self.marker = marker
    }

    /// The marker's key, one for the process.
    private static let key = DispatchSpecificKey<QueueMarker>()
    /// Serialises marking, so two first uses of one queue agree on its marker; counts the queues marked. (A
    /// `Locked(())` would do, but its empty state shares its address with the mutex pointer, and ThreadSanitizer
    /// reports the exclusive access to the one as a race with reading the other.)
    private static let markedQueues = Locked(0)

    /// `queue`, marked (once per queue) so that its blocks can be recognised.
    static func marking(_ queue: DispatchQueue) -> RealmQueue {
        let marker = markedQueues.withLock { count -> QueueMarker in
            if let marker = queue.getSpecific(key: key) { return marker }
            let marker = QueueMarker()
            queue.setSpecific(key: key, value: marker)
            count += 1
            return marker
        }
        return RealmQueue(queue: queue, marker: marker)
    }

    /// The marker of the Realm queue whose block the caller runs in, if any.
    static var currentMarker: QueueMarker? { DispatchQueue.getSpecific(key: key) }

    /// Whether the caller runs in a block of this queue (or of a queue targeting it).
    var isCurrent: Bool { DispatchQueue.getSpecific(key: Self.key) === marker }

    /// Refreshes `realm` (delivering its observers' changes) in a block on the queue, unless by then the Realm
    /// is gone, mid-write (its commit delivers) or has `autorefresh` off. `done` runs first, on the queue.
    func refresh(_ realm: Realm, done: @escaping @Sendable () -> Void) {
        let target = WeakQueueRealm(realm: realm)
        queue.async {
            done()
            guard let realm = target.realm, realm.autorefresh, !realm.isInWriteTransaction else { return }
            realm.refresh()
        }
    }
}

/// The identity a marked queue carries.
final class QueueMarker: Sendable {}

/// A Realm carried to its own queue, held weakly (its users may have released it meanwhile).
private struct WeakQueueRealm: @unchecked Sendable {
    weak var realm: Realm?
}

extension Realm {
    /// The Realm of `configuration`'s file that the queue running the caller has open, if any: where `thaw()`,
    /// `resolve(_:)` of a Realm and `@ThreadSafe` find a live Realm in a queue's block.
    static func openOnCurrentQueue(_ configuration: Configuration) -> Realm? {
        guard let marker = RealmQueue.currentMarker else { return nil }
        return RealmCache.shared.realm(
            for: RealmCache.Key(path: configuration.path, isolation: .queue(ObjectIdentifier(marker))))
    }
}

extension _RealmInitializers where Self: Realm {
    /// Opens a Realm confined to the serial `queue`, as the Realm SDK's `Realm(configuration:queue:)` does: use
    /// it, and its objects and collections, only in blocks dispatched to that queue. Its observers' changes are
    /// delivered there, by a refresh dispatched to the queue after each commit of another Realm or process.
    /// The queue gets the instance it already has for the file, if any (one per file and queue).
    ///
    /// Call it in a block running on `queue`; elsewhere it throws ``RealmError/wrongThread``. The queue must be
    /// serial (Dispatch cannot tell a concurrent one apart: a concurrent queue's blocks would use the Realm at the
    /// same time). With `queue` nil it opens a Realm confined to the caller, like `init(configuration:)`.
    ///
    /// ```swift
    /// let queue = DispatchQueue(label: "ingest")
    /// queue.async {
    ///     let realm = try! Realm(configuration: configuration, queue: queue)
    ///     let token = realm.objects(Dog.self).observe { change in /* on `queue` */ }
    /// }
    /// ```
    public init(
        configuration: Realm.Configuration = .defaultConfiguration, queue: DispatchQueue?,
        _isolation: (any Actor)? = #isolation
    ) throws {
        guard let queue else {
            self = try Realm.cached(configuration, isolation: _isolation) as! Self
            return
        }
        let confined = RealmQueue.marking(queue)
        guard confined.isCurrent else { throw Realm.Error.wrongThread }
        self = try Realm.cached(configuration, isolation: nil, queue: confined) as! Self
    }
}

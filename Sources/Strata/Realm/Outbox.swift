import Foundation
import StrataStorage

extension Realm {
    /// Appends a new object of the asymmetric type `type`, with values from `value` (a dictionary by property
    /// name or an array in declared order), to the type's outbox. The object cannot be read, queried or deleted
    /// through the Realm: once the write commits, ``outbox(_:)`` delivers it.
    public func create<Element: AsymmetricObject>(_ type: Element.Type, value: Any = [String: Any]()) {
        guard transactionForMutation("create(\(type))") != nil else { return }
        do {
            let binding = try binding(for: type)
            let object = Element()
            try ObjectValues.apply(value, to: object, schema: binding.table)
            _ = try insert(object, update: .error)
        } catch {
            fail(error)
        }
    }

    /// The outbox of the asymmetric type `type`: every object created with ``create(_:value:)``
    /// and not yet acknowledged, in commit order, then each new one as its write commits.
    ///
    /// ```swift
    /// for try await delivery in realm.outbox(Reading.self) {
    ///     try await upload(delivery.object)
    ///     try await delivery.acknowledge()   // removes it from the file
    /// }
    /// ```
    ///
    /// Each object is handed to one consumer of this process: a delivery stays claimed by the iteration that
    /// received it until it is acknowledged or that iteration ends. Unacknowledged objects are delivered again to
    /// the next consumer (after the process restarts, too), so a crash between receiving and acknowledging loses
    /// nothing. The sequence ends when the consuming task is cancelled. Commits of other processes are noticed
    /// within 100 ms; claims are per process, so run one consumer of a type across processes.
    public func outbox<Element: AsymmetricObject>(_ type: Element.Type) -> Outbox<Element> {
        checkThread()
        return Outbox(configuration: configuration)
    }
}

/// The objects of an asymmetric type waiting to be consumed, as an `AsyncSequence` (see ``Realm/outbox(_:)``).
public struct Outbox<Model: AsymmetricObject>: AsyncSequence, Sendable {
    /// One delivered object.
    public typealias Element = OutboxDelivery<Model>

    let configuration: Realm.Configuration

    /// Starts a consumer.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(consumer: OutboxConsumer(configuration: configuration, className: Model.className()))
    }

    /// Hands out deliveries in commit order, waiting for new commits when the outbox is empty.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let consumer: OutboxConsumer

        /// The next delivery; nil once the task is cancelled.
        public mutating func next() async throws -> OutboxDelivery<Model>? {
            while !Task.isCancelled {
                let seen = CommitSignal.shared.count(for: consumer.scope)
                if let delivery: OutboxDelivery<Model> = try consumer.fetch() { return delivery }
                await CommitSignal.shared.wait(for: consumer.scope, after: seen, timeout: .milliseconds(100))
            }
            return nil
        }
    }
}

/// An object delivered by an ``Outbox``: an unmanaged copy of the stored object (embedded objects and
/// collections included), which Strata never touches again. Acknowledge it once it is handled, before the
/// iteration that received it ends: objects an ended iteration did not acknowledge go to the next consumer.
public final class OutboxDelivery<Model: AsymmetricObject>: @unchecked Sendable {
    /// The delivered object's values.
    public let object: Model
    /// The object's place in commit order (increasing within its type).
    public let sequenceNumber: Int64
    let configuration: Realm.Configuration
    let scope: String

    init(object: Model, sequenceNumber: Int64, consumer: OutboxConsumer) {
        self.object = object
        self.sequenceNumber = sequenceNumber
        configuration = consumer.configuration
        scope = consumer.scope
    }

    /// Removes the object from the file: it will not be delivered again. Waits for the write lock on a
    /// thread of its own, never blocking the caller's. Acknowledging twice does nothing more.
    public func acknowledge() async throws {
        try await Self.acknowledge([self])
    }

    /// Removes every object of `deliveries` from the file in one write transaction.
    ///
    /// A task cancelled before the write starts (at the call, or while waiting for the write lock) gets
    /// `CancellationError` and removes nothing: the deliveries stay claimed and can be acknowledged again.
    public static func acknowledge(_ deliveries: [OutboxDelivery<Model>]) async throws {
        guard let first = deliveries.first else { return }
        try Task.checkCancellation()
        let configuration = first.configuration
        let keys = deliveries.map(\.sequenceNumber)
        let cancelled = CancelFlag()
        try await withTaskCancellationHandler {
            try await BlockingWork.run { () throws in
                let realm = try Realm(configuration: configuration)
                let binding = try realm.binding(for: Model.self)
                try realm.write {
                    // The lock was granted: a cancellation that came while waiting for it abandons the write.
                    if cancelled.isSet { throw CancellationError() }
                    for key in keys { try realm.tables.remove(binding: binding, key: key) }
                }
            }
        } onCancel: {
            cancelled.set()
        }
        for delivery in deliveries { OutboxClaims.shared.release(delivery.sequenceNumber, in: delivery.scope) }
    }
}

/// One iteration over an outbox: which objects it holds claimed, released when it goes away.
final class OutboxConsumer: @unchecked Sendable {
    let configuration: Realm.Configuration
    let className: String
    /// The file and class: claims and commit signals are per scope.
    let scope: String

    init(configuration: Realm.Configuration, className: String) {
        self.configuration = configuration
        self.className = className
        scope = configuration.path + "\u{0}" + className
    }

    deinit {
        // Whatever this consumer received and did not acknowledge goes to the next one.
        if OutboxClaims.shared.releaseAll(of: ObjectIdentifier(self), in: scope) {
            CommitSignal.shared.post(scope)
        }
    }

    /// The oldest unclaimed object of the outbox, claimed and copied; nil when there is none.
    func fetch<Model: AsymmetricObject>() throws -> OutboxDelivery<Model>? {
        let realm = try Realm(configuration: configuration)
        guard realm.isStored(className) else { return nil }
        let binding = try realm.binding(for: Model.self)
        while let key = try claimFirst(realm, binding) {
            // Claims are released only after the acknowledging commit: a snapshot taken after the claim no longer
            // has an object acknowledged meanwhile, which the older snapshot that found it still had.
            realm.refresh()
            guard try realm.withRow(binding, key: key, { _ in true }) == true else {
                OutboxClaims.shared.release(key, in: scope)
                continue
            }
            do {
                guard let copy = try Self.detachedCopy(realm.object(binding, key: key)) as? Model else {
                    throw Realm.Error.invalidValue(type: className, property: "", reason: "not a \(Model.self)")
                }
                return OutboxDelivery(object: copy, sequenceNumber: key, consumer: self)
            } catch {
                OutboxClaims.shared.release(key, in: scope)
                throw error
            }
        }
        return nil
    }

    /// Claims the first object of the outbox no consumer holds, in key (commit) order.
    private func claimFirst(_ realm: Realm, _ binding: TableBinding) throws -> Int64? {
        guard var cursor = realm.rowCursor(binding) else { return nil }
        var more = try cursor.first()
        while more {
            let key = try cursor.withKey { KeyEncoding.decodeObjectKey($0) }
            if OutboxClaims.shared.claim(key, in: scope, by: ObjectIdentifier(self)) { return key }
            more = try cursor.next()
        }
        return nil
    }

    /// An unmanaged copy of `object` with copies of its embedded objects and collections.
    static func detachedCopy(_ object: ObjectBase) throws(Realm.Error) -> ObjectBase {
        guard let managed = object.managed else { return object }
        let table = managed.table
        let copy = table.type.init()
        for index in table.infos.indices where table.infos[index].type != .linkingObjects {
            try ObjectValues.set(try detach(managed.readAny(property: index)), property: index, of: copy, table: table)
        }
        return copy
    }

    private static func detach(_ value: Any?) throws(Realm.Error) -> Any? {
        switch value {
        case let object as ObjectBase: return try detachedCopy(object)
        case let list as List<AnyRealmValue>: return AnyRealmValue.fromArray(try list.map(detachMixed))
        case let map as Map<String, AnyRealmValue>:
            var entries: [String: AnyRealmValue] = [:]
            for (key, value) in map { entries[key] = try detachMixed(value) }
            return AnyRealmValue.fromDictionary(entries)
        case let mixed as AnyRealmValue: return try detachMixed(mixed)
        case let array as [Any]: return try array.map(detach)
        case let dictionary as [String: Any]:
            var entries: [String: Any] = [:]
            for (key, value) in dictionary { entries[key] = try detach(value) }
            return entries
        default: return value
        }
    }

    private static func detachMixed(_ value: AnyRealmValue) throws(Realm.Error) -> AnyRealmValue {
        switch value {
        case .list(let list): return .fromArray(try list.map(detachMixed))
        case .dictionary(let map):
            var entries: [String: AnyRealmValue] = [:]
            for (key, value) in map { entries[key] = try detachMixed(value) }
            return .fromDictionary(entries)
        default: return value
        }
    }
}

/// Which outbox objects are being handled by a consumer of this process.
final class OutboxClaims: Sendable {
    static let shared = OutboxClaims()
    private let claims = Locked<[String: [Int64: ObjectIdentifier]]>([:])

    /// Claims `key` for `consumer`; false when another consumer holds it (or this one already does).
    func claim(_ key: Int64, in scope: String, by consumer: ObjectIdentifier) -> Bool {
        claims.withLock { claims in
            guard claims[scope]?[key] == nil else { return false }
            claims[scope, default: [:]][key] = consumer
            return true
        }
    }

    func release(_ key: Int64, in scope: String) {
        claims.withLock { $0[scope]?[key] = nil }
    }

    /// Releases every claim of `consumer`; returns whether there was any.
    func releaseAll(of consumer: ObjectIdentifier, in scope: String) -> Bool {
        claims.withLock { claims in
            guard let held = claims[scope] else { return false }
            let mine = held.filter { $0.value == consumer }.keys
            for key in mine { claims[scope]?[key] = nil }
            if claims[scope]?.isEmpty == true { claims[scope] = nil }
            return !mine.isEmpty
        }
    }
}

/// Wakes tasks waiting for commits to a file (see `Outbox`). Commits of this process post at once; waiters also
/// look again after a timeout, which is how commits of other processes are noticed.
final class CommitSignal: Sendable {
    static let shared = CommitSignal()

    private struct State {
        var counts: [String: UInt64] = [:]
        var waiters: [String: [UInt64: CheckedContinuation<Void, Never>]] = [:]
        var cancelled: Set<UInt64> = []
        var nextID: UInt64 = 0
    }
    private let state = Locked(State())

    /// Posts for every scope whose name starts with `prefix` (a file's path: all its outboxes). Every commit
    /// posts: with no outbox in use this takes the lock and returns, building no string.
    func post(_ prefix: @autoclosure () -> String) {
        let woken = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            guard !state.counts.isEmpty || !state.waiters.isEmpty else { return [] }
            let prefix = prefix()
            var woken: [CheckedContinuation<Void, Never>] = []
            for scope in Set(state.counts.keys).union(state.waiters.keys) where scope.hasPrefix(prefix) {
                state.counts[scope, default: 0] &+= 1
                woken += state.waiters.removeValue(forKey: scope).map { Array($0.values) } ?? []
            }
            return woken
        }
        for continuation in woken { continuation.resume() }
    }

    /// Posts counted for `scope` so far.
    func count(for scope: String) -> UInt64 {
        state.withLock { state in
            if state.counts[scope] == nil { state.counts[scope] = 0 }
            return state.counts[scope]!
        }
    }

    /// Returns once `scope` has a post after `seen`, after `timeout`, or when the task is cancelled.
    func wait(for scope: String, after seen: UInt64, timeout: Duration) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.waitForPost(scope, after: seen) }
            group.addTask { try? await Task.sleep(for: timeout) }
            await group.next()
            group.cancelAll()
        }
    }

    private func waitForPost(_ scope: String, after seen: UInt64) async {
        let id = state.withLock { state in
            state.nextID &+= 1
            return state.nextID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state -> Bool in
                    if state.cancelled.remove(id) != nil || state.counts[scope, default: 0] != seen { return true }
                    state.waiters[scope, default: [:]][id] = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            let continuation = state.withLock { state -> CheckedContinuation<Void, Never>? in
                if let continuation = state.waiters[scope]?.removeValue(forKey: id) { return continuation }
                state.cancelled.insert(id)
                return nil
            }
            continuation?.resume()
        }
        state.withLock { _ = $0.cancelled.remove(id) }
    }
}

/// Runs blocking work (waiting for a file's write lock) on a thread of its own, so that no thread of Swift's
/// cooperative pool is blocked.
enum BlockingWork {
    static func run(_ work: @escaping @Sendable () throws -> Void) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let thread = Thread {
                do {
                    try work()
                    continuation.resume()
                } catch {
                    continuation.resume(throwing: error)
                }
            }
            thread.start()
        }
    }
}

import StrataStorage

/// Identifies a callback-style asynchronous write (``Realm/writeAsync(_:onComplete:)``,
/// ``Realm/beginAsyncWrite(_:)``) or commit (``Realm/commitAsyncWrite(allowGrouping:_:)``), for
/// ``Realm/cancelAsyncWrite(_:)``. Numbered from 1 per Realm, as in the Realm SDK.
public typealias AsyncTransactionId = UInt32

extension Realm {
    /// Runs `block` in a write transaction begun asynchronously, then commits it asynchronously, as the Realm
    /// SDK's `writeAsync` does: the call returns at once; `block` runs later where the Realm lives (its actor, or
    /// its queue) once the write lock is free — waiting for it suspends, it blocks no thread — and `onComplete`
    /// runs there after the commit, with nil or the error that rolled the write back (a duplicate primary key,
    /// say, or what kept the transaction from starting). `block` may itself call ``commitWrite()`` or
    /// ``cancelWrite()``; then `onComplete` gets nil.
    ///
    /// Asynchronous writes of one Realm run in the order they were asked for (those asked for inside a block
    /// too, which, unlike nested `write`s, is allowed), each commit's `onComplete` before the next block. Only
    /// Realms confined to an actor (the main actor included) or a serial `DispatchQueue` can write
    /// asynchronously: a thread or a task has no executor to run the block on later, and calling this there stops
    /// the process saying so (use ``write(_:)`` or `asyncWrite(_:)`).
    ///
    /// ```swift
    /// realm.writeAsync({
    ///     realm.add(Dog(value: ["name": "Rex"]))
    /// }, onComplete: { error in
    ///     if let error { report(error) }
    /// })
    /// ```
    ///
    /// Without `onComplete`, an error that rolls the write back stops the process with its message, as an
    /// exception would in the SDK: nothing is lost silently.
    @discardableResult
    public func writeAsync(_ block: @escaping () -> Void, onComplete: (((any Swift.Error)?) -> Void)? = nil)
        -> AsyncTransactionId
    {
        let queue = asyncTransactionQueue("writeAsync")
        return queue.enqueue(on: self, onFailure: onComplete) { [self] in
            block()
            if isInWriteTransaction {
                commitAsyncWrite(onComplete)
            } else if let onComplete {
                queue.complete(with: nil, on: self, handler: onComplete)
            }
        }
    }

    /// Begins a write transaction asynchronously and runs `asyncWriteBlock` in it, as the Realm SDK's
    /// `beginAsyncWrite` does: the call returns at once, and the block runs later where the Realm lives (its
    /// actor or queue), in the order asynchronous writes were asked for, once the write lock is free. The block
    /// should end with ``commitAsyncWrite(allowGrouping:_:)`` or ``commitWrite()``; returning without either
    /// cancels the transaction.
    ///
    /// It cannot throw, so what keeps the transaction from starting (a read-only Realm, a damaged file) stops the
    /// process with a message naming it; ``writeAsync(_:onComplete:)`` hands such errors to its `onComplete`.
    ///
    /// ```swift
    /// realm.beginAsyncWrite {
    ///     realm.add(Dog(value: ["name": "Rex"]))
    ///     realm.commitAsyncWrite()
    /// }
    /// ```
    @discardableResult
    public func beginAsyncWrite(_ asyncWriteBlock: @escaping () -> Void) -> AsyncTransactionId {
        let queue = asyncTransactionQueue("beginAsyncWrite")
        if configuration.readOnly { fatalError("beginAsyncWrite: \(Realm.Error.readOnly(path: path))") }
        return queue.enqueue(on: self, onFailure: nil, asyncWriteBlock)
    }

    /// Commits the write transaction in progress (begun with ``beginAsyncWrite(_:)`` or ``beginWrite()``) and
    /// calls `onComplete` later, where the Realm lives, with nil or the error that rolled it back, as the Realm
    /// SDK's `commitAsyncWrite` does. The commit itself is made before this returns (durably, as every Strata
    /// commit; `allowGrouping` is accepted for the SDK's sake: every commit made while other writers wait shares
    /// a log sync with theirs), so the Realm is out of the transaction at once; only `onComplete` waits, behind
    /// the completions before it.
    ///
    /// Returns an id that ``cancelAsyncWrite(_:)`` takes to skip `onComplete` (the commit stays). Called outside
    /// a write transaction it stops the process, as in the SDK; so does an error that rolls the commit back when
    /// there is no `onComplete` to receive it.
    @discardableResult
    public func commitAsyncWrite(allowGrouping: Bool = false, _ onComplete: (((any Swift.Error)?) -> Void)? = nil)
        -> AsyncTransactionId
    {
        let queue = asyncTransactionQueue("commitAsyncWrite")
        guard isInWriteTransaction else {
            fatalError("commitAsyncWrite: \(Realm.Error.notInWriteTransaction); begin one with beginAsyncWrite { }")
        }
        var failure: (any Swift.Error)?
        do {
            try commitWrite()
        } catch {
            failure = error
        }
        guard let onComplete else {
            if let failure {
                fatalError("commitAsyncWrite: the commit was rolled back: \(failure); pass onComplete to handle it")
            }
            return queue.complete(with: nil, on: self) { _ in }
        }
        return queue.complete(with: failure, on: self, handler: onComplete)
    }

    /// Cancels an asynchronous write or commit that has not run yet, as the Realm SDK's `cancelAsyncWrite`
    /// does: a write's block never runs (nothing is written, also when it was waiting for the write lock); a
    /// commit's `onComplete` is not called (the commit stays). An id whose block or completion already ran (or
    /// is running) is left alone. Throws ``RealmError/invalidValue(type:property:reason:)`` for an id this Realm
    /// never returned.
    public func cancelAsyncWrite(_ asyncTransactionId: AsyncTransactionId) throws {
        try checkThreadThrowing()
        guard let queue = asyncTransactions, queue.issued(asyncTransactionId) else {
            throw Realm.Error.invalidValue(
                type: "AsyncTransactionId", property: "",
                reason: "\(asyncTransactionId) was not returned by this Realm's writeAsync, beginAsyncWrite or "
                    + "commitAsyncWrite")
        }
        queue.cancel(asyncTransactionId)
    }

    /// Whether asynchronous writes or their completions are pending or running: true from a call of
    /// ``writeAsync(_:onComplete:)``, ``beginAsyncWrite(_:)`` or ``commitAsyncWrite(allowGrouping:_:)`` until
    /// the last of them ran (a completion counts as done as it starts).
    public var isPerformingAsynchronousWriteOperations: Bool {
        checkThread()
        return asyncTransactions?.isBusy ?? false
    }

    /// This Realm's asynchronous write queue; stops the process when the Realm cannot write asynchronously.
    private func asyncTransactionQueue(_ context: String) -> AsyncTransactionQueue {
        checkThread()
        switch confinement {
        case .actor, .queue:
            break
        case .none:
            fatalError("\(context): a frozen Realm cannot be written")
        case .thread, .task:
            fatalError(
                "\(context): asynchronous writes run their blocks and completions later on the Realm's actor or "
                    + "serial DispatchQueue, and this Realm is confined to a \(confinementName), which has no "
                    + "executor to run them on. Use write { } (or try await asyncWrite { }), or open the Realm with "
                    + "Realm(actor:), Realm.open() or Realm(configuration:queue:)")
        }
        if let asyncTransactions { return asyncTransactions }
        let queue = AsyncTransactionQueue(realm: self)
        asyncTransactions = queue
        observers.add(queue)
        return queue
    }

    private var confinementName: String {
        if case .task = confinement { return "task" }
        return "thread"
    }
}

/// The asynchronous writes of one Realm, run in order where the Realm lives.
///
/// A drain runs the queued completions and blocks one after another on the Realm's actor (or in blocks of its
/// queue), waiting for the write lock before each block by suspending (an actor) or on a detached task that
/// hands the transaction back to the queue. One drain at a time: jobs queued while it runs (inside a block,
/// say) are picked up by it. When the Realm is in a write transaction it did not start (``Realm/beginWrite()``
/// without a commit yet), the drain stops; the end of that transaction (which delivers to the Realm's observers,
/// this one included) starts it again.
///
/// Only the Realm's isolation touches it.
final class AsyncTransactionQueue: RealmObserver {
    /// A block waiting for its transaction.
    final class Begin {
        let id: AsyncTransactionId
        let block: () -> Void
        /// Receives what kept the transaction from starting (nil: stop the process with it).
        let onFailure: ((any Swift.Error) -> Void)?
        /// Cancelled while its drain waited for the write lock.
        var cancelled = false

        init(id: AsyncTransactionId, block: @escaping () -> Void, onFailure: ((any Swift.Error) -> Void)?) {
            self.id = id
            self.block = block
            self.onFailure = onFailure
        }
    }

    /// A completion waiting to be called.
    struct Completion {
        let id: AsyncTransactionId
        let handler: ((any Swift.Error)?) -> Void
        let error: (any Swift.Error)?
    }

    private weak var realm: Realm?
    private var begins: [Begin] = []
    private var completions: [Completion] = []
    private var lastIssued: AsyncTransactionId = 0
    /// A drain is scheduled or running.
    private var draining = false
    /// The drain stopped at a write transaction it did not start.
    private var stalled = false
    /// The block whose write lock is being waited for.
    private var waiting: Begin?
    /// The id of the block or completion running now.
    private var running: AsyncTransactionId?

    init(realm: Realm) { self.realm = realm }

    var isBusy: Bool { !begins.isEmpty || !completions.isEmpty || waiting != nil || running != nil }

    func issued(_ id: AsyncTransactionId) -> Bool { id != 0 && id <= lastIssued }

    private func issue() -> AsyncTransactionId {
        lastIssued &+= 1
        return lastIssued
    }

    /// Queues `block` to run in a transaction of its own.
    func enqueue(on realm: Realm, onFailure: ((any Swift.Error) -> Void)?, _ block: @escaping () -> Void)
        -> AsyncTransactionId
    {
        let id = issue()
        let failure: ((any Swift.Error) -> Void)? = onFailure.map { handler in { handler($0) } }
        begins.append(Begin(id: id, block: block, onFailure: failure))
        schedule(realm)
        return id
    }

    /// Queues `handler` to be called with `error`.
    @discardableResult
    func complete(with error: (any Swift.Error)?, on realm: Realm, handler: @escaping ((any Swift.Error)?) -> Void)
        -> AsyncTransactionId
    {
        let id = issue()
        completions.append(Completion(id: id, handler: handler, error: error))
        schedule(realm)
        return id
    }

    func cancel(_ id: AsyncTransactionId) {
        if let index = begins.firstIndex(where: { $0.id == id }) {
            begins.remove(at: index)
        } else if let waiting, waiting.id == id {
            waiting.cancelled = true
        } else if let index = completions.firstIndex(where: { $0.id == id }) {
            completions.remove(at: index)
        }
    }

    /// Starts a drain where the Realm lives, unless one is scheduled or running.
    private func schedule(_ realm: Realm) {
        guard !draining else { return }
        draining = true
        stalled = false
        let carried = UncheckedRealm(realm)
        switch realm.confinement {
        case .actor:
            guard let actor = realm.ownerActor else { fatalError("writeAsync: the Realm's actor is gone") }
            Task { await startAsyncTransactionDrain(carried, on: actor) }
        case .queue(let queue):
            queue.queue.async { Self.drain(carried, queue: queue) }
        case .thread, .task, .none:
            fatalError("writeAsync: the Realm cannot write asynchronously")
        }
    }

    /// The drain of an actor-confined Realm, on its actor.
    fileprivate static func drain(_ carried: UncheckedRealm, on actor: isolated any Actor) async {
        let realm = carried.realm
        guard let queue = realm.asyncTransactions else { return }
        while let begin = queue.nextBegin(realm) {
            let started: Result<WriteTransaction, any Swift.Error>
            do {
                started = .success(try await realm.store.beginWrite(isolation: actor))
            } catch {
                started = .failure(error)
            }
            queue.run(begin, started: started, realm: realm)
        }
    }

    /// The drain of a queue-confined Realm, in a block of its queue: the write lock is waited for on a detached
    /// task (a queue's block cannot suspend, and blocking it would hold a thread), which hands the transaction
    /// back to the queue.
    private static func drain(_ carried: UncheckedRealm, queue: RealmQueue) {
        let realm = carried.realm
        guard let transactions = realm.asyncTransactions, let begin = transactions.nextBegin(realm) else { return }
        let store = realm.store
        let pending = UncheckedBox((begin, transactions))
        Task.detached {
            let started: Result<WriteTransaction, any Swift.Error>
            do {
                started = .success(try await store.beginWrite(isolation: nil))
            } catch {
                started = .failure(error)
            }
            let handed = UncheckedBox(started)
            queue.queue.async {
                pending.value.1.run(pending.value.0, started: handed.value, realm: carried.realm)
                drain(carried, queue: queue)
            }
        }
    }

    /// Calls the completions due, then returns the next block to begin a transaction for (now waiting for the
    /// lock); nil ends the drain (nothing left, or a write transaction of the Realm's own is in progress).
    private func nextBegin(_ realm: Realm) -> Begin? {
        while true {
            if !completions.isEmpty {
                let completion = completions.removeFirst()
                running = completion.id
                completion.handler(completion.error)
                running = nil
                continue
            }
            guard let begin = begins.first, !realm.isInWriteTransaction else {
                stalled = !begins.isEmpty
                draining = false
                return nil
            }
            begins.removeFirst()
            waiting = begin
            return begin
        }
    }

    /// Runs `begin`'s block in `started` (the transaction its drain waited for), then cancels what the block
    /// left open.
    private func run(_ begin: Begin, started: Result<WriteTransaction, any Swift.Error>, realm: Realm) {
        waiting = nil
        let transaction: WriteTransaction
        switch started {
        case .failure(let error):
            let failure = (error as? StorageError).map { Realm.Error.storage($0, path: realm.path) } ?? error
            fail(begin, failure, realm: realm)
            return
        case .success(let value):
            transaction = value
        }
        if begin.cancelled {
            transaction.abort()
            return
        }
        if realm.isInWriteTransaction {
            // A write began here while the lock was waited for: this block waits for its end.
            transaction.abort()
            begins.insert(begin, at: 0)
            return
        }
        do {
            try realm.checkWritable()
        } catch {
            transaction.abort()
            fail(begin, error, realm: realm)
            return
        }
        do {
            try realm.adoptWrite(transaction)
        } catch {
            fail(begin, error, realm: realm)
            return
        }
        running = begin.id
        begin.block()
        running = nil
        if realm.isInWriteTransaction { realm.cancelWrite() }
    }

    private func fail(_ begin: Begin, _ error: any Swift.Error, realm: Realm) {
        guard let onFailure = begin.onFailure else {
            fatalError("beginAsyncWrite: the write transaction could not start: \(error)")
        }
        completions.append(Completion(id: 0, handler: { onFailure($0!) }, error: error))
    }

    // A write transaction of the Realm's own ended (its commit or cancel delivers to observers): a drain that
    // stopped at it goes on.
    func deliver() {
        guard stalled, let realm, !realm.isInWriteTransaction else { return }
        schedule(realm)
    }

    func advanced(_ step: VersionStep) {}

    func end() {}
}

/// Hops to `actor` for its Realm's asynchronous writes (a free function: a closure naming the non-`Sendable`
/// queue class's metatype confuses the compiler's region checker).
private func startAsyncTransactionDrain(_ carried: UncheckedRealm, on actor: any Actor) async {
    await AsyncTransactionQueue.drain(carried, on: actor)
}

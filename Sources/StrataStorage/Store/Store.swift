import Synchronization

/// A Strata storage file: named copy-on-write B+trees with multi-version concurrency.
///
/// Any number of readers, each seeing one consistent committed version, run concurrently with one writer;
/// readers never wait. Commits are atomic and (with ``StoreOptions/Durability/full``) durable. A crash at any
/// moment leaves the file at the last commit that returned.
///
/// ```swift
/// let store = try Store.open(path: "data.strata")
/// try store.write { txn in
///     let users = try txn.tree(named: "users", create: .keyed)
///     try txn.put(Array("alice".utf8), Array("admin".utf8), in: users)
/// }
/// let snapshot = try store.read()
/// let role = try snapshot.tree(named: "users")?.get(Array("alice".utf8))
/// ```
///
/// Every handle opened on the same file in a process shares one coordinator, so readers and writers of all
/// handles (and of other processes, through the `.lock` file) coordinate correctly.
public final class Store: Sendable {
    let shared: SharedFile
    private let closed = Atomic<Bool>(false)
    /// This handle's own read-only flag: another handle on the same file in the process may be writable.
    private let readOnly: Bool
    /// This handle's event handler (``StoreOptions/events``): each handle has its own, whoever opened the file.
    let events: (@Sendable (StoreEvent) -> Void)?

    private init(shared: SharedFile, options: StoreOptions, readOnly: Bool = false) {
        self.shared = shared
        self.readOnly = readOnly || shared.options.readOnly
        self.events = options.events
        if let events = options.events {
            events(
                .opened(
                    StoreEvent.Opened(
                        path: shared.path, version: shared.latest.version, readOnly: readOnly,
                        recovery: shared.recovery, replayedCommits: shared.replayedCommits)))
        }
    }

    /// Runs `open`, reporting to `options`' events the damage that makes it fail.
    private static func reportingDamage(_ options: StoreOptions, _ open: () throws(StorageError) -> SharedFile)
        throws(StorageError) -> SharedFile
    {
        do {
            return try open()
        } catch {
            if let events = options.events, let damage = StoreEvent.Damage(error) { events(.damage(damage)) }
            throw error
        }
    }

    /// Opens the file at `path`, creating it when it is missing (unless ``StoreOptions/createIfMissing`` is off).
    ///
    /// Opening does no work proportional to the file's size: it validates the two meta pages and the root pages
    /// they reference and picks the newest intact version.
    public static func open(path: String, options: StoreOptions = StoreOptions()) throws(StorageError) -> Store {
        Store(
            shared: try reportingDamage(options) { () throws(StorageError) in
                try EncryptionOpenCheck.check(path: path, options: options)
                return try SharedFile.open(path: path, options: options)
            },
            options: options, readOnly: options.readOnly)
    }

    /// Opens a store that lives in memory. Stores opened with the same `identifier` share their data while
    /// any of them is open; without an identifier the store is private.
    public static func inMemory(identifier: String? = nil, options: StoreOptions = StoreOptions()) throws(StorageError)
        -> Store
    {
        try EncryptionOpenCheck.refuseKey(options, for: "an in-memory store")
        return Store(shared: try SharedFile.openInMemory(identifier: identifier, options: options), options: options)
    }

    /// Opens a store over a custom page file and, optionally, a commit log (fault-injection tests). With a key,
    /// the file is encrypted (its header is checked against the key; a plain file is `notEncrypted`).
    static func open(file: any PageFile, log: (any PageFile)? = nil, options: StoreOptions = StoreOptions())
        throws(StorageError) -> Store
    {
        Store(
            shared: try reportingDamage(options) { () throws(StorageError) in
                try SharedFile.open(file: file, log: log, options: options)
            }, options: options)
    }

    /// Opens a store over a custom page file as the in-memory store `identifier`, which the object layer's
    /// in-memory Realms open by that identifier (fault-injection tests of the object layer).
    static func inMemory(identifier: String, over file: any PageFile, options: StoreOptions = StoreOptions())
        throws(StorageError) -> Store
    {
        Store(
            shared: try SharedFile.openInMemory(identifier: identifier, over: file, options: options), options: options)
    }

    /// The file's path (for in-memory stores, a descriptive name).
    public var path: String { shared.path }
    /// The file's page size in bytes.
    public var pageSize: Int { shared.geometry.pageSize }
    /// Longest key accepted, in bytes (a quarter page minus overhead).
    public var maxKeySize: Int { shared.geometry.maxKeySize }
    /// Longest value accepted, in bytes.
    public static var maxValueSize: Int { PageGeometry.maxValueSize }
    /// The newest committed version this process knows of.
    public var latestVersion: UInt64 { shared.latest.version }
    /// Options the store was opened with.
    public var options: StoreOptions { shared.options }
    /// Why the file opened at an older version than the newest commit it holds, or nil when it opened at its
    /// newest commit: a newest commit whose meta page or root page is damaged, or whose pages a power loss cut
    /// short, is dropped by opening (see ``RecoveryNotice``). Set when this process opened the file; every handle
    /// on the file in the process sees the same notice.
    public var recovery: RecoveryNotice? { shared.recovery }
    /// Memory for data derived from the file's committed tree segments (see ``TreeSegment``), shared by every
    /// handle on the file in this process.
    public var segmentCache: SegmentCache { shared.segmentCache }

    private func checkOpen() throws(StorageError) {
        if closed.load(ordering: .acquiring) { throw .closed }
    }

    private func checkWritable() throws(StorageError) {
        try checkOpen()
        if readOnly { throw .readOnly(path: path) }
    }

    /// Starts a read transaction on the newest committed version. The version stays pinned (its pages are not
    /// reused) until the transaction is released.
    public func read() throws(StorageError) -> ReadTransaction {
        try checkOpen()
        return try ReadTransaction(shared: shared)
    }

    /// Starts a write transaction, blocking the calling thread while another writer (in this or another process)
    /// holds the lock. From async code use ``beginWrite(isolation:)``, which suspends instead.
    public func beginWrite() throws(StorageError) -> WriteTransaction {
        try checkWritable()
        return WriteTransaction(context: try shared.lockForWriting(), events: events)
    }

    /// Starts a write transaction, suspending (never blocking a thread) while another writer holds the lock.
    /// Throws ``StorageError/cancelled`` if the task is cancelled before the transaction starts: already at the
    /// call, while waiting, or as the lock is handed over (the lock is then released again). A transaction this
    /// returns belongs to the caller even if the task is cancelled afterwards.
    ///
    /// The transaction belongs to the caller's isolation (`isolation` defaults to it), so an actor can start
    /// one and use it across its own suspension points.
    public func beginWrite(isolation: isolated (any Actor)? = #isolation) async throws(StorageError)
        -> sending WriteTransaction
    {
        try checkWritable()
        if Task.isCancelled { throw .cancelled }
        let transaction = WriteTransaction(context: try await shared.lockForWriting(), events: events)
        // A cancellation that arrived as the lock was handed over: the caller has not started, so it gets none.
        if Task.isCancelled {
            transaction.abort()
            throw .cancelled
        }
        return transaction
    }

    /// Runs `body` in a write transaction and commits it; if `body` throws, the transaction is aborted and the
    /// error rethrown. Returns `body`'s result.
    @discardableResult
    public func write<R>(_ body: (WriteTransaction) throws -> R) throws -> R {
        try Self.commit(try beginWrite(), running: body)
    }

    /// Async form of ``write(_:)``: waits for the lock, and for a grouped commit's sync, by suspending, never
    /// blocking a thread. `body` runs in the caller's isolation (an actor's, or the main actor's), so it may touch
    /// the caller's state. It returns once the commit is durable (see ``WriteTransaction/commit(isolation:)``).
    ///
    /// A task cancelled before `body` starts (already at the call, or while waiting for the lock) gets
    /// `CancellationError` and nothing is written. Once `body` runs, the write commits or aborts whole, whatever
    /// happens to the task meanwhile.
    @discardableResult
    public func asyncWrite<R>(
        isolation: isolated (any Actor)? = #isolation, _ body: (WriteTransaction) throws -> R
    ) async throws -> R {
        let transaction: WriteTransaction
        do {
            transaction = try await beginWrite(isolation: isolation)
        } catch StorageError.cancelled {
            throw CancellationError()
        }
        do {
            let result = try body(transaction)
            try await transaction.commit(isolation: isolation)
            return result
        } catch {
            transaction.abort()
            throw error
        }
    }

    /// Runs `body` in `transaction`, then commits it, or aborts it if `body` or the commit throws.
    private static func commit<R>(_ transaction: WriteTransaction, running body: (WriteTransaction) throws -> R) throws
        -> R
    {
        do {
            let result = try body(transaction)
            try transaction.commit()
            return result
        } catch {
            transaction.abort()
            throw error
        }
    }

    /// Closes this handle: later calls on it throw ``StorageError/closed``. Transactions already started keep
    /// working; the file is released when the last handle and transaction are gone.
    public func close() { closed.store(true, ordering: .releasing) }

    /// Tasks of this process suspended waiting for the file's write lock (for tests of cancellation).
    var queuedWriterTasks: Int { shared.gate.queuedTaskCount }

    /// Number of distinct versions pinned by readers in this process.
    public var pinnedVersionCount: Int { shared.pinnedVersionCount }

    /// The versions pinned by read transactions of this process (all handles on the file), with the number of
    /// pins of each.
    public var pinnedVersions: [UInt64: Int] { shared.pinnedVersions }
}

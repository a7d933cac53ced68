import Foundation
import Observation
import StrataStorage

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A handle on a database file (or an in-memory database), confined to the isolation that opened it: its actor
/// (the main actor included), else its task, else its thread. Opening the same file again there returns the same
/// instance.
///
/// ```swift
/// let realm = try Realm()
/// try realm.write {
///     realm.add(Dog(value: ["name": "Rex", "age": 3]))
/// }
/// let puppies = realm.objects(Dog.self)
/// ```
/// A Realm sees one version of the file: the one current when it was opened, last refreshed, or last wrote.
/// Live objects and ``Results`` read straight from that version.
public final class Realm {
    /// How this Realm was opened.
    public let configuration: Configuration
    let store: Store
    let path: String
    /// Damage found in the file by reads that could not report it (see ``damage``), shared by the file's Realms.
    let fileDamage: FileDamage
    /// Where the Realm may be used: its thread, actor or task (see ``Confinement``).
    let confinement: Confinement
    /// The actor an actor-confined Realm belongs to (also set for a Realm opened on the main thread outside any
    /// task, which is refreshed through the main actor). Weak: the actor usually holds the Realm.
    private(set) weak var ownerActor: (any Actor)?
    /// Whether this Realm is a frozen view of one version.
    let frozen: Bool
    /// The version a frozen Realm reads (with its schema), shared by every Realm frozen at it.
    var pinned: PinnedVersion?
    /// Observers of this Realm and its objects and collections (see `Notifications/`).
    let observers = ObserverList()
    /// Set while an `asyncWrite` waits for its commit to be durable: the `asyncWrite`s of this Realm waiting for
    /// it to end (see `commitWriteAwaitingDurability`).
    var commitWaiters: [CheckedContinuation<Void, Never>]?
    /// The callback-style asynchronous writes waiting to run here (``writeAsync(_:onComplete:)``), made on first use.
    var asyncTransactions: AsyncTransactionQueue?
    /// Whether the coordinator refreshes this Realm after commits (it follows the versions it reads).
    var coordinated = false
    /// Swift Observation: the registrar the next tracked object takes, and the objects tracked so far (see
    /// `ObservationSupport`).
    @exclusivity(unchecked) var observationSpare: ObservationSpare?
    lazy var observationTracker = ObservationTracker(realm: self)
    /// For projections: how to read the property each key path reads on a root object, when it is one persisted
    /// property (see `ManagedObject.projectedReader`).
    @exclusivity(unchecked) var projectedReaders: [ObjectIdentifier: (keyPath: AnyKeyPath, reader: AnyObject?)] = [:]
    /// The key paths `ManagedObject.projectedReader` answered for last, checked before `projectedReaders`: a
    /// projection reads a few key paths over and over, and comparing a few identities costs less than hashing.
    /// The readers are those `projectedReaders` keeps.
    @exclusivity(unchecked) var recentProjectedReaders: [(key: ObjectIdentifier, reader: Unmanaged<AnyObject>?)] = []

    /// The table layer under this Realm: the version it reads, its write transaction, the bindings and the
    /// stored schema (see `Tables/`). The properties below forward to it.
    @usableFromInline let tables: TableStore
    /// The write transaction's change capture for Strata Sync (see `TableStore.syncCapture`).
    var syncCapture: SyncCaptureWrite? {
        get { tables.syncCapture }
        set { tables.syncCapture = newValue }
    }

    private var snapshot: ReadTransaction {
        get { tables.snapshot }
        set { tables.snapshot = newValue }
    }
    private var views: [String: TreeView?] {
        _read { yield tables.views }
        _modify { yield &tables.views }
    }
    private var transaction: WriteTransaction? {
        get { tables.transaction }
        set { tables.transaction = newValue }
    }
    private var handles: [String: TreeHandle] {
        _read { yield tables.handles }
        _modify { yield &tables.handles }
    }
    private var failure: Realm.Error? {
        get { tables.failure }
        set { tables.failure = newValue }
    }
    private var bindings: [ObjectIdentifier: TableBinding] {
        _read { yield tables.bindings }
        _modify { yield &tables.bindings }
    }
    /// Bindings of stored classes for `DynamicObject` access, by class name.
    private var dynamicBindings: [String: TableBinding] {
        _read { yield tables.dynamicBindings }
        _modify { yield &tables.dynamicBindings }
    }
    /// Query key paths already resolved from a class (see `TableStore.resolvedPaths`).
    var resolvedPaths: Locked<[ResolvedPathKey: BoundPath]> { tables.resolvedPaths }

    /// A resolved path's cache key: its root binding and its components.
    typealias ResolvedPathKey = TableStore.ResolvedPathKey
    /// Class definitions stored in the file, as of the current version (or the write in progress).
    private var storedClasses: [String: StoredClass] {
        _read { yield tables.storedClasses }
        _modify { yield &tables.storedClasses }
    }
    private var storedSchemaVersion: UInt64? {
        get { tables.storedSchemaVersion }
        set { tables.storedSchemaVersion = newValue }
    }
    /// Whether the file's backlink trees are complete (see `TableNames.backlinksKey`).
    private var storedBacklinks: Bool {
        get { tables.storedBacklinks }
        set { tables.storedBacklinks = newValue }
    }

    /// The thread on which an actor- or task-confined Realm's isolation check last passed (see
    /// ``checkThread()``).
    @exclusivity(unchecked) var verifiedThread: pthread_t?

    /// Whether `refresh()` happens automatically. Thread-confined Realms refresh when a write begins.
    public var autorefresh = true

    /// Opens a new Realm confined to `actor`, or else to the calling task, or else to the calling thread. The
    /// public initialisers go through the instance cache (``cached(_:isolation:queue:)``) instead. With `queue`,
    /// the Realm is confined to that serial queue.
    init(configuration: Configuration, confinedTo actor: (any Actor)?, queue: RealmQueue? = nil) throws {
        self.configuration = configuration
        path = configuration.path
        confinement = queue.map(Confinement.queue) ?? Confinement.current(isolation: actor)
        switch confinement {
        case .actor: ownerActor = actor
        case .thread: ownerActor = Thread.isMainThread ? MainActor.shared : nil
        case .task, .queue, .none: ownerActor = nil
        }
        frozen = false
        fileDamage = FileDamage.for(path: path)
        if let damage = fileDamage.error { throw damage }
        try Realm.copySeedFile(for: configuration)
        do {
            store = try Realm.openStore(configuration)
            tables = TableStore(snapshot: try store.read(), path: path)
        } catch {
            throw Realm.Error.storage(error, path: path)
        }
        reportDamageFromTables()
        try loadStoredSchema()
        if !storedClasses.isEmpty && !storedBacklinks && !configuration.readOnly {
            // A file from before backlinks were kept: compute them once.
            try write { try tables.rebuildBacklinks() }
        }
        try prepareSchema()
        if let types = configuration.objectTypes {
            let tables = try SchemaRegistry.shared.closure(of: types)
            let differences = tables.flatMap { table in
                storedClasses[table.className].map { $0.differences(from: table.schema) } ?? []
            }
            guard differences.isEmpty else { throw Realm.Error.schemaMismatch(differences: differences) }
            for table in tables {
                bindings[ObjectIdentifier(table.type)] = TableBinding(
                    table: table, stored: storedClasses[table.className])
            }
            let missing = tables.filter { storedClasses[$0.className] == nil }
            if !missing.isEmpty && !configuration.readOnly {
                try write {
                    for table in missing { try registerTable(table) }
                }
            }
        }
    }

    /// A frozen Realm reading `version`.
    init(frozen version: PinnedVersion) {
        configuration = version.configuration
        store = version.store
        path = configuration.path
        confinement = .none
        ownerActor = nil
        frozen = true
        fileDamage = FileDamage.for(path: path)
        pinned = version
        tables = TableStore(snapshot: version.snapshot, path: path)
        tables.adoptStoredSchema(version.schema)
        autorefresh = false
        reportDamageFromTables()
    }

    /// A read-only Realm on `snapshot`, the version a migration started from: the old objects of ``Migration``.
    init(migrationSourceOf target: Realm, snapshot: ReadTransaction) throws(Realm.Error) {
        configuration = target.configuration
        store = target.store
        path = target.path
        confinement = target.confinement
        ownerActor = target.ownerActor
        frozen = false
        fileDamage = target.fileDamage
        tables = TableStore(snapshot: snapshot, path: path)
        migrationTarget = target
        reportDamageFromTables()
        try loadStoredSchema()
    }

    /// Damage the table layer finds is this Realm's file's damage (see ``damage``).
    private func reportDamageFromTables() {
        tables.reportDamage = { [unowned self] damage, cause in recordFileDamage(damage, cause: cause) }
    }

    /// For the old-version Realm of a migration: the Realm being migrated, which fails when old objects are
    /// modified.
    private weak var migrationTarget: Realm?

    /// The migration in progress, if any (see `TableStore.migration`).
    var migrationState: MigrationState? {
        get { tables.migration }
        set { tables.migration = newValue }
    }

    deinit {
        transaction?.abort()
        if coordinated { Coordinator.for(self).left(ObjectIdentifier(self)) }
    }

    // MARK: Transactions

    /// Whether a write transaction is in progress.
    public var isInWriteTransaction: Bool { transaction != nil }

    /// Whether the Realm holds no objects.
    public var isEmpty: Bool {
        checkThread()
        return storedClasses.keys.allSatisfy { rowCount(tree: TableNames.rows($0)) == 0 }
    }

    /// Whether this Realm is a frozen snapshot (see ``freeze()``).
    public var isFrozen: Bool { frozen }

    /// Runs `block` in a write transaction and commits it. If `block` throws, or an operation inside it failed
    /// (a duplicate primary key, a value too large...), nothing of the transaction is applied and the error is
    /// rethrown.
    @discardableResult
    public func write<Result>(_ block: () throws -> Result) throws -> Result {
        try openWrite()
        return try finishWrite(block)
    }

    /// Runs `block` in the write transaction just begun, then commits it (or cancels it if `block` throws).
    func finishWrite<Result>(_ block: () throws -> Result) throws -> Result {
        let result = try runInWrite(block)
        if isInWriteTransaction { try commitWrite() }
        return result
    }

    /// Runs `block` in the write transaction just begun; if it throws, cancels the transaction (unless `block`
    /// ended it) and rethrows. The caller commits.
    func runInWrite<Result>(_ block: () throws -> Result) throws -> Result {
        do {
            return try block()
        } catch {
            if isInWriteTransaction { cancelWrite() }
            throw error
        }
    }

    /// Starts a write transaction, waiting for the file's write lock, and advances the Realm to the newest
    /// version. End it with ``commitWrite()`` (which throws what went wrong in it) or ``cancelWrite()``.
    ///
    /// Like the Realm SDK's, this does not throw: when the transaction cannot start — a write already in
    /// progress, a frozen or read-only Realm, use from another isolation, a damaged file, an I/O error taking the
    /// lock — it traps with a message naming the cause. ``write(_:)`` and `asyncWrite(_:)` throw
    /// those errors instead and are the recommended way to write.
    ///
    /// ```swift
    /// realm.beginWrite()
    /// realm.add(Dog(value: ["name": "Rex"]))
    /// try realm.commitWrite()
    /// ```
    public func beginWrite() {
        do {
            try openWrite()
        } catch {
            fatalError("beginWrite(): the write transaction cannot start: \(error); use write { } to handle this error")
        }
    }

    /// Starts a write transaction as ``beginWrite()`` does, throwing what prevents it.
    func openWrite() throws(Realm.Error) {
        try checkThreadThrowing()
        try checkWritable()
        let started: WriteTransaction
        do {
            started = try store.beginWrite()
        } catch {
            throw Realm.Error.storage(error, path: path)
        }
        try adoptWrite(started)
    }

    /// Makes `started` (holding the write lock) this Realm's write transaction. If the Realm cannot read the
    /// newest version (it is damaged), the transaction is abandoned and the error thrown.
    func adoptWrite(_ started: WriteTransaction) throws(Realm.Error) {
        transaction = started
        do {
            try startedWrite()
        } catch {
            cancelWrite()
            if let damage = damage(in: error) { recordFileDamage(damage, cause: error) }
            throw error
        }
    }

    /// Throws unless this Realm may start a write transaction: one is in progress, the Realm is frozen or
    /// read-only, or the file was found damaged (``damage``).
    func checkWritable() throws(Realm.Error) {
        guard transaction == nil else {
            throw Realm.Error.invalidValue(
                type: "Realm", property: "", reason: "a write transaction is already in progress")
        }
        guard !frozen else {
            throw Realm.Error.invalidValue(type: "Realm", property: "", reason: "a frozen Realm cannot be written")
        }
        guard !configuration.readOnly else { throw Realm.Error.readOnly(path: path) }
        try throwIfDamaged()
    }

    /// Sets up the write transaction just started: the Realm reads its newest version (observers learn what
    /// changed up to it; they are told at the commit).
    func startedWrite() throws(Realm.Error) {
        if let transaction, transaction.baseVersion != snapshot.version {
            do {
                advance(to: try store.read())
            } catch {
                throw Realm.Error.storage(error, path: path)
            }
        }
        handles = [:]
        failure = nil
        generation &+= 1
        writeEpoch &+= 1
        syncCapture = SyncCaptureRegistry.write(path: path)
        try loadStoredSchema()
    }

    /// Commits the write transaction. If an operation in it failed, rolls it back and throws that error. With
    /// ``Configuration/maximumNumberOfActiveVersions`` set, a commit that would leave more versions pinned in this
    /// process than the limit is rolled back and throws ``RealmError/maximumActiveVersions(limit:)``. If a read found
    /// the file damaged (``damage``) since the transaction began, it rolls back and throws that damage: what the
    /// transaction wrote may rest on a value the damaged read replaced with a default.
    public func commitWrite() throws {
        let transaction = try transactionToCommit()
        let committed: UInt64
        do {
            committed = try transaction.commit()
        } catch {
            throw commitFailed(error)
        }
        didCommit(committed)
        try refreshSnapshot()
        observers.deliver()
    }

    /// The checks of ``commitWrite()`` before the commit: returns the transaction to commit, or rolls it back and
    /// throws what keeps it from committing.
    func transactionToCommit() throws -> WriteTransaction {
        try checkThreadThrowing()
        guard let transaction else { throw Realm.Error.notInWriteTransaction }
        if let failure = failure ?? fileDamage.error {
            cancelWrite()
            throw failure
        }
        do {
            // Full-text postings held by the transaction (see `PendingPostings`) go into their index trees.
            try tables.flushAllPostings()
        } catch {
            cancelWrite()
            throw error
        }
        if let limit = configuration.maximumNumberOfActiveVersions {
            // After the commit this Realm reads the new version and lets go of its current one.
            var pins = store.pinnedVersions
            if let mine = pins[snapshot.version] { pins[snapshot.version] = mine > 1 ? mine - 1 : nil }
            if pins.count + 1 > Int(limit) {
                cancelWrite()
                throw Realm.Error.maximumActiveVersions(limit: limit)
            }
        }
        if let capture = syncCapture.take() {
            // The upload queue entry goes into the same storage transaction as the write it records.
            do {
                try appendCapturedTransaction(capture)
            } catch {
                cancelWrite()
                throw error
            }
        }
        return transaction
    }

    /// Ends the write transaction whose commit failed with `error` and returns the error to throw.
    func commitFailed(_ error: StorageError) -> Realm.Error {
        cancelWrite()
        let failure = Realm.Error.storage(error, path: path)
        if let damage = damage(in: failure) { fileDamage.record(damage) }
        return failure
    }

    /// Ends the write transaction that committed `committed` (durable and published) and tells the others.
    /// The caller then reads the new version and delivers to observers.
    func didCommit(_ committed: UInt64) {
        self.transaction = nil
        handles = [:]
        generation &+= 1
        CommitSignal.shared.post(path + "\u{0}")
        Coordinator.for(self).committed(version: committed, by: self)
    }

    /// Reads the newest version (after a commit).
    func refreshAfterCommit() throws(Realm.Error) { try refreshSnapshot() }

    /// Abandons the write transaction: nothing of it is applied.
    public func cancelWrite() {
        checkThread()
        guard let transaction else { return }
        transaction.abort()
        self.transaction = nil
        syncCapture = nil
        handles = [:]
        failure = nil
        generation &+= 1
        // Definitions registered in the abandoned transaction are gone again.
        do {
            try loadStoredSchema()
        } catch {
            noteDamage(error)
        }
        observers.deliver()
    }

    /// Advances to the newest version. Returns whether there was a newer version.
    @discardableResult
    public func refresh() -> Bool {
        checkThread()
        guard transaction == nil, !frozen else { return false }
        let before = snapshot.version
        do {
            try refreshSnapshot()
        } catch {
            noteDamage(error)
        }
        observers.deliver()
        return snapshot.version != before
    }

    private func refreshSnapshot() throws(Realm.Error) {
        do {
            advance(to: try store.read())
        } catch {
            throw .storage(error, path: path)
        }
    }

    /// Moves the Realm to `newer` (a version at least as new as its current one). Observers record what changed
    /// between the two versions (`changes`, when the coordinator computed them for exactly these versions);
    /// they are told when the caller delivers.
    private func advance(to newer: ReadTransaction, changes: VersionChanges? = nil) {
        let older = snapshot
        snapshot = newer
        pinned = nil
        views = [:]
        generation &+= 1
        readEpoch &+= 1
        // The class definitions are read again only when their tree changed (a refresh after every commit of a
        // busy file must not decode them each time).
        if transaction != nil
            || (try? older.tree(named: TableNames.schema)?.root) != (try? newer.tree(named: TableNames.schema)?.root)
        {
            do {
                try loadStoredSchema()
            } catch {
                noteDamage(error)
            }
        }
        if newer.version != older.version {
            observers.advanced(from: older, to: newer, realm: self, changes: changes)
            if coordinated { Coordinator.for(self).advanced(self, to: newer) }
        }
    }

    /// The coordinator's refresh, on this Realm's actor: advances to `newer` (unless already there or past it)
    /// with the changes it computed from version `base` (used only if this Realm still reads `base`), then
    /// delivers.
    func refresh(to newer: ReadTransaction, changes: VersionChanges, from base: UInt64) {
        checkThread()
        guard transaction == nil, !frozen else { return }
        if newer.version > snapshot.version {
            advance(to: newer, changes: snapshot.version == base ? changes : nil)
        }
        observers.deliver()
    }

    /// The version this Realm reads.
    var currentSnapshot: ReadTransaction { snapshot }

    /// Releases the version this Realm reads; the next access reads the newest one. Observers' `AsyncSequence`s
    /// end.
    ///
    /// As in the Realm SDK, every object read from this Realm before the call is invalidated
    /// (``ObjectBase/isInvalidated`` is true): reading one of its properties traps with "Object has been deleted or
    /// invalidated.", and setting one in a write fails the transaction with ``RealmError/invalidatedObject``. Read the
    /// objects again from the Realm (by primary key, or from a query) to use them.
    public func invalidate() {
        checkThread()
        if transaction != nil { cancelWrite() }
        guard !frozen else { return }
        invalidations &+= 1
        do {
            try refreshSnapshot()
        } catch {
            noteDamage(error)
        }
        observers.invalidated()
    }

    /// The write transaction for a mutation, or nil when an earlier operation already failed it (the mutation
    /// is then ignored). Outside a write transaction this traps: mutations cannot report errors.
    func transactionForMutation(_ what: @autoclosure () -> String) -> WriteTransaction? {
        checkThread()
        if let migrationTarget {
            migrationTarget.fail(
                Realm.Error.invalidValue(
                    type: "Migration", property: "", reason: "\(what()): old objects of a migration are read-only"))
            return nil
        }
        if frozen {
            // Not "needs a write transaction": a write on the live Realm would not help.
            fatalError(
                "\(what()): the object is frozen (a read-only snapshot of one version); change its live version "
                    + "instead: call thaw() and set it inside realm.write { }")
        }
        guard let transaction else {
            fatalError("\(what()): \(Realm.Error.notInWriteTransaction)")
        }
        return failure == nil ? transaction : nil
    }

    /// Records the first error of the write transaction; the transaction rolls back at commit. Damage is
    /// recorded for the file too (see ``damage``).
    func fail(_ error: any Swift.Error) { tables.fail(error) }

    /// Counts ``invalidate()`` calls: an accessor made before the latest one (``ManagedObject/invalidation``) is
    /// invalidated.
    @exclusivity(unchecked) var invalidations: UInt32 = 0

    /// Bumped whenever what this Realm reads may have changed (a new version, or a change in its write
    /// transaction); accessors holding row bytes refetch when it moves (see `TableStore.generation`).
    @inlinable var generation: UInt64 {
        get { tables.generation }
        set { tables.generation = newValue }
    }
    /// Bumped when the snapshot changes (cached tree views expire).
    private var readEpoch: UInt64 {
        get { tables.readEpoch }
        set { tables.readEpoch = newValue }
    }
    /// Bumped when a write transaction starts (cached tree handles expire).
    private var writeEpoch: UInt64 {
        get { tables.writeEpoch }
        set { tables.writeEpoch = newValue }
    }
}

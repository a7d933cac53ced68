public import Foundation
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

    /// The first error of the write transaction, if an operation failed it.
    var failureOfWrite: Realm.Error? { failure }

    /// The schema version stored in the file (nil for a new file), as of the current version or write.
    var fileSchemaVersion: UInt64? { storedSchemaVersion }

    /// Records `stored` as the definition of its class in the write transaction; nil removes class `name`.
    func storeClassDefinition(_ stored: StoredClass?, named name: String) throws(Realm.Error) {
        try tables.storeClassDefinition(stored, named: name)
    }

    /// Forgets every class definition of the write transaction (a reset deleted them all).
    func forgetStoredSchema() { tables.forgetStoredSchema() }

    /// Forgets cached tree handles of the write transaction (after trees were dropped or renamed).
    func invalidateWriteCaches() { tables.invalidateWriteCaches() }

    /// Stores the configured schema version (the models match the file, so nothing else changes).
    func recordSchemaVersion() throws(Realm.Error) { try tables.recordSchemaVersion(configuration.schemaVersion) }

    deinit {
        transaction?.abort()
        if coordinated { Coordinator.for(self).left(ObjectIdentifier(self)) }
    }

    private static func openStore(_ configuration: Configuration) throws(StorageError) -> Store {
        let events = storeEvents(configuration)
        if let identifier = configuration.inMemoryIdentifier {
            return try Store.inMemory(
                identifier: identifier,
                options: StoreOptions(events: events, encryptionKey: configuration.encryptionKey.map { Array($0) }))
        }
        let path = (configuration.fileURL ?? Configuration.defaultFileURL).path
        let options = StoreOptions(
            readOnly: configuration.readOnly, createIfMissing: !configuration.readOnly, events: events,
            encryptionKey: configuration.encryptionKey.map { Array($0) })
        if let shouldCompact = configuration.shouldCompactOnLaunch, !configuration.readOnly {
            try Store.compactOnLaunch(path: path, options: options, shouldCompact: shouldCompact)
        }
        return try Store.open(path: path, options: options)
    }

    // MARK: Schema

    /// The object types stored in the file and those this Realm has bound; as in the SDK, each type's
    /// `LinkingObjects` are in ``ObjectSchema/computedProperties``, not in ``ObjectSchema/properties``.
    public var schema: Schema {
        var classes: [String: ObjectSchema] = [:]
        for binding in bindings.values { classes[binding.className] = binding.table.schema }
        for (name, stored) in storedClasses where classes[name] == nil {
            classes[name] = ObjectSchema(
                className: name,
                properties: stored.properties.map {
                    Property(
                        columnName: $0.name, type: $0.type, isOptional: $0.optional, isIndexed: $0.indexed,
                        isPrimary: $0.primary,
                        objectClassName: $0.objectClassName, name: $0.name, isArray: $0.isList,
                        isSet: $0.isSet, isMap: $0.isMap, isFullTextIndexed: $0.isFullText)
                }, isEmbedded: stored.embedded, isAsymmetric: stored.asymmetric)
        }
        // As the SDK lists them: linking objects among the computed properties, not the stored ones.
        return Schema(
            objectSchema: classes.values.map(\.withComputedPropertiesApart).sorted { $0.className < $1.className })
    }

    private func loadStoredSchema() throws(Realm.Error) { try tables.loadStoredSchema() }

    /// The class definitions stored in the write transaction, or else in the snapshot.
    static func readSchema(transaction: WriteTransaction?, snapshot: ReadTransaction, path: String)
        throws(Realm.Error) -> StoredSchema
    {
        try TableStore.readSchema(transaction: transaction, snapshot: snapshot, path: path)
    }

    /// The binding of `type` (and of every type it links to) in this file, checking stored definitions.
    func binding(for type: ObjectBase.Type) throws(Realm.Error) -> TableBinding { try tables.binding(for: type) }

    /// Writes the class definition of `table` (and of the types it links to) into the file if it is missing.
    func registerTable(_ table: TableSchema) throws(Realm.Error) {
        guard storedClasses[table.className] == nil else { return }
        let transaction = try activeTransaction()
        try mutate {
            let tree = try transaction.tree(named: TableNames.schema, create: .keyed)!
            if storedSchemaVersion == nil { try recordSchemaVersion() }
            if !storedBacklinks {
                try tables.rebuildBacklinks()
                storedBacklinks = true
            }
            let stored = StoredClass(table.schema)
            try transaction.put(TableNames.classKey(table.className), stored.encoded(), in: tree)
            storedClasses[table.className] = stored
            _ = try transaction.tree(named: TableNames.rows(table.className), create: .keyed)
            if table.primaryKeyIndex != nil {
                _ = try transaction.tree(named: TableNames.primaryKeys(table.className), create: .keyed)
            }
        }
        for info in table.infos {
            if let target = info.objectType { try registerTable(try SchemaRegistry.shared.table(for: target)) }
        }
    }

    /// The binding this Realm made for the model type whose class name is `name`, if any.
    func boundBinding(named name: String) -> TableBinding? { tables.boundBinding(named: name) }

    /// The class definitions stored in the file, as of the current version or write.
    func schemaClasses() -> [String: StoredClass] { storedClasses }

    /// The stored schema as this Realm read it (of the current version, or of the write in progress).
    var loadedSchema: StoredSchema { tables.loadedSchema }

    /// The write transaction in progress, if any.
    var writeTransactionIfAny: WriteTransaction? { transaction }

    /// Identifies the current write transaction (tree handles from an earlier one are stale).
    var writeTransactionEpoch: UInt64 { writeEpoch }

    /// The tree `name` in the current snapshot (nil inside a write transaction or if it does not exist).
    func treeView(_ name: String) -> TreeView? { tables.treeView(name) }

    /// Whether the file (as of the current version or write) defines class `name`.
    func isStored(_ name: String) -> Bool { tables.isStored(name) }

    // MARK: Confinement

    /// Traps with ``RealmError/wrongThread`` (and what to do instead) when called outside the Realm's thread, actor
    /// or task (frozen Realms are readable anywhere).
    @usableFromInline
    func checkThread() {
        switch confinement {
        case .none:
            return
        case .thread(let owner):
            guard pthread_equal(owner, pthread_self()) != 0 else { fatalError(wrongIsolationMessage) }
        case .actor, .task, .queue:
            // Asking the runtime which actor, task or queue runs costs more than a property read: skip it while
            // the calling thread is the one the last check passed on (an actor, a task or a serial queue runs on
            // one thread at a time, so only code that smuggled the Realm past the compiler could be on that
            // thread for another actor, task or queue).
            let thread = pthread_self()
            if let verifiedThread, pthread_equal(verifiedThread, thread) != 0 { return }
            if case .task(let owner) = confinement {
                guard TaskIdentity.current == owner else { fatalError(wrongIsolationMessage) }
            } else if case .queue(let queue) = confinement {
                guard queue.isCurrent else { fatalError(wrongIsolationMessage) }
            } else {
                guard let ownerActor else { fatalError("\(wrongIsolationMessage) (and the actor is gone)") }
                ownerActor.preconditionIsolated(wrongIsolationMessage)
            }
            verifiedThread = thread
        }
    }

    /// The thread on which an actor- or task-confined Realm's isolation check last passed (see
    /// ``checkThread()``).
    @exclusivity(unchecked) private var verifiedThread: pthread_t?

    /// Why a check failed and what to do instead.
    private var wrongIsolationMessage: String { "\(Realm.Error.wrongThread): \(confinement.advice)" }

    /// Throws ``RealmError/wrongThread`` when called outside the Realm's thread, task or queue. An actor-confined Realm
    /// used off its actor traps instead: Swift offers no way to ask which actor is running without trapping (and the
    /// compiler already keeps a non-`Sendable` Realm on its actor).
    func checkThreadThrowing() throws(Realm.Error) {
        switch confinement {
        case .none:
            return
        case .thread(let owner):
            guard pthread_equal(owner, pthread_self()) != 0 else { throw .wrongThread }
        case .task(let owner):
            guard TaskIdentity.current == owner else { throw .wrongThread }
        case .queue(let queue):
            guard queue.isCurrent else { throw .wrongThread }
        case .actor:
            guard let ownerActor else { throw .wrongThread }
            ownerActor.preconditionIsolated(wrongIsolationMessage)
        }
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
        syncCapture = SyncCaptureRegistry.write(path: configuration.path)
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

    /// The write transaction, or ``RealmError/notInWriteTransaction`` outside one.
    func activeTransaction() throws(Realm.Error) -> WriteTransaction { try tables.activeTransaction() }

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

    /// Runs a storage operation that modifies the write transaction (see `TableStore.mutate`).
    func mutate<R>(_ body: () throws -> R) throws(Realm.Error) -> R { try tables.mutate(body) }

    /// Runs a storage operation, mapping engine errors (see `TableStore.storage`).
    func storage<R>(_ body: () throws -> R) throws(Realm.Error) -> R { try tables.storage(body) }

    /// The tree `name` of the write transaction (see `TableStore.handle`).
    func handle(_ name: String, create: Bool) throws(Realm.Error) -> TreeHandle? {
        try tables.handle(name, create: create)
    }

    /// The tree `name` of the snapshot (see `TableStore.view`).
    private func view(_ name: String) -> TreeView? { tables.view(name) }

    // MARK: Reading rows

    /// Calls `body` with the row of object `key` in `tree`; nil if there is no such row.
    func withRow<R>(tree: String, key: Int64, _ body: (RowView) throws -> R) throws(Realm.Error) -> R? {
        try tables.withRow(tree: tree, key: key, body)
    }

    /// The row of object `key` in `tree`, held for repeated reads until ``generation`` moves; nil if absent.
    func stableRow(_ binding: TableBinding, key: Int64) throws(Realm.Error) -> StableValue? {
        try tables.stableRow(binding, key: key)
    }

    /// The rows tree of `binding` in the write transaction, created if missing, cached in the binding.
    func writableRows(_ binding: TableBinding) throws(Realm.Error) -> TreeHandle { try tables.writableRows(binding) }

    /// The primary-key tree of `binding` in the write transaction, created if missing, cached in the binding.
    func writablePrimaryKeys(_ binding: TableBinding) throws(Realm.Error) -> TreeHandle {
        try tables.writablePrimaryKeys(binding)
    }

    /// Writes `binding`'s class definition into the file unless this write transaction already found it there.
    func registerIfNeeded(_ binding: TableBinding) throws(Realm.Error) {
        if binding.storedEpoch == writeEpoch { return }
        if !isStored(binding.className) { try registerTable(binding.table) }
        binding.storedEpoch = writeEpoch
    }

    /// The number of entries of `tree` (see `TableStore.rowCount`).
    func rowCount(tree: String) -> Int { tables.rowCount(tree: tree) }

    /// The key of the object at `position` in key order.
    func objectKey(tree: String, at position: Int) throws(Realm.Error) -> Int64 {
        try tables.objectKey(tree: tree, at: position)
    }

    /// Every object key of `tree`, in order.
    func objectKeys(tree: String) throws(Realm.Error) -> [Int64] { try tables.objectKeys(tree: tree) }

    /// The key of the object of `binding`'s type whose primary key encodes to `encoded`, if there is one.
    func lookupPrimaryKey(_ binding: TableBinding, _ encoded: [UInt8]) throws(Realm.Error) -> Int64? {
        try tables.lookupPrimaryKey(binding, encoded)
    }

    /// A cursor over the rows of `binding`'s type in the current snapshot (see `TableStore.rowCursor`).
    func rowCursor(_ binding: TableBinding) -> TreeCursor? { tables.rowCursor(binding) }

    /// A managed accessor for object `key`, primed with its row bytes from the current snapshot.
    func object(_ binding: TableBinding, key: Int64, row: StableValue) -> ObjectBase {
        accessor(for: ManagedObject(realm: self, binding: binding, key: key, row: row, generation: generation))
    }

    /// The binding of a stored class for `DynamicObject` access.
    func dynamicBinding(_ className: String) throws(Realm.Error) -> TableBinding {
        try tables.dynamicBinding(className)
    }

    /// Every object of the stored class `className`, accessed by property name. Traps if the file has no such
    /// class, or if it is embedded or asymmetric.
    public func dynamicObjects(_ className: String) -> Results<DynamicObject> {
        checkThread()
        return queryable { () throws(Realm.Error) in try dynamicBinding(className) }
    }

    /// A managed accessor for object `key` of `binding`'s type.
    func object(_ binding: TableBinding, key: Int64) -> ObjectBase {
        let managed = ManagedObject(realm: self, binding: binding, key: key)
        managed.referencedGeneration = generation
        return accessor(for: managed)
    }

    /// An object of `managed`'s type reading and writing through `managed`.
    func accessor(for managed: ManagedObject) -> ObjectBase {
        let binding = managed.binding
        let table = binding.table
        if let properties = table.accessorProperties {
            // No boxes: each @Persisted initialiser takes its property from the thread's stack instead. The
            // stack holds nothing strongly: `managed`, `table` and `properties` outlive the initialiser.
            let type = table.type
            let (object, declared) = properties.withUnsafeBufferPointer { columns in
                BoxStack.local.withValue { stack in
                    stack.accessorOwner = Unmanaged.passUnretained(managed)
                    stack.accessorType = ObjectIdentifier(type)
                    stack.accessorColumns = columns
                    stack.accessorNext = 0
                    let object = type.init()
                    let declared = stack.accessorNext
                    stack.accessorOwner = nil
                    stack.accessorType = nil
                    stack.accessorColumns = UnsafeBufferPointer(start: nil, count: 0)
                    return (object, declared)
                }
            }
            guard declared == properties.count else {
                fatalError("\(binding.className) declared \(declared) properties, expected \(properties.count)")
            }
            return object
        }
        let object = binding.table.type.init()
        binding.table.attach(object, to: managed)
        object.managed = managed
        return object
    }

    // MARK: Objects

    /// A `Results` over the binding `resolve` returns; traps (these calls cannot throw) when it fails or names an
    /// embedded or asymmetric type.
    private func queryable<Element>(_ resolve: () throws(Realm.Error) -> TableBinding) -> Results<Element> {
        do {
            let binding = try resolve()
            guard binding.table.kind == .object else {
                fatalError(
                    "\(binding.className) is \(binding.table.kind == .embedded ? "embedded" : "asymmetric") and cannot be queried"
                )
            }
            return Results(realm: self, binding: binding)
        } catch {
            fatalError("\(error)")
        }
    }

    /// Every object of `type`, as a live collection.
    public func objects<Element: ObjectBase>(_ type: Element.Type) -> Results<Element> {
        checkThread()
        return queryable { () throws(Realm.Error) in try binding(for: type) }
    }

    /// Every object of `type`'s root class, each seen through a projection of `type`, as a live collection that
    /// can be filtered and sorted by projected names (`"homeCity == 'Lisbon'"`) or the root's key paths, and
    /// observed (only projected properties count as modifications).
    ///
    /// ```swift
    /// let people = realm.objects(PersonProjection.self).sorted(byKeyPath: "firstName")
    /// ```
    public func objects<Element: ProjectionObservable>(_ type: Element.Type) -> Results<Element> {
        checkThread()
        return queryable { () throws(Realm.Error) in try binding(for: Element.Root.self) }
    }

    /// The object of `type` with primary key `key`, or nil (also when the file's primary-key index is damaged:
    /// see ``damage``).
    public func object<Element: Object, Key>(ofType type: Element.Type, forPrimaryKey key: Key) -> Element? {
        checkThread()
        do {
            let binding = try binding(for: type)
            guard let index = binding.table.primaryKeyIndex else {
                fatalError("\(binding.className) has no primary key")
            }
            let info = binding.table.infos[index]
            guard let stored = StoredValueConversion.stored(from: key, as: info),
                let encoded = KeyEncoding.primaryKey(stored)
            else {
                fatalError(
                    "\(Realm.Error.invalidValue(type: binding.className, property: binding.table.schema.properties[index].columnName, reason: "\(Key.self) is not a valid primary key value"))"
                )
            }
            guard let objectKey = try lookupPrimaryKey(binding, encoded) else { return nil }
            return object(binding, key: objectKey) as? Element
        } catch {
            return survive(error, "\(error)", returning: nil)
        }
    }

    // MARK: Writing objects

    /// Adds an unmanaged object (and the unmanaged objects it links to) to the Realm. With a primary key,
    /// `update` decides what happens when an object with that key exists. Errors fail the write transaction.
    public func add(_ object: Object, update: UpdatePolicy = .error) {
        guard transactionForMutation("add(\(type(of: object)))") != nil else { return }
        do {
            _ = try insert(object, update: update)
        } catch {
            fail(error)
        }
    }

    /// Adds every object of `objects`.
    public func add<S: Sequence>(_ objects: S, update: UpdatePolicy = .error) where S.Element: Object {
        for object in objects { add(object, update: update) }
    }

    /// Creates a managed object of `type` from `value` (a dictionary, an array in declared order, or an object).
    /// With a primary key and an update policy other than `.error`, an existing object is updated with the
    /// values given (a dictionary updates only its keys).
    @discardableResult
    public func create<Element: Object>(
        _ type: Element.Type, value: Any = [String: Any](), update: UpdatePolicy = .error
    )
        -> Element
    {
        guard transactionForMutation("create(\(type))") != nil else { return Element() }
        do {
            let binding = try binding(for: type)
            var entries: [GivenValue]?
            if update != .error, let index = binding.table.primaryKeyIndex {
                let given = try ObjectValues.entries(of: value, table: binding.table)
                entries = given
                if let keyValue = given.first(where: { $0.property == index })?.entry,
                    let stored = StoredValueConversion.stored(from: keyValue, as: binding.table.infos[index]),
                    let encoded = KeyEncoding.primaryKey(stored),
                    let existing = try lookupPrimaryKey(binding, encoded)
                {
                    // No unmanaged object is made for an object that exists: only its accessor.
                    let managed = self.object(binding, key: existing)
                    try self.update(managed, binding: binding, key: existing, from: given, policy: update)
                    return managed as? Element ?? Element()
                }
            }
            let object = Element()
            if let entries {
                try ObjectValues.apply(entries, to: object, schema: binding.table)
            } else {
                try ObjectValues.apply(value, to: object, schema: binding.table)
            }
            _ = try insert(object, update: update)
            return object
        } catch {
            fail(error)
            return Element()
        }
    }

    /// Deletes a managed object. Links to it become nil; its embedded objects are deleted with it.
    ///
    /// Deleting an object that is already deleted (by an earlier write, another Realm, or earlier in this one) is
    /// an error, as in the Realm SDK: the write transaction fails, and `write` (or `commitWrite()`) rolls it back
    /// whole and throws ``RealmError/invalidatedObject``. Check ``ObjectBase/isInvalidated`` first to delete an object
    /// only if it still exists.
    public func delete(_ object: ObjectBase) {
        guard transactionForMutation("delete(\(type(of: object)))") != nil else { return }
        do {
            let managed = try managedForDeletion(object)
            guard try tables.remove(binding: managed.binding, key: managed.key, direct: true) else {
                throw Realm.Error.invalidatedObject
            }
        } catch {
            fail(error)
        }
    }

    /// The stored object `object` is, when this Realm can delete it.
    private func managedForDeletion(_ object: ObjectBase) throws(Realm.Error) -> ManagedObject {
        guard let managed = object.managed, managed.realm === self else {
            let reason =
                object.managed?.realm.frozen == true
                ? "a frozen object cannot be deleted: delete its live version (object.thaw())"
                : "only objects managed by this Realm can be deleted"
            throw Realm.Error.invalidValue(type: type(of: object).className(), property: "", reason: reason)
        }
        // Read before `invalidate()`: invalidated, as in the SDK, even though its row may still be stored.
        guard !managed.isInvalidatedByRealm else { throw Realm.Error.invalidatedObject }
        guard managed.binding.table.kind != .asymmetric else {
            throw Realm.Error.invalidValue(
                type: managed.binding.className, property: "",
                reason: "asymmetric objects are removed by acknowledging their outbox delivery")
        }
        return managed
    }

    /// Deletes every object of `objects`. Deleting every object of a type (`realm.objects(T.self)`) clears the
    /// type's trees at once instead of deleting row by row.
    ///
    /// An object that was already deleted when the call began fails the write transaction, as
    /// `delete(_:)` does for one object; one that appears twice (a list holding it twice), or that an earlier
    /// deletion of the same call removed (an embedded object with its parent), is deleted once.
    public func delete<S: Sequence>(_ objects: S) where S.Element: ObjectBase {
        if let whole = objects as? any WholeTable, whole.realmForDeletion === self,
            let binding = whole.bindingForDeletion
        {
            guard transactionForMutation("delete(\(S.self))") != nil else { return }
            do {
                try tables.removeAll(binding: binding)
            } catch {
                fail(error)
            }
            return
        }
        guard transactionForMutation("delete(\(S.self))") != nil else { return }
        do {
            var targets: [ManagedObject] = []
            for object in objects {
                let managed = try managedForDeletion(object)
                guard try withRow(tree: managed.binding.rowsTree, key: managed.key, { _ in true }) != nil else {
                    throw Realm.Error.invalidatedObject
                }
                targets.append(managed)
            }
            for managed in targets { try tables.remove(binding: managed.binding, key: managed.key, direct: true) }
        } catch {
            fail(error)
        }
    }

    /// Deletes every object of every type.
    public func deleteAll() {
        guard transactionForMutation("deleteAll()") != nil else { return }
        do {
            try tables.removeEverything()
        } catch {
            fail(error)
        }
    }

    // MARK: Files

    /// Writes a compacted copy of the Realm's newest committed version to `fileURL`, which must not exist.
    /// Throws the file's ``damage`` if a read found it damaged; damage the copy runs into is thrown (and
    /// recorded) as ``RealmError/incompatibleFile(path:reason:)`` naming this Realm's file and the page.
    public func writeCopy(toFile fileURL: URL) throws {
        try checkThreadThrowing()
        try throwIfDamaged()
        guard !FileManager.default.fileExists(atPath: fileURL.path) else {
            throw Realm.Error.fileAccess(path: fileURL.path, reason: "the file already exists")
        }
        do {
            _ = try store.compact(to: fileURL.path)
        } catch {
            if let damage = damage(in: error) {
                recordFileDamage(damage, cause: error)
                throw damage
            }
            throw Realm.Error.storage(error, path: fileURL.path)
        }
    }

    /// Deletes the files of `configuration`'s Realm: the file, its commit log and its lock file. Returns whether
    /// the file existed.
    ///
    /// As in the Realm SDK, a file that is open cannot be deleted: while a Realm in this or another process uses
    /// it (frozen objects and collections included), this throws ``RealmError/fileInUse(path:)`` and deletes
    /// nothing. Release every Realm of the file first. An in-memory Realm has no files: this returns false, or
    /// throws `fileInUse` while a Realm with that identifier is open (its data lives until the last one goes).
    @discardableResult
    public static func deleteFiles(for configuration: Configuration) throws -> Bool {
        if let identifier = configuration.inMemoryIdentifier {
            if Store.isInMemoryStoreOpen(identifier: identifier) {
                throw Realm.Error.fileInUse(path: configuration.path)
            }
            return false
        }
        let path = (configuration.fileURL ?? Configuration.defaultFileURL).path
        do {
            return try Store.deleteFiles(path: path)
        } catch {
            throw Realm.Error.storage(error, path: path)
        }
    }

    /// Whether the file of `configuration` exists.
    public static func fileExists(for configuration: Configuration) -> Bool {
        guard configuration.inMemoryIdentifier == nil else { return false }
        return FileManager.default.fileExists(atPath: (configuration.fileURL ?? Configuration.defaultFileURL).path)
    }
}

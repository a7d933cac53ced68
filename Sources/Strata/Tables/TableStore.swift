import StrataStorage

/// The table layer's state for one Realm: the version it reads or the write transaction it writes, the tree
/// handles and views it has opened there, the bindings of model types to stored classes, the stored schema as of
/// that version, and the first error of the write transaction.
///
/// It works on a transaction and knows no `Realm`: no confinement, no transaction lifecycle, no notifications.
/// The `Realm` that owns it starts and ends transactions and reads `failure` at commit; damage the table code
/// finds reaches the Realm through `reportDamage`.
@usableFromInline
final class TableStore {
    /// The file's path, for errors.
    let path: String
    /// The version read outside a write transaction (and the one a write transaction started from).
    @exclusivity(unchecked) var snapshot: ReadTransaction
    /// Trees of `snapshot` looked up so far (nil: the tree does not exist), cleared with each new snapshot.
    var views: [String: TreeView?] = [:]
    /// The write transaction in progress, if any.
    @exclusivity(unchecked) var transaction: WriteTransaction? {
        // Postings held for a transaction never outlive it (a commit flushes them first).
        didSet { if !pendingPostings.isEmpty { pendingPostings = [:] } }
    }
    /// Full-text postings the write transaction added and has not written to their index trees yet, by tree name
    /// (see `PendingPostings`).
    var pendingPostings: [String: PendingPostings] = [:]
    /// Trees of the write transaction opened so far, cleared when the transaction ends.
    var handles: [String: TreeHandle] = [:]
    /// The first error of the write transaction; the transaction rolls back at commit.
    var failure: Realm.Error?
    /// Bindings of model types (by type) to the stored classes.
    @exclusivity(unchecked) var bindings: [ObjectIdentifier: TableBinding] = [:] {
        didSet {
            lastAdded = nil
            if bindings.isEmpty { resolvedPaths.withLock { $0.removeAll() } }
        }
    }
    /// The model type `Realm.insert` last accepted (not dynamic, not embedded) and its binding: a loop adding
    /// objects of one class skips the dictionary look-up (hashing the type, ~200 instructions an object) and the
    /// checks. Forgotten whenever `bindings` changes.
    @exclusivity(unchecked) var lastAdded: (type: ObjectIdentifier, binding: TableBinding)?
    /// Bindings of stored classes for `DynamicObject` access, by class name.
    var dynamicBindings: [String: TableBinding] = [:] {
        didSet { if dynamicBindings.isEmpty { resolvedPaths.withLock { $0.removeAll() } } }
    }
    /// Query key paths already resolved from a class (see `QueryBinder.bindPath`): applications filter with the
    /// same few paths again and again. Kept here rather than on the bindings (a path holds its root binding: the
    /// binding would hold itself), cleared whenever bindings are rebuilt. Locked: frozen Realms are read from any
    /// thread.
    let resolvedPaths = Locked<[ResolvedPathKey: BoundPath]>([:])

    /// A resolved path's cache key: its root binding and its components.
    struct ResolvedPathKey: Hashable {
        let root: ObjectIdentifier
        let components: [String]
    }

    /// Class definitions stored in the file, as of the current version (or the write in progress).
    var storedClasses: [String: StoredClass] = [:] {
        didSet { linkSources = LinkSources() }
    }
    /// The stored properties that can link to each class, worked out from ``storedClasses`` once (see
    /// `Unlinking.swift`): every delete asks.
    var linkSources = LinkSources()
    /// The schema version stored in the file (nil for a new file).
    var storedSchemaVersion: UInt64?
    /// Whether the file's backlink trees are complete (see `TableNames.backlinksKey`).
    var storedBacklinks = false

    /// The migration in progress in the write transaction, if any: primary keys and indexes are rebuilt when it
    /// ends instead of maintained row by row, and primary keys may change.
    var migration: MigrationState?
    /// The write transaction's change capture for Strata Sync (the rows it writes and deletes), when the file's
    /// writes are captured (see `SyncCapture/`); nil otherwise, which is all an unsynced write pays.
    var syncCapture: SyncCaptureWrite?
    /// The last object a write transaction found by its primary key (`Realm.object(ofType:forPrimaryKey:)`), with
    /// the encoded key that found it, at ``generation``: deleting that object at the same generation needs no read
    /// of its row to learn which primary-key entry to remove (see `TableStore.remove`).
    var lastPrimaryKeyLookup: PrimaryKeyLookup?

    /// Bumped whenever what the tables read may have changed (a new version, or a change in the write
    /// transaction); accessors holding row bytes refetch when it moves.
    @exclusivity(unchecked) @usableFromInline var generation: UInt64 = 0
    /// Bumped when the snapshot changes (cached tree views expire).
    @exclusivity(unchecked) var readEpoch: UInt64 = 0
    /// Bumped when a write transaction starts (cached tree handles expire).
    @exclusivity(unchecked) var writeEpoch: UInt64 = 0

    /// Where damage the table code finds goes (the owner records it for the file and reports it); set by the
    /// owner once it exists.
    var reportDamage: (_ damage: Realm.Error, _ cause: (any Swift.Error)?) -> Void = { _, _ in }

    /// Tables reading `snapshot` of the file at `path`.
    init(snapshot: ReadTransaction, path: String) {
        self.snapshot = snapshot
        self.path = path
    }
}

// MARK: Trees

extension TableStore {
    /// The tree `name` of the write transaction (created if missing with `create`), cached until the
    /// transaction ends; nil if there is none.
    func handle(_ name: String, create: Bool) throws(Realm.Error) -> TreeHandle? {
        if let handle = handles[name] { return handle }
        let transaction = try activeTransaction()
        let handle =
            create
            ? try mutate { try transaction.tree(named: name, create: .keyed) }
            : try storage { try transaction.tree(named: name) }
        if let handle { handles[name] = handle }
        return handle
    }

    /// The tree `name` of the snapshot, nil if there is none (or, after reporting the damage, if the catalog
    /// naming it is damaged).
    func view(_ name: String) -> TreeView? {
        if let cached = views[name] { return cached }
        let view: TreeView?
        do {
            view = try snapshot.tree(named: name)
        } catch {
            noteDamage(error)
            view = nil
        }
        views[name] = view
        return view
    }

    /// The tree `name` in the current snapshot (nil inside a write transaction or if it does not exist).
    func treeView(_ name: String) -> TreeView? { transaction == nil ? view(name) : nil }
}

/// How the table layer maps the engine's errors and records the write transaction's first failure.
extension TableStore {
    /// The write transaction, or ``RealmError/notInWriteTransaction`` outside one.
    func activeTransaction() throws(Realm.Error) -> WriteTransaction {
        guard let transaction else { throw .notInWriteTransaction }
        return transaction
    }

    /// The write transaction for a row write: ``RealmError/notInWriteTransaction`` outside one, and once an
    /// operation failed it (the rest of the failed operation writes nothing more).
    func transactionForWrite() throws(Realm.Error) -> WriteTransaction {
        guard let transaction, failure == nil else { throw .notInWriteTransaction }
        return transaction
    }

    /// Records the first error of the write transaction; the transaction rolls back at commit. Damage is
    /// reported to the owner too (see `reportDamage`).
    func fail(_ error: any Swift.Error) {
        let damage = damage(in: error)
        if let damage { reportDamage(damage, error) }
        guard failure == nil else { return }
        failure =
            damage ?? (error as? Realm.Error) ?? (error as? StorageError).map { .storage($0, path: path) }
            ?? .fileAccess(path: path, reason: "\(error)")
    }

    /// Reports `error` if it is damage, for reads that fall back to a default whatever failed them; inside a
    /// write transaction the transaction fails too, so it rolls back.
    func noteDamage(_ error: any Swift.Error) {
        guard let damage = damage(in: error) else { return }
        reportDamage(damage, error)
        if transaction != nil { fail(damage) }
    }

    /// `error` as damage of the file, or nil when it is another kind of failure (a programming error, a full
    /// disk, a rule of the API).
    func damage(in error: any Swift.Error) -> Realm.Error? {
        switch error {
        case let error as StorageError:
            switch error {
            case .corruptPage, .incompatibleFile: return Realm.Error.storage(error, path: path)
            case .wrongTreeKind:
                // The object layer names its trees and never asks for one of the other kind: the file changed it.
                return corruptData("a tree has the wrong kind: \(error)")
            case .invalidArgument(let reason) where Self.undecodableRow.contains(where: reason.hasPrefix):
                return corruptData(reason)
            default: return nil
            }
        case let error as Realm.Error:
            if case .incompatibleFile = error { return error }
            return nil
        case let error as FullText.DamagedPostings:
            return corruptData(error.reason)
        default:
            return nil
        }
    }

    /// How `RowView.init` (StrataStorage, Records/Row.swift) says that bytes stored as a row are not one.
    private static let undecodableRow = ["not a stored object", "stored object is truncated"]

    /// Reports stored data that cannot be what the schema says it is (a value of another type, a row that does
    /// not decode, a reference to an object that is not there) as damage of the file.
    func corruptData(_ reason: String) -> Realm.Error {
        .incompatibleFile(path: path, reason: "damaged data: \(reason)")
    }

    /// `count`, a tree's entry count read from the file, if the file could hold that many entries; a larger
    /// count is damage (so that no caller reserves memory for it or loops over it). Inside a write transaction,
    /// which may have added pages, counts are taken as they are.
    func plausibleCount(_ count: Int, of what: @autoclosure () -> String) throws(Realm.Error) -> Int {
        guard transaction == nil else { return count }
        // The smallest entry with its slot takes 8 bytes of a page.
        let limit = snapshot.pageCount &* (snapshot.pageSize / 8)
        guard count <= limit else { throw corruptData("\(what()) counts \(count) entries, more than the file holds") }
        return count
    }

    /// Runs a storage operation that modifies the write transaction.
    func mutate<R>(_ body: () throws -> R) throws(Realm.Error) -> R {
        defer { generation &+= 1 }
        return try storage(body)
    }

    /// Runs a storage operation, mapping engine errors (damage to ``RealmError/incompatibleFile(path:reason:)``).
    func storage<R>(_ body: () throws -> R) throws(Realm.Error) -> R {
        do {
            return try body()
        } catch let error as Realm.Error {
            throw error
        } catch let error as StorageError {
            throw damage(in: error) ?? .storage(error, path: path)
        } catch {
            throw damage(in: error) ?? .fileAccess(path: path, reason: "\(error)")
        }
    }
}

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
    @exclusivity(unchecked) var transaction: WriteTransaction?
    /// Trees of the write transaction opened so far, cleared when the transaction ends.
    var handles: [String: TreeHandle] = [:]
    /// The first error of the write transaction; the transaction rolls back at commit.
    var failure: Realm.Error?
    /// Bindings of model types (by type) to the stored classes.
    var bindings: [ObjectIdentifier: TableBinding] = [:] {
        didSet { if bindings.isEmpty { resolvedPaths.withLock { $0.removeAll() } } }
    }
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
    var storedClasses: [String: StoredClass] = [:]
    /// The schema version stored in the file (nil for a new file).
    var storedSchemaVersion: UInt64?
    /// Whether the file's backlink trees are complete (see `TableNames.backlinksKey`).
    var storedBacklinks = false

    /// Bumped whenever what the tables read may have changed (a new version, or a change in the write
    /// transaction); accessors holding row bytes refetch when it moves.
    @exclusivity(unchecked) @usableFromInline var generation: UInt64 = 0
    /// Bumped when the snapshot changes (cached tree views expire).
    @exclusivity(unchecked) var readEpoch: UInt64 = 0
    /// Bumped when a write transaction starts (cached tree handles expire).
    @exclusivity(unchecked) var writeEpoch: UInt64 = 0

    /// Tables reading `snapshot` of the file at `path`.
    init(snapshot: ReadTransaction, path: String) {
        self.snapshot = snapshot
        self.path = path
    }
}

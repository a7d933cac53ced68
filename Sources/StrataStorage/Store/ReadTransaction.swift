/// A consistent, immutable view of one committed version.
///
/// Readers never block and are never blocked: the pages of the version stay untouched until the last reference
/// to the transaction goes away, at which point the version is unpinned. A `ReadTransaction` is `Sendable` and
/// may be used from many threads at once.
public final class ReadTransaction: @unchecked Sendable {
    let shared: SharedFile
    let meta: Meta
    /// Keeps the pages of this version mapped for as long as the transaction lives.
    let mapping: Mapping
    let pages: SnapshotPages

    init(shared: SharedFile) throws(StorageError) {
        let (meta, mapping) = try shared.pinLatest()
        self.shared = shared
        self.meta = meta
        self.mapping = mapping
        self.pages = SnapshotPages(
            mapping: mapping, meta: meta, file: shared.pathRef, validated: shared.validated,
            decrypted: shared.decrypted)
    }

    deinit { shared.unpin(meta.version) }

    /// The committed version this transaction reads.
    public var version: UInt64 { meta.version }
    /// Pages in the version (used and free).
    public var pageCount: Int { Int(meta.pageCount) }
    /// The page size of the file.
    public var pageSize: Int { meta.pageSize }
    /// When the version was committed, in microseconds since 1970.
    public var commitTimeMicroseconds: UInt64 { meta.commitTime }

    var read: TreeRead<SnapshotPages> { TreeRead(source: pages) }

    /// The named tree, or nil when there is none.
    public func tree(named name: String) throws(StorageError) -> TreeView? {
        let key = Array(name.utf8)
        let entry = try key.withStorageBytes { (key) throws(StorageError) in try read.find(key, in: meta.catalog) }
        guard let entry else { return nil }
        return try view(of: entry)
    }

    /// The nested tree held by `entry`, its descriptor checked against its root page: a count that disagrees
    /// with the pages is reported here, before anything (`count`, `isEmpty`) can show it.
    func view(of entry: LeafEntry) throws(StorageError) -> TreeView {
        let root = try read.subtree(of: entry, pageCount: meta.pageCount)
        if root.root != 0 { _ = try pages.node(root.root, entries: UInt64(root.count)) }
        return TreeView(transaction: self, root: root)
    }

    /// Names of all named trees, in byte order.
    public func treeNames() throws(StorageError) -> [String] {
        var names: [String] = []
        var cursor = CursorCore(source: pages, tree: meta.catalog)
        var more = try cursor.first()
        while more {
            names.append(String(decoding: try cursor.entry().key, as: UTF8.self))
            more = try cursor.next()
        }
        return names
    }

    /// The catalog of named trees (for tools).
    var catalog: TreeView { TreeView(transaction: self, root: meta.catalog) }
}

/// A tree as seen by a read transaction. Cheap to copy; keeps its transaction alive.
public struct TreeView: Sendable {
    /// The transaction this view reads.
    public let transaction: ReadTransaction
    /// The tree's descriptor.
    public let root: TreeRoot

    /// Number of entries.
    public var count: Int { root.count }
    /// Whether the tree has no entries.
    public var isEmpty: Bool { root.count == 0 }
    /// Keyed tree or list.
    public var kind: TreeKind { root.kind }
    /// The tree's counter (see ``WriteTransaction/nextSequence(in:)``).
    public var sequence: UInt64 { root.sequence }

    /// A copy of the value stored under `key`, or nil.
    @inlinable
    public func get<K: StorageBytes>(_ key: K) throws(StorageError) -> [UInt8]? {
        try key.withStorageBytes { (key) throws(StorageError) -> [UInt8]? in try rawGet(key) }
    }

    @usableFromInline
    func rawGet(_ key: UnsafeRawBufferPointer) throws(StorageError) -> [UInt8]? {
        guard let entry = try transaction.read.find(key, in: root) else { return nil }
        return try transaction.read.value(of: entry)
    }

    /// Calls `body` with the value stored under `key` without copying it (unless it spans overflow pages);
    /// returns nil when the key is absent. The buffer is valid only inside `body`.
    @inlinable
    public func withValue<K: StorageBytes, R>(forKey key: K, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R?
    {
        try key.withStorageBytes { (key) throws -> R? in try rawWithValue(key, body) }
    }

    @usableFromInline
    func rawWithValue<R>(_ key: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R? {
        guard let entry = try transaction.read.find(key, in: root) else { return nil }
        return try transaction.read.withValue(of: entry, body)
    }

    /// Whether `key` is present.
    @inlinable
    public func contains<K: StorageBytes>(_ key: K) throws(StorageError) -> Bool {
        try key.withStorageBytes { (key) throws(StorageError) in try rawContains(key) }
    }

    @usableFromInline
    func rawContains(_ key: UnsafeRawBufferPointer) throws(StorageError) -> Bool {
        try transaction.read.find(key, in: root) != nil
    }

    /// The nested tree stored under `key`, or nil when the key is absent.
    @inlinable
    public func subtree<K: StorageBytes>(forKey key: K) throws(StorageError) -> TreeView? {
        try key.withStorageBytes { (key) throws(StorageError) -> TreeView? in try rawSubtree(key) }
    }

    @usableFromInline
    func rawSubtree(_ key: UnsafeRawBufferPointer) throws(StorageError) -> TreeView? {
        guard let entry = try transaction.read.find(key, in: root) else { return nil }
        return try transaction.view(of: entry)
    }

    /// The entry at position `index` in tree order (keys are empty for lists).
    public func element(at index: Int) throws(StorageError) -> (key: [UInt8], value: [UInt8]) {
        let (leaf, position) = try transaction.read.leaf(at: index, in: root)
        let entry = try leaf.leafEntry(position, file: transaction.pages.file)
        return (Array(entry.key), try transaction.read.value(of: entry))
    }

    /// The value at position `index`.
    public func value(at index: Int) throws(StorageError) -> [UInt8] { try element(at: index).value }

    /// The position of `key` in key order (or where it would be inserted) and whether it is present.
    @inlinable
    public func rank<K: StorageBytes>(of key: K) throws(StorageError) -> (index: Int, found: Bool) {
        try key.withStorageBytes { (key) throws(StorageError) in try rawRank(key) }
    }

    @usableFromInline
    func rawRank(_ key: UnsafeRawBufferPointer) throws(StorageError) -> (index: Int, found: Bool) {
        try transaction.read.rank(of: key, in: root)
    }

    /// A cursor over the tree, not yet positioned.
    public func makeCursor() -> TreeCursor { TreeCursor(view: self) }

    /// Calls `body` with each entry in order (keys ascending, or list order), optionally starting at `start`.
    /// Return false from `body` to stop early.
    public func scan(
        from start: [UInt8]? = nil, reverse: Bool = false, _ body: (_ key: [UInt8], _ value: [UInt8]) throws -> Bool
    ) throws {
        var cursor = makeCursor()
        var more: Bool
        if let start {
            more = reverse ? try cursor.seek(atOrBefore: start) : try cursor.seek(atOrAfter: start)
        } else {
            more = reverse ? try cursor.last() : try cursor.first()
        }
        while more {
            guard try body(try cursor.key(), try cursor.value()) else { return }
            more = reverse ? try cursor.previous() : try cursor.next()
        }
    }

    /// Calls `body` with each entry's key and value in place, in order, until it returns false: the fastest way
    /// to read a whole tree (one call per entry, no cursor steps across the module boundary). Values that span
    /// overflow pages are copied for the call; nested trees are passed as their descriptors' bytes.
    public func forEachEntry(_ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Bool)
        throws
    {
        var core = CursorCore(source: transaction.pages, tree: root)
        guard try core.first() else { return }
        let read = core.read
        try core.forEachRemaining { entry in
            if entry.storage == .overflow { return try read.withValue(of: entry) { try body(entry.key, $0) } }
            return try body(entry.key, entry.inlineValue)
        }
    }

    /// ``forEachEntry(_:)`` handing each value as a ``StableValue``, which the caller may keep for later reads while
    /// this view's read transaction is alive.
    public func forEachStableEntry(_ body: (_ key: UnsafeRawBufferPointer, _ value: StableValue) throws -> Bool) throws
    {
        var core = CursorCore(source: transaction.pages, tree: root)
        guard try core.first() else { return }
        let read = core.read
        try core.forEachRemaining { entry in try body(entry.key, try read.stableValue(of: entry)) }
    }

    /// Every entry, in order.
    public func entries() throws -> [(key: [UInt8], value: [UInt8])] {
        var result: [(key: [UInt8], value: [UInt8])] = []
        // The count comes from the file: reserve for it only within reason (a damaged count must not allocate).
        result.reserveCapacity(min(count, 1 << 16))
        try scan { key, value in
            result.append((key, value))
            return true
        }
        return result
    }
}

/// An ordered cursor over a ``TreeView``: seek, then step forwards or backwards.
///
/// Moves return false (and leave the cursor unpositioned) when they run off either end.
public struct TreeCursor {
    private var core: CursorCore<SnapshotPages>
    private let view: TreeView

    init(view: TreeView) {
        self.view = view
        self.core = CursorCore(source: view.transaction.pages, tree: view.root)
    }

    /// Whether the cursor is on an entry.
    public var isPositioned: Bool { core.isPositioned }
    /// Moves to the first entry.
    public mutating func first() throws(StorageError) -> Bool { try core.first() }
    /// Moves to the last entry.
    public mutating func last() throws(StorageError) -> Bool { try core.last() }
    /// Moves to the next entry.
    public mutating func next() throws(StorageError) -> Bool { try core.next() }
    /// Moves to the previous entry.
    public mutating func previous() throws(StorageError) -> Bool { try core.previous() }
    /// Moves to the entry at position `index`.
    public mutating func seek(toIndex index: Int) throws(StorageError) -> Bool { try core.seek(toIndex: index) }

    /// Moves to the first entry whose key is greater than or equal to `key`.
    @inlinable
    public mutating func seek<K: StorageBytes>(atOrAfter key: K) throws(StorageError) -> Bool {
        try key.withStorageBytes { (key) throws(StorageError) in try rawSeek(atOrAfter: key) }
    }

    @usableFromInline
    mutating func rawSeek(atOrAfter key: UnsafeRawBufferPointer) throws(StorageError) -> Bool {
        try core.seek(atOrAfter: key)
    }

    /// Moves to the last entry whose key is less than or equal to `key`.
    @inlinable
    public mutating func seek<K: StorageBytes>(atOrBefore key: K) throws(StorageError) -> Bool {
        try key.withStorageBytes { (key) throws(StorageError) in try rawSeek(atOrBefore: key) }
    }

    @usableFromInline
    mutating func rawSeek(atOrBefore key: UnsafeRawBufferPointer) throws(StorageError) -> Bool {
        try core.seek(atOrBefore: key)
    }

    /// A copy of the current key.
    public func key() throws(StorageError) -> [UInt8] { Array(try core.entry().key) }
    /// A copy of the current value.
    public func value() throws(StorageError) -> [UInt8] { try core.read.value(of: try core.entry()) }

    /// Calls `body` with the current key in place.
    public func withKey<R>(_ body: (UnsafeRawBufferPointer) throws -> R) throws -> R { try body(try core.entry().key) }

    /// Calls `body` with the current value in place (copied only when it spans overflow pages).
    public func withValue<R>(_ body: (UnsafeRawBufferPointer) throws -> R) throws -> R {
        try core.read.withValue(of: try core.entry(), body)
    }

    /// Calls `body` with the current key and value in place (the value is copied only when it spans overflow
    /// pages). The fastest way to read every entry of a scan.
    public func withEntry<R>(_ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> R)
        throws -> R
    {
        let entry = try core.entry()
        if entry.storage == .overflow { return try core.read.withValue(of: entry) { try body(entry.key, $0) } }
        return try body(entry.key, entry.inlineValue)
    }

    /// The current value for repeated reads while the cursor's read transaction lives (see ``StableValue``).
    public func stableValue() throws -> StableValue { try core.read.stableValue(of: try core.entry()) }

    /// Moves to the first entry (`fromStart`) or the next one and returns what `body` makes of its key, in
    /// place, and its value as a ``StableValue``; nil past the last entry. One mutating call per step, so that a
    /// cursor kept in an optional is stepped and read in place, never copied.
    public mutating func advance<R>(
        fromStart: Bool, _ body: (_ key: UnsafeRawBufferPointer, _ value: StableValue) throws -> R
    ) throws -> R? {
        guard try fromStart ? core.first() : core.next() else { return nil }
        let entry = try core.entry()
        return try body(entry.key, try core.read.stableValue(of: entry))
    }

    /// Whether the current entry holds a nested tree.
    public func isSubtree() throws(StorageError) -> Bool { try core.entry().storage == .subtree }

    /// The nested tree held by the current entry.
    public func subtree() throws(StorageError) -> TreeView {
        try view.transaction.view(of: try core.entry())
    }
}

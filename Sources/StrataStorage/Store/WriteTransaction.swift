/// A handle to a tree inside one ``WriteTransaction``.
public struct TreeHandle: Hashable, Sendable {
    let id: Int
    let transaction: ObjectIdentifier
}

/// The single writer's transaction: reads see its own changes; ``commit()`` publishes them atomically.
///
/// Trees are addressed through ``TreeHandle``s: ``tree(named:create:)`` for named trees and
/// ``subtree(forKey:in:create:)`` for trees nested inside another tree's entry (lists of an object, say).
/// Nested descriptors are written back into their parents lazily, at commit or before an operation that needs
/// them, so editing a nested tree costs the same as editing a named one.
///
/// If an operation fails after it started changing pages, the transaction is marked failed: every later call
/// throws ``StorageError/transactionClosed`` and only ``abort()`` remains (nothing of it reaches the file).
/// Argument errors detected before any change (key too long, index out of range, wrong tree kind) leave the
/// transaction usable. Dropping an unfinished transaction aborts it.
public final class WriteTransaction {
    private enum Location {
        case named(String)
        case nested(parent: Int, key: [UInt8])
    }

    private struct OpenTree {
        var root: TreeRoot
        let location: Location
        var dirty = false
        var valid = true
        /// Whether a nested tree was ever opened under one of this tree's keys in the transaction: a put or delete
        /// in a tree without any skips looking its key up in `nested` (an array copy and a hash of the key).
        var hadChildren = false
    }

    private struct NestedKey: Hashable {
        let parent: Int
        let key: [UInt8]
    }

    private enum Phase {
        case active
        case failed
        case ended
    }

    let context: WriteContext
    /// The handler of the handle that started the transaction (see ``StoreOptions/events``).
    private let events: (@Sendable (StoreEvent) -> Void)?
    @exclusivity(unchecked) private var trees: [OpenTree] = []
    @exclusivity(unchecked) private var named: [String: Int] = [:]
    @exclusivity(unchecked) private var nested: [NestedKey: Int] = [:]
    @exclusivity(unchecked) private var phase = Phase.active

    init(context: WriteContext, events: (@Sendable (StoreEvent) -> Void)? = nil) {
        self.context = context
        self.events = events
    }

    deinit {
        if phase != .ended { context.shared.unlockWriting() }
    }

    /// The version this transaction will commit as.
    public var version: UInt64 { context.version }
    /// The version it started from.
    public var baseVersion: UInt64 { context.base.version }
    /// Whether the transaction can still be used.
    public var isActive: Bool { phase == .active }

    // MARK: Lifecycle

    /// Writes the changes and makes them the newest version. Returns the new version (the base version when
    /// nothing changed: an empty transaction commits nothing). On error nothing is published and the file still
    /// holds the previous version.
    ///
    /// With durability ``StoreOptions/Durability/full`` it returns once the commit is durable. When other writers
    /// wait, the commit shares one sync of the commit log with theirs (group commit): the write lock is released
    /// as soon as the commit is appended, and this thread then waits for the sync. From async code use
    /// ``commit(isolation:)``, which suspends instead.
    @discardableResult
    public func commit() throws(StorageError) -> UInt64 {
        let (version, report) = try commitReleasingLock()
        do {
            try context.durableWait?.wait()
        } catch {
            reportDamage(error)
            throw error
        }
        deliver(report)
        return version
    }

    /// Async form of ``commit()``: a grouped commit waits for its sync by suspending, never blocking a thread.
    /// The commit is made whatever happens to the task meanwhile; this returns once it is durable.
    @discardableResult
    public func commit(isolation: isolated (any Actor)? = #isolation) async throws(StorageError) -> UInt64 {
        let (version, report) = try commitReleasingLock()
        if let wait = context.durableWait {
            do {
                try await wait.wait()
            } catch {
                reportDamage(error)
                throw error
            }
        }
        deliver(report)
        return version
    }

    /// Commits and releases the write lock; what the events are to be told once the commit is durable.
    private func commitReleasingLock() throws(StorageError) -> (UInt64, CommitReport?) {
        guard events != nil else {
            let version = try ending { () throws(StorageError) in
                guard context.hasChanges else { return context.base.version }
                return try context.commit(durable: context.shared.options.durability == .full).version
            }
            return (version, nil)
        }
        var report = CommitReport()
        do {
            let version = try ending { () throws(StorageError) in try commit(reportingTo: &report) }
            return (version, report)
        } catch {
            reportDamage(error)
            throw error
        }
    }

    private func reportDamage(_ error: StorageError) {
        if let events, let damage = StoreEvent.Damage(error) { events(.damage(damage)) }
    }

    /// Tells the events what a commit gathered. The write lock is released: a slow handler delays this thread only.
    private func deliver(_ report: CommitReport?) {
        guard let events, let report else { return }
        for checkpoint in report.checkpoints { events(.checkpointed(checkpoint)) }
        if var commit = report.commit {
            // A grouped commit became durable only now.
            if context.durableWait != nil {
                commit = StoreEvent.Commit(
                    path: commit.path, version: commit.version, pagesWritten: commit.pagesWritten,
                    bytesWritten: commit.bytesWritten, durable: commit.durable, logged: commit.logged,
                    nanosecondsToDurable: Clock.monotonicNanoseconds() &- report.started)
            }
            events(.committed(commit))
        }
        if let warning = report.pinnedVersions { events(.pinnedVersions(warning)) }
    }

    /// What a commit tells the handle's events, gathered while the write lock is held.
    private struct CommitReport {
        var commit: StoreEvent.Commit?
        var checkpoints: [StoreEvent.Checkpoint] = []
        var pinnedVersions: StoreEvent.PinnedVersions?
        /// When the commit started (``Clock/monotonicNanoseconds()``).
        var started: UInt64 = 0
    }

    /// Runs `body` (the commit) after writing back the open trees, then ends the transaction and releases the
    /// write lock; a failure marks the transaction failed.
    private func ending(_ body: () throws(StorageError) -> UInt64) throws(StorageError) -> UInt64 {
        try checkActive()
        defer {
            phase = .ended
            context.shared.unlockWriting()
        }
        do {
            try flushAll()
            return try body()
        } catch {
            phase = .failed
            throw error
        }
    }

    /// Commits, filling in `report` for the events. Called with the write lock held.
    private func commit(reportingTo report: inout CommitReport) throws(StorageError) -> UInt64 {
        guard context.hasChanges else { return context.base.version }
        let durable = context.shared.options.durability == .full
        context.shared.collectCheckpoints()
        defer { report.checkpoints = context.shared.takeCheckpoints() }
        let started = Clock.monotonicNanoseconds()
        report.started = started
        let version = try context.commit(durable: durable).version
        let elapsed = Clock.monotonicNanoseconds() &- started
        let (pages, logged) = context.committed
        report.commit = StoreEvent.Commit(
            path: context.shared.path, version: version, pagesWritten: pages,
            bytesWritten: pages * context.geometry.pageSize, durable: durable, logged: logged,
            nanosecondsToDurable: elapsed)
        report.pinnedVersions = context.pinnedVersionWarning()
        return version
    }

    /// Discards the changes and releases the write lock. Safe to call more than once.
    public func abort() {
        guard phase != .ended else { return }
        phase = .ended
        context.shared.unlockWriting()
    }

    private func checkActive() throws(StorageError) {
        guard phase == .active else { throw .transactionClosed }
    }

    /// Runs a step that changes pages; if it fails, the transaction is unusable from then on.
    private func mutate<R>(_ body: () throws(StorageError) -> R) throws(StorageError) -> R {
        try checkActive()
        do {
            return try body()
        } catch {
            phase = .failed
            throw error
        }
    }

    // MARK: Trees

    /// The handle of a named tree; with `create`, a missing tree is created with that kind.
    /// Returns nil when the tree does not exist and `create` is nil.
    public func tree(named name: String, create kind: TreeKind? = nil) throws(StorageError) -> TreeHandle? {
        try checkActive()
        if let id = named[name], trees[id].valid { return handle(id) }
        let key = Array(name.utf8)
        guard !key.isEmpty, key.count <= context.geometry.maxKeySize else {
            throw .invalidArgument("tree names must be 1 to \(context.geometry.maxKeySize) UTF-8 bytes")
        }
        let existing = try key.withStorageBytes { (key) throws(StorageError) -> LeafEntry? in
            try TreeRead(source: context.pages).find(key, in: context.catalog)
        }
        let root: TreeRoot
        if let existing {
            root = try TreeRead(source: context.pages).subtree(of: existing, pageCount: context.pageCount)
        } else if let kind {
            root = TreeRoot(kind: kind)
            try mutate { () throws(StorageError) in
                try key.withStorageBytes { (key) throws(StorageError) in
                    try context.put(key, value: .subtree(root), into: &context.catalog)
                }
            }
        } else {
            return nil
        }
        trees.append(OpenTree(root: root, location: .named(name)))
        named[name] = trees.count - 1
        return handle(trees.count - 1)
    }

    /// Deletes a named tree and everything in it. Returns false when there is none.
    @discardableResult
    public func dropTree(named name: String) throws(StorageError) -> Bool {
        try checkActive()
        if let id = named[name], trees[id].valid { try mutate { () throws(StorageError) in try flush(subtreeOf: id) } }
        let key = Array(name.utf8)
        let removed = try mutate { () throws(StorageError) -> Bool in
            try key.withStorageBytes { (key) throws(StorageError) in try context.delete(key, from: &context.catalog) }
        }
        if let id = named[name] {
            invalidate(id)
            named[name] = nil
        }
        return removed
    }

    /// Gives the named tree `name` the name `newName`, keeping its contents (and its sequence counter) without
    /// copying them. Returns false when there is no tree `name`; throws when `newName` exists.
    @discardableResult
    public func renameTree(named name: String, to newName: String) throws(StorageError) -> Bool {
        guard let source = try tree(named: name) else { return false }
        guard try tree(named: newName) == nil else { throw .invalidArgument("a tree named \(newName) exists") }
        let newKey = Array(newName.utf8)
        guard !newKey.isEmpty, newKey.count <= context.geometry.maxKeySize else {
            throw .invalidArgument("tree names must be 1 to \(context.geometry.maxKeySize) UTF-8 bytes")
        }
        let id = source.id
        try mutate { () throws(StorageError) in try flush(subtreeOf: id, includingSelf: false) }
        let root = trees[id].root
        try mutate { () throws(StorageError) in
            try newKey.withStorageBytes { (key) throws(StorageError) in
                try context.put(key, value: .subtree(root), into: &context.catalog)
            }
            try Array(name.utf8).withStorageBytes { (key) throws(StorageError) in
                // Replacing one tree descriptor with another keeps the pages: the old name is left holding an
                // empty tree, whose removal frees nothing.
                try context.put(key, value: .subtree(TreeRoot(kind: root.kind)), into: &context.catalog)
                _ = try context.delete(key, from: &context.catalog)
            }
        }
        invalidate(id)
        named[name] = nil
        return true
    }

    /// Names of all named trees, in byte order.
    public func treeNames() throws(StorageError) -> [String] {
        try checkActive()
        var names: [String] = []
        var cursor = CursorCore(source: context.pages, tree: context.catalog)
        var more = try cursor.first()
        while more {
            names.append(String(decoding: try cursor.entry().key, as: UTF8.self))
            more = try cursor.next()
        }
        return names
    }

    /// The tree nested under `key` in `parent` (a keyed tree). With `create`, a missing entry becomes an empty
    /// nested tree of that kind. Returns nil when the key is absent and `create` is nil; throws when the key
    /// holds an ordinary value.
    @inlinable
    public func subtree<K: StorageBytes>(forKey key: K, in parent: TreeHandle, create kind: TreeKind? = nil)
        throws(StorageError) -> TreeHandle?
    {
        try key.withStorageBytes { (key) throws(StorageError) in try rawSubtree(key, in: parent, create: kind) }
    }

    @usableFromInline
    func rawSubtree(_ key: UnsafeRawBufferPointer, in parent: TreeHandle, create kind: TreeKind?) throws(StorageError)
        -> TreeHandle?
    {
        let parentID = try resolve(parent)
        guard trees[parentID].root.kind == .keyed else {
            throw .wrongTreeKind(expected: .keyed, actual: trees[parentID].root.kind)
        }
        let bytes = Array(key)
        let nestedKey = NestedKey(parent: parentID, key: bytes)
        if let id = nested[nestedKey], trees[id].valid { return handle(id) }
        guard bytes.count <= context.geometry.maxKeySize else {
            throw .keyTooLarge(size: bytes.count, limit: context.geometry.maxKeySize)
        }
        let existing = try bytes.withStorageBytes { (key) throws(StorageError) -> LeafEntry? in
            try TreeRead(source: context.pages).find(key, in: trees[parentID].root)
        }
        let root: TreeRoot
        if let existing {
            guard existing.storage == .subtree else { throw .invalidArgument("the value under this key is not a tree") }
            root = try TreeRead(source: context.pages).subtree(of: existing, pageCount: context.pageCount)
        } else if let kind {
            root = TreeRoot(kind: kind)
            try mutate { () throws(StorageError) in
                try bytes.withStorageBytes { (key) throws(StorageError) in
                    try context.put(key, value: .subtree(root), into: &trees[parentID].root)
                }
            }
            trees[parentID].dirty = true
        } else {
            return nil
        }
        trees.append(OpenTree(root: root, location: .nested(parent: parentID, key: bytes)))
        trees[parentID].hadChildren = true
        nested[nestedKey] = trees.count - 1
        return handle(trees.count - 1)
    }

    private func handle(_ id: Int) -> TreeHandle { TreeHandle(id: id, transaction: ObjectIdentifier(self)) }

    private func resolve(_ handle: TreeHandle) throws(StorageError) -> Int {
        try checkActive()
        guard handle.transaction == ObjectIdentifier(self), handle.id < trees.count else {
            throw .invalidArgument("the tree handle belongs to another transaction")
        }
        guard trees[handle.id].valid else { throw .treeNotFound("(removed in this transaction)") }
        return handle.id
    }

    /// Number of entries in the tree.
    public func count(in tree: TreeHandle) throws(StorageError) -> Int { trees[try resolve(tree)].root.count }

    /// The tree's kind.
    public func kind(of tree: TreeHandle) throws(StorageError) -> TreeKind { trees[try resolve(tree)].root.kind }

    /// Increments the tree's counter and returns the new value (1 for the first call on a new tree). Handy for
    /// allocating keys; the counter never goes backwards, even when entries are deleted.
    public func nextSequence(in tree: TreeHandle) throws(StorageError) -> UInt64 {
        let id = try resolve(tree)
        trees[id].root.sequence &+= 1
        trees[id].dirty = true
        context.modificationCount &+= 1
        return trees[id].root.sequence
    }

    // MARK: Keyed access

    /// A copy of the value stored under `key`, or nil.
    @inlinable
    public func get<K: StorageBytes>(_ key: K, in tree: TreeHandle) throws(StorageError) -> [UInt8]? {
        try key.withStorageBytes { (key) throws(StorageError) in try rawGet(key, in: tree) }
    }

    @usableFromInline
    func rawGet(_ key: UnsafeRawBufferPointer, in tree: TreeHandle) throws(StorageError) -> [UInt8]? {
        let id = try resolve(tree)
        let read = TreeRead(source: context.pages)
        guard let entry = try read.find(key, in: trees[id].root) else { return nil }
        return try read.value(of: entry)
    }

    /// Calls `body` with the value under `key` in place; nil when absent. The buffer is valid only inside `body`.
    @inlinable
    public func withValue<K: StorageBytes, R>(
        forKey key: K, in tree: TreeHandle, _ body: (UnsafeRawBufferPointer) throws -> R
    ) throws -> R? {
        try key.withStorageBytes { (key) throws -> R? in try rawWithValue(key, in: tree, body) }
    }

    @usableFromInline
    func rawWithValue<R>(
        _ key: UnsafeRawBufferPointer, in tree: TreeHandle, _ body: (UnsafeRawBufferPointer) throws -> R
    ) throws -> R? {
        let id = try resolve(tree)
        let read = TreeRead(source: context.pages)
        guard let entry = try read.find(key, in: trees[id].root) else { return nil }
        return try read.withValue(of: entry, body)
    }

    /// Whether `key` is present.
    @inlinable
    public func contains<K: StorageBytes>(_ key: K, in tree: TreeHandle) throws(StorageError) -> Bool {
        try key.withStorageBytes { (key) throws(StorageError) in try rawContains(key, in: tree) }
    }

    @usableFromInline
    func rawContains(_ key: UnsafeRawBufferPointer, in tree: TreeHandle) throws(StorageError) -> Bool {
        let id = try resolve(tree)
        return try TreeRead(source: context.pages).find(key, in: trees[id].root) != nil
    }

    /// Stores `value` under `key`, replacing any previous value (a nested tree stored there is deleted).
    @inlinable
    public func put<K: StorageBytes, V: StorageBytes>(_ key: K, _ value: V, in tree: TreeHandle) throws(StorageError) {
        try key.withStorageBytes { (key) throws(StorageError) in
            try value.withStorageBytes { (value) throws(StorageError) in try rawPut(key, value, in: tree) }
        }
    }

    @usableFromInline
    func rawPut(_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer, in tree: TreeHandle)
        throws(StorageError)
    {
        let id = try resolve(tree)
        try checkPut(key: key, valueSize: value.count, in: id)
        try detachNested(key, in: id)
        try mutate { () throws(StorageError) in try context.put(key, value: .bytes(value), into: &trees[id].root) }
        trees[id].dirty = true
    }

    /// Sets fixed-size `column` of the row stored under `key` (a row of `columns` columns, see ``RowFormat``) to
    /// `slot`, or to null when `slot` is nil, in place: when the row is in the leaf this transaction's last put
    /// left dirty (a loop rewriting rows in key order) and the column can change without moving other bytes (see
    /// ``RowFormat/setFixedColumn(_:column:columns:to:)``). Returns false, changing nothing, otherwise: put the
    /// whole row then. Cursors and stable values see the change as they see a put.
    public func setFixedColumn(
        _ column: Int, columns: Int, to slot: UInt64?, inRow key: UnsafeRawBufferPointer, in tree: TreeHandle
    ) throws(StorageError) -> Bool {
        let id = try resolve(tree)
        let patched = try mutate { () throws(StorageError) -> Bool in
            try context.patchInLastLeaf(key, of: trees[id].root) {
                RowFormat.setFixedColumn($0, column: column, columns: columns, to: slot)
            }
        }
        if patched { trees[id].dirty = true }
        return patched
    }

    /// Stores `value` under `key` when `key` is absent and returns true; returns false, changing no entry, when it is
    /// present. One descent of the tree where `contains` then `put` take two: for unique keys (a primary-key tree)
    /// whose duplicate fails the caller's transaction.
    @inlinable
    public func insertIfAbsent<K: StorageBytes, V: StorageBytes>(_ key: K, _ value: V, in tree: TreeHandle)
        throws(StorageError) -> Bool
    {
        try key.withStorageBytes { (key) throws(StorageError) in
            try value.withStorageBytes { (value) throws(StorageError) in try rawInsertIfAbsent(key, value, in: tree) }
        }
    }

    @usableFromInline
    func rawInsertIfAbsent(_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer, in tree: TreeHandle)
        throws(StorageError) -> Bool
    {
        let id = try resolve(tree)
        try checkPut(key: key, valueSize: value.count, in: id)
        // No nested tree to detach: a present key is left as it is, an absent one has none.
        let inserted = try mutate { () throws(StorageError) in
            try context.insertIfAbsent(key, value: value, into: &trees[id].root)
        }
        // The descent copied the path's pages (a new root page) even when the key was present.
        trees[id].dirty = true
        return inserted
    }

    /// Removes `key` (and the nested tree stored there, if any). Returns false when it was absent.
    @inlinable
    @discardableResult
    public func delete<K: StorageBytes>(_ key: K, in tree: TreeHandle) throws(StorageError) -> Bool {
        try key.withStorageBytes { (key) throws(StorageError) in try rawDelete(key, in: tree) }
    }

    @usableFromInline
    func rawDelete(_ key: UnsafeRawBufferPointer, in tree: TreeHandle) throws(StorageError) -> Bool {
        let id = try resolve(tree)
        try checkKind(id, .keyed)
        try detachNested(key, in: id)
        let removed = try mutate { () throws(StorageError) in try context.delete(key, from: &trees[id].root) }
        if removed { trees[id].dirty = true }
        return removed
    }

    /// The position of `key` in key order (or where it would go) and whether it is present.
    @inlinable
    public func rank<K: StorageBytes>(of key: K, in tree: TreeHandle) throws(StorageError) -> (index: Int, found: Bool)
    {
        try key.withStorageBytes { (key) throws(StorageError) in try rawRank(key, in: tree) }
    }

    @usableFromInline
    func rawRank(_ key: UnsafeRawBufferPointer, in tree: TreeHandle) throws(StorageError) -> (index: Int, found: Bool) {
        let id = try resolve(tree)
        return try TreeRead(source: context.pages).rank(of: key, in: trees[id].root)
    }

    private func checkKind(_ id: Int, _ kind: TreeKind) throws(StorageError) {
        if trees[id].root.kind != kind { throw .wrongTreeKind(expected: kind, actual: trees[id].root.kind) }
    }

    private func checkPut(key: UnsafeRawBufferPointer, valueSize: Int, in id: Int) throws(StorageError) {
        try checkKind(id, .keyed)
        let limit = context.geometry.maxKeySize
        if key.count > limit { throw .keyTooLarge(size: key.count, limit: limit) }
        if valueSize > PageGeometry.maxValueSize {
            throw .valueTooLarge(size: valueSize, limit: PageGeometry.maxValueSize)
        }
    }

    private func checkValue(_ size: Int) throws(StorageError) {
        if size > PageGeometry.maxValueSize { throw .valueTooLarge(size: size, limit: PageGeometry.maxValueSize) }
    }

    // MARK: Positional access

    /// The entry at position `index` (keys are empty in lists).
    public func element(at index: Int, in tree: TreeHandle) throws(StorageError) -> (key: [UInt8], value: [UInt8]) {
        let id = try resolve(tree)
        let read = TreeRead(source: context.pages)
        let (leaf, position) = try read.leaf(at: index, in: trees[id].root)
        let entry = try leaf.leafEntry(position, file: context.file)
        return (Array(entry.key), try read.value(of: entry))
    }

    /// The value at position `index`.
    public func value(at index: Int, in tree: TreeHandle) throws(StorageError) -> [UInt8] {
        try element(at: index, in: tree).value
    }

    /// Inserts `value` at `index` (0...count) of a list.
    @inlinable
    public func insert<V: StorageBytes>(_ value: V, at index: Int, in tree: TreeHandle) throws(StorageError) {
        try value.withStorageBytes { (value) throws(StorageError) in try rawInsert(value, at: index, in: tree) }
    }

    @usableFromInline
    func rawInsert(_ value: UnsafeRawBufferPointer, at index: Int, in tree: TreeHandle) throws(StorageError) {
        let id = try resolve(tree)
        try checkKind(id, .list)
        let count = trees[id].root.count
        guard index >= 0, index <= count else { throw .indexOutOfRange(index: index, count: count) }
        try checkValue(value.count)
        try mutate { () throws(StorageError) in try context.insert(.bytes(value), at: index, into: &trees[id].root) }
        trees[id].dirty = true
    }

    /// Appends `value` to a list.
    @inlinable
    public func append<V: StorageBytes>(_ value: V, to tree: TreeHandle) throws(StorageError) {
        try value.withStorageBytes { (value) throws(StorageError) in
            try rawInsert(value, at: try count(in: tree), in: tree)
        }
    }

    /// Replaces the value at `index` of a list.
    @inlinable
    public func replace<V: StorageBytes>(at index: Int, with value: V, in tree: TreeHandle) throws(StorageError) {
        try value.withStorageBytes { (value) throws(StorageError) in try rawReplace(at: index, with: value, in: tree) }
    }

    @usableFromInline
    func rawReplace(at index: Int, with value: UnsafeRawBufferPointer, in tree: TreeHandle) throws(StorageError) {
        let id = try resolve(tree)
        try checkKind(id, .list)
        let count = trees[id].root.count
        guard index >= 0, index < count else { throw .indexOutOfRange(index: index, count: count) }
        try checkValue(value.count)
        try mutate { () throws(StorageError) in try context.replace(at: index, with: .bytes(value), in: &trees[id].root)
        }
        trees[id].dirty = true
    }

    /// Removes the entry at position `index` (of a list, or the index-th key of a keyed tree).
    public func remove(at index: Int, from tree: TreeHandle) throws(StorageError) {
        let id = try resolve(tree)
        let count = trees[id].root.count
        guard index >= 0, index < count else { throw .indexOutOfRange(index: index, count: count) }
        if trees[id].root.kind == .keyed && hasOpenChildren(id) {
            let key = try element(at: index, in: tree).key
            try key.withStorageBytes { (key) throws(StorageError) in try detachNested(key, in: id) }
        }
        try mutate { () throws(StorageError) in try context.remove(at: index, from: &trees[id].root) }
        trees[id].dirty = true
    }

    /// Removes every entry of the tree (nested trees included); the tree itself and its counter remain.
    public func removeAll(in tree: TreeHandle) throws(StorageError) {
        let id = try resolve(tree)
        try mutate { () throws(StorageError) in try flush(subtreeOf: id, includingSelf: false) }
        for child in descendants(of: id) { invalidate(child) }
        try mutate { () throws(StorageError) in try context.clear(&trees[id].root) }
        trees[id].dirty = true
    }

    /// A cursor over the tree that stays usable while the transaction modifies it (it re-seeks after changes).
    public func makeCursor(for tree: TreeHandle) throws(StorageError) -> WriteCursor {
        WriteCursor(transaction: self, handle: tree)
    }

    /// Calls `body` with every key of `tree` in place, in order, until it returns false: a whole tree's keys
    /// without a cursor step (and a copy of the key) per entry. `body` must not change the transaction; a change
    /// made by it is reported as ``StorageError/invalidArgument(_:)`` and ends the walk (iterate with a
    /// ``WriteCursor`` to change the tree while walking it).
    public func forEachKey(in tree: TreeHandle, _ body: (UnsafeRawBufferPointer) throws -> Bool) throws {
        var core = CursorCore(source: context.pages, tree: try currentRoot(tree))
        guard try core.first() else { return }
        let stamp = context.modificationCount
        try core.forEachRemaining { entry in
            guard try body(entry.key) else { return false }
            guard context.modificationCount == stamp else {
                throw StorageError.invalidArgument("the transaction changed while forEachKey walked a tree")
            }
            return true
        }
    }

    /// The current descriptor of an open tree (for cursors).
    func currentRoot(_ handle: TreeHandle) throws(StorageError) -> TreeRoot { trees[try resolve(handle)].root }

    // MARK: Nested-tree bookkeeping

    private func hasOpenChildren(_ id: Int) -> Bool {
        trees.contains { if case .nested(let parent, _) = $0.location { parent == id && $0.valid } else { false } }
    }

    /// All valid open trees below `id`, deepest (highest id) first.
    private func descendants(of id: Int) -> [Int] {
        var result: [Int] = []
        var frontier: Set<Int> = [id]
        for index in (id + 1)..<max(id + 1, trees.count) {
            if case .nested(let parent, _) = trees[index].location, frontier.contains(parent), trees[index].valid {
                frontier.insert(index)
                result.append(index)
            }
        }
        return result.reversed()
    }

    /// Before `key` of tree `id` is overwritten or removed: if a nested tree opened under it has unsaved changes,
    /// save them (so the pages it now uses are the ones released), then invalidate its handles.
    private func detachNested(_ key: UnsafeRawBufferPointer, in id: Int) throws(StorageError) {
        guard trees[id].hadChildren, let child = nested[NestedKey(parent: id, key: Array(key))], trees[child].valid
        else {
            return
        }
        try mutate { () throws(StorageError) in try flush(subtreeOf: child) }
        invalidate(child)
    }

    private func invalidate(_ id: Int) {
        for child in descendants(of: id) { trees[child].valid = false }
        trees[id].valid = false
        if case .nested(let parent, let key) = trees[id].location { nested[NestedKey(parent: parent, key: key)] = nil }
    }

    /// Writes the descriptors of `id`'s dirty descendants (and of `id` itself) into their parents.
    private func flush(subtreeOf id: Int, includingSelf: Bool = true) throws(StorageError) {
        for child in descendants(of: id) { try flush(child) }
        if includingSelf { try flush(id) }
    }

    /// Writes every dirty descriptor into its parent, children before parents, named trees into the catalog.
    private func flushAll() throws(StorageError) {
        for id in trees.indices.reversed() { try flush(id) }
    }

    private func flush(_ id: Int) throws(StorageError) {
        guard trees[id].dirty, trees[id].valid else { return }
        let root = trees[id].root
        switch trees[id].location {
        case .named(let name):
            try Array(name.utf8).withStorageBytes { (key) throws(StorageError) in
                try context.put(key, value: .subtree(root), into: &context.catalog)
            }
        case .nested(let parent, let key):
            try key.withStorageBytes { (key) throws(StorageError) in
                try context.put(key, value: .subtree(root), into: &trees[parent].root)
            }
            trees[parent].dirty = true
        }
        trees[id].dirty = false
    }
}

/// A cursor inside a write transaction. Each move notices whether the transaction changed anything since the
/// last one and, if so, re-seeks from the key (or, in lists, the position) it was on, so iterating while
/// deleting or inserting is safe.
public struct WriteCursor {
    private let transaction: WriteTransaction
    private let handle: TreeHandle
    private var core: CursorCore<WritePages>?
    private var stamp = -1
    private var lastKey: [UInt8]?
    private var lastIndex = -1

    init(transaction: WriteTransaction, handle: TreeHandle) {
        self.transaction = transaction
        self.handle = handle
    }

    private mutating func fresh() throws(StorageError) -> CursorCore<WritePages> {
        let root = try transaction.currentRoot(handle)
        stamp = transaction.context.modificationCount
        return CursorCore(source: transaction.context.pages, tree: root)
    }

    private var isStale: Bool { stamp != transaction.context.modificationCount }

    private mutating func settle(_ moved: Bool, _ cursor: CursorCore<WritePages>, index: Int) throws(StorageError)
        -> Bool
    {
        core = cursor
        stamp = transaction.context.modificationCount
        if moved {
            lastKey = Array(try cursor.entry().key)
            lastIndex = index
        } else {
            lastKey = nil
            lastIndex = -1
        }
        return moved
    }

    /// Moves to the first entry.
    public mutating func first() throws(StorageError) -> Bool {
        var cursor = try fresh()
        return try settle(try cursor.first(), cursor, index: 0)
    }

    /// Moves to the last entry.
    public mutating func last() throws(StorageError) -> Bool {
        var cursor = try fresh()
        let moved = try cursor.last()
        return try settle(moved, cursor, index: cursor.tree.count - 1)
    }

    /// Moves to the first entry whose key is >= `key`.
    @inlinable
    public mutating func seek<K: StorageBytes>(atOrAfter key: K) throws(StorageError) -> Bool {
        try key.withStorageBytes { (key) throws(StorageError) in try rawSeek(atOrAfter: key) }
    }

    @usableFromInline
    mutating func rawSeek(atOrAfter key: UnsafeRawBufferPointer) throws(StorageError) -> Bool {
        var cursor = try fresh()
        let moved = try cursor.seek(atOrAfter: key)
        return try settle(moved, cursor, index: -1)
    }

    /// Moves to the entry at position `index`.
    public mutating func seek(toIndex index: Int) throws(StorageError) -> Bool {
        var cursor = try fresh()
        return try settle(try cursor.seek(toIndex: index), cursor, index: index)
    }

    /// Moves to the next entry (after a modification: the first entry after the last key seen, or the next
    /// position in a list).
    public mutating func next() throws(StorageError) -> Bool {
        guard var cursor = core, lastIndex >= -1, lastKey != nil else { return false }
        if isStale {
            cursor = try fresh()
            if cursor.tree.kind == .list {
                return try settle(try cursor.seek(toIndex: lastIndex + 1), cursor, index: lastIndex + 1)
            }
            var moved = try lastKey!.withStorageBytes { (key) throws(StorageError) in try cursor.seek(atOrAfter: key) }
            if moved, Bytes.compare(try cursor.entry().key, lastKey!.withUnsafeBytes { $0 }) == 0 {
                moved = try cursor.next()
            }
            return try settle(moved, cursor, index: -1)
        }
        return try settle(try cursor.next(), cursor, index: lastIndex >= 0 ? lastIndex + 1 : -1)
    }

    /// Moves to the previous entry.
    public mutating func previous() throws(StorageError) -> Bool {
        guard var cursor = core, lastKey != nil else { return false }
        if isStale {
            cursor = try fresh()
            if cursor.tree.kind == .list {
                return try settle(try cursor.seek(toIndex: lastIndex - 1), cursor, index: lastIndex - 1)
            }
            let moved = try lastKey!.withStorageBytes { (key) throws(StorageError) -> Bool in
                guard try cursor.seek(atOrAfter: key) else { return try cursor.last() }
                return try cursor.previous()
            }
            return try settle(moved, cursor, index: -1)
        }
        return try settle(try cursor.previous(), cursor, index: lastIndex >= 0 ? lastIndex - 1 : -1)
    }

    /// The current key.
    public func key() throws(StorageError) -> [UInt8] {
        guard let lastKey else { throw .invalidArgument("cursor is not positioned") }
        return lastKey
    }

    /// A copy of the current value (re-read if the transaction changed since the cursor moved).
    public mutating func value() throws(StorageError) -> [UInt8] {
        guard lastKey != nil, var cursor = core else { throw .invalidArgument("cursor is not positioned") }
        if isStale {
            cursor = try fresh()
            let found: Bool
            if cursor.tree.kind == .list {
                found = try cursor.seek(toIndex: lastIndex)
            } else {
                found = try lastKey!.withStorageBytes { (key) throws(StorageError) -> Bool in
                    guard try cursor.seek(atOrAfter: key) else { return false }
                    return Bytes.compare(try cursor.entry().key, key) == 0
                }
            }
            guard found else { throw .invalidArgument("the entry under the cursor was removed") }
            core = cursor
        }
        return try cursor.read.value(of: try cursor.entry())
    }
}

extension WriteTransaction {
    /// The value under `key` in `tree` for repeated reads until this transaction next changes anything (see
    /// ``StableValue``), or nil when the key is absent.
    @inlinable
    public func stableValue<K: StorageBytes>(forKey key: K, in tree: TreeHandle) throws -> StableValue? {
        try key.withStorageBytes { (key) throws -> StableValue? in try rawStableValue(key, in: tree) }
    }

    @usableFromInline
    func rawStableValue(_ key: UnsafeRawBufferPointer, in tree: TreeHandle) throws -> StableValue? {
        let id = try resolve(tree)
        let read = TreeRead(source: context.pages)
        // A row just rewritten, or its neighbour, is found in the leaf that put left (see `LastLeaf`).
        if let entry = try context.entryInLastLeaf(key, of: trees[id].root) { return try read.stableValue(of: entry) }
        guard let entry = try read.find(key, in: trees[id].root) else { return nil }
        return try read.stableValue(of: entry)
    }
}

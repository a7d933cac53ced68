/// The leaf a write transaction's last keyed modification of a tree left its key in, while that tree has not changed
/// otherwise since.
///
/// A loop that reads then rewrites one row after another in key order (`item.score += 1` over a class, an upsert
/// of existing objects) descends the rows tree twice per row: once to read, once to put. Consecutive keys mostly
/// share a leaf, and once a modification has copied that leaf (and so its whole path) into the transaction, a
/// same-size replacement of one of its values changes no other page: no path copy, no count, no separator. The
/// memo lets the read and the put search that leaf alone instead of descending from the root.
///
/// A new key that belongs in the leaf (it falls between two of the leaf's keys, or past the last key of the tree's
/// rightmost leaf) and fits there without a split is inserted the same way: the only other change an insertion
/// without a split makes is one more entry in each subtree count along the path, and the memo keeps the path's
/// dirty branch pages and child indexes (``path``) to add it there. A list's memo is recorded by an append that left
/// its entry in the list's last leaf, and serves the next append only (``WriteContext/appendInLastLeaf(_:to:)``).
///
/// The context keeps two memos, of the last two trees modified (``WriteContext/lastLeaf`` and
/// ``WriteContext/otherLeaf``): an object insert alternates between its rows tree and its primary-key tree. A memo
/// stays valid while its tree changes only through it: every other modification of the tree (``WriteContext``'s
/// `modify`, which a split, a merge or a delete goes through) retires the tree's memo first, and freeing any page
/// retires both (a freed root or leaf page could be reused by another tree). Other trees' changes only touch their
/// own pages or allocate fresh ones, so they leave a memo's pages as they are. A memo names its tree by its root page
/// (roots of live trees are distinct pages). A key outside the leaf falls back to the full descent.
struct LastLeaf {
    /// The root page of the tree the leaf belongs to.
    let root: PageNumber
    let leaf: PageNumber
    /// The leaf's dirty buffer, owned by this transaction.
    let buffer: UnsafeMutableRawPointer
    /// The branch steps above the leaf, root first: `levels` of them, in one of the context's two path buffers.
    let path: UnsafeMutablePointer<LastLeafStep>
    let levels: Int
    /// Whether the leaf is the tree's last: keys past its last key (or a list's appends) belong in it.
    let rightmost: Bool
    /// Whether the tree is keyed; a list's memo (its last leaf, for appends) takes no key lookups.
    let keyed: Bool
    /// The entry last found or written in the leaf: a loop in key order asks for it again (the put after the read)
    /// or puts the key after it, and two comparisons replace a binary search.
    var index = 0
}

/// One branch level above the remembered leaf: the dirty branch page and the child index the path takes there.
struct LastLeafStep {
    var buffer: UnsafeMutableRawPointer
    var index: Int
}

/// The inline entry a lookup last found in the remembered leaf, and the transaction's ``WriteContext/modificationCount``
/// then.
///
/// A read then a set of the same row (`item.score += 1`) would search the leaf twice; the set finds the entry here
/// instead. It is good only while the count is unchanged: every change of any page bumps the count (the same rule
/// cursors and stable values rely on), so then the leaf, the entry's place in it and its bytes are as they were, and
/// the leaf is still this transaction's dirty copy. The tree is named by its root page, which no other live tree
/// shares and which cannot be freed and reused without a change.
struct FoundEntry {
    let root: PageNumber
    let key: UnsafeRawBufferPointer
    let payload: UnsafeMutableRawBufferPointer
    let stamp: Int
}

/// What ``WriteContext/putInLastLeaf(_:into:ifAbsent:)`` did.
enum LastLeafPut {
    /// The put needs the full descent; nothing changed.
    case descend
    /// The value was written (replaced in place, or inserted).
    case written
    /// `ifAbsent` and the key is present; nothing changed.
    case present
}

extension WriteContext {
    /// The remembered leaf of `tree`, made the current memo (``lastLeaf``); nil when neither memo is of `tree`.
    @inline(__always)
    private func lastLeaf(of tree: TreeRoot) throws(StorageError) -> Node? {
        guard tree.root != 0 else { return nil }
        if lastLeaf?.root != tree.root {
            guard otherLeaf?.root == tree.root else { return nil }
            swap(&lastLeaf, &otherLeaf)
        }
        let memo = lastLeaf.unsafelyUnwrapped
        return try Node(UnsafeRawPointer(memo.buffer), page: memo.leaf, pageSize: geometry.usableSize, file: file)
    }

    /// Forgets the memo of the tree whose root is `root`: it is about to change other than through it.
    @inline(__always)
    func retireLeaf(of root: PageNumber) {
        if lastLeaf?.root == root { lastLeaf = nil }
        if otherLeaf?.root == root { otherLeaf = nil }
    }

    /// Forgets both memos (a page was freed).
    @inline(__always)
    func retireLeaves() {
        lastLeaf = nil
        otherLeaf = nil
    }

    /// Where `key` is or would go in the remembered `leaf`, and whether it is there; nil when the key may belong to
    /// another leaf (before the leaf's first key, or past its last unless the leaf is the tree's rightmost). The
    /// memo's index and the one after it are tried first; then a binary search.
    @inline(__always)
    private func locateInLastLeaf(_ key: UnsafeRawBufferPointer, _ leaf: Node) throws(StorageError) -> (
        index: Int, found: Bool
    )? {
        let count = leaf.count
        guard count > 0, lastLeaf.unsafelyUnwrapped.keyed else { return nil }
        let hint = min(lastLeaf.unsafelyUnwrapped.index, count - 1)
        let atHint = Bytes.compare(key, try leaf.key(hint, file: file))
        if atHint == 0 { return (hint, true) }
        if atHint > 0 {
            if hint + 1 == count { return lastLeaf.unsafelyUnwrapped.rightmost ? (count, false) : nil }
            let next = Bytes.compare(key, try leaf.key(hint + 1, file: file))
            if next <= 0 { return (hint + 1, next == 0) }
            let last = Bytes.compare(key, try leaf.key(count - 1, file: file))
            if last == 0 { return (count - 1, true) }
            if last > 0 { return lastLeaf.unsafelyUnwrapped.rightmost ? (count, false) : nil }
        } else {
            guard hint > 0 else { return nil }
            let first = Bytes.compare(key, try leaf.key(0, file: file))
            if first <= 0 { return first == 0 ? (0, true) : nil }
        }
        return try leaf.lowerBound(key, file: file)
    }

    /// The entry under `key` when it is in the remembered leaf of `tree`; nil means "descend", not "absent".
    @inline(__always)
    func entryInLastLeaf(_ key: UnsafeRawBufferPointer, of tree: TreeRoot) throws(StorageError) -> LeafEntry? {
        guard let leaf = try lastLeaf(of: tree), let (index, found) = try locateInLastLeaf(key, leaf), found else {
            return nil
        }
        lastLeaf!.index = index
        let entry = try leaf.leafEntry(index, file: file)
        if entry.storage == .inline {
            lastFound = FoundEntry(
                root: tree.root, key: entry.key,
                payload: UnsafeMutableRawBufferPointer(
                    start: UnsafeMutableRawPointer(mutating: entry.payload), count: entry.length),
                stamp: modificationCount)
        }
        return entry
    }

    /// The inline value under `key` in `tree` as the last lookup in the remembered leaf found it, when nothing
    /// changed since (see ``FoundEntry``); nil otherwise.
    @inline(__always)
    private func foundEntry(_ key: UnsafeRawBufferPointer, of tree: TreeRoot) -> UnsafeMutableRawBufferPointer? {
        guard let found = lastFound, found.stamp == modificationCount, found.root == tree.root,
            Bytes.compare(found.key, key) == 0
        else { return nil }
        return found.payload
    }

    /// Puts the inline value `spec` in the remembered leaf of `tree` when its key belongs there: a present key's
    /// value of the same size is overwritten in place; an absent key is inserted when the leaf has room, and each
    /// subtree count along the remembered path grows by one. `.descend`, changing nothing, when the put needs the
    /// full descent (another leaf, a resized value, a split). With `ifAbsent`, a present key is left as it is.
    @inline(__always)
    func putInLastLeaf(_ spec: LeafSpec, into tree: inout TreeRoot, ifAbsent: Bool) throws(StorageError)
        -> LastLeafPut
    {
        guard let leaf = try lastLeaf(of: tree), let (index, found) = try locateInLastLeaf(spec.key, leaf) else {
            return .descend
        }
        let memo = lastLeaf.unsafelyUnwrapped
        if found {
            if ifAbsent { return .present }
            let entry = try leaf.leafEntry(index, file: file)
            guard entry.storage == .inline, entry.length == spec.length else { return .descend }
            if let source = spec.payload.baseAddress {
                UnsafeMutableRawPointer(mutating: entry.payload).copyMemory(from: source, byteCount: spec.payload.count)
            }
        } else {
            guard try insert(spec, at: index, in: memo, of: &tree) else { return .descend }
        }
        // A change like any other for cursors and stable values; the leaf stays the one remembered.
        modificationCount &+= 1
        lastLeaf!.index = index
        return .written
    }

    /// Appends the inline value `spec` to the list `tree` in its remembered leaf, when that leaf is the list's last
    /// and has room without compaction (an append to the same list before left it there); each subtree count along
    /// the remembered path grows by one. False, changing nothing, when the append needs the descent.
    @inline(__always)
    func appendInLastLeaf(_ spec: LeafSpec, to tree: inout TreeRoot) throws(StorageError) -> Bool {
        guard let leaf = try lastLeaf(of: tree) else { return false }
        let memo = lastLeaf.unsafelyUnwrapped
        guard !memo.keyed, memo.rightmost, try insert(spec, at: leaf.count, in: memo, of: &tree) else { return false }
        modificationCount &+= 1
        lastLeaf!.index = leaf.count
        return true
    }

    /// Inserts `spec` as entry `index` of the remembered leaf `memo` when the leaf has room for it without
    /// compaction, and counts it in each subtree count along the remembered path and in `tree`; false, changing
    /// nothing, otherwise. Only room that needs no compaction: a full leaf (the usual reason there is none) would be
    /// summed here only to find that it must split, which the descent does anyway.
    @inline(__always)
    private func insert(_ spec: LeafSpec, at index: Int, in memo: LastLeaf, of tree: inout TreeRoot)
        throws(StorageError) -> Bool
    {
        let room = NodeEdit.upper(memo.buffer) - PageHeader.size - NodeEdit.count(memo.buffer) * PageHeader.slotSize
        guard room >= spec.size + PageHeader.slotSize,
            let offset = try NodeEdit.reserve(
                memo.buffer, page: memo.leaf, at: index, size: spec.size, pageSize: geometry.usableSize, file: file)
        else { return false }
        spec.write(to: memo.buffer + offset)
        for level in 0..<memo.levels {
            let step = memo.path[level]
            NodeEdit.setChildCount(step.buffer, step.index, NodeEdit.childCount(step.buffer, step.index) &+ 1)
        }
        tree.count &+= 1
        return true
    }

    /// Lets `patch` change the inline value under `key` in place, in the remembered leaf of `tree`, when the key is
    /// there and `patch` accepts the value (returns true); false, changing nothing, otherwise. For a change that
    /// keeps the value's size and touches a few of its bytes (one fixed-size column of a row): no copy of the value
    /// in or out. The leaf is this transaction's copy, so a rollback drops the change with it.
    @inline(__always)
    func patchInLastLeaf(
        _ key: UnsafeRawBufferPointer, of tree: TreeRoot, _ patch: (UnsafeMutableRawBufferPointer) -> Bool
    ) throws(StorageError) -> Bool {
        // The read just before (the getter of `item.score += 1`) found the entry: no second search.
        if let payload = foundEntry(key, of: tree) {
            guard patch(payload) else { return false }
        } else {
            guard let entry = try entryInLastLeaf(key, of: tree), entry.storage == .inline,
                patch(
                    UnsafeMutableRawBufferPointer(
                        start: UnsafeMutableRawPointer(mutating: entry.payload), count: entry.length))
            else { return false }
        }
        // A change like any other for cursors and stable values; the leaf stays the one remembered.
        modificationCount &+= 1
        return true
    }

    /// Remembers `leaf` (just modified at `index`, so dirty with its whole path) as the leaf of `tree`, with the
    /// path's first `levels` steps. The memo of the other tree modified before stays, unless it is of this tree.
    func rememberLeaf(
        _ leaf: PageNumber, buffer: UnsafeMutableRawPointer, index: Int, of tree: TreeRoot,
        path steps: UnsafeMutableBufferPointer<PathStep>, levels: Int, rightmost: Bool, keyed: Bool = true
    ) {
        let path: UnsafeMutablePointer<LastLeafStep>
        if let current = lastLeaf, current.root != tree.root {
            // The current memo becomes the other one; this tree's takes the path buffer it does not use.
            path = current.path == leafPaths ? leafPaths + TreeRoot.maxDepth : leafPaths
            otherLeaf = current
        } else {
            path = lastLeaf?.path ?? (otherLeaf?.path == leafPaths ? leafPaths + TreeRoot.maxDepth : leafPaths)
        }
        if otherLeaf?.root == tree.root { otherLeaf = nil }
        for level in 0..<levels { path[level] = LastLeafStep(buffer: steps[level].buffer, index: steps[level].index) }
        lastLeaf = LastLeaf(
            root: tree.root, leaf: leaf, buffer: buffer, path: path, levels: levels, rightmost: rightmost,
            keyed: keyed, index: index)
    }
}

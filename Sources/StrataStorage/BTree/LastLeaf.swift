/// The leaf a write transaction's last keyed modification left its key in, while nothing has changed since.
///
/// A loop that reads then rewrites one row after another in key order (`item.score += 1` over a class, an upsert
/// of existing objects) descends the rows tree twice per row: once to read, once to put. Consecutive keys mostly
/// share a leaf, and once a modification has copied that leaf (and so its whole path) into the transaction, a
/// same-size replacement of one of its values changes no other page: no path copy, no count, no separator. The
/// memo lets the read and the put search that leaf alone instead of descending from the root.
///
/// It is valid only while the context's `modificationCount` is the one recorded (every touch, free and
/// modification bumps it, so a split, merge, freed page or other tree's change retires it) and only for the tree
/// whose root it names (roots are distinct pages). A key not found in the leaf falls back to the full descent.
struct LastLeaf {
    /// The root page of the tree the leaf belongs to.
    let root: PageNumber
    let leaf: PageNumber
    /// The leaf's dirty buffer, owned by this transaction.
    let buffer: UnsafeMutableRawPointer
    /// `modificationCount` when recorded.
    let stamp: Int
    /// The entry last found in the leaf: a loop in key order asks for it again (the put after the read) or for
    /// the next one, and two comparisons replace a binary search.
    var index = 0
}

extension WriteContext {
    /// The remembered leaf of `tree`, when it is still the leaf the tree's keys in it live in.
    @inline(__always)
    private func lastLeaf(of tree: TreeRoot) throws(StorageError) -> Node? {
        guard let memo = lastLeaf, memo.stamp == modificationCount, memo.root == tree.root, tree.root != 0 else {
            return nil
        }
        return try Node(UnsafeRawPointer(memo.buffer), page: memo.leaf, pageSize: geometry.usableSize, file: file)
    }

    /// The entry under `key` when it is in the remembered leaf of `tree`; nil means "descend", not "absent".
    @inline(__always)
    func entryInLastLeaf(_ key: UnsafeRawBufferPointer, of tree: TreeRoot) throws(StorageError) -> LeafEntry? {
        guard let leaf = try lastLeaf(of: tree) else { return nil }
        let hint = lastLeaf.unsafelyUnwrapped.index
        var probe = hint
        while probe < hint + 2 && probe < leaf.count {
            let entry = try leaf.leafEntry(probe, file: file)
            if Bytes.compare(entry.key, key) == 0 {
                lastLeaf!.index = probe
                return entry
            }
            probe += 1
        }
        let (index, found) = try leaf.lowerBound(key, file: file)
        guard found else { return nil }
        lastLeaf!.index = index
        return try leaf.leafEntry(index, file: file)
    }

    /// Replaces the inline value under `key` with `value` of the same size in the remembered leaf of `tree`, when
    /// the key is there; false, changing nothing, when the put needs the full descent.
    @inline(__always)
    func replaceInLastLeaf(_ key: UnsafeRawBufferPointer, with value: UnsafeRawBufferPointer, of tree: TreeRoot)
        throws(StorageError) -> Bool
    {
        try patchInLastLeaf(key, of: tree) { payload in
            guard payload.count == value.count else { return false }
            if let source = value.baseAddress, let target = payload.baseAddress {
                target.copyMemory(from: source, byteCount: value.count)
            }
            return true
        }
    }

    /// Lets `patch` change the inline value under `key` in place, in the remembered leaf of `tree`, when the key is
    /// there and `patch` accepts the value (returns true); false, changing nothing, otherwise. For a change that
    /// keeps the value's size and touches a few of its bytes (one fixed-size column of a row): no copy of the value
    /// in or out. The leaf is this transaction's copy, so a rollback drops the change with it.
    @inline(__always)
    func patchInLastLeaf(
        _ key: UnsafeRawBufferPointer, of tree: TreeRoot, _ patch: (UnsafeMutableRawBufferPointer) -> Bool
    ) throws(StorageError) -> Bool {
        guard let entry = try entryInLastLeaf(key, of: tree), entry.storage == .inline,
            patch(
                UnsafeMutableRawBufferPointer(
                    start: UnsafeMutableRawPointer(mutating: entry.payload), count: entry.length))
        else { return false }
        // A change like any other for cursors and stable values; the leaf stays the one remembered.
        modificationCount &+= 1
        lastLeaf = LastLeaf(
            root: tree.root, leaf: entry.page, buffer: lastLeaf!.buffer, stamp: modificationCount,
            index: lastLeaf!.index)
        return true
    }

    /// Remembers `leaf` (just modified, so dirty with its whole path) as the leaf of `tree`.
    @inline(__always)
    func rememberLeaf(_ leaf: PageNumber, buffer: UnsafeMutableRawPointer, of tree: TreeRoot) {
        lastLeaf = LastLeaf(root: tree.root, leaf: leaf, buffer: buffer, stamp: modificationCount)
    }
}

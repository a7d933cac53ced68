/// The keys whose entries differ between two versions of a keyed tree (see ``TreeView/differences(from:)``).
public struct TreeDifferences: Sendable, Equatable {
    /// Keys present only in the newer version.
    public var inserted: [[UInt8]] = []
    /// Keys present only in the older version.
    public var deleted: [[UInt8]] = []
    /// Keys present in both whose values differ.
    public var changed: [[UInt8]] = []

    /// Differences made of the given keys.
    public init(inserted: [[UInt8]] = [], deleted: [[UInt8]] = [], changed: [[UInt8]] = []) {
        self.inserted = inserted
        self.deleted = deleted
        self.changed = changed
    }

    /// Whether the versions hold the same entries.
    public var isEmpty: Bool { inserted.isEmpty && deleted.isEmpty && changed.isEmpty }
}

extension TreeView {
    /// The entries that differ between `old` (an earlier version of the same tree, from the same file) and this
    /// view. Both versions stay pinned while their views live, so a page number present in both trees holds the
    /// same bytes in both (pages are never rewritten in place): whole subtrees the versions share are skipped,
    /// and the cost is proportional to the pages the commits in between rewrote, not to the tree's size.
    ///
    /// Values are compared by what the leaf stores: inline bytes, the overflow chain's first page and length, or
    /// a nested tree's descriptor, so a value rewritten with the same bytes into new overflow pages counts as
    /// changed. Both trees must be keyed.
    public func differences(from old: TreeView) throws(StorageError) -> TreeDifferences {
        var result = TreeDifferences()
        if old.root.root == root.root { return result }
        let newRead = transaction.read
        let oldRead = old.transaction.read
        if root.root != 0 { try newRead.checkKind(root, .keyed) }
        if old.root.root != 0 { try oldRead.checkKind(old.root, .keyed) }

        // Every page of the old tree, then the new tree's pages outside it, then the old tree's pages outside
        // what the new walk saw (a shared subtree's root is seen there, so its pages are skipped again).
        var oldPages = Set<PageNumber>()
        _ = try Self.leaves(oldRead, old.root, skipping: nil, seen: &oldPages)
        var newSeen = Set<PageNumber>()
        let newLeaves = try Self.leaves(newRead, root, skipping: oldPages, seen: &newSeen)
        var ignored = Set<PageNumber>()
        let oldLeaves = try Self.leaves(oldRead, old.root, skipping: newSeen, seen: &ignored)

        var before: [[UInt8]: [UInt8]] = [:]
        for (page, entries) in oldLeaves {
            let node = try oldRead.source.node(page, entries: entries)
            guard node.isLeaf else { throw oldRead.source.file.corrupt(page, "expected a leaf at the tree's depth") }
            for index in 0..<node.count {
                let entry = try node.leafEntry(index, file: oldRead.source.file)
                before[Array(entry.key)] = Self.signature(entry)
            }
        }
        for (page, entries) in newLeaves {
            let node = try newRead.source.node(page, entries: entries)
            guard node.isLeaf else { throw newRead.source.file.corrupt(page, "expected a leaf at the tree's depth") }
            for index in 0..<node.count {
                let entry = try node.leafEntry(index, file: newRead.source.file)
                let key = Array(entry.key)
                if let previous = before.removeValue(forKey: key) {
                    if previous != Self.signature(entry) { result.changed.append(key) }
                } else {
                    result.inserted.append(key)
                }
            }
        }
        result.deleted = Array(before.keys)
        result.inserted.sort { $0.lexicographicallyPrecedes($1) }
        result.deleted.sort { $0.lexicographicallyPrecedes($1) }
        result.changed.sort { $0.lexicographicallyPrecedes($1) }
        return result
    }

    /// What identifies an entry's value without reading overflow chains.
    private static func signature(_ entry: LeafEntry) -> [UInt8] {
        var bytes: [UInt8] = [UInt8(truncatingIfNeeded: entry.storage.rawValue)]
        switch entry.storage {
        case .overflow:
            withUnsafeBytes(of: entry.overflowPage) { bytes.append(contentsOf: $0) }
            withUnsafeBytes(of: entry.length) { bytes.append(contentsOf: $0) }
        case .inline, .subtree:
            bytes.append(contentsOf: UnsafeRawBufferPointer(start: entry.payload, count: entry.length))
        }
        return bytes
    }

    /// The leaf pages of `tree` reachable without entering a page of `skipping`; every page looked at (entered
    /// or skipped) goes into `seen`. Checks depths so that a malformed tree ends.
    private static func leaves<Source: PageSource>(
        _ read: TreeRead<Source>, _ tree: TreeRoot, skipping: Set<PageNumber>?, seen: inout Set<PageNumber>
    ) throws(StorageError) -> [(page: PageNumber, entries: UInt64)] {
        guard tree.root != 0 else { return [] }
        var leaves: [(page: PageNumber, entries: UInt64)] = []
        var pending: [(page: PageNumber, entries: UInt64, level: Int)] = [(tree.root, UInt64(tree.count), 1)]
        while let (page, entries, level) = pending.popLast() {
            seen.insert(page)
            if skipping?.contains(page) == true { continue }
            if level == tree.depth {
                leaves.append((page, entries))
                continue
            }
            let node = try read.source.node(page, entries: entries)
            guard !node.isLeaf, level < tree.depth else {
                throw read.source.file.corrupt(page, "tree shape does not match its descriptor's depth")
            }
            for index in 0..<node.count {
                let (child, count) = try node.child(index, file: read.source.file)
                pending.append((child, count, level + 1))
            }
        }
        return leaves
    }
}

extension ReadTransaction {
    /// Names of the named trees that differ between `old` (an earlier version of the same file) and this one:
    /// created, dropped, or changed in any entry.
    public func changedTreeNames(since old: ReadTransaction) throws(StorageError) -> [String] {
        let differences = try catalog.differences(from: old.catalog)
        return (differences.inserted + differences.deleted + differences.changed).map {
            String(decoding: $0, as: UTF8.self)
        }
    }
}

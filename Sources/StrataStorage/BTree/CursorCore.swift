/// Position-tracking iteration over one tree: the branch path from the root, plus the current leaf and index.
///
/// The leaf and its index are kept outside the path so that stepping within a leaf, the common case, touches
/// no array. Over a committed version the pages never change, so a cursor stays valid for the life of its
/// transaction. Write-transaction cursors re-seek after modifications (see ``WriteCursor``).
struct CursorCore<Source: PageSource> {
    let read: TreeRead<Source>
    let tree: TreeRoot
    /// Branch nodes from the root down to the leaf's parent, with the child index taken at each.
    private(set) var path: [(node: Node, index: Int)] = []
    /// The current leaf (nil when unpositioned).
    private(set) var leaf: Node?
    /// Position within `leaf`.
    private(set) var index = 0

    init(source: Source, tree: TreeRoot) {
        self.read = TreeRead(source: source)
        self.tree = tree
        path.reserveCapacity(max(tree.depth - 1, 0))
    }

    /// Whether the cursor is on an entry.
    var isPositioned: Bool { leaf != nil }

    /// The leaf page under the cursor (for error messages).
    var page: PageNumber? { leaf?.page }

    /// The entry under the cursor.
    @inline(__always)
    func entry() throws(StorageError) -> LeafEntry {
        guard let leaf else { throw .invalidArgument("cursor is not positioned") }
        return try leaf.leafEntry(index, file: read.source.file)
    }

    /// Calls `body` with every entry from the current one to the end of the tree, walking each leaf's entries
    /// directly (no per-entry cursor step); stops when `body` returns false. Leaves the cursor unpositioned.
    mutating func forEachRemaining(_ body: (LeafEntry) throws -> Bool) throws {
        let file = read.source.file
        while let current = leaf {
            var position = index
            let count = current.count
            while position < count {
                guard try body(try current.leafEntry(position, file: file)) else {
                    reset()
                    return
                }
                position += 1
            }
            index = count - 1
            guard try next() else { return }
        }
    }

    private mutating func reset() {
        path.removeAll(keepingCapacity: true)
        leaf = nil
        index = 0
    }

    /// Moves to the first entry. Returns false for an empty tree.
    mutating func first() throws(StorageError) -> Bool {
        reset()
        guard tree.root != 0 else { return false }
        try descend(from: try rootNode(), leftmost: true)
        return try settleForward()
    }

    /// Moves to the last entry. Returns false for an empty tree.
    mutating func last() throws(StorageError) -> Bool {
        reset()
        guard tree.root != 0 else { return false }
        try descend(from: try rootNode(), leftmost: false)
        return try settleBackward()
    }

    /// Moves to the first entry whose key is >= `key`. Returns false when there is none.
    mutating func seek(atOrAfter key: UnsafeRawBufferPointer) throws(StorageError) -> Bool {
        try read.checkKind(tree, .keyed)
        reset()
        guard tree.root != 0 else { return false }
        let file = read.source.file
        var node = try rootNode()
        while !node.isLeaf {
            guard path.count + 1 < tree.depth else { throw file.corrupt(node.page, "tree deeper than its descriptor") }
            let childIndex = try node.childIndex(for: key, file: file)
            path.append((node, childIndex))
            node = try childNode(of: node, at: childIndex)
        }
        guard path.count + 1 == tree.depth else { throw file.corrupt(node.page, "leaf at the wrong depth") }
        leaf = node
        index = try node.lowerBound(key, file: file).index
        return try settleForward()
    }

    /// Moves to the last entry whose key is <= `key`. Returns false when there is none.
    mutating func seek(atOrBefore key: UnsafeRawBufferPointer) throws(StorageError) -> Bool {
        guard try seek(atOrAfter: key) else {
            guard try last() else { return false }
            return Bytes.compare(try entry().key, key) <= 0
        }
        if Bytes.compare(try entry().key, key) == 0 { return true }
        return try previous()
    }

    /// Moves to position `index` (0-based, in tree order).
    mutating func seek(toIndex target: Int) throws(StorageError) -> Bool {
        reset()
        guard target >= 0, target < tree.count else { return false }
        let file = read.source.file
        var node = try rootNode()
        var remaining = UInt64(target)
        while !node.isLeaf {
            guard path.count + 1 < tree.depth else { throw file.corrupt(node.page, "tree deeper than its descriptor") }
            var chosen = -1
            for child in 0..<node.count {
                let count = try node.child(child, file: file).count
                if remaining < count {
                    chosen = child
                    break
                }
                remaining -= count
            }
            guard chosen >= 0 else { throw file.corrupt(node.page, "subtree counts are smaller than the tree's count") }
            path.append((node, chosen))
            node = try childNode(of: node, at: chosen)
        }
        guard path.count + 1 == tree.depth, remaining < UInt64(node.count) else {
            throw file.corrupt(node.page, "subtree counts do not match the leaf")
        }
        leaf = node
        index = Int(remaining)
        return true
    }

    /// Advances to the next entry. Returns false (and unpositions) at the end.
    @inline(__always)
    mutating func next() throws(StorageError) -> Bool {
        guard let leaf else { return false }
        index += 1
        if index < leaf.count { return true }
        return try settleForward()
    }

    /// Steps back to the previous entry. Returns false (and unpositions) at the start.
    mutating func previous() throws(StorageError) -> Bool {
        guard leaf != nil else { return false }
        index -= 1
        if index >= 0 { return true }
        return try settleBackward()
    }

    /// The root page, which must hold as many entries as the tree's descriptor counts.
    @inline(__always)
    private func rootNode() throws(StorageError) -> Node {
        try read.source.node(tree.root, entries: UInt64(tree.count))
    }

    /// Child `index` of branch `node`, which must hold as many entries as `node`'s entry for it counts.
    @inline(__always)
    private func childNode(of node: Node, at index: Int) throws(StorageError) -> Node {
        let (page, entries) = try node.child(index, file: read.source.file)
        return try read.source.node(page, entries: entries)
    }

    /// Descends from `start` along the leftmost or rightmost children, pushing the path.
    private mutating func descend(from start: Node, leftmost: Bool) throws(StorageError) {
        let file = read.source.file
        var node = start
        while !node.isLeaf {
            guard path.count + 1 < tree.depth else { throw file.corrupt(node.page, "tree deeper than its descriptor") }
            let childIndex = leftmost ? 0 : node.count - 1
            path.append((node, childIndex))
            node = try childNode(of: node, at: childIndex)
        }
        guard path.count + 1 == tree.depth else { throw file.corrupt(node.page, "leaf at the wrong depth") }
        leaf = node
        index = leftmost ? 0 : node.count - 1
    }

    /// If the index ran past the leaf, moves to the start of the next non-empty leaf.
    private mutating func settleForward() throws(StorageError) -> Bool {
        while let current = leaf, index >= current.count {
            // Climb until an ancestor has a next child.
            while let parent = path.last, parent.index + 1 >= parent.node.count { path.removeLast() }
            guard !path.isEmpty else {
                reset()
                return false
            }
            path[path.count - 1].index += 1
            let parent = path[path.count - 1]
            try descend(from: try childNode(of: parent.node, at: parent.index), leftmost: true)
        }
        return leaf != nil
    }

    /// If the index ran before the leaf, moves to the end of the previous non-empty leaf.
    private mutating func settleBackward() throws(StorageError) -> Bool {
        while leaf != nil, index < 0 {
            while let parent = path.last, parent.index == 0 { path.removeLast() }
            guard !path.isEmpty else {
                reset()
                return false
            }
            path[path.count - 1].index -= 1
            let parent = path[path.count - 1]
            try descend(from: try childNode(of: parent.node, at: parent.index), leftmost: false)
        }
        return leaf != nil
    }
}

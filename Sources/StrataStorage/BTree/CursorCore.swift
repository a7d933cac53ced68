/// Position-tracking iteration over one tree: a stack of (node, index) from the root to a leaf entry.
///
/// Over a committed version the pages never change, so a cursor stays valid for the life of its transaction.
/// Write-transaction cursors re-seek after modifications (see ``WriteCursor``).
struct CursorCore<Source: PageSource> {
    let read: TreeRead<Source>
    let tree: TreeRoot
    private(set) var stack: [(node: Node, index: Int)] = []

    init(source: Source, tree: TreeRoot) {
        self.read = TreeRead(source: source)
        self.tree = tree
        stack.reserveCapacity(tree.depth)
    }

    /// Whether the cursor is on an entry.
    var isPositioned: Bool { !stack.isEmpty }

    /// The entry under the cursor.
    func entry() throws(StorageError) -> LeafEntry {
        guard let top = stack.last else { throw .invalidArgument("cursor is not positioned") }
        return try top.node.leafEntry(top.index, file: read.source.file)
    }

    /// Moves to the first entry. Returns false for an empty tree.
    mutating func first() throws(StorageError) -> Bool {
        stack.removeAll(keepingCapacity: true)
        guard tree.root != 0 else { return false }
        try descend(from: try read.source.node(tree.root), level: 1, leftmost: true)
        return try settleForward()
    }

    /// Moves to the last entry. Returns false for an empty tree.
    mutating func last() throws(StorageError) -> Bool {
        stack.removeAll(keepingCapacity: true)
        guard tree.root != 0 else { return false }
        try descend(from: try read.source.node(tree.root), level: 1, leftmost: false)
        return try settleBackward()
    }

    /// Moves to the first entry whose key is >= `key`. Returns false when there is none.
    mutating func seek(atOrAfter key: UnsafeRawBufferPointer) throws(StorageError) -> Bool {
        try read.checkKind(tree, .keyed)
        stack.removeAll(keepingCapacity: true)
        guard tree.root != 0 else { return false }
        let file = read.source.file
        var node = try read.source.node(tree.root)
        while !node.isLeaf {
            guard stack.count + 1 < tree.depth else { throw file.corrupt(node.page, "tree deeper than its descriptor") }
            let index = try node.childIndex(for: key, file: file)
            stack.append((node, index))
            node = try read.source.node(try node.child(index, file: file).page)
        }
        guard stack.count + 1 == tree.depth else { throw file.corrupt(node.page, "leaf at the wrong depth") }
        stack.append((node, try node.lowerBound(key, file: file).index))
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
    mutating func seek(toIndex index: Int) throws(StorageError) -> Bool {
        stack.removeAll(keepingCapacity: true)
        guard index >= 0, index < tree.count else { return false }
        let file = read.source.file
        var node = try read.source.node(tree.root)
        var remaining = UInt64(index)
        while !node.isLeaf {
            guard stack.count + 1 < tree.depth else { throw file.corrupt(node.page, "tree deeper than its descriptor") }
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
            stack.append((node, chosen))
            node = try read.source.node(try node.child(chosen, file: file).page)
        }
        guard stack.count + 1 == tree.depth, remaining < UInt64(node.count) else {
            throw file.corrupt(node.page, "subtree counts do not match the leaf")
        }
        stack.append((node, Int(remaining)))
        return true
    }

    /// Advances to the next entry. Returns false (and unpositions) at the end.
    mutating func next() throws(StorageError) -> Bool {
        guard !stack.isEmpty else { return false }
        stack[stack.count - 1].index += 1
        return try settleForward()
    }

    /// Steps back to the previous entry. Returns false (and unpositions) at the start.
    mutating func previous() throws(StorageError) -> Bool {
        guard !stack.isEmpty else { return false }
        stack[stack.count - 1].index -= 1
        return try settleBackward()
    }

    /// Descends from `node` along the leftmost or rightmost children, pushing the path.
    private mutating func descend(from start: Node, level: Int, leftmost: Bool) throws(StorageError) {
        let file = read.source.file
        var node = start
        var level = level
        while !node.isLeaf {
            guard level < tree.depth else { throw file.corrupt(node.page, "tree deeper than its descriptor") }
            let index = leftmost ? 0 : node.count - 1
            stack.append((node, index))
            node = try read.source.node(try node.child(index, file: file).page)
            level += 1
        }
        guard level == tree.depth else { throw file.corrupt(node.page, "leaf at the wrong depth") }
        stack.append((node, leftmost ? 0 : node.count - 1))
    }

    /// If the leaf index ran past its page, moves to the start of the next leaf.
    private mutating func settleForward() throws(StorageError) -> Bool {
        while let top = stack.last, top.index >= top.node.count {
            stack.removeLast()
            // Climb until an ancestor has a next child.
            while let parent = stack.last, parent.index + 1 >= parent.node.count { stack.removeLast() }
            guard !stack.isEmpty else { return false }
            stack[stack.count - 1].index += 1
            let parent = stack[stack.count - 1]
            let child = try read.source.node(try parent.node.child(parent.index, file: read.source.file).page)
            try descend(from: child, level: stack.count + 1, leftmost: true)
        }
        return !stack.isEmpty
    }

    /// If the leaf index ran before its page, moves to the end of the previous leaf.
    private mutating func settleBackward() throws(StorageError) -> Bool {
        while let top = stack.last, top.index < 0 {
            stack.removeLast()
            while let parent = stack.last, parent.index == 0 { stack.removeLast() }
            guard !stack.isEmpty else { return false }
            stack[stack.count - 1].index -= 1
            let parent = stack[stack.count - 1]
            let child = try read.source.node(try parent.node.child(parent.index, file: read.source.file).page)
            try descend(from: child, level: stack.count + 1, leftmost: false)
        }
        return !stack.isEmpty
    }
}

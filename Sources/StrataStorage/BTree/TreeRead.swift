/// Read algorithms over a tree, for any page source (a committed version or a write transaction's view).
struct TreeRead<Source: PageSource> {
    let source: Source

    @inline(__always)
    private var file: PathRef { source.file }

    /// Descends to the leaf that would hold `key`. Checks the depth so that a cyclic or malformed tree ends.
    @inline(__always)
    func leaf(for key: UnsafeRawBufferPointer, in tree: TreeRoot) throws(StorageError) -> Node? {
        guard tree.root != 0 else { return nil }
        var node = try source.node(tree.root, entries: UInt64(tree.count))
        var level = 1
        while !node.isLeaf {
            guard level < tree.depth else { throw file.corrupt(node.page, "tree is deeper than its descriptor says") }
            let index = try node.childIndex(for: key, file: file)
            let (child, entries) = try node.child(index, file: file)
            node = try source.node(child, entries: entries)
            level += 1
        }
        guard level == tree.depth else {
            throw file.corrupt(node.page, "leaf found at depth \(level), expected \(tree.depth)")
        }
        return node
    }

    /// The entry stored under `key`, if any.
    @inline(__always)
    func find(_ key: UnsafeRawBufferPointer, in tree: TreeRoot) throws(StorageError) -> LeafEntry? {
        try checkKind(tree, .keyed)
        guard let leaf = try leaf(for: key, in: tree) else { return nil }
        let (index, found) = try leaf.lowerBound(key, file: file)
        return found ? try leaf.leafEntry(index, file: file) : nil
    }

    /// Whether `key` is in `tree`. When it is, `path` holds the child index taken at each branch level (from the
    /// root) and then the key's index in its leaf: `tree.depth` entries, at most `TreeRoot.maxDepth`.
    func locate(_ key: UnsafeRawBufferPointer, in tree: TreeRoot, path: UnsafeMutableBufferPointer<Int>)
        throws(StorageError) -> Bool
    {
        try checkKind(tree, .keyed)
        guard tree.root != 0 else { return false }
        var node = try source.node(tree.root, entries: UInt64(tree.count))
        var level = 1
        while !node.isLeaf {
            guard level < tree.depth, level < path.count else {
                throw file.corrupt(node.page, "tree is deeper than its descriptor says")
            }
            let index = try node.childIndex(for: key, file: file)
            path[level - 1] = index
            let (child, entries) = try node.child(index, file: file)
            node = try source.node(child, entries: entries)
            level += 1
        }
        guard level == tree.depth else {
            throw file.corrupt(node.page, "leaf found at depth \(level), expected \(tree.depth)")
        }
        let (index, found) = try node.lowerBound(key, file: file)
        path[level - 1] = index
        return found
    }

    /// The leaf holding position `index` and the position within it.
    func leaf(at index: Int, in tree: TreeRoot) throws(StorageError) -> (Node, Int) {
        guard index >= 0, index < tree.count else { throw .indexOutOfRange(index: index, count: tree.count) }
        var node = try source.node(tree.root, entries: UInt64(tree.count))
        var remaining = UInt64(index)
        var level = 1
        while !node.isLeaf {
            guard level < tree.depth else { throw file.corrupt(node.page, "tree is deeper than its descriptor says") }
            var chosen: (page: PageNumber, entries: UInt64) = (0, 0)
            for child in 0..<node.count {
                let (page, count) = try node.child(child, file: file)
                if remaining < count {
                    chosen = (page, count)
                    break
                }
                remaining -= count
            }
            guard chosen.page != 0 else {
                throw file.corrupt(node.page, "subtree counts are smaller than the tree's count")
            }
            node = try source.node(chosen.page, entries: chosen.entries)
            level += 1
        }
        guard level == tree.depth, remaining < UInt64(node.count) else {
            throw file.corrupt(node.page, "subtree counts do not match the leaf")
        }
        return (node, Int(remaining))
    }

    /// The position of `key` in key order, or of the first larger key, and whether the key is present.
    func rank(of key: UnsafeRawBufferPointer, in tree: TreeRoot) throws(StorageError) -> (index: Int, found: Bool) {
        try checkKind(tree, .keyed)
        guard tree.root != 0 else { return (0, false) }
        var node = try source.node(tree.root, entries: UInt64(tree.count))
        var before: UInt64 = 0
        var level = 1
        while !node.isLeaf {
            guard level < tree.depth else { throw file.corrupt(node.page, "tree is deeper than its descriptor says") }
            let index = try node.childIndex(for: key, file: file)
            for child in 0..<index { before &+= try node.child(child, file: file).count }
            let (child, entries) = try node.child(index, file: file)
            node = try source.node(child, entries: entries)
            level += 1
        }
        let (index, found) = try node.lowerBound(key, file: file)
        return (Int(before) + index, found)
    }

    /// Throws unless an overflow value of `entry.length` bytes could fit in the pages of this view, so that a
    /// damaged length cannot make a read allocate a gigabyte.
    @inline(__always)
    private func checkOverflowLength(_ entry: LeafEntry) throws(StorageError) {
        let pages = UInt64((entry.length + source.geometry.overflowPayload - 1) / source.geometry.overflowPayload)
        guard pages <= source.pageLimit else {
            throw file.corrupt(entry.page, "a \(entry.length)-byte value cannot fit in the file's pages")
        }
    }

    /// Copies a value out of its entry, following an overflow chain when needed.
    func value(of entry: LeafEntry) throws(StorageError) -> [UInt8] {
        switch entry.storage {
        case .inline, .subtree:
            return Array(UnsafeRawBufferPointer(start: entry.payload, count: entry.length))
        case .overflow:
            try checkOverflowLength(entry)
            var failure: StorageError?
            let value = [UInt8](unsafeUninitializedCapacity: entry.length) { buffer, initialized in
                do throws(StorageError) {
                    try copyOverflow(from: entry.overflowPage, length: entry.length, into: buffer.baseAddress!)
                    initialized = entry.length
                } catch {
                    failure = error
                    initialized = 0
                }
            }
            if let failure { throw failure }
            return value
        }
    }

    /// Calls `body` with the value's bytes: in place for inline values, from a temporary copy for overflow values.
    func withValue<R>(of entry: LeafEntry, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R {
        switch entry.storage {
        case .inline, .subtree:
            return try body(UnsafeRawBufferPointer(start: entry.payload, count: entry.length))
        case .overflow:
            try checkOverflowLength(entry)
            let buffer = UnsafeMutableRawPointer.allocate(byteCount: max(entry.length, 1), alignment: 16)
            defer { buffer.deallocate() }
            try copyOverflow(from: entry.overflowPage, length: entry.length, into: buffer)
            return try body(UnsafeRawBufferPointer(start: buffer, count: entry.length))
        }
    }

    /// Copies `length` bytes of the chain starting at `first` into `destination`. The chain must hold exactly
    /// that value (see ``OverflowLayout``): as many pages as the length needs, the length its first page records,
    /// zeros after the value's end.
    func copyOverflow(from first: PageNumber, length: Int, into destination: UnsafeMutableRawPointer)
        throws(StorageError)
    {
        let payload = source.geometry.overflowPayload
        var page = first
        var copied = 0
        while copied < length {
            let base = try overflowPage(page)
            if copied == 0, let problem = OverflowLayout.lengthProblem(base, length: length) {
                throw file.corrupt(page, problem)
            }
            let chunk = min(payload, length - copied)
            (destination + copied).copyMemory(from: base + PageHeader.size, byteCount: chunk)
            copied += chunk
            let next = base.u32(PageHeader.next)
            if copied < length && next == 0 { throw file.corrupt(page, "overflow chain ends early") }
            if copied == length,
                let problem = OverflowLayout.endProblem(base, used: chunk, pageSize: source.geometry.usableSize)
            {
                throw file.corrupt(page, problem)
            }
            page = next
        }
    }

    /// The page numbers of the chain holding `length` bytes, validated like ``copyOverflow(from:length:into:)``.
    func overflowPages(from first: PageNumber, length: Int) throws(StorageError) -> [PageNumber] {
        let payload = source.geometry.overflowPayload
        let count = max(1, (length + payload - 1) / payload)
        guard UInt64(count) <= source.pageLimit else {
            throw file.corrupt(first, "a \(length)-byte value cannot fit in the file's pages")
        }
        var pages = [PageNumber]()
        pages.reserveCapacity(count)
        var page = first
        for index in 0..<count {
            let base = try overflowPage(page)
            if index == 0, let problem = OverflowLayout.lengthProblem(base, length: length) {
                throw file.corrupt(page, problem)
            }
            pages.append(page)
            if index + 1 == count,
                let problem = OverflowLayout.endProblem(
                    base, used: length - index * payload, pageSize: source.geometry.usableSize)
            {
                throw file.corrupt(page, problem)
            }
            page = base.u32(PageHeader.next)
            if index + 1 < count && page == 0 { throw file.corrupt(pages[index], "overflow chain ends early") }
        }
        return pages
    }

    @inline(__always)
    private func overflowPage(_ page: PageNumber) throws(StorageError) -> UnsafeRawPointer {
        let base = try source.page(page)
        guard base.u8(PageHeader.kind) == PageKind.overflow.rawValue, base.u32(PageHeader.pageNumber) == page else {
            throw file.corrupt(page, "expected an overflow page")
        }
        return base
    }

    /// Decodes a nested tree descriptor stored in `entry`.
    func subtree(of entry: LeafEntry, pageCount: UInt64) throws(StorageError) -> TreeRoot {
        guard entry.storage == .subtree else { throw .invalidArgument("the entry does not hold a tree") }
        guard let tree = TreeRoot.decode(entry.payload, pageCount: pageCount) else {
            throw file.corrupt(entry.page, "invalid nested tree descriptor")
        }
        return tree
    }

    @inline(__always)
    func checkKind(_ tree: TreeRoot, _ kind: TreeKind) throws(StorageError) {
        if tree.kind != kind { throw .wrongTreeKind(expected: kind, actual: tree.kind) }
    }
}

/// A value to store in a leaf entry.
enum ValueInput {
    /// Bytes, stored inline or in an overflow chain depending on their size.
    case bytes(UnsafeRawBufferPointer)
    /// A nested tree's descriptor.
    case subtree(TreeRoot)
    /// `n` zero bytes stored inline, to be filled in place later (free-list records).
    case reserve(Int)
}

/// Where a modification applies.
private enum Target {
    case key(UnsafeRawBufferPointer)
    /// A present key whose path a read-only descent recorded (`TreeRead.locate`): the child index at each branch
    /// level, then the key's index in its leaf. The descent follows it without searching again.
    case located(UnsafeRawBufferPointer, path: UnsafeBufferPointer<Int>)
    /// An existing position.
    case position(Int)
    /// An insertion point, 0...count.
    case insertion(Int)
}

private enum LeafOperation {
    case upsert(LeafSpec)
    /// Inserts under a key that must be absent; a present key is left as it is.
    case insertIfAbsent(LeafSpec)
    case insert(LeafSpec)
    case replace(LeafSpec)
    case remove
}

struct PathStep {
    var page: PageNumber
    var buffer: UnsafeMutableRawPointer
    var index: Int
    /// Whether this node lies on the tree's rightmost path (appends there split unevenly, leaving full pages).
    var rightmost: Bool
}

private struct SplitResult {
    let rightPage: PageNumber
    let separator: [UInt8]
    let leftCount: UInt64
    let rightCount: UInt64
}

/// Copy-on-write modifications of B+trees.
extension WriteContext {
    // MARK: Public operations

    /// Inserts or replaces the value stored under `key`.
    func put(_ key: UnsafeRawBufferPointer, value: ValueInput, into tree: inout TreeRoot) throws(StorageError) {
        try checkKind(tree, .keyed)
        guard key.count <= geometry.maxKeySize else { throw .keyTooLarge(size: key.count, limit: geometry.maxKeySize) }
        // The common case, a small value stored inline, goes straight to the tree (no closure on the hot path).
        if case .bytes(let bytes) = value, bytes.count <= geometry.maxInlineValue(keySize: key.count) {
            // A put into the leaf the last put left dirty, when the key belongs there, needs no descent (`LastLeaf`).
            let spec = LeafSpec(key: key, storage: .inline, length: bytes.count, payload: bytes)
            if try putInLastLeaf(spec, into: &tree, ifAbsent: false) != .descend { return }
            try modify(&tree, target: .key(key), operation: .upsert(spec))
            return
        }
        try withLeafSpec(key: key, value: value) { (spec) throws(StorageError) in
            try modify(&tree, target: .key(key), operation: .upsert(spec))
        }
    }

    /// Stores `value` under `key` when `key` is absent; returns false, changing no entry, when it is present. One
    /// descent finds the slot and tells whether the key is there: a lookup followed by a put descended twice. The
    /// path's pages are copied for writing either way (the value of a present key is what a caller failing its
    /// transaction on it leaves behind).
    func insertIfAbsent(_ key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, into tree: inout TreeRoot)
        throws(StorageError) -> Bool
    {
        try checkKind(tree, .keyed)
        guard key.count <= geometry.maxKeySize else { throw .keyTooLarge(size: key.count, limit: geometry.maxKeySize) }
        var inserted = false
        if value.count <= geometry.maxInlineValue(keySize: key.count) {
            let spec = LeafSpec(key: key, storage: .inline, length: value.count, payload: value)
            switch try putInLastLeaf(spec, into: &tree, ifAbsent: true) {
            case .written: return true
            case .present: return false
            case .descend: break
            }
            inserted = try modify(&tree, target: .key(key), operation: .insertIfAbsent(spec))
            return inserted
        }
        try withLeafSpec(key: key, value: .bytes(value)) { (spec) throws(StorageError) in
            inserted = try modify(&tree, target: .key(key), operation: .insertIfAbsent(spec))
        }
        return inserted
    }

    /// Removes `key`. Returns false when it was not present.
    @discardableResult
    func delete(_ key: UnsafeRawBufferPointer, from tree: inout TreeRoot) throws(StorageError) -> Bool {
        try checkKind(tree, .keyed)
        // An absent key changes nothing, so the path is found without copying its pages first; the removal then
        // follows the recorded path instead of searching every level again (a scattered delete searched twice).
        return try withUnsafeTemporaryAllocation(of: Int.self, capacity: TreeRoot.maxDepth) {
            (path) throws(StorageError) -> Bool in
            guard try TreeRead(source: pages).locate(key, in: tree, path: path) else { return false }
            try modify(&tree, target: .located(key, path: UnsafeBufferPointer(path)), operation: .remove)
            return true
        }
    }

    /// Inserts a value at `index` (0...count) of a list tree.
    func insert(_ value: ValueInput, at index: Int, into tree: inout TreeRoot) throws(StorageError) {
        try checkKind(tree, .list)
        guard index >= 0, index <= tree.count else { throw .indexOutOfRange(index: index, count: tree.count) }
        let empty = UnsafeRawBufferPointer(start: nil, count: 0)
        if case .bytes(let bytes) = value, bytes.count <= geometry.maxInlineValue(keySize: 0) {
            let spec = LeafSpec(key: empty, storage: .inline, length: bytes.count, payload: bytes)
            // An append after an append to this list goes into the last leaf without a descent (see `LastLeaf`).
            if index == tree.count, try appendInLastLeaf(spec, to: &tree) { return }
            try modify(&tree, target: .insertion(index), operation: .insert(spec))
            return
        }
        try withLeafSpec(key: UnsafeRawBufferPointer(start: nil, count: 0), value: value) {
            (spec) throws(StorageError) in
            try modify(&tree, target: .insertion(index), operation: .insert(spec))
        }
    }

    /// Replaces the value at `index` of a list tree.
    func replace(at index: Int, with value: ValueInput, in tree: inout TreeRoot) throws(StorageError) {
        try checkKind(tree, .list)
        guard index >= 0, index < tree.count else { throw .indexOutOfRange(index: index, count: tree.count) }
        try withLeafSpec(key: UnsafeRawBufferPointer(start: nil, count: 0), value: value) {
            (spec) throws(StorageError) in
            try modify(&tree, target: .position(index), operation: .replace(spec))
        }
    }

    /// Removes the entry at position `index` (of a list, or the index-th key of a keyed tree).
    func remove(at index: Int, from tree: inout TreeRoot) throws(StorageError) {
        guard index >= 0, index < tree.count else { throw .indexOutOfRange(index: index, count: tree.count) }
        try modify(&tree, target: .position(index), operation: .remove)
    }

    /// Frees every page of a tree (nested trees and overflow chains included) and empties it.
    func clear(_ tree: inout TreeRoot) throws(StorageError) {
        try freePages(of: tree)
        tree = TreeRoot(root: 0, depth: 0, kind: tree.kind, count: 0, sequence: tree.sequence)
    }

    /// Frees every page reachable from `tree`.
    func freePages(of tree: TreeRoot) throws(StorageError) {
        guard tree.root != 0 else { return }
        var stack: [(page: PageNumber, level: Int)] = [(tree.root, 1)]
        while let (page, level) = stack.popLast() {
            guard level <= tree.depth else { throw file.corrupt(page, "tree is deeper than its descriptor says") }
            let node = try pages.node(page)
            if node.isLeaf {
                for index in 0..<node.count { try releaseValue(of: try node.leafEntry(index, file: file)) }
            } else {
                for index in 0..<node.count { stack.append((try node.child(index, file: file).page, level + 1)) }
            }
            free(page)
        }
    }

    @inline(__always)
    private func checkKind(_ tree: TreeRoot, _ kind: TreeKind) throws(StorageError) {
        if tree.kind != kind { throw .wrongTreeKind(expected: kind, actual: tree.kind) }
    }

    // MARK: Values

    private func withLeafSpec(
        key: UnsafeRawBufferPointer, value: ValueInput, _ body: (LeafSpec) throws(StorageError) -> Void
    ) throws(StorageError) {
        switch value {
        case .bytes(let bytes):
            if bytes.count <= geometry.maxInlineValue(keySize: key.count) {
                try body(LeafSpec(key: key, storage: .inline, length: bytes.count, payload: bytes))
                return
            }
            guard bytes.count <= PageGeometry.maxValueSize else {
                throw .valueTooLarge(size: bytes.count, limit: PageGeometry.maxValueSize)
            }
            let first = try writeOverflow(bytes)
            try withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 1) { (reference) throws(StorageError) in
                reference[0] = first.littleEndian
                try body(
                    LeafSpec(
                        key: key, storage: .overflow, length: bytes.count, payload: UnsafeRawBufferPointer(reference)))
            }
        case .subtree(let tree):
            try withUnsafeTemporaryAllocation(of: UInt64.self, capacity: 4) { (descriptor) throws(StorageError) in
                let raw = UnsafeMutableRawBufferPointer(descriptor)
                tree.encode(into: raw.baseAddress!)
                try body(
                    LeafSpec(
                        key: key, storage: .subtree, length: TreeRoot.encodedSize, payload: UnsafeRawBufferPointer(raw))
                )
            }
        case .reserve(let size):
            precondition(size <= geometry.maxInlineValue(keySize: key.count), "reserved value too large to be inline")
            try body(
                LeafSpec(
                    key: key, storage: .inline, length: size, payload: UnsafeRawBufferPointer(start: nil, count: 0),
                    zeroes: size))
        }
    }

    /// Writes a value into a new overflow chain and returns its first page.
    private func writeOverflow(_ bytes: UnsafeRawBufferPointer) throws(StorageError) -> PageNumber {
        let payload = geometry.overflowPayload
        let count = (bytes.count + payload - 1) / payload
        var chain = [(page: PageNumber, buffer: UnsafeMutableRawPointer)]()
        chain.reserveCapacity(count)
        for _ in 0..<count { chain.append(try allocatePage()) }
        for (index, link) in chain.enumerated() {
            let buffer = link.buffer
            buffer.initializeMemory(as: UInt8.self, repeating: 0, count: PageHeader.size)
            buffer.setU32(PageHeader.pageNumber, link.page)
            buffer.setU8(PageHeader.kind, PageKind.overflow.rawValue)
            buffer.setU32(PageHeader.next, index + 1 < count ? chain[index + 1].page : 0)
            if index == 0 { buffer.setU32(OverflowLayout.lengthOffset, UInt32(bytes.count)) }
            let start = index * payload
            let length = min(payload, bytes.count - start)
            (buffer + PageHeader.size).copyMemory(from: bytes.baseAddress! + start, byteCount: length)
            if length < payload {
                (buffer + PageHeader.size + length).initializeMemory(
                    as: UInt8.self, repeating: 0, count: payload - length)
            }
        }
        return chain[0].page
    }

    /// What a removed entry's value occupied outside its leaf.
    private enum ValueResources {
        case none
        case overflow(first: PageNumber, length: Int)
        case subtree(TreeRoot)
    }

    private func resources(of entry: LeafEntry) throws(StorageError) -> ValueResources {
        switch entry.storage {
        case .inline: return .none
        case .overflow: return .overflow(first: entry.overflowPage, length: entry.length)
        case .subtree: return .subtree(try TreeRead(source: pages).subtree(of: entry, pageCount: pageCount))
        }
    }

    private func release(_ resources: ValueResources) throws(StorageError) {
        switch resources {
        case .none: break
        case .overflow(let first, let length):
            for page in try TreeRead(source: pages).overflowPages(from: first, length: length) { free(page) }
        case .subtree(let tree): try freePages(of: tree)
        }
    }

    private func releaseValue(of entry: LeafEntry) throws(StorageError) { try release(try resources(of: entry)) }

    // MARK: Descent and leaf edits

    /// Applies `operation` at `target`; false only for an `insertIfAbsent` whose key is present.
    @discardableResult
    private func modify(_ tree: inout TreeRoot, target: Target, operation: LeafOperation) throws(StorageError) -> Bool {
        modificationCount &+= 1
        // The tree changes other than through its memo: forget it (a modification without a split records it anew).
        retireLeaf(of: tree.root)
        if tree.root == 0 {
            switch operation {
            case .upsert, .insert, .insertIfAbsent:
                let (page, buffer) = try allocatePage()
                NodeEdit.initialize(buffer, page: page, kind: .leaf, pageSize: geometry.usableSize)
                tree.root = page
                tree.depth = 1
            case .replace, .remove:
                throw .indexOutOfRange(index: 0, count: 0)
            }
        }
        guard tree.depth >= 1, tree.depth <= TreeRoot.maxDepth else {
            throw file.corrupt(tree.root, "tree depth \(tree.depth) is out of range")
        }
        let levels = tree.depth - 1
        var applied = true
        try withUnsafeTemporaryAllocation(of: PathStep.self, capacity: TreeRoot.maxDepth) {
            (path) throws(StorageError) in
            var (page, buffer) = try touch(tree.root, entries: UInt64(tree.count))
            tree.root = page
            var remaining = 0
            switch target {
            case .position(let index), .insertion(let index): remaining = index
            case .key, .located: break
            }
            var rightmost = true
            for level in 0..<levels {
                let node = try Node(UnsafeRawPointer(buffer), page: page, pageSize: geometry.usableSize, file: file)
                guard !node.isLeaf else { throw file.corrupt(page, "leaf found above the leaf level") }
                var index = 0
                switch target {
                case .key(let key):
                    // Keys written in ascending order (new object keys, sequential primary keys) fall at or past
                    // the last child's first key along the rightmost path: one comparison instead of a search.
                    index = -1
                    if rightmost && node.count > 1 {
                        let last = try node.key(node.count - 1, file: file)
                        if Bytes.compare(last, key) <= 0 { index = node.count - 1 }
                    }
                    if index < 0 { index = try node.childIndex(for: key, file: file) }
                case .located(_, let recorded):
                    index = recorded[level]
                    guard index < node.count else { throw file.corrupt(page, "the branch changed during removal") }
                case .position, .insertion:
                    let inclusive: Bool
                    if case .insertion = target { inclusive = true } else { inclusive = false }
                    var found = false
                    while index < node.count {
                        let count = Int(try node.child(index, file: file).count)
                        if remaining < count || (inclusive && remaining == count) {
                            found = true
                            break
                        }
                        remaining -= count
                        index += 1
                    }
                    guard found else { throw file.corrupt(page, "subtree counts are smaller than the tree's count") }
                }
                path.initializeElement(
                    at: level, to: PathStep(page: page, buffer: buffer, index: index, rightmost: rightmost))
                rightmost = rightmost && index == node.count - 1
                let (child, entries) = try node.child(index, file: file)
                let (childPage, childBuffer) = try touch(child, entries: entries)
                if childPage != child { NodeEdit.setChild(buffer, index, page: childPage) }
                page = childPage
                buffer = childBuffer
            }
            let leaf = try Node(UnsafeRawPointer(buffer), page: page, pageSize: geometry.usableSize, file: file)
            guard leaf.isLeaf else { throw file.corrupt(page, "branch found at the leaf level") }
            var split: SplitResult?
            var delta = 0
            var slotIndex = 0
            switch operation {
            case .upsert(let spec):
                let (index, found) = try slot(for: spec.key, in: leaf, rightmost: rightmost)
                slotIndex = index
                if found {
                    split = try replaceEntry(page, buffer, at: index, with: spec)
                } else {
                    delta = 1
                    split = try insertEntry(
                        page, buffer, at: index, spec: spec, append: rightmost && index == leaf.count)
                }
            case .insertIfAbsent(let spec):
                let (index, found) = try slot(for: spec.key, in: leaf, rightmost: rightmost)
                slotIndex = index
                if found {
                    applied = false
                } else {
                    delta = 1
                    split = try insertEntry(
                        page, buffer, at: index, spec: spec, append: rightmost && index == leaf.count)
                }
            case .insert(let spec):
                guard remaining <= leaf.count else { throw file.corrupt(page, "subtree counts do not match the leaf") }
                delta = 1
                split = try insertEntry(
                    page, buffer, at: remaining, spec: spec, append: rightmost && remaining == leaf.count)
            case .replace(let spec):
                guard remaining < leaf.count else { throw file.corrupt(page, "subtree counts do not match the leaf") }
                split = try replaceEntry(page, buffer, at: remaining, with: spec)
            case .remove:
                var index = remaining
                if case .key(let key) = target {
                    let (position, found) = try leaf.lowerBound(key, file: file)
                    guard found else { throw file.corrupt(page, "key vanished during removal") }
                    index = position
                } else if case .located(let key, let recorded) = target {
                    index = recorded[levels]
                    guard index < leaf.count, Bytes.compare(try leaf.key(index, file: file), key) == 0 else {
                        throw file.corrupt(page, "key vanished during removal")
                    }
                }
                guard index < leaf.count else { throw file.corrupt(page, "subtree counts do not match the leaf") }
                let entry = try leaf.leafEntry(index, file: file)
                let resources = try resources(of: entry)
                NodeEdit.remove(buffer, at: index, entrySize: entry.size)
                try release(resources)
                delta = -1
            }
            tree.count &+= delta
            if delta < 0 {
                try rebalance(&tree, path: path, levels: levels, leafPage: page, leafBuffer: buffer)
            } else {
                try propagate(&tree, path: path, levels: levels, split: split, delta: delta)
                // Without a split the leaf still holds its keys, and it and its path are now this write's own.
                if case .key = target, split == nil {
                    rememberLeaf(
                        page, buffer: buffer, index: slotIndex, of: tree, path: path, levels: levels,
                        rightmost: rightmost)
                } else if case .insertion = target, case .insert = operation, split == nil, rightmost,
                    remaining == leaf.count
                {
                    // An append to a list: the next one goes to the same leaf.
                    rememberLeaf(
                        page, buffer: buffer, index: remaining, of: tree, path: path, levels: levels,
                        rightmost: rightmost, keyed: false)
                }
            }
            path.baseAddress!.deinitialize(count: levels)
        }
        return applied
    }

    /// Where `key` is or would go in `leaf`, and whether it is there. On the tree's rightmost leaf a key past the
    /// last one (an append) is told by one comparison; anything else is a binary search.
    @inline(__always)
    private func slot(for key: UnsafeRawBufferPointer, in leaf: Node, rightmost: Bool) throws(StorageError) -> (
        index: Int, found: Bool
    ) {
        if rightmost && leaf.count > 0 {
            let last = try leaf.key(leaf.count - 1, file: file)
            if Bytes.compare(last, key) < 0 { return (leaf.count, false) }
        }
        return try leaf.lowerBound(key, file: file)
    }

    /// Inserts a leaf entry, splitting the page when it is full.
    private func insertEntry(
        _ page: PageNumber, _ buffer: UnsafeMutableRawPointer, at index: Int, spec: LeafSpec, append: Bool
    ) throws(StorageError) -> SplitResult? {
        if let offset = try NodeEdit.reserve(
            buffer, page: page, at: index, size: spec.size, pageSize: geometry.usableSize, file: file)
        {
            spec.write(to: buffer + offset)
            return nil
        }
        let entry = UnsafeMutableRawPointer.allocate(byteCount: spec.size, alignment: 8)
        defer { entry.deallocate() }
        spec.write(to: entry)
        return try split(page, buffer, inserting: UnsafeRawPointer(entry), size: spec.size, at: index, append: append)
    }

    /// Replaces leaf entry `index`: in place when the value keeps its size and storage, otherwise by removal and
    /// reinsertion. Replacing a nested tree's descriptor with another descriptor keeps the nested pages (that is how a
    /// nested tree's new root is recorded); any other replacement releases the old value's pages.
    private func replaceEntry(
        _ page: PageNumber, _ buffer: UnsafeMutableRawPointer, at index: Int, with spec: LeafSpec
    ) throws(StorageError) -> SplitResult? {
        let node = try Node(UnsafeRawPointer(buffer), page: page, pageSize: geometry.usableSize, file: file)
        let old = try node.leafEntry(index, file: file)
        if old.storage == spec.storage && old.storage != .overflow && old.length == spec.length
            && old.key.count == spec.key.count
        {
            let target = UnsafeMutableRawPointer(mutating: old.payload)
            if let source = spec.payload.baseAddress { target.copyMemory(from: source, byteCount: spec.payload.count) }
            if spec.zeroes > 0 {
                (target + spec.payload.count).initializeMemory(as: UInt8.self, repeating: 0, count: spec.zeroes)
            }
            return nil
        }
        let resources: ValueResources =
            old.storage == .subtree && spec.storage == .subtree ? .none : try resources(of: old)
        NodeEdit.remove(buffer, at: index, entrySize: old.size)
        try release(resources)
        return try insertEntry(page, buffer, at: index, spec: spec, append: false)
    }

    /// Splits a full page while inserting raw entry bytes at `index`. The original page keeps the left part.
    private func split(
        _ page: PageNumber, _ buffer: UnsafeMutableRawPointer, inserting entry: UnsafeRawPointer, size entrySize: Int,
        at insertIndex: Int, append: Bool
    ) throws(StorageError) -> SplitResult {
        let pageSize = geometry.usableSize
        let (rightPage, rightBuffer) = try allocatePage()
        if append,
            let result = try splitAppendingLeaf(
                page, buffer, rightPage, rightBuffer, inserting: entry, size: entrySize, at: insertIndex)
        {
            return result
        }
        let copy = UnsafeMutableRawPointer.allocate(byteCount: pageSize, alignment: 16)
        defer { copy.deallocate() }
        copy.copyMemory(from: buffer, byteCount: pageSize)
        let old = try Node(UnsafeRawPointer(copy), page: page, pageSize: pageSize, file: file)
        let total = old.count + 1
        var pointers = [UnsafeRawPointer]()
        var sizes = [Int]()
        pointers.reserveCapacity(total)
        sizes.reserveCapacity(total)
        for index in 0..<total {
            if index == insertIndex {
                pointers.append(entry)
                sizes.append(entrySize)
            } else {
                let source = index < insertIndex ? index : index - 1
                pointers.append(UnsafeRawPointer(copy) + (try old.offset(source, file: file)))
                sizes.append(try old.entrySize(source, file: file))
            }
        }
        let isLeaf = old.isLeaf
        let capacity = NodeEdit.capacity(pageSize: pageSize)
        var cut: Int
        if append && insertIndex == old.count {
            cut = old.count
        } else {
            let half = (sizes.reduce(0, +) + total * PageHeader.slotSize) / 2
            var accumulated = 0
            cut = 0
            while cut < total - 1 && accumulated + (sizes[cut] + PageHeader.slotSize) / 2 < half {
                accumulated += sizes[cut] + PageHeader.slotSize
                cut += 1
            }
            cut = max(1, cut)
        }
        func bytes(_ range: Range<Int>) -> Int { range.reduce(0) { $0 + sizes[$1] + PageHeader.slotSize } }
        while cut > 1 && bytes(0..<cut) > capacity { cut -= 1 }
        while cut < total - 1 && bytes(cut..<total) > capacity { cut += 1 }

        let kind: PageKind = isLeaf ? .leaf : .branch
        NodeEdit.initialize(buffer, page: page, kind: kind, pageSize: pageSize)
        for index in 0..<cut { NodeEdit.append(buffer, entry: pointers[index], size: sizes[index]) }
        NodeEdit.initialize(rightBuffer, page: rightPage, kind: kind, pageSize: pageSize)

        let separator: [UInt8]
        var leftCount: UInt64 = 0
        var rightCount: UInt64 = 0
        if isLeaf {
            for index in cut..<total { NodeEdit.append(rightBuffer, entry: pointers[index], size: sizes[index]) }
            let leftKey = UnsafeRawBufferPointer(
                start: pointers[cut - 1] + EntryLayout.leafHeader, count: Int(pointers[cut - 1].u16(0)))
            let rightKey = UnsafeRawBufferPointer(
                start: pointers[cut] + EntryLayout.leafHeader, count: Int(pointers[cut].u16(0)))
            separator = rightKey.isEmpty ? [] : NodeEdit.separator(between: leftKey, and: rightKey)
            leftCount = UInt64(cut)
            rightCount = UInt64(total - cut)
        } else {
            let first = pointers[cut]
            separator = Array(UnsafeRawBufferPointer(start: first + EntryLayout.branchHeader, count: Int(first.u16(0))))
            try withUnsafeTemporaryAllocation(byteCount: EntryLayout.branchHeader, alignment: 8) {
                (raw) throws(StorageError) in
                BranchSpec(key: UnsafeRawBufferPointer(start: nil, count: 0), child: first.u32(2), count: first.u64(6))
                    .write(to: raw.baseAddress!)
                NodeEdit.append(rightBuffer, entry: UnsafeRawPointer(raw.baseAddress!), size: EntryLayout.branchHeader)
            }
            for index in (cut + 1)..<total { NodeEdit.append(rightBuffer, entry: pointers[index], size: sizes[index]) }
            for index in 0..<cut { leftCount &+= pointers[index].u64(6) }
            for index in cut..<total { rightCount &+= pointers[index].u64(6) }
        }
        return SplitResult(rightPage: rightPage, separator: separator, leftCount: leftCount, rightCount: rightCount)
    }

    /// The split of a full rightmost leaf by an entry past its last one (keys written in ascending order): the page
    /// keeps every entry as it is and the new right page holds the new entry alone, so nothing is copied or sized.
    /// Nil, changing nothing, when the page is not a leaf or the entry does not go last.
    private func splitAppendingLeaf(
        _ page: PageNumber, _ buffer: UnsafeMutableRawPointer, _ rightPage: PageNumber,
        _ rightBuffer: UnsafeMutableRawPointer, inserting entry: UnsafeRawPointer, size entrySize: Int,
        at insertIndex: Int
    ) throws(StorageError) -> SplitResult? {
        let pageSize = geometry.usableSize
        let old = try Node(UnsafeRawPointer(buffer), page: page, pageSize: pageSize, file: file)
        guard old.isLeaf, old.count > 0, insertIndex == old.count else { return nil }
        NodeEdit.initialize(rightBuffer, page: rightPage, kind: .leaf, pageSize: pageSize)
        NodeEdit.append(rightBuffer, entry: entry, size: entrySize)
        let leftKey = try old.key(old.count - 1, file: file)
        let rightKey = UnsafeRawBufferPointer(start: entry + EntryLayout.leafHeader, count: Int(entry.u16(0)))
        let separator = rightKey.isEmpty ? [] : NodeEdit.separator(between: leftKey, and: rightKey)
        return SplitResult(
            rightPage: rightPage, separator: separator, leftCount: UInt64(old.count), rightCount: 1)
    }

    // MARK: Upward passes

    /// After an insertion or replacement: records splits in the parents and adjusts subtree counts.
    private func propagate(
        _ tree: inout TreeRoot, path: UnsafeMutableBufferPointer<PathStep>, levels: Int, split: SplitResult?, delta: Int
    ) throws(StorageError) {
        var pending = split
        for level in stride(from: levels - 1, through: 0, by: -1) {
            let step = path[level]
            if let result = pending {
                NodeEdit.setChildCount(step.buffer, step.index, result.leftCount)
                pending = try result.separator.withStorageBytes { (separator) throws(StorageError) -> SplitResult? in
                    let spec = BranchSpec(key: separator, child: result.rightPage, count: result.rightCount)
                    let index = step.index + 1
                    if let offset = try NodeEdit.reserve(
                        step.buffer, page: step.page, at: index, size: spec.size, pageSize: geometry.usableSize,
                        file: file)
                    {
                        spec.write(to: step.buffer + offset)
                        return nil
                    }
                    let entry = UnsafeMutableRawPointer.allocate(byteCount: spec.size, alignment: 8)
                    defer { entry.deallocate() }
                    spec.write(to: entry)
                    let append = step.rightmost && index == NodeEdit.count(step.buffer)
                    return try self.split(
                        step.page, step.buffer, inserting: UnsafeRawPointer(entry), size: spec.size, at: index,
                        append: append)
                }
            } else if delta != 0 {
                let count = NodeEdit.childCount(step.buffer, step.index)
                NodeEdit.setChildCount(
                    step.buffer, step.index, UInt64(bitPattern: Int64(bitPattern: count) &+ Int64(delta)))
            } else {
                break
            }
        }
        if let result = pending {
            let (rootPage, rootBuffer) = try allocatePage()
            NodeEdit.initialize(rootBuffer, page: rootPage, kind: .branch, pageSize: geometry.usableSize)
            let empty = UnsafeRawBufferPointer(start: nil, count: 0)
            guard
                let first = try NodeEdit.reserve(
                    rootBuffer, page: rootPage, at: 0, size: EntryLayout.branchHeader, pageSize: geometry.usableSize,
                    file: file)
            else { throw file.corrupt(rootPage, "new root has no room") }
            BranchSpec(key: empty, child: tree.root, count: result.leftCount).write(to: rootBuffer + first)
            try result.separator.withStorageBytes { (separator) throws(StorageError) in
                let spec = BranchSpec(key: separator, child: result.rightPage, count: result.rightCount)
                guard
                    let second = try NodeEdit.reserve(
                        rootBuffer, page: rootPage, at: 1, size: spec.size, pageSize: geometry.usableSize, file: file)
                else { throw file.corrupt(rootPage, "new root has no room") }
                spec.write(to: rootBuffer + second)
            }
            tree.root = rootPage
            tree.depth += 1
            guard tree.depth <= TreeRoot.maxDepth else { throw .invalidArgument("tree exceeds the maximum depth") }
        }
    }

    /// After a removal: decrements subtree counts, drops empty pages, merges small pages with a sibling and
    /// shortens the tree when the root has a single child.
    private func rebalance(
        _ tree: inout TreeRoot, path: UnsafeMutableBufferPointer<PathStep>, levels: Int, leafPage: PageNumber,
        leafBuffer: UnsafeMutableRawPointer
    ) throws(StorageError) {
        var childPage = leafPage
        var childBuffer = leafBuffer
        for level in stride(from: levels - 1, through: 0, by: -1) {
            let step = path[level]
            NodeEdit.setChildCount(step.buffer, step.index, NodeEdit.childCount(step.buffer, step.index) &- 1)
            // A child can be left empty (a leaf that lost its last entry, or a branch that lost its only child):
            // check the raw count first, since an empty branch is not a valid node.
            if NodeEdit.count(childBuffer) == 0 {
                try removeBranchEntry(step.page, step.buffer, at: step.index)
                free(childPage)
            } else {
                let child = try Node(
                    UnsafeRawPointer(childBuffer), page: childPage, pageSize: geometry.usableSize, file: file)
                if try NodeEdit.usesFewerBytes(than: geometry.mergeThreshold, child, file: file) {
                    try mergeChild(of: step.page, step.buffer, at: step.index, keyed: tree.kind == .keyed)
                }
            }
            childPage = step.page
            childBuffer = step.buffer
        }
        while tree.root != 0 {
            if try pages.page(tree.root).u16(PageHeader.count) == 0 {
                free(tree.root)
                tree.root = 0
                tree.depth = 0
                break
            }
            let root = try pages.node(tree.root)
            if root.isLeaf { break }
            guard root.count == 1 else { break }
            let child = try root.child(0, file: file).page
            free(tree.root)
            tree.root = child
            tree.depth -= 1
        }
    }

    /// Removes branch entry `index`; if it was the first, the new first entry's key is dropped (it now covers
    /// everything below the next key).
    private func removeBranchEntry(_ page: PageNumber, _ buffer: UnsafeMutableRawPointer, at index: Int)
        throws(StorageError)
    {
        let pageSize = geometry.usableSize
        let node = try Node(UnsafeRawPointer(buffer), page: page, pageSize: pageSize, file: file)
        NodeEdit.remove(buffer, at: index, entrySize: try node.entrySize(index, file: file))
        guard index == 0, NodeEdit.count(buffer) > 0 else { return }
        let updated = try Node(UnsafeRawPointer(buffer), page: page, pageSize: pageSize, file: file)
        let keyLength = try updated.key(0, file: file).count
        guard keyLength > 0 else { return }
        let (child, count) = try updated.child(0, file: file)
        NodeEdit.remove(buffer, at: 0, entrySize: EntryLayout.branchHeader + keyLength)
        guard
            let offset = try NodeEdit.reserve(
                buffer, page: page, at: 0, size: EntryLayout.branchHeader, pageSize: pageSize, file: file)
        else { throw file.corrupt(page, "no room to rewrite a branch entry") }
        BranchSpec(key: UnsafeRawBufferPointer(start: nil, count: 0), child: child, count: count).write(
            to: buffer + offset)
    }

    /// Merges child `index` of a branch with its left (or, for the first child, right) sibling when both fit in
    /// one page.
    private func mergeChild(of parentPage: PageNumber, _ parent: UnsafeMutableRawPointer, at index: Int, keyed: Bool)
        throws(StorageError)
    {
        let pageSize = geometry.usableSize
        let parentNode = try Node(UnsafeRawPointer(parent), page: parentPage, pageSize: pageSize, file: file)
        guard parentNode.count >= 2 else { return }
        let leftIndex = index > 0 ? index - 1 : 0
        let rightIndex = leftIndex + 1
        let leftReference = try parentNode.child(leftIndex, file: file)
        let rightReference = try parentNode.child(rightIndex, file: file)
        let left = try pages.node(leftReference.page)
        let right = try pages.node(rightReference.page)
        guard left.isLeaf == right.isLeaf else { throw file.corrupt(parentPage, "siblings at different levels") }
        let separatorLength = !left.isLeaf && keyed ? try parentNode.key(rightIndex, file: file).count : 0
        // Summed only as far as the merge could still fit: a small node next to a full sibling (the rightmost
        // branch after loads in key order) asks on every delete below it.
        let capacity = NodeEdit.capacity(pageSize: pageSize)
        let rightUsed = try NodeEdit.usedBytes(right, upTo: capacity + 1, file: file)
        guard rightUsed + separatorLength <= capacity else { return }
        let leftUsed = try NodeEdit.usedBytes(left, upTo: capacity - rightUsed - separatorLength + 1, file: file)
        guard leftUsed + rightUsed + separatorLength <= capacity else { return }
        let separator: [UInt8] = separatorLength > 0 ? Array(try parentNode.key(rightIndex, file: file)) : []

        let (leftPage, leftBuffer) = try touch(leftReference.page, entries: leftReference.count)
        if leftPage != leftReference.page { NodeEdit.setChild(parent, leftIndex, page: leftPage) }
        let contiguous =
            NodeEdit.upper(leftBuffer) - (PageHeader.size + NodeEdit.count(leftBuffer) * PageHeader.slotSize)
        if contiguous < rightUsed + separator.count {
            try NodeEdit.compact(leftBuffer, page: leftPage, pageSize: pageSize, file: file)
        }
        let source = try pages.node(rightReference.page)
        for entryIndex in 0..<source.count {
            if !source.isLeaf && entryIndex == 0 {
                let (child, count) = try source.child(0, file: file)
                let size = EntryLayout.branchHeader + separator.count
                try separator.withStorageBytes { (key) throws(StorageError) in
                    try withUnsafeTemporaryAllocation(byteCount: size, alignment: 8) { (raw) throws(StorageError) in
                        BranchSpec(key: key, child: child, count: count).write(to: raw.baseAddress!)
                        NodeEdit.append(leftBuffer, entry: UnsafeRawPointer(raw.baseAddress!), size: size)
                    }
                }
            } else {
                let offset = try source.offset(entryIndex, file: file)
                NodeEdit.append(
                    leftBuffer, entry: source.base + offset, size: try source.entrySize(entryIndex, file: file))
            }
        }
        NodeEdit.setChildCount(parent, leftIndex, leftReference.count &+ rightReference.count)
        try removeBranchEntry(parentPage, parent, at: rightIndex)
        free(rightReference.page)
    }
}

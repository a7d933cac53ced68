/// A run of consecutive entries of a committed tree: the entries under one branch page whose children are leaves
/// (or all entries, when the tree's root is a leaf).
///
/// A committed page never changes, and copy-on-write rewrites every branch above a modified leaf, so a segment's
/// ``identity`` (its top page and the version that wrote that page) names its exact content for as long as the
/// file exists: a page is only reused by a later commit, which stamps a newer version. Data derived from a segment
/// (a column of its rows, say) can therefore be computed once and kept in ``Store/segmentCache`` across versions:
/// after a commit, only the segments on the modified paths have new identities.
///
/// A segment is valid only inside the ``TreeView/forEachSegment(_:)`` call that produced it.
public struct TreeSegment {
    /// What a segment holds, forever: its top page and the commit that wrote it.
    public struct Identity: Hashable, Sendable {
        /// The branch (or root leaf) page at the top of the segment.
        public let page: UInt32
        /// The version that wrote that page.
        public let version: UInt64
    }

    /// The segment's content identity.
    public let identity: Identity
    /// Number of entries, as recorded by the tree (the entries themselves are checked against it when read).
    public let count: Int
    let node: Node
    let read: TreeRead<SnapshotPages>

    /// Calls `body` with every entry of the segment in key order, with its position in the segment. Values are
    /// valid while the read transaction lives (see ``StableValue``).
    public func forEachStableEntry(
        _ body: (_ position: Int, _ key: UnsafeRawBufferPointer, _ value: StableValue) throws -> Void
    ) throws {
        let file = read.source.file
        var position = 0
        if node.isLeaf {
            for index in 0..<node.count {
                let entry = try node.leafEntry(index, file: file)
                try body(position, entry.key, try read.stableValue(of: entry))
                position += 1
            }
        } else {
            for child in 0..<node.count {
                let (page, expected) = try node.child(child, file: file)
                let leaf = try leafNode(page, expected: expected)
                for index in 0..<leaf.count {
                    let entry = try leaf.leafEntry(index, file: file)
                    try body(position, entry.key, try read.stableValue(of: entry))
                    position += 1
                }
            }
        }
        guard position == count else {
            throw file.corrupt(node.page, "segment holds \(position) entries, its counts say \(count)")
        }
    }

    /// The values of the entries at `positions` (ascending positions in the segment), found through the branch's
    /// entry counts: no key comparisons, and leaves without a wanted entry are not read.
    public func stableValues(at positions: [Int]) throws -> [StableValue] {
        var values: [StableValue] = []
        values.reserveCapacity(positions.count)
        let file = read.source.file
        if node.isLeaf {
            for position in positions {
                guard position >= 0, position < node.count else {
                    throw StorageError.indexOutOfRange(index: position, count: node.count)
                }
                values.append(try read.stableValue(of: try node.leafEntry(position, file: file)))
            }
            return values
        }
        var next = positions.startIndex
        var start = 0
        for child in 0..<node.count where next < positions.endIndex {
            let (page, expected) = try node.child(child, file: file)
            let end = start + Int(expected)
            guard positions[next] < end else {
                start = end
                continue
            }
            let leaf = try leafNode(page, expected: expected)
            while next < positions.endIndex, positions[next] < end {
                let index = positions[next] - start
                guard index >= 0 else { throw StorageError.invalidArgument("positions must ascend") }
                values.append(try read.stableValue(of: try leaf.leafEntry(index, file: file)))
                next += 1
            }
            start = end
        }
        guard next == positions.endIndex else {
            throw StorageError.indexOutOfRange(index: positions[next], count: start)
        }
        return values
    }

    private func leafNode(_ page: PageNumber, expected: UInt64) throws(StorageError) -> Node {
        let leaf = try read.source.node(page, entries: expected)
        guard leaf.isLeaf else { throw read.source.file.corrupt(page, "expected a leaf") }
        return leaf
    }
}

extension TreeView {
    /// Calls `body` with each segment of the tree in key order (see ``TreeSegment``); stops when it returns false.
    public func forEachSegment(_ body: (TreeSegment) throws -> Bool) throws {
        try forEachSegment(from: nil, body)
    }

    /// Calls `body` with each segment of the tree in key order, from the one that holds `key` (or would) on;
    /// stops when it returns false. The segments before it are never read.
    public func forEachSegment(from key: UnsafeRawBufferPointer?, _ body: (TreeSegment) throws -> Bool) throws {
        guard root.root != 0 else { return }
        let read = transaction.read
        let top = try read.source.node(root.root, entries: UInt64(root.count))
        if root.depth == 1 {
            guard top.isLeaf else { throw read.source.file.corrupt(top.page, "expected a leaf at depth 1") }
            _ = try body(segment(top, count: top.count, read: read))
            return
        }
        _ = try descend(top, level: root.depth, count: root.count, read: read, from: key, body)
    }

    /// Walks branch `node` at `level` (levels count down to 1 at the leaves), from the child that may hold `from`
    /// when given; false when `body` asked to stop.
    private func descend(
        _ node: Node, level: Int, count: Int, read: TreeRead<SnapshotPages>, from key: UnsafeRawBufferPointer? = nil,
        _ body: (TreeSegment) throws -> Bool
    ) throws -> Bool {
        let file = read.source.file
        guard !node.isLeaf, level >= 2 else { throw file.corrupt(node.page, "tree depth disagrees with its pages") }
        if level == 2 { return try body(segment(node, count: count, read: read)) }
        let start = try key.map { try node.childIndex(for: $0, file: file) } ?? 0
        for index in start..<node.count {
            let (page, childCount) = try node.child(index, file: file)
            guard childCount <= UInt64(Int.max) else { throw file.corrupt(node.page, "impossible entry count") }
            guard
                try descend(
                    try read.source.node(page, entries: childCount), level: level - 1, count: Int(childCount),
                    read: read,
                    from: index == start ? key : nil, body)
            else { return false }
        }
        return true
    }

    private func segment(_ node: Node, count: Int, read: TreeRead<SnapshotPages>) -> TreeSegment {
        TreeSegment(
            identity: TreeSegment.Identity(page: node.page, version: node.base.u64(PageHeader.version)), count: count,
            node: node, read: read)
    }
}

/// Memory for data derived from tree segments, shared by every handle on a file in the process and bounded by a
/// byte budget (least recently used entries go first).
///
/// Entries are keyed by a segment's ``TreeSegment/Identity`` and a tag the caller chooses (which derivation of the
/// segment it is). Since an identity names immutable content, entries never need invalidating; entries of
/// segments no longer reachable simply age out.
public final class SegmentCache: Sendable {
    /// An entry's key.
    public struct Key: Hashable, Sendable {
        /// The segment the value was derived from.
        public let segment: TreeSegment.Identity
        /// Which derivation of it (chosen by the caller).
        public let tag: Int

        /// The key of derivation `tag` of `segment`.
        public init(segment: TreeSegment.Identity, tag: Int) {
            self.segment = segment
            self.tag = tag
        }
    }

    private struct Entry {
        let value: any Sendable
        let cost: Int
        var lastUse: UInt64
    }

    private struct State {
        var entries: [Key: Entry] = [:]
        var bytes = 0
        var clock: UInt64 = 0
    }

    private let state = Locked(State())
    /// The most memory the cache holds, in bytes (as reported by the callers' costs).
    public let budget: Int

    /// A cache holding at most `budget` bytes.
    public init(budget: Int) {
        self.budget = max(budget, 0)
    }

    /// The value stored under `key`, if it is still cached.
    public func value(for key: Key) -> (any Sendable)? {
        state.withLock { state in
            guard var entry = state.entries[key] else { return nil }
            state.clock += 1
            entry.lastUse = state.clock
            state.entries[key] = entry
            return entry.value
        }
    }

    /// Keeps `value`, which takes about `cost` bytes, under `key`; older entries are dropped to stay within the
    /// budget. A value larger than the whole budget is not kept.
    public func insert(_ value: any Sendable, cost: Int, for key: Key) {
        guard cost <= budget else { return }
        state.withLock { state in
            state.clock += 1
            if let old = state.entries.updateValue(Entry(value: value, cost: cost, lastUse: state.clock), forKey: key) {
                state.bytes -= old.cost
            }
            state.bytes += cost
            guard state.bytes > budget else { return }
            // Evict down to three quarters of the budget at once, so that eviction is rare.
            let target = budget / 4 * 3
            for (oldKey, entry) in state.entries.sorted(by: { $0.value.lastUse < $1.value.lastUse }) {
                guard state.bytes > target else { break }
                guard oldKey != key else { continue }
                state.entries[oldKey] = nil
                state.bytes -= entry.cost
            }
        }
    }

    /// Bytes held now.
    public var bytes: Int { state.withLock { $0.bytes } }
    /// Entries held now.
    public var count: Int { state.withLock { $0.entries.count } }

    /// Drops every entry.
    public func removeAll() {
        state.withLock { state in
            state.entries.removeAll()
            state.bytes = 0
        }
    }
}

/// Whether a tree is ordered by key or by position.
public enum TreeKind: UInt8, Sendable, CustomStringConvertible {
    /// Entries ordered by key (byte-wise lexicographic); unique keys.
    case keyed = 0
    /// A list: entries have no key and are addressed by position (an order-statistic tree).
    case list = 1

    /// "keyed" or "list".
    public var description: String { self == .keyed ? "keyed" : "list" }
}

/// The descriptor of one B+tree: where its root is and how big it is.
///
/// Stored (32 bytes) in the catalog for named trees and inside leaf entries for nested trees.
/// ```
/// 0  u32 root page (0 = empty tree)   4 u16 depth (0 = empty)   6 u8 kind   7 u8 reserved
/// 8  u64 count of entries            16 u64 sequence (a counter the owner may use, e.g. for new keys)
/// 24 u64 reserved, zero
/// ```
public struct TreeRoot: Sendable, Hashable {
    /// The root page, 0 when the tree is empty.
    var root: PageNumber
    /// Levels from the root to the leaves; 0 when empty, 1 when the root is a leaf.
    var depth: Int
    /// Keyed tree or list.
    public let kind: TreeKind
    /// Number of entries.
    public internal(set) var count: Int
    /// A monotonically increasing counter kept with the tree (see ``WriteTransaction/nextSequence(in:)``).
    public internal(set) var sequence: UInt64

    static let encodedSize = 32
    /// Trees deeper than this are rejected as corrupt (a 4 KiB-page tree holding 2^64 entries is far shallower).
    static let maxDepth = 24

    /// An empty tree of the given kind.
    public init(kind: TreeKind) {
        self.root = 0
        self.depth = 0
        self.kind = kind
        self.count = 0
        self.sequence = 0
    }

    init(root: PageNumber, depth: Int, kind: TreeKind, count: Int, sequence: UInt64) {
        self.root = root
        self.depth = depth
        self.kind = kind
        self.count = count
        self.sequence = sequence
    }

    /// Whether the tree has no entries.
    public var isEmpty: Bool { count == 0 }

    func encode(into pointer: UnsafeMutableRawPointer) {
        pointer.setU32(0, root)
        pointer.setU16(4, UInt16(depth))
        pointer.setU8(6, kind.rawValue)
        pointer.setU8(7, 0)
        pointer.setU64(8, UInt64(count))
        pointer.setU64(16, sequence)
        pointer.setU64(24, 0)
    }

    /// Decodes and sanity-checks a descriptor; `pageCount` bounds the root page.
    static func decode(_ pointer: UnsafeRawPointer, pageCount: UInt64) -> TreeRoot? {
        let root = pointer.u32(0)
        let depth = Int(pointer.u16(4))
        guard let kind = TreeKind(rawValue: pointer.u8(6)) else { return nil }
        let count = pointer.u64(8)
        guard count <= UInt64(Int.max), depth <= maxDepth else { return nil }
        if root == 0 {
            guard depth == 0, count == 0 else { return nil }
        } else {
            guard root >= 2, UInt64(root) < pageCount, depth >= 1 else { return nil }
        }
        return TreeRoot(root: root, depth: depth, kind: kind, count: Int(count), sequence: pointer.u64(16))
    }
}

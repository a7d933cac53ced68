/// A page number. Pages 0 and 1 are the meta pages, so 0 doubles as "no page".
typealias PageNumber = UInt32

/// What a page holds; stored in its header so that a page read in the wrong role is detected.
enum PageKind: UInt8 {
    case meta = 1
    case branch = 2
    case leaf = 3
    case overflow = 4
}

/// The 32-byte header every page starts with (little-endian).
///
/// ```
/// 0  u64 checksum   XXH64 of bytes [8, pageSize) seeded with the page number; written at commit
/// 8  u64 version    the commit that wrote this page
/// 16 u32 page       this page's own number (detects misdirected writes and pointers)
/// 20 u8  kind       PageKind
/// 21 u8  flags      reserved, zero
/// 22 u16 count      entries in a branch or leaf
/// 24 u16 upper      start of the entry area; entries fill [upper, pageSize)
/// 26 u16 reserved   zero
/// 28 u32 next       overflow pages: the next page of the chain, 0 at the end
/// 32 ...            branch/leaf: `count` u16 slot offsets in key order; overflow: payload
/// ```
enum PageHeader {
    static let size = 32
    static let checksum = 0
    static let version = 8
    static let pageNumber = 16
    static let kind = 20
    static let flags = 21
    static let count = 22
    static let upper = 24
    static let next = 28
    static let slotSize = 2
}

/// Entry layouts inside branch and leaf pages.
///
/// Leaf entry: `u16 keyLength, u32 valueInfo, key bytes, payload`. `valueInfo` holds the value length in its low
/// 30 bits and the storage in its top 2: inline (payload is the value), overflow (payload is the u32 first page
/// of a chain holding `length` bytes), subtree (payload is a 32-byte ``TreeRoot``).
///
/// Branch entry: `u16 keyLength, u32 child, u64 count, key bytes`. `count` is the number of leaf entries under
/// `child`. The key of entry 0 is empty and means "everything below the next key".
enum EntryLayout {
    static let leafHeader = 6
    static let branchHeader = 14
    static let valueLengthMask: UInt32 = 0x3FFF_FFFF
    static let storageShift: UInt32 = 30
    static let overflowRefSize = 4
}

/// What an overflow chain records about its value, besides its bytes, so that a leaf entry's length can be
/// checked against the chain: the first page stores the value's length in the header's bytes 24–27 (the `upper`
/// and reserved fields, which overflow pages do not otherwise use; 0 in chains written before the length was
/// recorded), and the last page is zero after the value's end and ends the chain.
enum OverflowLayout {
    /// Offset of the u32 value length in a chain's first page.
    static let lengthOffset = 24

    /// Why the chain whose first page is `first` does not hold a `length`-byte value, as far as that page says.
    static func lengthProblem(_ first: UnsafeRawPointer, length: Int) -> String? {
        let recorded = Int(first.u32(lengthOffset))
        guard recorded == 0 || recorded == length else {
            return "overflow chain records a \(recorded)-byte value, its entry says \(length) bytes"
        }
        return nil
    }

    /// Why `last`, the page holding a value's final `used` bytes, is not the end of that value: it links to more
    /// pages, or holds bytes after the value (the entry's length was made shorter).
    static func endProblem(_ last: UnsafeRawPointer, used: Int, pageSize: Int) -> String? {
        if last.u32(PageHeader.next) != 0 { return "overflow chain is longer than its value" }
        guard Bytes.isZero(last + PageHeader.size + used, count: pageSize - PageHeader.size - used) else {
            return "overflow page holds bytes after its value's end"
        }
        return nil
    }
}

/// How a leaf entry stores its value.
enum ValueStorage: UInt32 {
    case inline = 0
    case overflow = 1
    case subtree = 2
}

/// Size limits derived from the page size.
///
/// A page's layout (header, slots, entries, overflow payload) uses its first ``usableSize`` bytes; the last
/// ``reservedTail`` bytes are left to what stores the page (an encrypted file keeps each page's nonce and tag
/// there, see ``PageSealer``) and are zero in a page being built. Plain files reserve nothing, so their pages are
/// laid out exactly as before the tail existed. The checksum still covers the whole page.
struct PageGeometry: Sendable, Equatable {
    let pageSize: Int
    /// Bytes at the end of every page that the layout leaves alone.
    let reservedTail: Int
    /// Bytes at the start of every page that the layout uses: `pageSize - reservedTail`.
    let usableSize: Int

    init(pageSize: Int, reservedTail: Int = 0) {
        precondition(reservedTail >= 0 && reservedTail < pageSize / 4, "reserved tail out of range")
        self.pageSize = pageSize
        self.reservedTail = reservedTail
        self.usableSize = pageSize - reservedTail
    }

    /// Largest leaf entry (header + key + payload). Four of them fit in a page, so a split always succeeds.
    var maxLeafEntry: Int { (usableSize - PageHeader.size) / 4 - PageHeader.slotSize }
    /// Longest key: a leaf entry holding it with a nested-tree descriptor (the largest non-inline payload), and
    /// a branch entry holding it as a separator, must both fit in ``maxLeafEntry``. The bound subtracts both
    /// headers' worth, which is a few bytes stricter than needed and keeps the rule simple.
    var maxKeySize: Int { maxLeafEntry - EntryLayout.branchHeader - TreeRoot.encodedSize }
    /// Longest value stored inline for a key of `keySize` bytes; longer values go to an overflow chain.
    func maxInlineValue(keySize: Int) -> Int { maxLeafEntry - EntryLayout.leafHeader - keySize }
    /// Payload bytes per overflow page.
    var overflowPayload: Int { usableSize - PageHeader.size }
    /// A page below this many used bytes is merged with a sibling when possible.
    var mergeThreshold: Int { (usableSize - PageHeader.size) / 4 }

    static let minimumPageSize = 1024
    static let maximumPageSize = 32768
    /// Values up to 1 GiB - 1 byte (the 30-bit length field).
    static let maxValueSize = Int(EntryLayout.valueLengthMask)

    static func isValid(pageSize: Int) -> Bool {
        pageSize >= minimumPageSize && pageSize <= maximumPageSize && pageSize & (pageSize - 1) == 0
    }
}

/// The parts of a page that carry data: bytes `[0, head)` and `[tail, pageSize)`. Everything between is zero
/// once ``zeroGap(_:pageSize:)`` has run, which every commit does before sealing a page, so the commit log can
/// store a page as those two parts alone and rebuild it byte for byte.
///
/// Branch and leaf pages have a gap between their slot array and their entries; a meta page ends after its listed
/// pages; other pages are used whole. Bounds that do not make sense (a damaged page) mean "used whole".
enum PageExtents {
    static func of(_ page: UnsafeRawPointer, pageSize: Int) -> (head: Int, tail: Int) {
        switch page.u8(PageHeader.kind) {
        case PageKind.branch.rawValue, PageKind.leaf.rawValue:
            let head = PageHeader.size + Int(page.u16(PageHeader.count)) * PageHeader.slotSize
            let tail = Int(page.u16(PageHeader.upper))
            guard head <= tail, tail <= pageSize else { return (pageSize, pageSize) }
            return (head, tail)
        case PageKind.meta.rawValue:
            let head = Meta.writtenOffset + Int(page.u32(Meta.writtenCountOffset)) * Meta.stampSize
            return (min(head, pageSize), pageSize)
        default:
            return (pageSize, pageSize)
        }
    }

    /// Zeroes the unused middle of a branch or leaf page.
    @inline(__always)
    static func zeroGap(_ page: UnsafeMutableRawPointer, pageSize: Int) {
        let (head, tail) = of(UnsafeRawPointer(page), pageSize: pageSize)
        if tail > head { (page + head).initializeMemory(as: UInt8.self, repeating: 0, count: tail - head) }
    }
}

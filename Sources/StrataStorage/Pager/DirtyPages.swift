/// Page buffers of one write transaction: which pages it has written, and the memory holding them.
///
/// A linear-probing hash table from page number to buffer (page number 0 marks an empty bucket; pages 0 and 1
/// are meta pages and never dirty) plus a slab allocator of page-aligned buffers. Lookups cost a multiply and
/// usually one probe, which matters because every page access of a write transaction asks "is it dirty?".
///
/// In an encrypted file a page's buffer is its slot in the decrypted-page cache when it has one
/// (``DecryptedPages/claim(_:)``): the commit then finds it decrypted in place.
final class DirtyPages {
    @exclusivity(unchecked) private var keys: UnsafeMutablePointer<PageNumber>
    @exclusivity(unchecked) private var values: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    @exclusivity(unchecked) private var mask: Int
    private(set) var count = 0

    private let pageSize: Int
    /// An encrypted file's decrypted pages, whose slots serve as buffers; nil for a plain file.
    private let slots: DecryptedPages?
    private var slabs: [UnsafeMutableRawPointer] = []
    private var spare: [UnsafeMutableRawPointer] = []
    private var slabCursor = 0
    private var slabEnd = 0
    /// Slabs start small, so that a one-page commit does not map memory, and double up to 64 pages.
    private var nextSlabPages = 8
    private static let maxPagesPerSlab = 64

    init(pageSize: Int, slots: DecryptedPages? = nil) {
        self.pageSize = pageSize
        self.slots = slots
        let capacity = 256
        keys = .allocate(capacity: capacity)
        keys.initialize(repeating: 0, count: capacity)
        values = .allocate(capacity: capacity)
        values.initialize(repeating: nil, count: capacity)
        mask = capacity - 1
    }

    deinit {
        keys.deallocate()
        values.deallocate()
        for slab in slabs { slab.deallocate() }
    }

    @inline(__always)
    private func bucket(_ page: PageNumber) -> Int {
        Int(truncatingIfNeeded: (UInt64(page) &* 0x9E37_79B9_7F4A_7C15) >> 20) & mask
    }

    /// The buffer of a dirty page, or nil.
    @inline(__always)
    func buffer(_ page: PageNumber) -> UnsafeMutableRawPointer? {
        var index = bucket(page)
        while true {
            let key = keys[index]
            if key == page { return values[index] }
            if key == 0 { return nil }
            index = (index + 1) & mask
        }
    }

    /// Registers a new dirty page and returns its (uninitialised) buffer.
    func add(_ page: PageNumber) -> UnsafeMutableRawPointer {
        if (count + 1) * 2 > mask + 1 { grow() }
        let buffer = slots?.claim(page) ?? takeBuffer()
        insert(page, buffer)
        count += 1
        return buffer
    }

    private func insert(_ page: PageNumber, _ buffer: UnsafeMutableRawPointer) {
        var index = bucket(page)
        while keys[index] != 0 {
            precondition(keys[index] != page, "page \(page) is already dirty")
            index = (index + 1) & mask
        }
        keys[index] = page
        values[index] = buffer
    }

    /// Forgets a dirty page (it was freed in the same transaction) and recycles its buffer.
    /// Returns false when the page was not dirty.
    func remove(_ page: PageNumber) -> Bool {
        var index = bucket(page)
        while keys[index] != page {
            if keys[index] == 0 { return false }
            index = (index + 1) & mask
        }
        // A slot belongs to its page: only slab buffers are reused.
        if let buffer = values[index], slots?.holds(buffer) != true { spare.append(buffer) }
        keys[index] = 0
        values[index] = nil
        count -= 1
        // Backward-shift deletion keeps probe sequences intact without tombstones.
        var hole = index
        var next = (index + 1) & mask
        while keys[next] != 0 {
            let home = bucket(keys[next])
            let distanceToHole = (hole - home) & mask
            let distanceToNext = (next - home) & mask
            if distanceToHole < distanceToNext {
                keys[hole] = keys[next]
                values[hole] = values[next]
                keys[next] = 0
                values[next] = nil
                hole = next
            }
            next = (next + 1) & mask
        }
        return true
    }

    private func grow() {
        let oldKeys = keys
        let oldValues = values
        let oldCapacity = mask + 1
        let capacity = oldCapacity * 2
        keys = .allocate(capacity: capacity)
        keys.initialize(repeating: 0, count: capacity)
        values = .allocate(capacity: capacity)
        values.initialize(repeating: nil, count: capacity)
        mask = capacity - 1
        for index in 0..<oldCapacity where oldKeys[index] != 0 { insert(oldKeys[index], oldValues[index]!) }
        oldKeys.deallocate()
        oldValues.deallocate()
    }

    private func takeBuffer() -> UnsafeMutableRawPointer {
        if let buffer = spare.popLast() { return buffer }
        if slabCursor == slabEnd {
            let slab = UnsafeMutableRawPointer.allocate(byteCount: pageSize * nextSlabPages, alignment: 4096)
            slabs.append(slab)
            slabCursor = 0
            slabEnd = nextSlabPages
            nextSlabPages = min(nextSlabPages * 2, Self.maxPagesPerSlab)
        }
        let buffer = slabs[slabs.count - 1] + slabCursor * pageSize
        slabCursor += 1
        return buffer
    }

    /// Every dirty page, sorted by page number.
    func sortedPages() -> [(page: PageNumber, buffer: UnsafeMutableRawPointer)] {
        var pages = [(page: PageNumber, buffer: UnsafeMutableRawPointer)]()
        pages.reserveCapacity(count)
        for index in 0...mask where keys[index] != 0 { pages.append((keys[index], values[index]!)) }
        pages.sort { $0.page < $1.page }
        return pages
    }
}

/// A leaf entry about to be written.
struct LeafSpec {
    let key: UnsafeRawBufferPointer
    let storage: ValueStorage
    /// The value length (for subtrees, the descriptor size).
    let length: Int
    /// Payload bytes: the inline value, a 4-byte overflow reference or a 32-byte descriptor.
    let payload: UnsafeRawBufferPointer
    /// Zero bytes written after `payload` (space reserved to be filled in later).
    var zeroes = 0

    var payloadSize: Int { payload.count + zeroes }
    var size: Int { EntryLayout.leafHeader + key.count + payloadSize }

    func write(to pointer: UnsafeMutableRawPointer) {
        pointer.setU16(0, UInt16(key.count))
        pointer.setU32(2, UInt32(length) | (storage.rawValue << EntryLayout.storageShift))
        if key.count > 0 { (pointer + EntryLayout.leafHeader).copyMemory(from: key.baseAddress!, byteCount: key.count) }
        let payloadStart = pointer + EntryLayout.leafHeader + key.count
        if let source = payload.baseAddress { payloadStart.copyMemory(from: source, byteCount: payload.count) }
        if zeroes > 0 { (payloadStart + payload.count).initializeMemory(as: UInt8.self, repeating: 0, count: zeroes) }
    }
}

/// A branch entry about to be written.
struct BranchSpec {
    let key: UnsafeRawBufferPointer
    let child: PageNumber
    let count: UInt64

    var size: Int { EntryLayout.branchHeader + key.count }

    func write(to pointer: UnsafeMutableRawPointer) {
        pointer.setU16(0, UInt16(key.count))
        pointer.setU32(2, child)
        pointer.setU64(6, count)
        if key.count > 0 {
            (pointer + EntryLayout.branchHeader).copyMemory(from: key.baseAddress!, byteCount: key.count)
        }
    }
}

/// In-place edits of a dirty branch or leaf page. Reads of existing entries go through validated ``Node`` views,
/// so a damaged page copied from the file cannot make an edit write outside the page.
enum NodeEdit {
    /// Initialises an empty branch or leaf page.
    static func initialize(_ buffer: UnsafeMutableRawPointer, page: PageNumber, kind: PageKind, pageSize: Int) {
        buffer.initializeMemory(as: UInt8.self, repeating: 0, count: PageHeader.size)
        buffer.setU32(PageHeader.pageNumber, page)
        buffer.setU8(PageHeader.kind, kind.rawValue)
        buffer.setU16(PageHeader.count, 0)
        buffer.setU16(PageHeader.upper, UInt16(truncatingIfNeeded: pageSize))
    }

    @inline(__always) static func count(_ buffer: UnsafeMutableRawPointer) -> Int {
        Int(UnsafeRawPointer(buffer).u16(PageHeader.count))
    }
    @inline(__always) static func upper(_ buffer: UnsafeMutableRawPointer) -> Int {
        Int(UnsafeRawPointer(buffer).u16(PageHeader.upper))
    }
    @inline(__always) static func slot(_ buffer: UnsafeMutableRawPointer, _ index: Int) -> Int {
        Int(UnsafeRawPointer(buffer).u16(PageHeader.size + index * PageHeader.slotSize))
    }

    /// Whether the slots and entries in use take fewer than `threshold` bytes. It stops adding entry sizes as soon
    /// as the threshold is reached: a delete asks this of every node on its path, and most are far above it
    /// (summing a whole branch of a few hundred entries was most of a delete's cost).
    static func usesFewerBytes(than threshold: Int, _ node: Node, file: PathRef) throws(StorageError) -> Bool {
        // Every entry takes at least its header and slot: a node with many entries needs no sum at all.
        let smallestEntry = (node.isLeaf ? EntryLayout.leafHeader : EntryLayout.branchHeader) + PageHeader.slotSize
        guard node.count * smallestEntry < threshold else { return false }
        return try usedBytes(node, upTo: threshold, file: file) < threshold
    }

    /// Bytes in use: slots plus entries. The sum stops once it reaches `limit`, and is then at least `limit`.
    ///
    /// Each entry's header is read in place and checked as `Node`'s accessors check it (the same errors), without
    /// decoding a `LeafEntry` per entry: a delete sums the leaf it shrank, and a branch next to a full sibling, on
    /// every removal (this sum was a quarter of a scattered delete).
    static func usedBytes(_ node: Node, upTo limit: Int = .max, file: PathRef) throws(StorageError) -> Int {
        var total = node.count * PageHeader.slotSize
        let base = node.base
        let header = node.isLeaf ? EntryLayout.leafHeader : EntryLayout.branchHeader
        var slot = PageHeader.size
        let slotsEnd = PageHeader.size + node.count * PageHeader.slotSize
        while slot < slotsEnd && total < limit {
            let offset = Int(base.u16(slot))
            guard offset >= node.upper, offset + header <= node.pageSize else {
                throw file.corrupt(
                    node.page, "slot \((slot - PageHeader.size) / PageHeader.slotSize) points outside the entry area")
            }
            var size = header + Int(base.u16(offset))
            if node.isLeaf {
                let info = base.u32(offset + 2)
                switch ValueStorage(rawValue: info >> EntryLayout.storageShift) {
                case .inline: size += Int(info & EntryLayout.valueLengthMask)
                case .overflow: size += EntryLayout.overflowRefSize
                case .subtree:
                    guard Int(info & EntryLayout.valueLengthMask) == TreeRoot.encodedSize else {
                        throw file.corrupt(
                            node.page, "slot \((slot - PageHeader.size) / PageHeader.slotSize) has a bad subtree size")
                    }
                    size += TreeRoot.encodedSize
                case nil:
                    throw file.corrupt(
                        node.page, "slot \((slot - PageHeader.size) / PageHeader.slotSize) has an unknown value storage"
                    )
                }
            }
            guard offset + size <= node.pageSize else {
                throw file.corrupt(
                    node.page, "entry of slot \((slot - PageHeader.size) / PageHeader.slotSize) overruns the page")
            }
            total += size
            slot += PageHeader.slotSize
        }
        return total
    }

    /// Space available for entries and slots in an empty page.
    @inline(__always) static func capacity(pageSize: Int) -> Int { pageSize - PageHeader.size }

    /// Makes room for an entry of `size` bytes at slot `index` and returns the offset to write it at,
    /// or nil when the page cannot hold it even after compaction.
    static func reserve(
        _ buffer: UnsafeMutableRawPointer, page: PageNumber, at index: Int, size: Int, pageSize: Int, file: PathRef
    ) throws(StorageError) -> Int? {
        var count = count(buffer)
        var upper = upper(buffer)
        let needed = size + PageHeader.slotSize
        if upper - (PageHeader.size + count * PageHeader.slotSize) < needed {
            let node = try Node(UnsafeRawPointer(buffer), page: page, pageSize: pageSize, file: file)
            guard try capacity(pageSize: pageSize) - usedBytes(node, file: file) >= needed else { return nil }
            try compact(buffer, page: page, pageSize: pageSize, file: file)
            count = self.count(buffer)
            upper = self.upper(buffer)
        }
        upper -= size
        let slots = buffer + PageHeader.size
        if index < count {
            (slots + (index + 1) * PageHeader.slotSize).copyMemory(
                from: slots + index * PageHeader.slotSize, byteCount: (count - index) * PageHeader.slotSize)
        }
        buffer.setU16(PageHeader.size + index * PageHeader.slotSize, UInt16(upper))
        buffer.setU16(PageHeader.count, UInt16(count + 1))
        buffer.setU16(PageHeader.upper, UInt16(upper))
        return upper
    }

    /// Removes slot `index`. The entry's bytes become a hole unless they were at the start of the entry area.
    static func remove(_ buffer: UnsafeMutableRawPointer, at index: Int, entrySize: Int) {
        let count = count(buffer)
        let offset = slot(buffer, index)
        let slots = buffer + PageHeader.size
        if index + 1 < count {
            (slots + index * PageHeader.slotSize).copyMemory(
                from: slots + (index + 1) * PageHeader.slotSize, byteCount: (count - index - 1) * PageHeader.slotSize)
        }
        buffer.setU16(PageHeader.count, UInt16(count - 1))
        if offset == upper(buffer) { buffer.setU16(PageHeader.upper, UInt16(offset + entrySize)) }
    }

    /// Rewrites the entries contiguously at the end of the page, removing holes.
    static func compact(_ buffer: UnsafeMutableRawPointer, page: PageNumber, pageSize: Int, file: PathRef)
        throws(StorageError)
    {
        let copy = UnsafeMutableRawPointer.allocate(byteCount: pageSize, alignment: 16)
        defer { copy.deallocate() }
        copy.copyMemory(from: buffer, byteCount: pageSize)
        let node = try Node(UnsafeRawPointer(copy), page: page, pageSize: pageSize, file: file)
        var upper = pageSize
        for index in 0..<node.count {
            let size = try node.entrySize(index, file: file)
            let offset = try node.offset(index, file: file)
            upper -= size
            (buffer + upper).copyMemory(from: copy + offset, byteCount: size)
            buffer.setU16(PageHeader.size + index * PageHeader.slotSize, UInt16(upper))
        }
        buffer.setU16(PageHeader.upper, UInt16(upper))
    }

    /// Appends raw entry bytes as the last slot; the caller has checked that they fit contiguously.
    static func append(_ buffer: UnsafeMutableRawPointer, entry: UnsafeRawPointer, size: Int) {
        let count = count(buffer)
        let upper = upper(buffer) - size
        (buffer + upper).copyMemory(from: entry, byteCount: size)
        buffer.setU16(PageHeader.size + count * PageHeader.slotSize, UInt16(upper))
        buffer.setU16(PageHeader.count, UInt16(count + 1))
        buffer.setU16(PageHeader.upper, UInt16(upper))
    }

    /// Sets the child page of branch entry `index`.
    @inline(__always)
    static func setChild(_ buffer: UnsafeMutableRawPointer, _ index: Int, page: PageNumber) {
        buffer.setU32(slot(buffer, index) + 2, page)
    }

    /// Sets the subtree count of branch entry `index`.
    @inline(__always)
    static func setChildCount(_ buffer: UnsafeMutableRawPointer, _ index: Int, _ count: UInt64) {
        buffer.setU64(slot(buffer, index) + 6, count)
    }

    /// The subtree count of branch entry `index` of a dirty page.
    @inline(__always)
    static func childCount(_ buffer: UnsafeMutableRawPointer, _ index: Int) -> UInt64 {
        UnsafeRawPointer(buffer).u64(slot(buffer, index) + 6)
    }

    /// The shortest key `s` with `left < s <= right`, so that branch pages hold short separators.
    static func separator(between left: UnsafeRawBufferPointer, and right: UnsafeRawBufferPointer) -> [UInt8] {
        var index = 0
        while index < left.count && index < right.count && left[index] == right[index] { index += 1 }
        return Array(right.prefix(index + 1))
    }
}

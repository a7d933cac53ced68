/// A validated read view of a branch or leaf page.
///
/// Creating a `Node` checks the header (kind, own page number, entry count, entry area); every entry accessor
/// checks that the slot and the entry it points to lie inside the page. Corrupt data therefore surfaces as
/// ``StorageError/corruptPage(path:page:reason:)`` instead of an out-of-bounds read.
struct Node {
    let base: UnsafeRawPointer
    let pageSize: Int
    let page: PageNumber
    let count: Int
    let isLeaf: Bool
    let upper: Int

    @inline(__always)
    init(_ base: UnsafeRawPointer, page: PageNumber, pageSize: Int, file: PathRef) throws(StorageError) {
        self.base = base
        self.pageSize = pageSize
        self.page = page
        let kind = base.u8(PageHeader.kind)
        let count = Int(base.u16(PageHeader.count))
        let upper = Int(base.u16(PageHeader.upper))
        guard kind == PageKind.leaf.rawValue || kind == PageKind.branch.rawValue else {
            throw file.corrupt(page, "expected a tree page, found kind \(kind)")
        }
        guard base.u32(PageHeader.pageNumber) == page else {
            throw file.corrupt(page, "page header names page \(base.u32(PageHeader.pageNumber))")
        }
        guard upper >= PageHeader.size + count * PageHeader.slotSize, upper <= pageSize else {
            throw file.corrupt(page, "entry area start \(upper) is inconsistent with \(count) entries")
        }
        self.isLeaf = kind == PageKind.leaf.rawValue
        guard isLeaf || count > 0 else { throw file.corrupt(page, "branch page without children") }
        self.count = count
        self.upper = upper
    }

    /// Offset of entry `index`'s bytes, validated to leave room for the entry header.
    @inline(__always)
    func offset(_ index: Int, file: PathRef) throws(StorageError) -> Int {
        let offset = Int(base.u16(PageHeader.size + index * PageHeader.slotSize))
        let header = isLeaf ? EntryLayout.leafHeader : EntryLayout.branchHeader
        guard offset >= upper, offset + header <= pageSize else {
            throw file.corrupt(page, "slot \(index) points outside the entry area")
        }
        return offset
    }

    /// The key of entry `index` (for branches, entry 0's key is empty by convention).
    @inline(__always)
    func key(_ index: Int, file: PathRef) throws(StorageError) -> UnsafeRawBufferPointer {
        let offset = try offset(index, file: file)
        let length = Int(base.u16(offset))
        let header = isLeaf ? EntryLayout.leafHeader : EntryLayout.branchHeader
        guard offset + header + length <= pageSize else {
            throw file.corrupt(page, "key of slot \(index) overruns the page")
        }
        return UnsafeRawBufferPointer(start: base + offset + header, count: length)
    }

    /// Child page and subtree count of branch entry `index`.
    @inline(__always)
    func child(_ index: Int, file: PathRef) throws(StorageError) -> (page: PageNumber, count: UInt64) {
        let offset = try offset(index, file: file)
        return (base.u32(offset + 2), base.u64(offset + 6))
    }

    /// The decoded leaf entry at `index`.
    @inline(__always)
    func leafEntry(_ index: Int, file: PathRef) throws(StorageError) -> LeafEntry {
        let offset = try offset(index, file: file)
        let keyLength = Int(base.u16(offset))
        let info = base.u32(offset + 2)
        let length = Int(info & EntryLayout.valueLengthMask)
        guard let storage = ValueStorage(rawValue: info >> EntryLayout.storageShift) else {
            throw file.corrupt(page, "slot \(index) has an unknown value storage")
        }
        let payload: Int
        switch storage {
        case .inline: payload = length
        case .overflow: payload = EntryLayout.overflowRefSize
        case .subtree:
            payload = TreeRoot.encodedSize
            guard length == TreeRoot.encodedSize else {
                throw file.corrupt(page, "slot \(index) has a bad subtree size")
            }
        }
        let keyStart = offset + EntryLayout.leafHeader
        guard keyStart + keyLength + payload <= pageSize else {
            throw file.corrupt(page, "entry of slot \(index) overruns the page")
        }
        return LeafEntry(
            page: page, key: UnsafeRawBufferPointer(start: base + keyStart, count: keyLength),
            storage: storage, length: length, payload: base + keyStart + keyLength,
            size: EntryLayout.leafHeader + keyLength + payload)
    }

    /// Total size of entry `index` in bytes (header, key and payload), excluding its slot.
    func entrySize(_ index: Int, file: PathRef) throws(StorageError) -> Int {
        if isLeaf { return try leafEntry(index, file: file).size }
        let key = try key(index, file: file)
        return EntryLayout.branchHeader + key.count
    }

    /// Binary search: the first index whose key is >= `key` (leaf), and whether it is equal.
    @inline(__always)
    func lowerBound(_ key: UnsafeRawBufferPointer, file: PathRef) throws(StorageError) -> (index: Int, found: Bool) {
        var low = 0
        var high = count
        while low < high {
            let mid = (low + high) >> 1
            let comparison = Bytes.compare(try self.key(mid, file: file), key)
            if comparison < 0 {
                low = mid + 1
            } else if comparison == 0 {
                return (mid, true)
            } else {
                high = mid
            }
        }
        return (low, false)
    }

    /// Branch search: the child index whose range holds `key` (the last entry whose key is <= `key`).
    @inline(__always)
    func childIndex(for key: UnsafeRawBufferPointer, file: PathRef) throws(StorageError) -> Int {
        var low = 1
        var high = count
        while low < high {
            let mid = (low + high) >> 1
            if Bytes.compare(try self.key(mid, file: file), key) <= 0 { low = mid + 1 } else { high = mid }
        }
        return low - 1
    }
}

/// One decoded leaf entry; its buffers point into the page.
struct LeafEntry {
    /// The leaf page holding the entry (for error messages).
    let page: PageNumber
    let key: UnsafeRawBufferPointer
    let storage: ValueStorage
    /// Value length in bytes (for subtrees: the descriptor size).
    let length: Int
    /// Inline value bytes, overflow reference or subtree descriptor.
    let payload: UnsafeRawPointer
    /// Entry size in the page, excluding its slot.
    let size: Int

    var inlineValue: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: payload, count: length) }
    var overflowPage: PageNumber { payload.u32(0) }
}

/// The file path in error messages, passed by reference so the hot path does not retain a String.
final class PathRef: Sendable {
    let path: String
    init(_ path: String) { self.path = path }

    func corrupt(_ page: PageNumber, _ reason: String) -> StorageError {
        .corruptPage(path: path, page: page, reason: reason)
    }
}

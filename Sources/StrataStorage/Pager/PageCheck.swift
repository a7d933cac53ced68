/// What a tree or overflow page must satisfy before a reader trusts it: its checksum, and a structure that
/// holds together (every slot, key and payload inside the page, entries that do not overlap, keys in order).
///
/// Run once per page and page version (see ``ValidatedPages``); the accessors of ``Node`` keep their own bounds
/// checks on every access, so memory safety never depends on this cache. The checksum catches any change to the
/// page's bytes after its commit sealed it; the structural rules catch a field edited by something that also
/// recomputed the checksum (a buggy tool, a malicious edit), as far as the page alone can tell. What needs more
/// than one page (subtree counts against the pages below, overflow lengths against their chains) is checked on
/// the way down (``PageSource/node(_:entries:)``, ``TreeRead``).
enum PageCheck {
    /// Why the page `number` at `page` cannot be trusted, or nil; on success `entries` is the number of entries
    /// under it (a leaf's entry count, a branch's sum of its children's counts, 0 for an overflow page).
    static func problem(_ page: UnsafeRawPointer, number: PageNumber, geometry: PageGeometry, entries: inout UInt64)
        -> String?
    {
        guard PageChecksum.verify(page, page: number, pageSize: geometry.pageSize) else {
            return "checksum mismatch: the page's bytes are not the ones its commit wrote"
        }
        return structureProblem(page, number: number, pageSize: geometry.usableSize, entries: &entries)
    }

    /// The entries under a page built by this process (no checks): a leaf's count, the sum of a branch's
    /// children's counts, 0 for other pages.
    static func entries(of page: UnsafeRawPointer) -> UInt64 {
        let count = Int(page.u16(PageHeader.count))
        switch page.u8(PageHeader.kind) {
        case PageKind.leaf.rawValue: return UInt64(count)
        case PageKind.branch.rawValue:
            var total: UInt64 = 0
            for slot in 0..<count {
                total &+= page.u64(Int(page.u16(PageHeader.size + slot * PageHeader.slotSize)) + 6)
            }
            return total
        default: return 0
        }
    }

    /// The structural half of ``problem(_:number:geometry:entries:)`` (the integrity check also runs it on pages
    /// whose checksum it reports separately). `pageSize` is the page's usable size (``PageGeometry/usableSize``):
    /// nothing of the layout may lie beyond it.
    static func structureProblem(_ page: UnsafeRawPointer, number: PageNumber, pageSize: Int, entries: inout UInt64)
        -> String?
    {
        let named = page.u32(PageHeader.pageNumber)
        guard named == number else { return "page header names page \(named)" }
        switch page.u8(PageHeader.kind) {
        case PageKind.leaf.rawValue:
            return nodeProblem(page, number: number, pageSize: pageSize, isLeaf: true, entries: &entries)
        case PageKind.branch.rawValue:
            return nodeProblem(page, number: number, pageSize: pageSize, isLeaf: false, entries: &entries)
        case PageKind.overflow.rawValue:
            entries = 0
            return page.u32(PageHeader.next) == number ? "overflow page links to itself" : nil
        case let kind:
            return "expected a tree or overflow page, found kind \(kind)"
        }
    }

    private static func nodeProblem(
        _ page: UnsafeRawPointer, number: PageNumber, pageSize: Int, isLeaf: Bool, entries: inout UInt64
    ) -> String? {
        let count = Int(page.u16(PageHeader.count))
        let upper = Int(page.u16(PageHeader.upper))
        guard upper >= PageHeader.size + count * PageHeader.slotSize, upper <= pageSize else {
            return "entry area start \(upper) is inconsistent with \(count) entries"
        }
        guard isLeaf || count > 0 else { return "branch page without children" }
        guard count > 0 else {
            entries = 0
            return nil
        }
        return withUnsafeTemporaryAllocation(of: UInt32.self, capacity: count) { extents -> String? in
            var total: UInt64 = 0
            var layout = EntryOrder()
            for slot in 0..<count {
                // Wrapping arithmetic: every operand is at most a page size (u16 fields), nothing can overflow.
                let offset = Int(page.u16(PageHeader.size &+ slot &* PageHeader.slotSize))
                let header = isLeaf ? EntryLayout.leafHeader : EntryLayout.branchHeader
                guard offset >= upper, offset &+ header <= pageSize else {
                    return "slot \(slot) points outside the entry area"
                }
                let keyLength = Int(page.u16(offset))
                var size = header &+ keyLength
                if isLeaf {
                    let info = page.u32(offset &+ 2)
                    let length = Int(info & EntryLayout.valueLengthMask)
                    switch info >> EntryLayout.storageShift {
                    case ValueStorage.inline.rawValue:
                        size &+= length
                    case ValueStorage.overflow.rawValue:
                        size &+= EntryLayout.overflowRefSize
                        guard size <= pageSize &- offset else { return "entry of slot \(slot) overruns the page" }
                        let first = page.u32(offset &+ header &+ keyLength)
                        guard first >= 2, first != number else { return "slot \(slot) names overflow page \(first)" }
                    case ValueStorage.subtree.rawValue:
                        size &+= TreeRoot.encodedSize
                        guard length == TreeRoot.encodedSize, size <= pageSize &- offset else {
                            return "slot \(slot) has a bad subtree size"
                        }
                        let descriptor = page + (offset &+ header &+ keyLength)
                        guard let tree = TreeRoot.decode(descriptor, pageCount: Meta.maxPageCount), tree.root != number
                        else { return "slot \(slot) holds an invalid tree descriptor" }
                    default:
                        return "slot \(slot) has an unknown value storage"
                    }
                    guard size <= pageSize &- offset else { return "entry of slot \(slot) overruns the page" }
                } else {
                    guard size <= pageSize &- offset else { return "key of slot \(slot) overruns the page" }
                    let child = page.u32(offset &+ 2)
                    guard child >= 2, child != number else { return "slot \(slot) names child page \(child)" }
                    let (sum, overflow) = total.addingReportingOverflow(page.u64(offset &+ 6))
                    guard !overflow, sum <= UInt64(Int.max) else { return "entry counts overflow" }
                    total = sum
                    if slot == 0 {
                        guard keyLength == 0 else { return "first branch entry has a key" }
                        layout.place(offset: offset, size: size)
                        extents[slot] = UInt32(offset) << 16 | UInt32(size)
                        continue
                    }
                }
                if let problem = layout.add(key: page + (offset &+ header), length: keyLength, slot: slot) {
                    return problem
                }
                layout.place(offset: offset, size: size)
                extents[slot] = UInt32(offset) << 16 | UInt32(size)
            }
            if layout.sawKey && layout.sawRepeatedEmptyKey { return "an empty key is repeated among non-empty keys" }
            entries = isLeaf ? UInt64(count) : total
            return layout.ascending || layout.descending ? nil : overlapProblem(extents)
        }
    }

    /// What one pass over a page's slots learns about key order and where the entries lie.
    private struct EntryOrder {
        var previous: UnsafeRawPointer?
        var previousLength = -1
        var sawKey = false
        var sawRepeatedEmptyKey = false
        /// Whether the entries seen so far lie in slot order (or in its reverse), each ending before the next begins:
        /// then none overlap, without sorting.
        var ascending = true
        var descending = true
        private var start = 0
        private var end = 0
        private var placed = false

        /// Keys ascend strictly (keyed trees), or are all empty (lists).
        mutating func add(key: UnsafeRawPointer, length: Int, slot: Int) -> String? {
            if previousLength >= 0 {
                let order = Bytes.compare(previous, previousLength, key, length)
                if order == 0 && length == 0 {
                    sawRepeatedEmptyKey = true
                } else if order >= 0 {
                    return "keys out of order at slot \(slot)"
                }
            }
            sawKey = sawKey || length > 0
            previous = key
            previousLength = length
            return nil
        }

        mutating func place(offset: Int, size: Int) {
            if placed {
                ascending = ascending && end <= offset
                descending = descending && offset &+ size <= start
            }
            placed = true
            start = offset
            end = offset &+ size
        }
    }

    /// Whether two entries share bytes (two slots naming one entry, an entry running into the next), given each
    /// entry as `offset << 16 | size`, in no particular order.
    private static func overlapProblem(_ extents: UnsafeMutableBufferPointer<UInt32>) -> String? {
        var extents = extents
        extents.sort()
        for index in extents.indices.dropFirst()
        where (extents[index - 1] >> 16) + (extents[index - 1] & 0xFFFF) > extents[index] >> 16 {
            return "entries at offsets \(extents[index - 1] >> 16) and \(extents[index] >> 16) overlap"
        }
        return nil
    }
}

extension ValidatedPages {
    /// Validates page `number` (at `page`) for a reader of version `limit`: checksum, structure, and a version
    /// stamp no newer than the reader's (a page written after the version that reaches it was reused under it, or
    /// is not the page that version wrote). Records the page and returns the entries under it.
    @inline(never)
    func validate(_ page: UnsafeRawPointer, number: PageNumber, limit: UInt64, geometry: PageGeometry, file: PathRef)
        throws(StorageError) -> UInt64
    {
        var entries: UInt64 = 0
        if let problem = PageCheck.problem(page, number: number, geometry: geometry, entries: &entries) {
            throw file.corrupt(number, problem)
        }
        let written = page.u64(PageHeader.version)
        guard written != 0 else { throw file.corrupt(number, "page carries version 0, which no commit writes") }
        guard written <= limit else {
            throw file.corrupt(number, "page was written by version \(written), after version \(limit) that reads it")
        }
        record(number, version: written, entries: entries)
        return entries
    }
}

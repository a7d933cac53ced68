import Foundation
import Testing

@testable import StrataStorage

/// Fields a checksum cannot protect: each test edits one field of a page, seals the page again with a valid
/// checksum (as a buggy tool or a deliberate edit would), and asserts that reading what the field describes
/// throws a typed error instead of returning a wrong value, and that `verify` reports it.
@Suite("Re-sealed structural edits")
struct ResealedFieldTests {
    static let pageSize = 1024

    /// A file image: a keyed tree "keyed" of `keys` 8-byte keys (value: the key again), a list "list" of 300
    /// elements, a nested list of 50 under key "nested" of "keyed", and a 5,000-byte overflow value under "blob".
    /// With `largeLastCommit`, the last commit writes more pages than a meta page lists: opening then checks only
    /// its root pages' checksums, so a re-sealed edit of the catalog it rewrote reaches the read path.
    static func image(keys: Int = 400, largeLastCommit: Bool = false) throws -> [UInt8] {
        let file = MemoryFile(name: "image")
        let store = try Store.open(file: file, options: StoreOptions(pageSize: pageSize))
        try store.write { txn in
            let keyed = try #require(try txn.tree(named: "keyed", create: .keyed))
            for k in 0..<keys { try txn.put(key(k), key(k), in: keyed) }
            let list = try #require(try txn.tree(named: "list", create: .list))
            for k in 0..<300 { try txn.append(key(k), to: list) }
            let nested = try #require(try txn.subtree(forKey: [UInt8]("nested"), in: keyed, create: .list))
            for k in 0..<50 { try txn.append(key(k), to: nested) }
            try txn.put([UInt8]("blob"), blob, in: keyed)
        }
        // A last small commit elsewhere: its meta page lists the pages it wrote with their checksums, and opening
        // checks those, so the edited pages must belong to an older commit to reach the read path.
        try store.write { txn in
            let other = try #require(try txn.tree(named: "other", create: .keyed))
            for k in 0..<(largeLastCommit ? 4_000 : 1) { try txn.put(key(k), [1], in: other) }
        }
        #expect(try store.verify().isValid)
        return file.snapshot()
    }

    static let blob = (0..<5000).map { UInt8(truncatingIfNeeded: $0 % 251 + 1) }

    static func open(_ image: [UInt8]) throws -> Store {
        try Store.open(
            file: FaultInjectingFile(name: "edited", image: image), options: StoreOptions(pageSize: pageSize))
    }

    /// The tree "keyed" of a fresh open of `image` (nil when the open fell back to a version without it).
    static func keyed(_ image: [UInt8]) throws -> TreeView? { try open(image).read().tree(named: "keyed") }

    /// Applies `edit` to the bytes of page `page` and seals the page again.
    static func edit(_ image: inout [UInt8], page: PageNumber, _ edit: (UnsafeMutableRawPointer) -> Void) {
        image.withUnsafeMutableBytes { bytes in
            let base = bytes.baseAddress! + Int(page) * pageSize
            edit(base)
            PageChecksum.seal(base, page: page, pageSize: pageSize)
        }
    }

    /// The leaf holding `key` in the named tree of `image`, and the offset of that key's entry in it.
    static func leafEntry(_ image: [UInt8], tree: String, key: [UInt8]) throws -> (page: PageNumber, offset: Int) {
        let snapshot = try open(image).read()
        let root = try #require(try snapshot.tree(named: tree)).root
        let leaf = try #require(try key.withStorageBytes { try snapshot.read.leaf(for: $0, in: root) })
        let (index, found) = try key.withStorageBytes { try leaf.lowerBound($0, file: snapshot.pages.file) }
        #expect(found)
        return (leaf.page, try leaf.offset(index, file: snapshot.pages.file))
    }

    /// The verify report of `image` names a problem (with `text` in it, when given).
    static func expectVerifyReports(
        _ image: [UInt8], _ text: String? = nil, sourceLocation: SourceLocation = #_sourceLocation
    )
        throws
    {
        let report = try open(image).verify()
        #expect(!report.isValid, "verify found nothing", sourceLocation: sourceLocation)
        if let text {
            #expect(
                report.problems.contains { $0.message.contains(text) }, "\(report.problems)",
                sourceLocation: sourceLocation)
        }
    }

    /// `body` throws `corruptPage` (and returns nothing).
    static func expectCorruptPage(sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Any?) {
        do {
            let value = try body()
            Issue.record(
                "read \(String(describing: value)) instead of reporting the damage", sourceLocation: sourceLocation)
        } catch StorageError.corruptPage {
        } catch {
            Issue.record("\(error) is not corruptPage", sourceLocation: sourceLocation)
        }
    }

    // MARK: Overflow lengths

    /// The leaf entry's value length, edited by `delta` bytes: shorter or longer within the same pages, or by a
    /// whole page either way.
    @Test(arguments: [-1, 1, -992, 992, -40])
    func overflowLengthEdited(delta: Int) throws {
        var image = try Self.image()
        let (page, offset) = try Self.leafEntry(image, tree: "keyed", key: [UInt8]("blob"))
        Self.edit(&image, page: page) { base in
            let info = UnsafeRawPointer(base).u32(offset + 2)
            let length = Int(info & EntryLayout.valueLengthMask) + delta
            base.setU32(offset + 2, UInt32(length) | (info & ~EntryLayout.valueLengthMask))
        }
        Self.expectCorruptPage { try Self.keyed(image)?.get([UInt8]("blob")) }
        try Self.expectVerifyReports(image)
    }

    @Test func overflowChainLongerThanItsValue() throws {
        var image = try Self.image()
        let (page, offset) = try Self.leafEntry(image, tree: "keyed", key: [UInt8]("blob"))
        let first = image.withUnsafeBytes {
            UnsafeRawPointer($0.baseAddress! + Int(page) * Self.pageSize).u32(offset + 6 + 4)
        }
        let snapshot = try Self.open(image).read()
        let chain = try TreeRead(source: snapshot.pages).overflowPages(from: first, length: Self.blob.count)
        let (leaf, _) = try Self.leafEntry(image, tree: "keyed", key: key(0))
        // The last page of the chain now links on to another page.
        Self.edit(&image, page: chain.last!) { $0.setU32(PageHeader.next, leaf) }
        Self.expectCorruptPage { try Self.keyed(image)?.get([UInt8]("blob")) }
        try Self.expectVerifyReports(image, "overflow chain is longer than its value")
    }

    // MARK: Counts

    /// A branch entry's count of the entries below it, edited in the root of a three-level tree, or in the
    /// branch below it that holds the first leaves: positional reads must not silently land on another element.
    @Test(arguments: [true, false])
    func branchCountEdited(atRoot: Bool) throws {
        var image = try Self.image(keys: 20_000)
        let snapshot = try Self.open(image).read()
        let root = try #require(try snapshot.tree(named: "keyed")).root
        #expect(root.depth == 3)
        let page = atRoot ? root.root : try snapshot.pages.node(root.root).child(0, file: snapshot.pages.file).page
        let offset = try snapshot.pages.node(page).offset(0, file: snapshot.pages.file)
        Self.edit(&image, page: page) { $0.setU64(offset + 6, UnsafeRawPointer($0).u64(offset + 6) - 1) }
        // Element i of the keyed tree is key(i): after the edit, positions past the first leaf (under the edited
        // branch) or past the first subtree (under the edited root) would shift by one.
        Self.expectCorruptPage { try Self.keyed(image)?.element(at: atRoot ? 20_000 : 60) }
        Self.expectCorruptPage { try Self.keyed(image)?.entries() }
        try Self.expectVerifyReports(image, "counts")
    }

    @Test func nestedDescriptorCountEdited() throws {
        var image = try Self.image()
        let (page, offset) = try Self.leafEntry(image, tree: "keyed", key: [UInt8]("nested"))
        let keyLength = "nested".utf8.count
        // The descriptor's u64 entry count is at offset 8 of the 32-byte descriptor after the entry's key.
        Self.edit(&image, page: page) { $0.setU64(offset + 6 + keyLength + 8, 49) }
        Self.expectCorruptPage { try Self.keyed(image)?.subtree(forKey: [UInt8]("nested"))?.count }
        try Self.expectVerifyReports(image, "tree descriptor says 49 entries, found 50")
    }

    @Test func namedTreeDescriptorCountEdited() throws {
        var image = try Self.image(largeLastCommit: true)
        let store = try Self.open(image)
        let catalog = store.shared.latest.catalog
        #expect(catalog.depth == 1)
        let snapshot = try store.read()
        let node = try snapshot.pages.node(catalog.root)
        let (index, _) = try [UInt8]("list").withStorageBytes { try node.lowerBound($0, file: snapshot.pages.file) }
        let offset = try node.offset(index, file: snapshot.pages.file)
        Self.edit(&image, page: catalog.root) { $0.setU64(offset + 6 + 4 + 8, 301) }
        Self.expectCorruptPage { try Self.open(image).read().tree(named: "list")?.count }
        try Self.expectVerifyReports(image, "tree descriptor says 301 entries, found 300")
    }

    // MARK: One page's own structure

    @Test func leafKeysOutOfOrder() throws {
        var image = try Self.image()
        let (page, _) = try Self.leafEntry(image, tree: "keyed", key: key(100))
        // Swap the first two slots: both keys are still there, but a binary search misses one of them.
        Self.edit(&image, page: page) { base in
            let first = UnsafeRawPointer(base).u16(PageHeader.size)
            base.setU16(PageHeader.size, UnsafeRawPointer(base).u16(PageHeader.size + 2))
            base.setU16(PageHeader.size + 2, first)
        }
        Self.expectCorruptPage { try Self.keyed(image)?.get(key(100)) }
        try Self.expectVerifyReports(image, "keys out of order")
    }

    @Test func twoSlotsNamingOneEntry() throws {
        var image = try Self.image()
        let snapshot = try Self.open(image).read()
        let root = try #require(try snapshot.tree(named: "list")).root
        let (leaf, _) = try snapshot.read.leaf(at: 0, in: root)
        // Slot 1 now names slot 0's entry: a list element read twice, another never.
        Self.edit(&image, page: leaf.page) { base in
            base.setU16(PageHeader.size + 2, UnsafeRawPointer(base).u16(PageHeader.size))
        }
        Self.expectCorruptPage { try Self.open(image).read().tree(named: "list")?.element(at: 1) }
        try Self.expectVerifyReports(image, "overlap")
    }

    // MARK: Rows

    /// The length of a string in a stored row, one byte longer or shorter: the next string (or the row's end)
    /// disagrees, so reading the row fails as damage instead of returning "Ann" as "Ann " or "An".
    @Test(arguments: [-1, 1])
    func rowStringLengthEdited(delta: Int) throws {
        let file = MemoryFile(name: "rows")
        let store = try Store.open(file: file, options: StoreOptions(pageSize: Self.pageSize))
        try store.write { txn in
            let rows = try #require(try txn.tree(named: "rows", create: .keyed))
            for k in 0..<20 {
                var row = RowBuilder(columns: 3)
                row.setString(0, "Ann")
                row.setInt(1, Int64(k))
                row.setString(2, "Oslo")
                try txn.put(key(k), row.finish(), in: rows)
            }
        }
        try store.write { txn in
            try txn.put([UInt8]("x"), [1], in: try #require(try txn.tree(named: "other", create: .keyed)))
        }
        var image = file.snapshot()
        let (page, offset) = try Self.leafEntry(image, tree: "rows", key: key(7))
        // The row is the entry's inline value, after its 6-byte header and 8-byte key; column 0's length is the
        // second u32 of its slot.
        let length = offset + 6 + 8 + RowFormat.slotsOffset(columns: 3) + 4
        Self.edit(&image, page: page) { $0.setU32(length, UInt32(3 + delta)) }
        let view = try #require(try Self.open(image).read().tree(named: "rows"))
        let error = try view.withValue(forKey: key(7)) { bytes -> StorageError? in
            do throws(StorageError) {
                _ = try RowView(bytes)
                return nil
            } catch {
                return error
            }
        }
        guard case .corruptValue = error else {
            Issue.record("read the row with \(String(describing: error)) instead of corruptValue")
            return
        }
        #expect(try view.withValue(forKey: key(6)) { try RowView($0).string(0) } == "Ann")
        let report = try Self.open(image).verify(rowTrees: { $0 == "rows" })
        #expect(report.problems.map(\.message).contains { $0.contains("the row under key") }, "\(report.problems)")
        #expect(report.problems.allSatisfy { $0.page == page })
    }
}

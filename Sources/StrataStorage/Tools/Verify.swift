/// The result of ``Store/verify()``: every problem found in the newest version, with where it was found.
public struct VerifyReport: Sendable, CustomStringConvertible {
    /// One integrity problem.
    public struct Problem: Sendable, Equatable, CustomStringConvertible {
        /// The page involved, when the problem is about one page.
        public let page: UInt32?
        /// The tree the page belongs to: a tree name, `catalog`, `free list`, or a nested path like `name/0a0b`.
        public let tree: String
        /// What is wrong.
        public let message: String

        /// "tree, page N: message".
        public var description: String {
            if let page { return "\(tree), page \(page): \(message)" }
            return "\(tree): \(message)"
        }
    }

    /// The version that was checked.
    public internal(set) var version: UInt64 = 0
    /// Pages in that version.
    public internal(set) var pageCount = 0
    /// Pages reachable from the version's trees (meta pages included).
    public internal(set) var reachablePages = 0
    /// Pages recorded as free.
    public internal(set) var freePages = 0
    /// Trees checked (named and nested).
    public internal(set) var treeCount = 0
    /// Entries in all trees checked.
    public internal(set) var entryCount = 0
    /// What each meta slot holds: its version, or why it is unusable.
    public internal(set) var metaSlots: [String] = []
    /// Problems found; empty when the file is intact.
    public internal(set) var problems: [Problem] = []
    /// Problems beyond the first ``maxProblems`` are counted but not listed.
    public internal(set) var omittedProblems = 0

    /// Listing stops after this many problems.
    public static let maxProblems = 1000

    /// Whether no problem was found.
    public var isValid: Bool { problems.isEmpty }

    /// A multi-line summary followed by every problem.
    public var description: String {
        var lines = [
            "version \(version): \(pageCount) pages, \(reachablePages) reachable, \(freePages) free, "
                + "\(treeCount) trees, \(entryCount) entries"
        ]
        lines += metaSlots.map { "  \($0)" }
        if isValid {
            lines.append("OK: no problems found")
        } else {
            lines.append("\(problems.count + omittedProblems) problem(s):")
            lines += problems.map { "  - \($0)" }
            if omittedProblems > 0 { lines.append("  ... and \(omittedProblems) more") }
        }
        return lines.joined(separator: "\n")
    }

    mutating func add(_ tree: String, _ page: PageNumber?, _ message: String) {
        if problems.count < Self.maxProblems {
            problems.append(Problem(page: page, tree: tree, message: message))
        } else {
            omittedProblems += 1
        }
    }
}

/// Walks every page reachable from one version and checks structure, checksums and free-space accounting.
struct Verifier {
    private enum Owner: UInt8 {
        case unseen = 0
        case reachable = 1
        case free = 2
    }

    private let source: UncheckedPages
    private let meta: Meta
    private var owners: [Owner]
    private(set) var report = VerifyReport()
    /// Which named trees hold rows (``RowView``) as their values.
    private let rowTrees: (String) -> Bool
    /// Whether the tree being walked is one of them.
    private var checkingRows = false

    init(transaction: ReadTransaction, rowTrees: @escaping (String) -> Bool = { _ in false }) {
        self.rowTrees = rowTrees
        source = UncheckedPages(transaction.pages)
        meta = transaction.meta
        owners = [Owner](repeating: .unseen, count: Int(meta.pageCount))
        report.version = meta.version
        report.pageCount = Int(meta.pageCount)
    }

    /// Pages reachable from the version (meta pages included), after ``run(metaSlots:)``.
    var reachablePages: [PageNumber] {
        owners.indices.filter { owners[$0] == .reachable }.map { PageNumber($0) }
    }

    mutating func run(metaSlots: [String]) -> VerifyReport {
        report.metaSlots = metaSlots
        owners[0] = .reachable
        owners[1] = .reachable
        checkTree(meta.catalog, name: "catalog", isCatalog: true)
        checkTree(meta.freeTree, name: "free list")
        checkFreeRecords()
        var leaked: [PageNumber] = []
        for page in 2..<owners.count where owners[page] == .unseen { leaked.append(PageNumber(page)) }
        if !leaked.isEmpty {
            report.add("file", nil, "\(leaked.count) page(s) neither reachable nor free (leaked): \(ranges(leaked))")
        }
        report.reachablePages = owners.lazy.filter { $0 == .reachable }.count
        report.freePages = owners.lazy.filter { $0 == .free }.count
        return report
    }

    private func ranges(_ pages: [PageNumber]) -> String {
        var parts: [String] = []
        var start = pages[0]
        var end = pages[0]
        for page in pages.dropFirst() {
            if page == end + 1 {
                end = page
                continue
            }
            parts.append(start == end ? "\(start)" : "\(start)-\(end)")
            start = page
            end = page
        }
        parts.append(start == end ? "\(start)" : "\(start)-\(end)")
        return parts.prefix(20).joined(separator: ", ") + (parts.count > 20 ? ", ..." : "")
    }

    /// Marks a page reachable; reports pages out of range or reached twice (a cycle or a shared page).
    private mutating func claim(_ page: PageNumber, tree: String) -> Bool {
        guard page >= 2, Int(page) < owners.count else {
            report.add(tree, page, "reference to page \(page) outside the file's \(owners.count) pages")
            return false
        }
        guard owners[Int(page)] == .unseen else {
            report.add(tree, page, "page is referenced more than once (cycle or shared page)")
            return false
        }
        owners[Int(page)] = .reachable
        return true
    }

    /// Checks what a reader checks before trusting a page (checksum, version stamp, the page's own structure,
    /// see ``PageCheck``), reporting every problem; returns the page unless it lies outside the file, and whether
    /// its structure holds (when not, the walk goes on with the bounds-checked accessors, but their errors would
    /// only repeat what was reported).
    private mutating func checkPage(_ page: PageNumber, tree: String) -> (base: UnsafeRawPointer, sound: Bool)? {
        let base: UnsafeRawPointer
        do {
            base = try source.page(page)
        } catch {
            // Outside the file (``claim(_:tree:)`` said so already), or an encrypted page that fails its tag.
            if case .corruptPage(_, _, let reason) = error { report.add(tree, page, reason) }
            return nil
        }
        if !PageChecksum.verify(base, page: page, pageSize: meta.pageSize) {
            report.add(tree, page, "checksum mismatch")
        }
        let written = base.u64(PageHeader.version)
        if written > meta.version {
            report.add(tree, page, "page was written by version \(written), after this version")
        } else if written == 0 {
            report.add(tree, page, "page carries version 0, which no commit writes")
        }
        var entries: UInt64 = 0
        if let problem = PageCheck.structureProblem(
            base, number: page, pageSize: meta.geometry.usableSize, entries: &entries)
        {
            report.add(tree, page, problem)
            return (base, false)
        }
        return (base, true)
    }

    private mutating func checkTree(_ tree: TreeRoot, name: String, isCatalog: Bool = false) {
        report.treeCount += 1
        guard tree.root != 0 else {
            if tree.count != 0 { report.add(name, nil, "empty tree claims \(tree.count) entries") }
            return
        }
        let counted = checkNode(
            tree.root, tree: tree, name: name, level: 1, lower: nil, upper: nil, isCatalog: isCatalog)
        if let counted, counted != UInt64(tree.count) {
            report.add(name, tree.root, "tree descriptor says \(tree.count) entries, found \(counted)")
        }
    }

    /// Checks a subtree and returns its entry count (nil when it could not be read).
    private mutating func checkNode(
        _ page: PageNumber, tree: TreeRoot, name: String, level: Int, lower: [UInt8]?, upper: [UInt8]?, isCatalog: Bool
    ) -> UInt64? {
        guard level <= tree.depth, level <= TreeRoot.maxDepth else {
            report.add(name, page, "tree is deeper than its descriptor's depth \(tree.depth)")
            return nil
        }
        guard claim(page, tree: name), let (_, sound) = checkPage(page, tree: name) else { return nil }
        let node: Node
        do {
            node = try source.node(page)
        } catch {
            if sound { report.add(name, page, "\(error)") }
            return nil
        }
        if node.isLeaf != (level == tree.depth) {
            report.add(name, page, node.isLeaf ? "leaf above the leaf level \(tree.depth)" : "branch at the leaf level")
            return nil
        }
        do {
            return node.isLeaf
                ? try checkLeaf(node, tree: tree, name: name, lower: lower, upper: upper, isCatalog: isCatalog)
                : try checkBranch(
                    node, tree: tree, name: name, level: level, lower: lower, upper: upper, isCatalog: isCatalog)
        } catch {
            if sound { report.add(name, page, "\(error)") }
            return nil
        }
    }

    private mutating func checkOrder(
        _ key: UnsafeRawBufferPointer, lower: [UInt8]?, upper: [UInt8]?, tree: TreeRoot, name: String,
        page: PageNumber, slot: Int
    ) {
        if tree.kind == .list {
            if !key.isEmpty { report.add(name, page, "list entry \(slot) has a key") }
            return
        }
        // Order within the page is part of the page's structure (``checkPage``); order across pages is here.
        if let lower, Bytes.compare(key, lower.withUnsafeBytes { $0 }) < 0 {
            report.add(name, page, "key at slot \(slot) is below its separator")
        }
        if let upper, Bytes.compare(key, upper.withUnsafeBytes { $0 }) >= 0 {
            report.add(name, page, "key at slot \(slot) is not below the next separator")
        }
    }

    private mutating func checkLeaf(
        _ node: Node, tree: TreeRoot, name: String, lower: [UInt8]?, upper: [UInt8]?, isCatalog: Bool
    ) throws -> UInt64 {
        for slot in 0..<node.count {
            let entry = try node.leafEntry(slot, file: source.file)
            checkOrder(entry.key, lower: lower, upper: upper, tree: tree, name: name, page: node.page, slot: slot)
            report.entryCount += 1
            let entryName = isCatalog ? String(decoding: entry.key, as: UTF8.self) : name + "/" + hex(entry.key)
            switch entry.storage {
            case .inline:
                if isCatalog { report.add(name, node.page, "catalog entry \(entryName) does not hold a tree") }
                if checkingRows { checkRow(entry.inlineValue, key: entry.key, name: name, page: node.page) }
            case .overflow:
                if checkOverflow(entry.overflowPage, length: entry.length, name: name), checkingRows,
                    let value = try? TreeRead(source: source).value(of: entry)
                {
                    value.withUnsafeBytes { checkRow($0, key: entry.key, name: name, page: node.page) }
                }
            case .subtree:
                guard let nested = TreeRoot.decode(entry.payload, pageCount: meta.pageCount) else {
                    report.add(name, node.page, "invalid tree descriptor at slot \(slot)")
                    continue
                }
                let outer = checkingRows
                checkingRows = isCatalog && rowTrees(entryName)
                checkTree(nested, name: entryName)
                checkingRows = outer
            }
        }
        return UInt64(node.count)
    }

    private mutating func checkBranch(
        _ node: Node, tree: TreeRoot, name: String, level: Int, lower: [UInt8]?, upper: [UInt8]?, isCatalog: Bool
    ) throws -> UInt64 {
        var keys: [[UInt8]?] = [lower]
        for slot in 1..<max(1, node.count) {
            let key = try node.key(slot, file: source.file)
            checkOrder(key, lower: lower, upper: upper, tree: tree, name: name, page: node.page, slot: slot)
            keys.append(Array(key))
        }
        keys.append(upper)
        var total: UInt64 = 0
        for slot in 0..<node.count {
            let (child, count) = try node.child(slot, file: source.file)
            let childLower = tree.kind == .keyed ? keys[slot] : nil
            let childUpper = tree.kind == .keyed ? keys[slot + 1] : nil
            guard
                let found = checkNode(
                    child, tree: tree, name: name, level: level + 1, lower: childLower, upper: childUpper,
                    isCatalog: isCatalog)
            else { continue }
            if found != count { report.add(name, node.page, "entry \(slot) counts \(count) below it, found \(found)") }
            total &+= count
        }
        return total
    }

    /// Reports a value of a row tree that is not a row whose lengths and offsets hold together.
    private mutating func checkRow(
        _ value: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer, name: String, page: PageNumber
    ) {
        do throws(StorageError) {
            _ = try RowView(value)
        } catch {
            report.add(name, page, "the row under key \(hex(key)): \(error)")
        }
    }

    /// Checks an overflow chain; returns whether it holds its value whole (no problem found).
    @discardableResult
    private mutating func checkOverflow(_ first: PageNumber, length: Int, name: String) -> Bool {
        let before = report.problems.count + report.omittedProblems
        let whole = checkChain(first, length: length, name: name)
        return whole && report.problems.count + report.omittedProblems == before
    }

    private mutating func checkChain(_ first: PageNumber, length: Int, name: String) -> Bool {
        let payload = meta.geometry.overflowPayload
        let pages = max(1, (length + payload - 1) / payload)
        var page = first
        for index in 0..<pages {
            guard claim(page, tree: name), let (base, _) = checkPage(page, tree: name) else { return false }
            guard base.u8(PageHeader.kind) == PageKind.overflow.rawValue, base.u32(PageHeader.pageNumber) == page else {
                report.add(name, page, "expected an overflow page")
                return false
            }
            if index == 0, let problem = OverflowLayout.lengthProblem(base, length: length) {
                report.add(name, page, problem)
            }
            let next = base.u32(PageHeader.next)
            if index + 1 < pages && next == 0 {
                report.add(name, page, "overflow chain of a \(length)-byte value ends after \(index + 1) pages")
                return false
            }
            if index + 1 == pages,
                let problem = OverflowLayout.endProblem(
                    base, used: length - index * payload, pageSize: meta.geometry.usableSize)
            {
                report.add(name, page, problem)
            }
            page = next
        }
        return true
    }

    /// Marks every page listed in free-list records; a page listed twice or also reachable is reported.
    private mutating func checkFreeRecords() {
        guard meta.freeTree.root != 0 else { return }
        var cursor = CursorCore(source: source, tree: meta.freeTree)
        do {
            var more = try cursor.first()
            while more {
                let entry = try cursor.entry()
                let page = cursor.page
                if entry.key.count != WriteContext.freeKeySize || entry.storage != .inline || entry.length < 4 {
                    report.add("free list", page, "malformed record")
                } else {
                    let value = entry.inlineValue
                    let count = Int(UInt32(littleEndian: value.loadUnaligned(fromByteOffset: 0, as: UInt32.self)))
                    if 4 + count * 4 > value.count {
                        report.add("free list", page, "record lists \(count) pages but holds \(value.count) bytes")
                    } else {
                        for index in 0..<count {
                            let free = PageNumber(
                                littleEndian: value.loadUnaligned(fromByteOffset: 4 + index * 4, as: UInt32.self))
                            markFree(free)
                        }
                    }
                }
                more = try cursor.next()
            }
        } catch {
            report.add("free list", nil, "\(error)")
        }
    }

    private mutating func markFree(_ page: PageNumber) {
        guard page >= 2, Int(page) < owners.count else {
            report.add("free list", page, "free page outside the file")
            return
        }
        switch owners[Int(page)] {
        case .unseen: owners[Int(page)] = .free
        case .reachable: report.add("free list", page, "page is both free and reachable")
        case .free: report.add("free list", page, "page is listed as free twice")
        }
    }

    private func hex(_ bytes: UnsafeRawBufferPointer) -> String {
        let digits = Array("0123456789abcdef")
        var text = ""
        for byte in bytes.prefix(16) {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 15)])
        }
        return bytes.count > 16 ? text + "…" : text
    }
}

extension Store {
    /// Checks the newest version page by page: checksums, page kinds and numbers, key order and separator bounds,
    /// tree depths and subtree counts, overflow chains, nested trees, and that every page is either reachable or
    /// free (never both, never neither). Also reports what each meta slot holds.
    ///
    /// Runs on a read transaction, so it can check a file that is in use. Cost is proportional to the file size.
    /// With ``StoreOptions/events``, each problem listed is also reported as ``StoreEvent/damage(_:)``.
    public func verify() throws(StorageError) -> VerifyReport {
        try verify(rowTrees: { _ in false })
    }

    /// ``verify()``, also checking every value of the named trees that `rowTrees` accepts as a row of the object
    /// layer's format (``RowView``): the variable-size values' offsets and lengths against each other and the row's
    /// size. The storage engine cannot tell which trees hold rows; the object layer can (its object trees).
    ///
    /// ```swift
    /// let report = try store.verify(rowTrees: { $0.hasPrefix("o:") })
    /// ```
    public func verify(rowTrees: @escaping (_ name: String) -> Bool) throws(StorageError) -> VerifyReport {
        let transaction = try read()
        var verifier = Verifier(transaction: transaction, rowTrees: rowTrees)
        let report = verifier.run(metaSlots: metaSlotDescriptions(transaction))
        if let events {
            for problem in report.problems {
                events(.damage(StoreEvent.Damage(path: path, page: problem.page, reason: problem.description)))
            }
        }
        return report
    }

    /// The pages reachable from the newest version (for tests that damage live pages on purpose).
    func reachablePages() throws(StorageError) -> [PageNumber] {
        let transaction = try read()
        var verifier = Verifier(transaction: transaction)
        _ = verifier.run(metaSlots: [])
        return verifier.reachablePages
    }

    private func metaSlotDescriptions(_ transaction: ReadTransaction) -> [String] {
        let mapping = transaction.mapping
        let size = Int(transaction.meta.pageCount) * transaction.meta.pageSize
        return (0..<2).map { slot in
            let page = mapping.base + slot * transaction.meta.pageSize
            switch Result(catching: { () throws(StorageError) in
                try shared.metaCodec.decode(page, slot: PageNumber(slot), available: size)
            }) {
            case .success(.success(let meta)): return "meta \(slot): version \(meta.version), \(meta.pageCount) pages"
            case .success(.failure(let rejection)): return "meta \(slot): unusable (\(rejection))"
            case .failure(let error): return "meta \(slot): unusable (\(error))"
            }
        }
    }
}

/// The pages of a version with bounds checks only: the integrity check validates each page itself, so that it
/// can report every problem instead of stopping at the first. An encrypted file's pages are authenticated and
/// decrypted all the same (a page that fails its tag throws ``StorageError/corruptPage(path:page:reason:)``): what
/// is checked is what the key's holder would read.
private struct UncheckedPages: PageSource {
    let base: UnsafeRawPointer
    let pageCount: UInt64
    let geometry: PageGeometry
    unowned(unsafe) let file: PathRef
    unowned(unsafe) let decrypted: DecryptedPages?

    init(_ pages: SnapshotPages) {
        base = pages.base
        pageCount = pages.pageCount
        geometry = pages.geometry
        file = pages.file
        decrypted = pages.decrypted
    }

    var pageLimit: UInt64 { pageCount }

    func validatedPage(_ number: PageNumber) throws(StorageError) -> (page: UnsafeRawPointer, entries: UInt64?) {
        guard number >= 2, UInt64(number) < pageCount else {
            throw file.corrupt(number, "reference to page \(number) outside the version's \(pageCount) pages")
        }
        let page = base + Int(number) &* geometry.pageSize
        guard let decrypted else { return (page, nil) }
        return (try decrypted.page(number, sealed: page, file: file), nil)
    }
}

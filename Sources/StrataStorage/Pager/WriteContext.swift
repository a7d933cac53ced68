/// The engine of one write transaction: page allocation, copy-on-write, free-space bookkeeping and commit.
///
/// Confined to the writer (not `Sendable`), so its hot state skips dynamic exclusivity checks.
///
/// Invariant: a page reachable from any committed version is never written. Pages are modified only after
/// ``touch(_:)`` has copied them to a fresh page (or found them already dirty in this transaction).
///
/// Free space: pages this transaction stops using that older versions can still reach go to `freed`; they are
/// recorded in the free tree under this version and reused by a later writer once no reader pins an older
/// version. Pages that were allocated and released within this transaction, and pages taken from the free tree,
/// sit in `pool` and are reused at once.
final class WriteContext {
    let shared: SharedFile
    let base: Meta
    let mapping: Mapping
    let geometry: PageGeometry
    let file: PathRef
    let version: UInt64
    @exclusivity(unchecked) private(set) var pageCount: UInt64
    let dirty: DirtyPages

    /// Published pages released by this transaction (recorded under `version` at commit).
    @exclusivity(unchecked) private(set) var freed: [PageNumber] = []
    /// Pages that may be reused right now.
    @exclusivity(unchecked) private(set) var pool: [PageNumber] = []
    /// Free-tree records of versions at or below this may be reused; computed on first need.
    private(set) var threshold: UInt64?
    /// Pages the commit wrote and whether it went through the commit log (for ``StoreEvent/Commit``).
    private(set) var committed: (pages: Int, logged: Bool) = (0, false)
    /// Set by a grouped commit: what the committer waits for, after releasing the write lock, before the commit
    /// counts as made (see ``GroupCommit``).
    private(set) var durableWait: DurableWait?
    private var reclaiming = false
    private var reclaimDisabled = false
    private var freeTreeExhausted = false

    @exclusivity(unchecked) var catalog: TreeRoot
    @exclusivity(unchecked) var freeTree: TreeRoot
    /// Bumped by every modification; write cursors use it to notice that they must re-seek.
    @exclusivity(unchecked) var modificationCount = 0
    /// The leaf the last keyed modification left its key in (see ``LastLeaf``).
    @exclusivity(unchecked) var lastLeaf: LastLeaf?
    /// The same for the tree modified before ``lastLeaf``'s (see ``LastLeaf``).
    @exclusivity(unchecked) var otherLeaf: LastLeaf?
    /// The entry the last lookup found in ``lastLeaf``, while the transaction has not changed since (see
    /// ``FoundEntry``).
    @exclusivity(unchecked) var lastFound: FoundEntry?
    /// The two memos' path buffers, ``TreeRoot/maxDepth`` steps each.
    let leafPaths: UnsafeMutablePointer<LastLeafStep>

    init(shared: SharedFile, base: Meta, mapping: Mapping) {
        self.shared = shared
        self.base = base
        self.mapping = mapping
        self.geometry = base.geometry
        self.file = shared.pathRef
        self.version = base.version + 1
        self.pageCount = base.pageCount
        self.dirty = DirtyPages(pageSize: base.pageSize, slots: shared.decrypted)
        self.catalog = base.catalog
        self.freeTree = base.freeTree
        self.leafPaths = .allocate(capacity: 2 * TreeRoot.maxDepth)
    }

    deinit { leafPaths.deallocate() }

    /// Page access for this transaction: dirty buffers first, then the base version's pages.
    var pages: WritePages { WritePages(context: self) }

    // MARK: Allocation

    /// A fresh dirty page (contents undefined).
    func allocatePage() throws(StorageError) -> (PageNumber, UnsafeMutableRawPointer) {
        let number = try allocateNumber()
        return (number, dirty.add(number))
    }

    private func allocateNumber() throws(StorageError) -> PageNumber {
        while true {
            if let page = pool.popLast() {
                guard dirty.buffer(page) == nil else {
                    throw file.corrupt(page, "the free list names a page that is in use")
                }
                return page
            }
            guard !reclaiming, !reclaimDisabled, !freeTreeExhausted, try reclaimRecord() else { break }
        }
        guard pageCount < Meta.maxPageCount else { throw .diskFull(path: file.path) }
        let page = PageNumber(pageCount)
        pageCount += 1
        return page
    }

    /// Releases a page this transaction no longer references.
    func free(_ page: PageNumber) {
        modificationCount &+= 1
        retireLeaves()
        if dirty.remove(page) {
            pool.append(page)
        } else {
            freed.append(page)
        }
    }

    /// Makes `page` writable: returns it if it is already dirty, otherwise copies it to a newly allocated page
    /// and releases the original. The caller must point the parent at the returned page number.
    ///
    /// `entries`, when given, is what the reference to the page counts under it (a branch entry's count, or the
    /// tree's for its root): a page copied from the base must hold exactly that many, so that a damaged count is
    /// never carried into the new version.
    @inline(__always)
    func touch(_ page: PageNumber, entries: UInt64? = nil) throws(StorageError) -> (PageNumber, UnsafeMutableRawPointer)
    {
        modificationCount &+= 1
        if let buffer = dirty.buffer(page) { return (page, buffer) }
        return try copyOnWrite(page, entries: entries)
    }

    private func copyOnWrite(_ page: PageNumber, entries expected: UInt64?) throws(StorageError) -> (
        PageNumber, UnsafeMutableRawPointer
    ) {
        // Validated like any read of the base version: a damaged page is never copied into the new one.
        let (source, entries) = try pages.validatedPage(page)
        if let expected, let entries, entries != expected {
            throw file.corrupt(page, "the page holds \(entries) entries, the reference to it counts \(expected)")
        }
        let (number, buffer) = try allocatePage()
        let usableSize = geometry.usableSize
        let count = Int(source.u16(PageHeader.count))
        let upper = Int(source.u16(PageHeader.upper))
        let headerEnd = PageHeader.size + count * PageHeader.slotSize
        if headerEnd <= upper && upper <= usableSize {
            buffer.copyMemory(from: source, byteCount: headerEnd)
            (buffer + upper).copyMemory(from: source + upper, byteCount: usableSize - upper)
        } else {
            buffer.copyMemory(from: source, byteCount: usableSize)
        }
        buffer.setU32(PageHeader.pageNumber, number)
        freed.append(page)
        return (number, buffer)
    }

    // MARK: Free tree

    /// Free-tree key: big-endian (version the pages were freed at, writer version, chunk number).
    /// Pages that were already reusable when a transaction ended are saved with freed-version 0.
    static let freeKeySize = 20

    private static func freeKey(freedAt: UInt64, writer: UInt64, chunk: UInt32) -> [UInt8] {
        var key = [UInt8]()
        key.reserveCapacity(freeKeySize)
        Bytes.appendBigEndian(freedAt, to: &key)
        Bytes.appendBigEndian(writer, to: &key)
        Bytes.appendBigEndian(chunk, to: &key)
        return key
    }

    /// Page numbers per free-tree record, sized so that a record is always stored inline.
    var freeChunkCapacity: Int { (geometry.maxInlineValue(keySize: Self.freeKeySize) - 4) / 4 }

    /// Moves the oldest reusable free-tree record into the pool. Returns false when none is reusable.
    private func reclaimRecord() throws(StorageError) -> Bool {
        reclaiming = true
        defer { reclaiming = false }
        let limit: UInt64
        if let threshold {
            limit = threshold
        } else {
            limit = shared.reclaimThreshold(base: base.version)
            threshold = limit
        }
        var cursor = CursorCore(source: pages, tree: freeTree)
        guard try cursor.first() else {
            freeTreeExhausted = true
            return false
        }
        let entry = try cursor.entry()
        guard entry.key.count == Self.freeKeySize, entry.storage == .inline, entry.length >= 4 else {
            throw .corruptPage(
                path: file.path, page: cursor.page ?? 0, reason: "malformed free-list record")
        }
        let freedAt = Bytes.readBigEndian(UInt64.self, entry.key, at: 0)
        guard freedAt <= limit else {
            freeTreeExhausted = true
            return false
        }
        let value = entry.inlineValue
        let count = Int(value.loadUnaligned(fromByteOffset: 0, as: UInt32.self).littleEndian)
        guard 4 + count * 4 <= value.count else {
            throw .corruptPage(
                path: file.path, page: cursor.page ?? 0, reason: "free-list record overruns")
        }
        let start = pool.count
        for index in 0..<count {
            let page = PageNumber(littleEndian: value.loadUnaligned(fromByteOffset: 4 + index * 4, as: UInt32.self))
            guard page >= 2, UInt64(page) < base.pageCount else {
                throw file.corrupt(page, "the free list names page \(page), outside the file")
            }
            pool.append(page)
        }
        // Lowest pages last, so they are used first and the file stays dense.
        pool[start...].sort(by: >)
        let key = Array(entry.key)
        _ = try key.withStorageBytes { (key) throws(StorageError) in try delete(key, from: &freeTree) }
        return true
    }

    /// Writes the pool and the freed list into the free tree.
    ///
    /// Inserting records can itself allocate pages (shrinking the pool) and copy free-tree pages (growing the
    /// freed list), so records are first reserved until their number and sizes stop changing, and only then
    /// filled in. Reclaiming is switched off meanwhile so that nothing else edits the free tree.
    ///
    /// Records are sized to what they hold plus a little slack, not to the largest inline value: a small commit
    /// frees a handful of pages, and full-size records would spread two or three of them over a page each, so
    /// every commit would copy several free-tree pages. Sizes only grow while reserving, so the loop ends.
    private func saveFreeRecords() throws(StorageError) {
        // Saving copies free-tree pages and may split them, with reclaiming switched off. Top the pool up from
        // reusable records first, so that those pages are recycled ones; otherwise every commit would extend
        // the file by the free tree's path while reusable records pile up.
        let margin = 2 * (freeTree.depth + 2) + 4
        while pool.count < margin, !freeTreeExhausted, try reclaimRecord() {}
        reclaimDisabled = true
        try checkNoPageFreedTwice()
        let capacity = freeChunkCapacity
        var poolSizes: [Int] = []
        var freedSizes: [Int] = []
        var rounds = 0
        while true {
            rounds += 1
            precondition(rounds < 1000, "free-list save did not converge")
            let poolChanged = try reserveFreeRecords(
                count: pool.count, freedAt: 0, sizes: &poolSizes, capacity: capacity)
            let freedChanged = try reserveFreeRecords(
                count: freed.count, freedAt: version, sizes: &freedSizes, capacity: capacity)
            if !poolChanged && !freedChanged { break }
        }
        try fillFreeRecords(pool, records: poolSizes.count, freedAt: 0, capacity: capacity)
        try fillFreeRecords(freed, records: freedSizes.count, freedAt: version, capacity: capacity)
    }

    /// Pages a reserved record can take beyond its contents when first sized, so that the pages the
    /// reservation itself allocates or frees rarely force a second size.
    private static let freeRecordSlack = 8

    /// Makes sure `count` page numbers fit in the records reserved so far (one record per `capacity` pages),
    /// adding or enlarging records as needed. Returns whether anything changed.
    private func reserveFreeRecords(count: Int, freedAt: UInt64, sizes: inout [Int], capacity: Int)
        throws(StorageError) -> Bool
    {
        let needed = (count + capacity - 1) / capacity
        var changed = false
        for record in 0..<max(needed, sizes.count) {
            let held = max(0, min(capacity, count - record * capacity))
            let required = 4 + held * 4
            if record < sizes.count && sizes[record] >= required { continue }
            let size = 4 + min(capacity, held + Self.freeRecordSlack) * 4
            let key = Self.freeKey(freedAt: freedAt, writer: version, chunk: UInt32(record))
            try reserveFreeRecord(key, size: size)
            if record < sizes.count { sizes[record] = size } else { sizes.append(size) }
            changed = true
        }
        return changed
    }

    /// A damaged file (a page shared by two trees, a free-list record naming a page in use) could make this
    /// transaction release a page twice; recording it twice would hand it to two owners later. Refuse to commit.
    private func checkNoPageFreedTwice() throws(StorageError) {
        let all = (pool + freed).sorted()
        for index in all.indices.dropFirst() where all[index] == all[index - 1] {
            throw file.corrupt(all[index], "page released twice; the file is damaged (run verify)")
        }
    }

    private func reserveFreeRecord(_ key: [UInt8], size: Int) throws(StorageError) {
        try key.withStorageBytes { (key) throws(StorageError) in
            try put(key, value: .reserve(size), into: &freeTree)
        }
    }

    private func fillFreeRecords(_ pages: [PageNumber], records: Int, freedAt: UInt64, capacity: Int)
        throws(StorageError)
    {
        for record in 0..<records {
            let key = Self.freeKey(freedAt: freedAt, writer: version, chunk: UInt32(record))
            let slice = pages[min(pages.count, record * capacity)..<min(pages.count, (record + 1) * capacity)]
            try key.withStorageBytes { (key) throws(StorageError) in
                let target = try inlineValueForWriting(key, in: freeTree)
                target.setU32(0, UInt32(slice.count))
                for (index, page) in slice.enumerated() { target.setU32(4 + index * 4, page) }
            }
        }
    }

    /// Writable inline value bytes of an entry that this transaction has already written (its page is dirty).
    private func inlineValueForWriting(_ key: UnsafeRawBufferPointer, in tree: TreeRoot) throws(StorageError)
        -> UnsafeMutableRawPointer
    {
        let read = TreeRead(source: pages)
        guard let leaf = try read.leaf(for: key, in: tree) else { throw .invalidArgument("reserved record missing") }
        let (index, found) = try leaf.lowerBound(key, file: file)
        guard found, dirty.buffer(leaf.page) != nil else { throw .invalidArgument("reserved record is not writable") }
        let entry = try leaf.leafEntry(index, file: file)
        return UnsafeMutableRawPointer(mutating: entry.payload)
    }

    // MARK: Commit

    /// Whether this transaction changed anything.
    var hasChanges: Bool { dirty.count > 0 || !freed.isEmpty }

    /// Makes the transaction durable and returns the new meta. On error nothing is published and the file
    /// still holds the previous version.
    ///
    /// Two protocols (see FileFormat.md, "The commit protocol"):
    /// - single sync, when the meta page can list every page written: write the pages and the meta (which lists
    ///   each page with its checksum), then sync once. Recovery accepts the meta only if all listed pages are
    ///   intact, so a crash before the sync finished falls back to the previous version.
    /// - two syncs, for larger commits: write and sync the pages, then write and sync the meta.
    func commit(durable: Bool) throws(StorageError) -> Meta {
        try saveFreeRecords()
        let pageSize = geometry.pageSize
        let pages = dirty.sortedPages()
        let listsPages = pages.count <= shared.metaCodec.maxWritten(usableSize: geometry.usableSize)
        let reservedTail = geometry.reservedTail
        var written: [Meta.PageStamp] = []
        if listsPages { written.reserveCapacity(pages.count) }
        let backing = shared.file
        let logged =
            durable && shared.commitLog != nil && listsPages && pages.count <= CommitLog.maxPages(pageSize: pageSize)
        committed = (pages.count, logged)
        // An encrypted file's pages are sealed into a buffer of their own (the file's ``SealingStage``): the clear
        // ones stay what this process reads (and records as validated) after the commit. A logged commit seals
        // every page at once (its log record carries them all); any other commit seals and writes a batch at a time.
        let sealer = shared.decrypted?.sealer
        let batch = sealer == nil || logged ? max(1, pages.count) : SealingStage.batchPages
        let sealed = sealer.map { _ in shared.sealingStage.buffer(pages: min(batch, pages.count), pageSize: pageSize) }
        var runs: [(start: PageNumber, buffers: [UnsafeRawBufferPointer])] = []
        var batchStart = 0
        while batchStart < pages.count {
            let batchEnd = min(batchStart + batch, pages.count)
            for index in batchStart..<batchEnd {
                let (page, buffer) = pages[index]
                buffer.setU64(PageHeader.version, version)
                // Deterministic bytes everywhere: the log stores pages without their gaps, and no stale data lingers.
                PageExtents.zeroGap(buffer, pageSize: pageSize)
                if reservedTail > 0 {
                    (buffer + pageSize - reservedTail).initializeMemory(
                        as: UInt8.self, repeating: 0, count: reservedTail)
                }
                PageChecksum.seal(buffer, page: page, pageSize: pageSize)
                if listsPages {
                    written.append(
                        Meta.PageStamp(page: page, checksum: UnsafeRawPointer(buffer).u64(PageHeader.checksum)))
                }
            }
            if let sealer, let sealed {
                try seal(pages[batchStart..<batchEnd], with: sealer, into: sealed + batchStart % batch * pageSize)
            }
            for index in batchStart..<batchEnd {
                let page = pages[index].page
                let stored = UnsafeRawPointer(sealed.map { $0 + index % batch * pageSize } ?? pages[index].buffer)
                let view = UnsafeRawBufferPointer(start: stored, count: pageSize)
                if let last = runs.last, last.start + PageNumber(last.buffers.count) == page {
                    runs[runs.count - 1].buffers.append(view)
                } else {
                    runs.append((page, [view]))
                }
            }
            // A logged commit writes its pages later, through the log; any other writes each batch before the next
            // one reuses the stage (a plain file's commit is one batch).
            if !logged {
                for run in runs {
                    try backing.write(run.buffers, at: Int(run.start) * pageSize)
                }
                runs.removeAll(keepingCapacity: true)
            }
            batchStart = batchEnd
        }
        // Pages at the end of the file may be free and never written: extend the file so that every page
        // below the page count exists (opening checks the file against the page count).
        // Other writers (here or in other processes) only ever extended it below the base's page count, so a size
        // this process has already ensured stays true. A logged commit writes its pages later (and on another
        // thread): it extends the file first, and only when its own pages do not reach the end.
        let needed = Int(pageCount) * pageSize
        if needed > shared.ensuredSize {
            let reachesEnd = logged && pages.last.map { $0.page + 1 == pageCount } == true
            if !reachesEnd, try backing.size() < needed {
                let zeros = [UInt8](repeating: 0, count: pageSize)
                try zeros.withStorageBytes { (bytes) throws(StorageError) in
                    try backing.write(bytes, at: needed - pageSize)
                }
            }
            shared.ensuredSize = needed
        }
        let meta = Meta(
            version: version, pageCount: pageCount, pageSize: pageSize, catalog: catalog, freeTree: freeTree,
            commitTime: Clock.microsecondsSince1970(), written: written, reservedTail: reservedTail)
        if logged {
            // Redo-logged commit: one sequential append and one sync of the log, the pages written into the main
            // file meanwhile (unsynced); the main file is synced at checkpoints.
            // An encrypted file logs its pages sealed, as the main file stores them (replay copies, never decrypts).
            let images =
                sealed.map { sealed in pages.enumerated().map { (page: $1.page, buffer: sealed + $0 * pageSize) } }
                ?? pages
            // The log leaves out what was each clear page's gap: key stream only once sealed.
            let gaps = sealer.flatMap { sealer in
                shared.logsSealedGaps
                    ? pages.map { SealedGap.of(clear: UnsafeRawPointer($0.buffer), sealer: sealer) } : nil
            }
            durableWait = try shared.commitLogged(meta, pages: images, gaps: gaps, runs: runs, base: base)
            recordValidated(pages)
            return meta
        }
        if durable && shared.commitLog != nil {
            // Too large to log. First make the main file durable at the base and empty the log (this sync also
            // writes this commit's pages), so that recovery can never replay older records over pages this
            // commit reuses; then publish with the meta's own sync.
            try shared.checkpointLog(base)
            try shared.writeMeta(meta, previous: base, durable: true)
            recordValidated(pages)
            return meta
        }
        if durable && !listsPages { try backing.sync() }
        try shared.writeMeta(meta, previous: base, durable: durable)
        recordValidated(pages)
        return meta
    }

    /// Seals `pages` (ready to be written: checksummed, gaps zeroed) into consecutive pages at `stage`, and puts
    /// their clear bytes in the decrypted-page cache so that readers after this commit find them decrypted.
    ///
    /// Sealing is most of an encrypted commit's own cost (about 1.3 µs a 4 KiB page with AES-256-GCM, 3 µs with
    /// counter mode and HMAC-SHA-256), and the pages
    /// are independent: from ``parallelSealing`` pages on, the file's write-behind thread (idle until a logged
    /// commit's page writes, which come after this) seals the second half while this thread seals the first.
    private func seal(
        _ pages: ArraySlice<(page: PageNumber, buffer: UnsafeMutableRawPointer)>, with sealer: PageSealer,
        into stage: UnsafeMutableRawPointer
    ) throws(StorageError) {
        let pageSize = geometry.pageSize
        let decrypted = shared.decrypted
        nonisolated(unsafe) let pages = pages
        nonisolated(unsafe) let stage = stage
        // Seals pages[range] (stage and slots from the batch's first page) and caches them decrypted.
        let sealRange = { @Sendable (range: Range<Int>) throws(StorageError) in
            for index in range {
                let (page, buffer) = pages[index]
                let slot = stage + (index - pages.startIndex) * pageSize
                try sealer.seal(buffer, page: page, into: slot)
                decrypted?.store(page, clear: UnsafeRawPointer(buffer), sealed: UnsafeRawPointer(slot))
            }
        }
        guard pages.count >= Self.parallelSealing else {
            try sealRange(pages.indices)
            return
        }
        let middle = pages.startIndex + pages.count / 2
        let helper = shared.writeBehind
        helper.start { () throws(StorageError) in try sealRange(middle..<pages.endIndex) }
        // Whatever happens here, the helper is done with the pages before they can be released.
        let own: StorageError?
        do throws(StorageError) {
            try sealRange(pages.startIndex..<middle)
            own = nil
        } catch {
            own = error
        }
        try helper.finish()
        if let own { throw own }
    }

    /// Pages from which a commit's sealing is split between two threads: below it, handing work over costs more
    /// than it saves.
    static let parallelSealing = 32

    /// Notes the pages a successful commit wrote as validated at its version: this process sealed exactly those
    /// bytes a moment ago, so the next transaction does not checksum them again.
    private func recordValidated(_ pages: [(page: PageNumber, buffer: UnsafeMutableRawPointer)]) {
        for (page, buffer) in pages {
            shared.validated.record(page, version: version, entries: PageCheck.entries(of: UnsafeRawPointer(buffer)))
        }
    }
}

/// Page access inside a write transaction.
struct WritePages: PageSource {
    unowned(unsafe) let context: WriteContext
    let base: UnsafeRawPointer
    let basePageCount: UInt64
    let baseVersion: UInt64
    let geometry: PageGeometry
    unowned(unsafe) let file: PathRef
    unowned(unsafe) let validated: ValidatedPages
    /// An encrypted file's decrypted pages (see ``SnapshotPages/decrypted``); nil for a plain file.
    unowned(unsafe) let decrypted: DecryptedPages?
    /// The context's dirty pages, held here without reference counting: read through `context` (itself not
    /// retained), every page access of the write retained and released them (two atomic operations a page).
    unowned(unsafe) let dirty: DirtyPages

    init(context: WriteContext) {
        self.context = context
        self.dirty = context.dirty
        self.base = context.mapping.base
        self.basePageCount = context.base.pageCount
        self.baseVersion = context.base.version
        self.geometry = context.geometry
        self.file = context.file
        self.validated = context.shared.validated
        self.decrypted = context.shared.decrypted
    }

    var pageLimit: UInt64 { context.pageCount }

    /// This transaction's own (dirty) pages as they are, unvalidated (they are not sealed until commit); pages of
    /// the base version validated on first use, like a reader's.
    @inline(__always)
    func validatedPage(_ number: PageNumber) throws(StorageError) -> (page: UnsafeRawPointer, entries: UInt64?) {
        if let buffer = dirty.buffer(number) { return (UnsafeRawPointer(buffer), nil) }
        guard number >= 2, UInt64(number) < basePageCount else {
            throw file.corrupt(number, "reference to page \(number) outside the version's \(basePageCount) pages")
        }
        var page = base + Int(number) &* geometry.pageSize
        if let decrypted { page = try decrypted.page(number, sealed: page, file: file) }
        let written = page.u64(PageHeader.version)
        if written &- 1 < baseVersion, let entries = validated.entries(number, version: written) {
            return (page, entries)
        }
        return (
            page,
            try validated.validate(page, number: number, limit: baseVersion, geometry: geometry, file: file)
        )
    }
}

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The redo log of small durable commits: `<file>.log`.
///
/// A small commit writes its pages into the main file *without* syncing it, appends one record to this log — its
/// page images and its meta page, contiguous — and syncs only the log. One sequential write and one sync per
/// commit, instead of a sync over pages scattered across the main file. The main file is synced at checkpoints,
/// after which the log starts over from its beginning (the file is kept, so appends overwrite allocated blocks and
/// need no file-system metadata update).
///
/// Size: the log is created by the first commit that goes through it (none beside a file nobody writes), holds its
/// header only at first, grows ahead of the records in steps (``reserve(_:)``) and is cut back at checkpoints
/// to what the work needs (``checkpoint(at:keeping:)``); the last handle of a process to close checkpoints it down
/// to its header.
///
/// Layout (page size of the main file):
/// ```
/// page 0   header: u64 checksum | u64 magic "STRATLOG" | u32 format | u32 page size | u64 epoch
/// then     records, each starting on a page boundary and padded to whole pages:
///            u64 checksum | u64 magic "STRATREC" | u64 epoch | u64 version | u32 n | u32 length |
///            (n + 1) × (u32 page number, u64 checksum of that page, u16 head, u16 tail) — the n pages, then the
///                      meta page (numbered with its slot, 0 or 1) |
///            for each of those pages in order: its bytes [0, head), then its bytes [tail, page size)
/// ```
/// A page's bytes between `head` and `tail` are zero (see ``PageExtents``), so a record carries only what the
/// pages hold: a single-put commit that copies five half-full pages logs about two pages, not seven. The header
/// checksum is XXH64 over bytes [8, length) of the record, seeded with the epoch (header checksum: bytes [8, page
/// size), seed 0); every rebuilt page must also match its own checksum and the record's version. A record
/// belongs to the log only if its epoch equals the header's and its version is the epoch plus its position
/// (1, 2, ...); records left over from before a checkpoint, torn records and garbage all fail these checks.
///
/// An encrypted file's log (``authenticator`` set) differs in three ways: its header says so (u32 1 at offset 32,
/// zero in a plain file's log, so neither kind of file reads the other's records); its records carry the pages as
/// they are stored in the main file, sealed, the meta page sealed as in its slot (whole), and stamps whose checksum
/// is zero; and each record ends with a 32-byte tag (``LogRecordAuthenticator``) over its bytes
/// [8, length − 32), which replay checks instead of the pages' clear-text checksums. A sealed page leaves out the
/// gap its clear bytes had: there the sealed bytes are the key stream of the page's nonce, which replay computes
/// again (``SealedGap``) before it checks the page's own tag. Records written before this carry every sealed page
/// whole (`head` = `tail` = page size) and replay the same way. Replay never decrypts a page.
///
/// A *compact* record (the meta stamp's checksum field 1; every encrypted record written since issue 26's commit
/// work) also leaves out the sealed meta page's gap (key stream where its clear record is zero), and its tag covers
/// only bytes [8, stamps end), each image's last 44 bytes (its nonce and tag) and the meta page's 40-byte clear
/// header (``compactCovered(_:stampsEnd:images:pageSize:)``): every image, the meta page's included, is
/// authenticated by its own tag at replay, and the record's tag binds which sealed image goes where. A record
/// whose meta stamp says 0 is signed over all its bytes and carries its meta page whole, as before.
///
/// Recovery replays the valid records in order — page images, then the meta image — into the main file, syncs
/// it and starts a new epoch. That is safe with copy-on-write: the main file was durable at the epoch, and no
/// commit after it overwrote a page that the last logged version still reaches.
final class CommitLog {
    /// The log file; nil while it does not exist (see ``attach(create:)``).
    private(set) var file: (any PageFile)?
    /// Where the log is created on demand; nil when the file was given.
    let path: String?
    let pageSize: Int
    /// The version the main file was durable at when this log started.
    private(set) var epoch: UInt64
    /// Where the next record goes.
    private(set) var end: Int
    /// Bytes at the start of the file that are allocated and written (header, records or zeros). Records are
    /// appended only below it (``reserve(_:)`` grows it first), so that a durable append overwrites blocks the
    /// file system already has and never waits for a metadata commit.
    private(set) var capacity: Int
    /// Whether `epoch`, `end` and `recordCount` describe the file. Not for a log created or opened on demand
    /// until its first checkpoint writes a header: ``nextVersion`` is then nil, which makes the next logged commit
    /// checkpoint first.
    private var positioned: Bool
    /// Set when this process created the file: whatever the lock file says describes some other file.
    private var created = false
    /// Signs and checks the records of an encrypted file's log; nil for a plain file.
    let authenticator: LogRecordAuthenticator?

    static let headerMagic: UInt64 = 0x474F_4C54_4152_5453  // "STRATLOG" little-endian
    static let recordMagic: UInt64 = 0x4345_5254_4152_5453  // "STRATREC" little-endian
    static let format: UInt32 = 2
    /// The log starts over at the next checkpoint once it holds this many bytes.
    static let checkpointBytes = 4 << 20
    /// The smallest step the log grows by (see ``reserve(_:)``).
    static let growthBytes = 256 << 10
    private static let recordHeader = 40
    private static let stampSize = 16
    /// Where the header says whether records are sealed and signed (1) or plain (0).
    private static let keyedOffset = 32
    /// The meta stamp's checksum field of a compact record of an encrypted file's log (0 in the older records).
    private static let compactRecordMark: UInt64 = 1

    /// Pages one record can carry (besides its meta page): their stamps fit in the record's first page.
    static func maxPages(pageSize: Int) -> Int { (pageSize - recordHeader) / stampSize - 1 }

    private init(
        file: (any PageFile)?, path: String?, pageSize: Int, epoch: UInt64, capacity: Int, positioned: Bool,
        authenticator: LogRecordAuthenticator?
    ) {
        self.file = file
        self.authenticator = authenticator
        self.path = path
        self.pageSize = pageSize
        self.epoch = epoch
        self.end = pageSize
        self.capacity = capacity
        self.positioned = positioned
    }

    /// A log that does not exist yet: the first logged commit creates it at `path` (a file nobody writes through
    /// the log gets none).
    static func onDemand(path: String, pageSize: Int, authenticator: LogRecordAuthenticator? = nil) -> CommitLog {
        CommitLog(
            file: nil, path: path, pageSize: pageSize, epoch: 0, capacity: 0, positioned: false,
            authenticator: authenticator)
    }

    /// Reads the log in `file`: its header and the records of its epoch that are complete. Returns nil when the
    /// file holds no valid header (new, empty or damaged).
    ///
    /// The file is read with `pread`, one record at a time, not mapped: another process may cut it short
    /// meanwhile (a checkpoint gives space back), and touching a mapping past the end of a file kills the process
    /// with `SIGBUS`. Memory stays bounded by one record whatever the file's size.
    static func read(
        _ file: any PageFile, path: String? = nil, authenticator: LogRecordAuthenticator? = nil
    ) throws(StorageError) -> (
        log: CommitLog, records: [Record]
    )? {
        let size = try file.size()
        guard size >= PageGeometry.minimumPageSize else { return nil }
        let header = UnsafeMutableRawBufferPointer.allocate(byteCount: PageGeometry.maximumPageSize, alignment: 4096)
        defer { header.deallocate() }
        let count = try file.read(
            into: UnsafeMutableRawBufferPointer(rebasing: header[0..<min(size, header.count)]), at: 0)
        let base = UnsafeRawPointer(header.baseAddress!)
        guard count >= PageGeometry.minimumPageSize else { return nil }
        let pageSize = Int(base.u32(20))
        guard PageGeometry.isValid(pageSize: pageSize), count >= pageSize,
            base.u64(8) == headerMagic, base.u32(16) == format,
            base.u64(0) == Checksum.xxh64(base + 8, count: pageSize - 8, seed: 0),
            base.u32(keyedOffset) == (authenticator == nil ? 0 : 1)
        else { return nil }
        let log = CommitLog(
            file: file, path: path, pageSize: pageSize, epoch: base.u64(24), capacity: size / pageSize * pageSize,
            positioned: true, authenticator: authenticator)
        let records = try log.validRecords(size: size)
        log.end = pageSize + records.reduce(0) { $0 + $1.length }
        log.recordCount = records.count
        return (log, records)
    }

    /// Writes a new, empty log starting at `epoch` into `file` (the main file must be durable at `epoch`): its
    /// header only. The log grows as commits need it (``reserve(_:)``).
    static func create(
        _ file: any PageFile, path: String? = nil, pageSize: Int, epoch: UInt64,
        authenticator: LogRecordAuthenticator? = nil
    ) throws(StorageError) -> CommitLog {
        let log = CommitLog(
            file: file, path: path, pageSize: pageSize, epoch: epoch,
            capacity: try file.size() / pageSize * pageSize, positioned: true, authenticator: authenticator)
        try log.writeHeader()
        return log
    }

    /// Opens the log file if it is not open yet: one that exists (another process created it), or with `create`
    /// a new one, made durable in its directory before anything relies on it. Returns whether the log has a file.
    /// A file opened here has no known position until ``adopt(_:)`` or a checkpoint gives it one.
    @discardableResult
    func attach(create: Bool) throws(StorageError) -> Bool {
        if file != nil { return true }
        guard let path else { return false }
        let exists = access(path, F_OK) == 0
        guard exists || create else { return false }
        let opened = try DiskFile(path: path, writable: true, create: true)
        if !exists { DiskFile.syncDirectory(of: path) }
        created = !exists
        file = opened
        capacity = try opened.size() / pageSize * pageSize
        positioned = false
        return true
    }

    /// Writes the header of `epoch` (the log's own by default) and makes it durable.
    private func writeHeader(epoch: UInt64? = nil) throws(StorageError) {
        guard let file else { throw .invalidArgument("the commit log has no file") }
        let epoch = epoch ?? self.epoch
        let page = UnsafeMutableRawPointer.allocate(byteCount: pageSize, alignment: 4096)
        defer { page.deallocate() }
        page.initializeMemory(as: UInt8.self, repeating: 0, count: pageSize)
        page.setU64(8, Self.headerMagic)
        page.setU32(16, Self.format)
        page.setU32(20, UInt32(pageSize))
        page.setU64(24, epoch)
        page.setU32(Self.keyedOffset, authenticator == nil ? 0 : 1)
        page.setU64(0, Checksum.xxh64(UnsafeRawPointer(page) + 8, count: pageSize - 8, seed: 0))
        try file.writeDurably(UnsafeRawBufferPointer(start: page, count: pageSize), at: 0)
        capacity = max(capacity, pageSize)
        created = false
    }

    // MARK: Sizing

    /// The smallest step the log grows by (tests lower it to grow often). A multiple of the page size.
    var growthStep = CommitLog.growthBytes {
        didSet { growthStep = max(pageSize, (growthStep + pageSize - 1) / pageSize * pageSize) }
    }

    /// Makes room for `record` at the end of the log, growing the log before anything of the commit is written,
    /// so that a failure here (a full disk) fails the commit cleanly.
    ///
    /// Durable appends stay fast only
    /// on blocks that are allocated and written: appending to a file allocates blocks, and a sync after an
    /// allocation also commits file-system metadata, which doubles its cost (measured: 213 µs against 110 µs for
    /// eight pages on the test machine); an allocated but unwritten extent (`fallocate`) also needs a metadata
    /// update on its first write. So the log grows by writing zeros and syncing them, in steps that double from
    /// ``growthStep`` up to the checkpoint threshold and go on by ``growthStep`` beyond it (the most one epoch can
    /// use is the threshold plus one record), doubling by at most four steps at a time so that the zeros past the
    /// last record stay few: a stream of commits pays a few syncs in all, not one per append.
    /// On a nearly full disk, when the step does not fit, the log grows by exactly what the record needs.
    func reserve(_ record: EncodedRecord) throws(StorageError) {
        let needed = end + record.length
        guard needed > capacity else { return }
        guard let file else { throw .invalidArgument("the commit log has no file") }
        let next =
            capacity < checkpointThreshold
            ? max(growthStep, min(2 * capacity, capacity + 4 * growthStep)) : capacity + growthStep
        let target = roundedUp(max(needed, next), to: growthStep)
        do {
            try fillWithZeros(file, upTo: target)
        } catch .diskFull {
            try fillWithZeros(file, upTo: needed)
        }
    }

    /// Writes zeros from `capacity` up to `target` and syncs them; `capacity` moves only once they are durable.
    private func fillWithZeros(_ file: any PageFile, upTo target: Int) throws(StorageError) {
        let chunk = [UInt8](repeating: 0, count: min(1 << 20, target - capacity))
        var offset = capacity
        while offset < target {
            let count = min(chunk.count, target - offset)
            try chunk[0..<count].withStorageBytes { (bytes) throws(StorageError) in
                try file.write(bytes, at: offset)
            }
            offset += count
        }
        try file.sync()
        capacity = target
    }

    private func roundedUp(_ value: Int, to step: Int) -> Int { (value + step - 1) / step * step }

    /// One logged commit, ready to be replayed.
    struct Record {
        let version: UInt64
        let pages: [(number: PageNumber, image: UnsafeRawPointer)]
        let meta: UnsafeRawPointer
        /// Bytes the record takes in the log, padding included.
        let length: Int
        /// Owns the rebuilt page images.
        let images: PageImages
    }

    /// Rebuilt page images, freed with the last record that uses them.
    final class PageImages {
        let base: UnsafeMutableRawPointer
        init(count: Int, pageSize: Int) {
            base = UnsafeMutableRawPointer.allocate(byteCount: max(1, count) * pageSize, alignment: 4096)
        }
        deinit { base.deallocate() }
    }

    /// The records of the current epoch, in order, up to the first one that is missing, torn or stale.
    private func validRecords(size: Int) throws(StorageError) -> [Record] {
        guard let file else { return [] }
        // The largest record: its first page (header and stamps, which fit in it) plus every page whole (and a
        // signed record's tag).
        let buffer = UnsafeMutableRawBufferPointer.allocate(
            byteCount: (Self.maxPages(pageSize: pageSize) + 3) * pageSize, alignment: 4096)
        defer { buffer.deallocate() }
        var records: [Record] = []
        var offset = pageSize
        var expected = epoch + 1
        while offset + Self.recordHeader <= size {
            // The record's first page, then the rest of it once its header says it is the next record and how long
            // it is (records are whole pages): reading the largest record's worth each time would read, and fault
            // in, up to a megabyte per record, and again past the last one, on every open.
            let start = UnsafeRawPointer(buffer.baseAddress!)
            var count = try file.read(
                into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<min(pageSize, size - offset)]), at: offset)
            guard count >= Self.recordHeader, start.u64(8) == Self.recordMagic, start.u64(16) == epoch,
                start.u64(24) == expected
            else { break }
            let wanted = min(Int(start.u32(36)), buffer.count, size - offset)
            if wanted > count {
                let rest = (wanted - count + pageSize - 1) / pageSize * pageSize
                count += try file.read(
                    into: UnsafeMutableRawBufferPointer(rebasing: buffer[count..<min(buffer.count, count + rest)]),
                    at: offset + count)
            }
            guard let record = rebuildRecord(at: start, available: count, version: expected) else { break }
            records.append(record)
            offset += record.length
            expected += 1
        }
        return records
    }

    /// Checks and rebuilds the record at `start`, which must have `version`; nil if it is not a whole, valid
    /// record of this epoch.
    private func rebuildRecord(at start: UnsafeRawPointer, available: Int, version: UInt64) -> Record? {
        guard start.u64(8) == Self.recordMagic, start.u64(16) == epoch, start.u64(24) == version else { return nil }
        let count = Int(start.u32(32))
        let length = Int(start.u32(36))
        let stampsEnd = Self.recordHeader + (count + 1) * Self.stampSize
        let tagSize = authenticator == nil ? 0 : LogRecordAuthenticator.tagSize
        guard count <= Self.maxPages(pageSize: pageSize), stampsEnd + tagSize <= length, length <= available,
            start.u64(0) == Checksum.xxh64(start + 8, count: length - 8, seed: epoch)
        else { return nil }
        // A sealed record is compact or signed over all its bytes, as its meta stamp says (``compactRecordMark``).
        let metaMark = (start + Self.recordHeader + count * Self.stampSize).u64(4)
        let compact = authenticator != nil && metaMark == Self.compactRecordMark
        if let authenticator, !compact {
            // Checked before anything is rebuilt: a record changed by someone who recomputed its checksum is
            // never replayed.
            guard metaMark == 0,
                authenticator.verifies(
                    UnsafeRawBufferPointer(start: start + 8, count: length - tagSize - 8), tag: start + length - tagSize
                )
            else { return nil }
        }
        let images = PageImages(count: count + 1, pageSize: pageSize)
        var pages: [(number: PageNumber, image: UnsafeRawPointer)] = []
        pages.reserveCapacity(count)
        var gaps: [(head: Int, tail: Int)] = []
        var body = stampsEnd
        for index in 0...count {
            let stamp = start + Self.recordHeader + index * Self.stampSize
            let number = stamp.u32(0)
            let head = Int(stamp.u16(12))
            let tail = Int(stamp.u16(14))
            let isMeta = index == count
            guard isMeta ? number == PageNumber(version % 2) : number >= 2,
                PageHeader.size <= head, head <= tail, tail <= pageSize,
                body + head + (pageSize - tail) <= length
            else { return nil }
            let image = images.base + index * pageSize
            image.copyMemory(from: start + body, byteCount: head)
            image.advanced(by: head).initializeMemory(as: UInt8.self, repeating: 0, count: tail - head)
            image.advanced(by: tail).copyMemory(from: start + body + head, byteCount: pageSize - tail)
            body += head + (pageSize - tail)
            if authenticator != nil {
                // Sealed images: checked once the record's tag is (below).
                gaps.append((head, tail))
                if !isMeta { pages.append((number, UnsafeRawPointer(image))) }
            } else if isMeta {
                guard case .success(let decoded) = Meta.decode(image, slot: number, available: pageSize),
                    decoded.version == version
                else { return nil }
            } else {
                guard UnsafeRawPointer(image).u64(PageHeader.checksum) == stamp.u64(4),
                    UnsafeRawPointer(image).u64(PageHeader.version) == version,
                    PageChecksum.verify(image, page: number, pageSize: pageSize)
                else { return nil }
                pages.append((number, UnsafeRawPointer(image)))
            }
        }
        guard body + tagSize == length else { return nil }
        if let authenticator {
            if compact {
                // The tag over the header, the stamps and the images' tails, checked before any image is.
                let covered = Self.compactCovered(
                    start, stampsEnd: stampsEnd,
                    images: (0...count).map { UnsafeRawPointer(images.base + $0 * pageSize) }, pageSize: pageSize)
                guard
                    covered.withUnsafeBytes({
                        authenticator.verifies($0, compact: true, tag: start + length - tagSize)
                    })
                else { return nil }
            }
            // Sealed images, copied into the main file as they are once a page logged without its gap has it back
            // (``SealedGap``) and authenticates. A compact record's meta image authenticates the same way, after
            // its clear-text header; an older record's meta page is logged whole, and its tag covered it.
            for index in 0..<count {
                guard
                    SealedGap.restore(
                        images.base + index * pageSize, head: gaps[index].head, tail: gaps[index].tail,
                        page: pages[index].number, sealer: authenticator.sealer)
                else { return nil }
            }
            let header = EncryptedFileHeader.size
            let meta = gaps[count]
            if compact {
                guard meta.head >= header,
                    SealedGap.restore(
                        images.base + count * pageSize + header, head: meta.head - header, tail: meta.tail - header,
                        page: PageNumber(version % 2), sealer: authenticator.metaSealer)
                else { return nil }
            } else {
                guard meta.head == pageSize, meta.tail == pageSize else { return nil }
            }
        }
        return Record(
            version: version, pages: pages, meta: UnsafeRawPointer(images.base + count * pageSize),
            length: roundedToPages(length), images: images)
    }

    /// What a compact record's tag covers (see the type's documentation): bytes [8, `stampsEnd`) of the record at
    /// `record`, then the last ``PageSealer/overhead`` bytes of each of `images` (the pages in stamp order, then
    /// the meta page; each as the main file stores it), then the meta page's clear-text header.
    static func compactCovered(
        _ record: UnsafeRawPointer, stampsEnd: Int, images: [UnsafeRawPointer], pageSize: Int
    ) -> [UInt8] {
        let tail = PageSealer.overhead
        let header = EncryptedFileHeader.size
        var covered = [UInt8](repeating: 0, count: stampsEnd - 8 + images.count * tail + header)
        covered.withUnsafeMutableBytes { covered in
            var offset = stampsEnd - 8
            covered.baseAddress!.copyMemory(from: record + 8, byteCount: offset)
            for image in images {
                (covered.baseAddress! + offset).copyMemory(from: image + pageSize - tail, byteCount: tail)
                offset += tail
            }
            if let meta = images.last { (covered.baseAddress! + offset).copyMemory(from: meta, byteCount: header) }
        }
        return covered
    }

    private func roundedToPages(_ length: Int) -> Int { (length + pageSize - 1) / pageSize * pageSize }

    /// Writes the records' pages and metas into the main file, syncs it and starts a new epoch after the last.
    func replay(_ records: [Record], into main: any PageFile) throws(StorageError) {
        guard let last = records.last else { return }
        precondition(records.first?.version == epoch + 1, "replay starts at the epoch")
        for record in records {
            for page in record.pages {
                try main.write(
                    UnsafeRawBufferPointer(start: page.image, count: pageSize), at: Int(page.number) * pageSize)
            }
            try main.write(
                UnsafeRawBufferPointer(start: record.meta, count: pageSize), at: Int(record.version % 2) * pageSize)
        }
        try main.sync()
        try checkpoint(at: last.version)
    }

    /// A commit's record, encoded and padded to whole pages, ready to append.
    final class EncodedRecord {
        let version: UInt64
        let bytes: UnsafeMutableRawPointer
        /// Bytes the record takes in the log, padding included.
        let length: Int

        fileprivate init(version: UInt64, length: Int) {
            self.version = version
            self.length = length
            bytes = UnsafeMutableRawPointer.allocate(byteCount: length, alignment: 4096)
        }

        deinit { bytes.deallocate() }
    }

    /// Encodes the record of commit `version` (its pages, then its meta page) for ``append(_:completing:)``. No
    /// I/O: the caller makes room for it with ``reserve(_:)`` first.
    ///
    /// In an encrypted file's log, `pages` and `meta` are the sealed images (as the main file stores them), and
    /// `gaps` gives each page's zero gap as its clear bytes had it (``PageExtents``): the sealed bytes there are the
    /// key stream alone, which replay computes again, so the record leaves them out as a plain one does. Without
    /// `gaps` the sealed pages are logged whole. `metaGap` (the sealed meta page's gap, ``SealedMeta/loggedGap(of:)``,
    /// with `gaps` only) makes the record compact: the meta page logged without it, the tag over what
    /// ``compactCovered(_:stampsEnd:images:pageSize:)`` gives.
    func encode(
        version: UInt64, pages: [(page: PageNumber, buffer: UnsafeMutableRawPointer)], meta: UnsafeRawPointer,
        gaps: [(head: Int, tail: Int)]? = nil, metaGap: (head: Int, tail: Int)? = nil
    ) throws(StorageError) -> EncodedRecord {
        precondition(version == nextVersion, "log records must be consecutive")
        precondition(pages.count <= Self.maxPages(pageSize: pageSize), "too many pages for one log record")
        let stampsEnd = Self.recordHeader + (pages.count + 1) * Self.stampSize
        var length = stampsEnd
        var extents: [(head: Int, tail: Int)] = []
        extents.reserveCapacity(pages.count + 1)
        // A sealed page's gap is known only from its clear bytes (`gaps`); the meta page is logged whole.
        let sealed = authenticator != nil
        let whole = (head: pageSize, tail: pageSize)
        precondition(gaps == nil || (sealed && gaps!.count == pages.count), "gaps are those of sealed pages")
        precondition(metaGap == nil || gaps != nil, "a compact record leaves out the pages' gaps too")
        let compact = metaGap != nil
        for (index, page) in pages.enumerated() {
            let extent =
                sealed ? gaps?[index] ?? whole : PageExtents.of(UnsafeRawPointer(page.buffer), pageSize: pageSize)
            extents.append(extent)
            length += extent.head + pageSize - extent.tail
        }
        let metaExtent = sealed ? metaGap ?? whole : PageExtents.of(meta, pageSize: pageSize)
        extents.append(metaExtent)
        length += metaExtent.head + pageSize - metaExtent.tail
        let tagSize = sealed ? LogRecordAuthenticator.tagSize : 0
        length += tagSize
        let encoded = EncodedRecord(version: version, length: roundedToPages(length))
        let record = encoded.bytes
        record.initializeMemory(as: UInt8.self, repeating: 0, count: Self.recordHeader)
        record.setU64(8, Self.recordMagic)
        record.setU64(16, epoch)
        record.setU64(24, version)
        record.setU32(32, UInt32(pages.count))
        record.setU32(36, UInt32(length))
        var body = stampsEnd
        for index in 0...pages.count {
            let (number, image) =
                index < pages.count
                ? (pages[index].page, UnsafeRawPointer(pages[index].buffer)) : (PageNumber(version % 2), meta)
            let (head, tail) = extents[index]
            let stamp = record + Self.recordHeader + index * Self.stampSize
            stamp.setU32(0, number)
            let isCompactMeta = compact && index == pages.count
            stamp.setU64(4, sealed ? (isCompactMeta ? Self.compactRecordMark : 0) : image.u64(PageHeader.checksum))
            stamp.setU16(12, UInt16(head))
            stamp.setU16(14, UInt16(tail))
            (record + body).copyMemory(from: image, byteCount: head)
            (record + body + head).copyMemory(from: image + tail, byteCount: pageSize - tail)
            body += head + pageSize - tail
        }
        (record + length).initializeMemory(as: UInt8.self, repeating: 0, count: encoded.length - length)
        if let authenticator, compact {
            let covered = Self.compactCovered(
                UnsafeRawPointer(record), stampsEnd: stampsEnd,
                images: pages.map { UnsafeRawPointer($0.buffer) } + [meta], pageSize: pageSize)
            try covered.withStorageBytes { (covered) throws(StorageError) in
                try authenticator.sign(covered, compact: true, tag: record + body)
            }
        } else if let authenticator {
            try authenticator.sign(
                UnsafeRawBufferPointer(start: record + 8, count: body - 8), tag: record + body)
        }
        record.setU64(0, Checksum.xxh64(UnsafeRawPointer(record) + 8, count: length - 8, seed: epoch))
        return encoded
    }

    /// Appends `record` and syncs the log, then runs `completing` (the commit's other work that must succeed for
    /// the record to count): from then on the commit is durable. On error, the record is not part of the log (the
    /// next append overwrites it; the caller makes sure replay cannot pick it up).
    ///
    /// Without `synced` the record is only written: a grouped commit, which the ``GroupCommit`` thread's next sync
    /// of the log makes durable.
    func append(_ record: EncodedRecord, synced: Bool = true, completing: () throws(StorageError) -> Void = {})
        throws(StorageError)
    {
        precondition(record.version == nextVersion, "log records must be consecutive")
        precondition(end + record.length <= capacity, "a record is appended only where reserve(_:) made room")
        guard let file else { throw .invalidArgument("the commit log has no file") }
        let bytes = UnsafeRawBufferPointer(start: record.bytes, count: record.length)
        if synced {
            try file.writeDurably(bytes, at: end)
        } else {
            try file.write(bytes, at: end)
        }
        try completing()
        end += record.length
        recordCount += 1
    }

    /// Records appended in this epoch.
    private(set) var recordCount = 0

    /// Where the log stands, as recorded in the lock file for writers in other processes.
    typealias Position = (epoch: UInt64, end: Int, records: Int, capacity: Int)

    /// This log's position, to record in the lock file.
    var position: Position { (epoch, end, recordCount, capacity) }

    /// The position another process left the log in (read from the lock file under the writer lock). A capacity
    /// of 0 (recorded by a version that did not track it) is read from the file's size.
    func adopt(_ position: Position) throws(StorageError) {
        // Without a file, or with one this process just created (no header yet), the position describes another file.
        guard let file, !created else { return }
        epoch = position.epoch
        end = position.end
        recordCount = position.records
        positioned = true
        capacity = position.capacity > 0 ? position.capacity : try file.size() / pageSize * pageSize
    }

    /// The version the next record must have; nil until the log has a position (see `positioned`).
    var nextVersion: UInt64? { positioned ? epoch + UInt64(recordCount) + 1 : nil }

    /// Makes a record that failed to append harmless: its first page is zeroed (and synced) so that replay can
    /// never pick it up, even if its sync reported failure after the bytes reached the disk.
    func invalidateFailedRecord() throws(StorageError) {
        guard let file else { return }
        try Self.invalidateRecord(in: file, at: end, pageSize: pageSize)
    }

    /// Zeroes (durably) the first page of the record at `offset` in the log `file`, so that replay stops before it:
    /// how the records of grouped commits whose sync failed are dropped (see ``GroupCommit``).
    static func invalidateRecord(in file: any PageFile, at offset: Int, pageSize: Int) throws(StorageError) {
        let zeros = UnsafeMutableRawPointer.allocate(byteCount: pageSize, alignment: 4096)
        defer { zeros.deallocate() }
        zeros.initializeMemory(as: UInt8.self, repeating: 0, count: pageSize)
        try file.writeDurably(UnsafeRawBufferPointer(start: zeros, count: pageSize), at: offset)
    }

    /// The log starts over once it holds this many bytes (tests lower it to checkpoint often).
    var checkpointThreshold = CommitLog.checkpointBytes

    /// Whether the log has grown enough that the next commit should checkpoint.
    var wantsCheckpoint: Bool { end >= checkpointThreshold }

    /// Starts a new epoch after `version` (creating the file if it has none). The main file must already be
    /// durable at `version`.
    ///
    /// Then the log gives back what the new epoch is unlikely to need: it keeps `keeping` bytes, by default what
    /// the epoch that ended used plus one growth step (so that epochs of about the same size do not cut and regrow
    /// the log in turn), and is cut to that. A steady stream of commits fills every epoch up to the threshold, so
    /// its log keeps its size and later appends overwrite blocks it already has; a log that grew for more than the
    /// work needs now (a burst, a lower threshold) shrinks at the next checkpoint.
    func checkpoint(at version: UInt64, keeping: Int? = nil) throws(StorageError) {
        try attach(create: true)
        let used = positioned ? end : capacity
        // Change nothing in memory until the new header is durable: appends must always match the header on disk.
        try writeHeader(epoch: version)
        epoch = version
        end = pageSize
        recordCount = 0
        positioned = true
        let keep = max(pageSize, keeping ?? roundedUp(used, to: growthStep) + growthStep)
        if capacity > keep, let file {
            // Records past `keep` belong to the old epoch and can never be replayed: losing them to a crash before
            // the cut is durable, or keeping them, are both fine.
            do {
                try file.truncate(to: keep)
                capacity = keep
            } catch {
                // Keeping the space is harmless.
            }
        }
    }
}

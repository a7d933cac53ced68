/// The redo log of small durable commits: `<file>.log`.
///
/// A small commit writes its pages into the main file *without* syncing it, appends one record to this log — its
/// page images and its meta page, contiguous — and syncs only the log. One sequential write and one sync per
/// commit, instead of a sync over pages scattered across the main file. The main file is synced at checkpoints,
/// after which the log starts over from its beginning (the file is kept, so appends overwrite allocated blocks and
/// need no file-system metadata update).
///
/// Layout (page size of the main file):
/// ```
/// page 0   header: u64 checksum | u64 magic "STRATLOG" | u32 format | u32 page size | u64 epoch
/// then     records, each (n + 2) pages:
///            record page: u64 checksum | u64 magic "STRATREC" | u64 epoch | u64 version | u32 n | u32 0 |
///                         n × (u32 page number, u64 checksum of that page's image)
///            the n page images, then the meta page image
/// ```
/// Checksums are XXH64 over bytes [8, page size), seeded with the epoch for record pages. A record belongs to the
/// log only if its epoch equals the header's and its version is the epoch plus its position (1, 2, ...); records
/// left over from before a checkpoint, torn records and garbage all fail these checks.
///
/// Recovery replays the valid records in order — page images, then the meta image — into the main file, syncs
/// it and starts a new epoch. That is safe with copy-on-write: the main file was durable at the epoch, and no
/// commit after it overwrote a page that the last logged version still reaches.
final class CommitLog {
    let file: any PageFile
    let pageSize: Int
    /// The version the main file was durable at when this log started.
    private(set) var epoch: UInt64
    /// Where the next record goes.
    private(set) var end: Int

    static let headerMagic: UInt64 = 0x474F_4C54_4152_5453  // "STRATLOG" little-endian
    static let recordMagic: UInt64 = 0x4345_5254_4152_5453  // "STRATREC" little-endian
    static let format: UInt32 = 1
    /// The log starts over at the next checkpoint once it holds this many bytes.
    static let checkpointBytes = 4 << 20
    private static let recordHeader = 40
    private static let stampSize = 12

    /// Pages one record can carry.
    static func maxPages(pageSize: Int) -> Int { (pageSize - recordHeader) / stampSize }

    private init(file: any PageFile, pageSize: Int, epoch: UInt64) {
        self.file = file
        self.pageSize = pageSize
        self.epoch = epoch
        self.end = pageSize
    }

    /// Reads the log in `file`: its header and the records of its epoch that are complete. Returns nil when the
    /// file holds no valid header (new, empty or damaged).
    static func read(_ file: any PageFile) throws(StorageError) -> (log: CommitLog, records: [Record])? {
        let size = try file.size()
        guard size >= PageGeometry.minimumPageSize else { return nil }
        let mapping = try file.mapping(covering: size)
        let pageSize = Int(mapping.base.u32(20))
        guard PageGeometry.isValid(pageSize: pageSize), size >= pageSize,
            mapping.base.u64(8) == headerMagic, mapping.base.u32(16) == format,
            mapping.base.u64(0) == Checksum.xxh64(mapping.base + 8, count: pageSize - 8, seed: 0)
        else { return nil }
        let log = CommitLog(file: file, pageSize: pageSize, epoch: mapping.base.u64(24))
        let records = log.validRecords(in: mapping, size: size)
        log.end = pageSize + records.reduce(0) { $0 + ($1.pages.count + 2) * pageSize }
        log.recordCount = records.count
        return (log, records)
    }

    /// Writes a new, empty log starting at `epoch` into `file` (the main file must be durable at `epoch`).
    ///
    /// The log's blocks are written (with zeros) up front: appending to a file allocates blocks, and a sync
    /// after an allocation also commits file-system metadata, which doubles its cost (measured: 213 µs against
    /// 110 µs for eight pages on the test machine). Zeros, not `fallocate`: an allocated but unwritten extent
    /// still needs a metadata update on its first write.
    static func create(_ file: any PageFile, pageSize: Int, epoch: UInt64) throws(StorageError) -> CommitLog {
        let log = CommitLog(file: file, pageSize: pageSize, epoch: epoch)
        let target = checkpointBytes + (maxPages(pageSize: pageSize) + 2) * pageSize
        if try file.size() < target {
            let chunk = [UInt8](repeating: 0, count: 1 << 20)
            var offset = try file.size()
            while offset < target {
                let count = min(chunk.count, target - offset)
                try chunk[0..<count].withStorageBytes { (bytes) throws(StorageError) in
                    try file.write(bytes, at: offset)
                }
                offset += count
            }
        }
        try log.writeHeader(durable: true)
        return log
    }

    private func writeHeader(epoch: UInt64? = nil, durable: Bool) throws(StorageError) {
        let epoch = epoch ?? self.epoch
        let page = UnsafeMutableRawPointer.allocate(byteCount: pageSize, alignment: 4096)
        defer { page.deallocate() }
        page.initializeMemory(as: UInt8.self, repeating: 0, count: pageSize)
        page.setU64(8, Self.headerMagic)
        page.setU32(16, Self.format)
        page.setU32(20, UInt32(pageSize))
        page.setU64(24, epoch)
        page.setU64(0, Checksum.xxh64(UnsafeRawPointer(page) + 8, count: pageSize - 8, seed: 0))
        try file.write(UnsafeRawBufferPointer(start: page, count: pageSize), at: 0)
        if durable { try file.sync() }
    }

    /// One logged commit, ready to be replayed.
    struct Record {
        let version: UInt64
        let pages: [(number: PageNumber, image: UnsafeRawPointer)]
        let meta: UnsafeRawPointer
        /// Keeps the images' memory mapped.
        let mapping: Mapping
    }

    /// The records of the current epoch, in order, up to the first one that is missing, torn or stale.
    private func validRecords(in mapping: Mapping, size: Int) -> [Record] {
        var records: [Record] = []
        var offset = pageSize
        var expected = epoch + 1
        let limit = min(size, mapping.capacity)
        while offset + 2 * pageSize <= limit {
            let header = mapping.base + offset
            guard header.u64(8) == Self.recordMagic, header.u64(16) == epoch, header.u64(24) == expected,
                header.u64(0) == Checksum.xxh64(header + 8, count: pageSize - 8, seed: epoch)
            else { break }
            let count = Int(header.u32(32))
            guard count <= Self.maxPages(pageSize: pageSize), offset + (count + 2) * pageSize <= limit else { break }
            var pages: [(number: PageNumber, image: UnsafeRawPointer)] = []
            var intact = true
            for index in 0..<count {
                let number = header.u32(Self.recordHeader + index * Self.stampSize)
                let checksum = header.u64(Self.recordHeader + index * Self.stampSize + 4)
                let image = header + (index + 1) * pageSize
                guard number >= 2, image.u64(PageHeader.checksum) == checksum,
                    image.u64(PageHeader.version) == expected,
                    PageChecksum.verify(image, page: number, pageSize: pageSize)
                else {
                    intact = false
                    break
                }
                pages.append((number, image))
            }
            let meta = header + (count + 1) * pageSize
            guard intact,
                case .success(let decoded) = Meta.decode(meta, slot: PageNumber(expected % 2), available: pageSize),
                decoded.version == expected
            else { break }
            records.append(Record(version: expected, pages: pages, meta: meta, mapping: mapping))
            offset += (count + 2) * pageSize
            expected += 1
        }
        return records
    }

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

    /// Appends a commit's record and syncs the log: from then on the commit is durable. On error, the record
    /// is not part of the log (the next append overwrites it, and replay stops before it).
    func append(
        version: UInt64, pages: [(page: PageNumber, buffer: UnsafeMutableRawPointer)], meta: UnsafeRawPointer
    ) throws(StorageError) {
        precondition(version == epoch + UInt64(recordCount) + 1, "log records must be consecutive")
        precondition(pages.count <= Self.maxPages(pageSize: pageSize), "too many pages for one log record")
        let header = UnsafeMutableRawPointer.allocate(byteCount: pageSize, alignment: 4096)
        defer { header.deallocate() }
        header.initializeMemory(as: UInt8.self, repeating: 0, count: pageSize)
        header.setU64(8, Self.recordMagic)
        header.setU64(16, epoch)
        header.setU64(24, version)
        header.setU32(32, UInt32(pages.count))
        var buffers = [UnsafeRawBufferPointer(start: header, count: pageSize)]
        buffers.reserveCapacity(pages.count + 2)
        for (index, page) in pages.enumerated() {
            header.setU32(Self.recordHeader + index * Self.stampSize, page.page)
            header.setU64(
                Self.recordHeader + index * Self.stampSize + 4, UnsafeRawPointer(page.buffer).u64(PageHeader.checksum))
            buffers.append(UnsafeRawBufferPointer(start: page.buffer, count: pageSize))
        }
        buffers.append(UnsafeRawBufferPointer(start: meta, count: pageSize))
        header.setU64(0, Checksum.xxh64(UnsafeRawPointer(header) + 8, count: pageSize - 8, seed: epoch))
        try file.write(buffers, at: end)
        try file.sync()
        end += buffers.count * pageSize
        recordCount += 1
    }

    /// Records appended in this epoch.
    private(set) var recordCount = 0

    /// The position another process left the log in (read from the lock file under the writer lock).
    func adopt(epoch: UInt64, end: Int, records: Int) {
        self.epoch = epoch
        self.end = end
        self.recordCount = records
    }

    /// The version the next record must have.
    var nextVersion: UInt64 { epoch + UInt64(recordCount) + 1 }

    /// Makes a record that failed to append harmless: its first page is zeroed (and synced) so that replay can
    /// never pick it up, even if its sync reported failure after the bytes reached the disk.
    func invalidateFailedRecord() throws(StorageError) {
        let zeros = [UInt8](repeating: 0, count: pageSize)
        try zeros.withStorageBytes { (bytes) throws(StorageError) in try file.write(bytes, at: end) }
        try file.sync()
    }

    /// The log starts over once it holds this many bytes (tests lower it to checkpoint often).
    var checkpointThreshold = CommitLog.checkpointBytes

    /// Whether the log has grown enough that the next commit should checkpoint.
    var wantsCheckpoint: Bool { end >= checkpointThreshold }

    /// Starts a new epoch after `version`. The main file must already be durable at `version`. The log's blocks
    /// are kept and overwritten by later records.
    func checkpoint(at version: UInt64) throws(StorageError) {
        // Change nothing in memory until the new header is durable: appends must always match the header on disk.
        try writeHeader(epoch: version, durable: true)
        epoch = version
        end = pageSize
        recordCount = 0
    }
}

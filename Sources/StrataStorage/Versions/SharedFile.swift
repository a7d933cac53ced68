import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Everything a process shares about one open file: the file, its mapping, the newest committed version, the
/// versions pinned by readers, the write lock and the lock file. Every ``Store`` handle for the same file in a
/// process uses the same `SharedFile`, so in-process readers and writers coordinate through one set of pins.
final class SharedFile: @unchecked Sendable {
    let file: any PageFile
    let path: String
    let pathRef: PathRef
    let geometry: PageGeometry
    let options: StoreOptions
    let lockFile: LockFile?
    /// How this file's meta pages are written and read: plain, or sealed behind an encrypted file's header.
    let metaCodec: MetaCodec
    /// The decrypted copy of an encrypted file's pages, which its readers read; nil for a plain file.
    let decrypted: DecryptedPages?
    /// Where an encrypted file's commits seal their pages (unused for a plain file).
    let sealingStage = SealingStage()
    /// Whether an encrypted file's log records leave out the sealed pages' gaps (``SealedGap``); tests turn it
    /// off to write records as earlier versions did, with every sealed page whole.
    nonisolated(unsafe) var logsSealedGaps = true
    /// Whether an encrypted file's log records are compact (``CommitLog``: the sealed meta page's gap left out, the
    /// tag over the header, stamps and sealed tails); tests turn it off to write records as the version before did.
    nonisolated(unsafe) var logsCompactRecords = true
    /// The redo log of small durable commits (disk files opened writable with durability `.full`). Touched only by
    /// the writer, with the write lock held.
    nonisolated(unsafe) let commitLog: CommitLog?
    /// Writes logged commits' pages into the main file while the log syncs (see ``WriteBehind``).
    let writeBehind = WriteBehind()
    /// Syncs the log for commits appended while other writers wait (see ``GroupCommit``).
    let group = GroupCommit()
    /// Parties of this process that need the cross-process writer lock: the gate holder and every grouped commit
    /// not yet durable. The lock is taken when the count leaves 0 and released when it returns to 0, so another
    /// process never builds on a version that is not durable.
    private let writerLockHolds = Locked(0)
    /// Log syncs that made commits durable (one per inline commit, one per group), for tests.
    let commitSyncs = Atomic<Int>(0)
    /// Grouped commits since the last inline one (touched only by the writer, with the write lock held): after
    /// ``maxGroupedRun`` the next commit waits for the group and syncs alone, so the writer lock is released now
    /// and then and writers of other processes get their turn.
    nonisolated(unsafe) private var groupedRun = 0
    static let maxGroupedRun = 256
    /// The file size this process's writers have already made sure of (touched only with the write lock held).
    ///
    /// Asking the file system for the size (`fstat`) on every commit is not free: on Linux 6.13+ a timestamp
    /// query makes the next change timestamp fine-grained, which advances the coarse clock every file shares, so
    /// the commit log's modification time then changed on every append and each log sync also wrote the log's
    /// inode: +28 µs per commit, measured. The size only has to be checked when the page count grows past this.
    nonisolated(unsafe) var ensuredSize = 0
    /// The in-process writer gate: the lock file's (shared by every handle on the file in this process) or,
    /// without a lock file, this coordinator's own.
    let gate: WriteGate
    private let registryKey: String?
    /// Data derived from this file's committed tree segments (see ``SegmentCache``).
    let segmentCache: SegmentCache
    /// The pages validated so far, shared by every reader and writer of the file in this process.
    let validated: ValidatedPages
    /// Why the open passed over the newest commit in the file, if it did.
    let recovery: RecoveryNotice?
    /// Commits the open replayed from the commit log into the main file (see ``StoreEvent/Opened``).
    let replayedCommits: Int
    /// Checkpoints of the commit log made by the commit in progress, when its handle reports events (nil: not
    /// collected). Touched only by the writer, with the write lock held.
    nonisolated(unsafe) private(set) var checkpoints: [StoreEvent.Checkpoint]?
    /// The pinned version last reported and how far behind it was (see ``PinnedVersionWatch``). Touched only by
    /// the writer, with the write lock held.
    nonisolated(unsafe) var pinnedVersionReported: (version: UInt64, behind: UInt64)?

    struct State {
        var latest: Meta
        var mapping: Mapping
        /// Reader counts per pinned version.
        var pins: [UInt64: Int] = [:]
        /// The oldest version this coordinator pins, as last told to the lock file (0 = none).
        var published: UInt64 = 0
        /// The lock file's change counter when `latest` was last read from disk.
        var counterSeen: UInt64 = 0
        /// Set when a commit failed while writing its meta page and putting the previous meta back failed too:
        /// the disk may hold either version, so this process refuses to write until the file is reopened.
        var poisoned: StorageError?
        /// The newest grouped commit, appended to the log and not yet durable: the next writer builds on it, while
        /// readers see `latest` (see ``GroupCommit``).
        var head: (meta: Meta, mapping: Mapping)?
    }
    let state: Locked<State>

    private init(
        file: any PageFile, lockFile: LockFile?, commitLog: CommitLog?, meta: Meta, mapping: Mapping,
        options: StoreOptions, registryKey: String?, recovery: RecoveryNotice? = nil, replayedCommits: Int = 0,
        metaCodec: MetaCodec = .plain, decrypted: DecryptedPages? = nil
    ) {
        self.file = file
        self.metaCodec = metaCodec
        self.decrypted = decrypted
        self.commitLog = commitLog
        self.path = file.path
        self.pathRef = PathRef(file.path)
        self.geometry = meta.geometry
        self.options = options
        self.lockFile = lockFile
        self.gate = lockFile?.gate ?? WriteGate()
        self.registryKey = registryKey
        self.segmentCache = SegmentCache(budget: options.segmentCacheBytes)
        self.validated = ValidatedPages()
        self.recovery = recovery
        self.replayedCommits = replayedCommits
        self.state = Locked(State(latest: meta, mapping: mapping))
    }

    deinit {
        if let registryKey {
            Self.registry.withLock { files in
                if files[registryKey]?.value == nil || files[registryKey]?.value === self { files[registryKey] = nil }
            }
        }
        writeBehind.stop()
        group.stop()
        file.close()
    }

    // MARK: Opening

    final class WeakFile: @unchecked Sendable {
        weak var value: SharedFile?
        init(_ value: SharedFile) { self.value = value }
    }

    /// Open files of this process by identity (device and inode, or in-memory name).
    static let registry = Locked<[String: WeakFile]>([:])

    /// Opens (or joins this process's existing handle to) the file at `path`.
    static func open(path: String, options: StoreOptions) throws(StorageError) -> SharedFile {
        // The file may be replaced while this opens (compaction on launch by another process): then open again.
        for _ in 0..<8 {
            if let shared = try openOnce(path: path, options: options) { return shared }
        }
        throw .incompatibleFile(path: path, reason: "the file kept being replaced while it was opened")
    }

    /// Whether this process has the file at `path` open.
    static func isOpen(path: String) -> Bool {
        var info = stat()
        guard stat(path, &info) == 0 else { return false }
        return registry.withLock { $0["file:\(info.st_dev):\(info.st_ino)"]?.value != nil }
    }

    /// Opens the file at `path`; nil if it was replaced by another file meanwhile.
    private static func openOnce(path: String, options: StoreOptions) throws(StorageError) -> SharedFile? {
        if options.createIfMissing && !options.readOnly && access(path, F_OK) != 0 {
            try createFile(at: path, options: options)
        }
        return try registry.withLock { (files: inout [String: WeakFile]) throws(StorageError) -> SharedFile? in
            let disk: DiskFile
            do throws(StorageError) {
                disk = try DiskFile(path: path, writable: !options.readOnly, create: false)
            } catch .fileNotFound where options.createIfMissing && !options.readOnly {
                return nil  // deleted since it was created above (Store.deleteFiles): create it again
            }
            var info = stat()
            guard fstat(disk.fd, &info) == 0 else { throw Errno.error("fstat", path: path) }
            let key = "file:\(info.st_dev):\(info.st_ino)"
            if let existing = files[key]?.value {
                if existing.options.readOnly && !options.readOnly {
                    throw .invalidArgument("\(path) is already open read-only in this process")
                }
                return existing
            }
            var lock: LockFile?
            if try disk.size() == 0 {
                // An empty file (made by another tool, say): initialise it in place under the writer lock.
                guard !options.readOnly else { throw .incompatibleFile(path: path, reason: "the file is empty") }
                lock = try LockFile.shared(forDataFile: path, optional: false)
                try initializeEmptyFile(disk, lock: lock, options: options)
            }
            // This open's reads of the metas authenticate each slot and each page they check once (an encrypted
            // file), and the pages go into the file's decrypted-page cache, where the first read finds the roots;
            // the file keeps the codec without that record.
            let fileMetas = try MetaCodec.forExisting(disk, options: options)
            let decrypted = try DecryptedPages.forFile(sealedBy: fileMetas)
            let metas = fileMetas.remembering(AuthenticatedPages(seeding: decrypted))
            let logPath = path + ".log"
            var log: CommitLog?
            var replayed = 0
            if disk.isWritable, try pendingLogVersion(logPath, metas: metas) != nil {
                // Commits the main file may lack (a power loss): replay them before reading the metas.
                if lock == nil { lock = try LockFile.shared(forDataFile: path, optional: false) }
                log = try openCommitLog(
                    path: logPath, main: disk, lock: lock, options: options, metas: metas, pageSize: nil,
                    replayed: &replayed)
            }
            // Recognise the file before creating a lock file beside it. Another process may be committing while
            // this first look reads the metas (they can then fail validation spuriously): when a lock file is
            // already there, its change counter tells, and the look below decides.
            // A read-only open of a file in use takes the lock file at once: while a writer is busy, the log is
            // its business, and reading it whole on every open (the `strata` tool) would be wasted.
            if lock == nil, !disk.isWritable, access(path + ".lock", F_OK) == 0 {
                lock = try LockFile.shared(forDataFile: path, optional: true)
            }
            func lookWithLock(_ lock: LockFile) throws(StorageError) -> (Meta, Mapping) {
                let (meta, mapping, _) = try consistentRead(lock) { () throws(StorageError) in
                    try recoverOrExplain(
                        disk, logPath: logPath, metas: metas, writerActive: { lock.writerIsHeldElsewhere })
                }
                return (meta, mapping)
            }
            var (meta, mapping): (Meta, Mapping)
            if let lock, !disk.isWritable {
                (meta, mapping) = try lookWithLock(lock)
            } else {
                do throws(StorageError) {
                    (meta, mapping) = try recoverOrExplain(disk, logPath: logPath, metas: metas)
                } catch {
                    guard lock != nil || access(path + ".lock", F_OK) == 0 else { throw error }
                    lock = try LockFile.shared(forDataFile: path, optional: options.readOnly)
                    guard let lock else { throw error }
                    (meta, mapping) = try lookWithLock(lock)
                }
            }
            if lock == nil { lock = try LockFile.shared(forDataFile: path, optional: options.readOnly) }
            // Having a slot, this process now counts as a user of the file, so it cannot be replaced any more; if
            // it was replaced before, what was read so far belongs to the old file.
            // Deleted counts as replaced, and so does a slot claimed in a lock file deleted meanwhile: Store.deleteFiles
            // unlinks the file, then the lock file, while it holds byte 1, under which slots are claimed.
            var current = stat()
            if stat(path, &current) != 0 || current.st_dev != info.st_dev || current.st_ino != info.st_ino {
                return nil
            }
            if let lock, !lock.isStillAtItsPath { return nil }
            if log == nil {
                log = try openCommitLog(
                    path: logPath, main: disk, lock: lock, options: options, metas: metas, pageSize: meta.pageSize,
                    replayed: &replayed)
            }
            var counter: UInt64 = 0
            if let lock {
                // A commit may have landed since the first look: read the metas again, noting the counter.
                (meta, mapping, counter) = try consistentRead(lock) { () throws(StorageError) in
                    try recover(disk, metas: metas)
                }
            }
            let shared = SharedFile(
                file: disk, lockFile: lock, commitLog: log, meta: meta, mapping: mapping, options: options,
                registryKey: key,
                recovery: try recoveryNotice(disk, opened: meta, mapping: mapping, lock: lock, metas: metas),
                replayedCommits: replayed, metaCodec: fileMetas, decrypted: decrypted)
            shared.state.withLock { $0.counterSeen = counter }
            files[key] = WeakFile(shared)
            return shared
        }
    }

    /// Creates a new file atomically: the two meta pages are written and synced in a temporary file that is then
    /// linked into place, so a crash never leaves a half-initialised file under `path`. If another process
    /// creates the file first, its file is used.
    private static func createFile(at path: String, options: StoreOptions) throws(StorageError) {
        let temporary = path + ".creating-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let file = try DiskFile(path: temporary, writable: true, create: true)
        defer { unlink(temporary) }
        try initializeEmptyFile(file, lock: nil, options: options)
        if link(temporary, path) != 0 && errno != EEXIST { throw Errno.error("link", path: path) }
        DiskFile.syncDirectory(of: path)
    }

    /// Opens an in-memory file. With an identifier, every open of the same identifier in the process shares
    /// the data while any handle is alive.
    static func openInMemory(identifier: String?, options: StoreOptions) throws(StorageError) -> SharedFile {
        let name = "memory:" + (identifier ?? "anonymous-\(UInt64.random(in: 0...UInt64.max))")
        return try registry.withLock { (files: inout [String: WeakFile]) throws(StorageError) -> SharedFile in
            if identifier != nil, let existing = files[name]?.value { return existing }
            let memory = MemoryFile(name: name)
            try initializeEmptyFile(memory, lock: nil, options: options)
            let (meta, mapping) = try recover(memory)
            let shared = SharedFile(
                file: memory, lockFile: nil, commitLog: nil, meta: meta, mapping: mapping, options: options,
                registryKey: identifier == nil ? nil : name)
            if identifier != nil { files[name] = WeakFile(shared) }
            return shared
        }
    }

    /// Registers a store over `file` as the in-memory store `identifier` (fault-injection tests of the object
    /// layer: a Realm configured with that in-memory identifier opens this file while the store is open).
    static func openInMemory(identifier: String, over file: any PageFile, options: StoreOptions) throws(StorageError)
        -> SharedFile
    {
        let name = "memory:" + identifier
        return try registry.withLock { (files: inout [String: WeakFile]) throws(StorageError) -> SharedFile in
            if try file.size() == 0 { try initializeEmptyFile(file, lock: nil, options: options) }
            let (meta, mapping) = try recover(file)
            let shared = SharedFile(
                file: file, lockFile: nil, commitLog: nil, meta: meta, mapping: mapping, options: options,
                registryKey: name)
            files[name] = WeakFile(shared)
            return shared
        }
    }

    /// Opens a store over any page file, with an optional commit log (fault-injection tests). Not registered:
    /// each call is independent.
    static func open(file: any PageFile, log logFile: (any PageFile)?, options: StoreOptions) throws(StorageError)
        -> SharedFile
    {
        if try file.size() == 0 { try initializeEmptyFile(file, lock: nil, options: options) }
        let metas = try MetaCodec.forExisting(file, options: options)
        var log: CommitLog?
        var replayed = 0
        if let logFile {
            log = try prepareCommitLog(
                logFile, main: file, lock: nil, options: options, metas: metas, replayed: &replayed)
        }
        let (meta, mapping) = try recover(file, metas: metas)
        return SharedFile(
            file: file, lockFile: nil, commitLog: log, meta: meta, mapping: mapping, options: options, registryKey: nil,
            recovery: try recoveryNotice(opened: meta, mapping: mapping, fileSize: try file.size()),
            replayedCommits: replayed, metaCodec: metas, decrypted: try DecryptedPages.forFile(sealedBy: metas))
    }

    /// Reads the metas while other processes may commit, like a sequence lock: the change counter is sampled
    /// first, and a read that fails validation is retried when a commit was published meanwhile.
    ///
    /// An unpinned reader can see pages reused under it: between sampling the file size and reading the metas,
    /// or between reading a meta and checking its pages, a writer may extend the file, publish two versions and
    /// reuse the pages the older metas named. Every such publication bumps the counter, and a commit still in
    /// flight only writes pages free in the newest published version, so a failure with an unchanged counter is
    /// real damage. Returns the counter sampled before the successful read (later pins compare against it).
    static func consistentRead(_ lock: LockFile, _ read: () throws(StorageError) -> (Meta, Mapping))
        throws(StorageError) -> (Meta, Mapping, UInt64)
    {
        while true {
            let counter = lock.changeCounter
            do {
                let (meta, mapping) = try read()
                return (meta, mapping, counter)
            } catch {
                if lock.changeCounter == counter { throw error }
            }
        }
    }

    /// Recovers the main file; if its commit log holds newer commits (a read-only open, which cannot replay
    /// them), says what is wrong with the main file — commits not yet applied, or a newest commit that is damaged —
    /// and that a read-write open restores them from the log. While another process holds the writer lock
    /// (`writerActive`) the log is ahead by the commit it is publishing (appended, its meta not yet written): the
    /// main file's newest commit is then read, as a reader that came a moment earlier would have. It is asked
    /// after the log was read: a writer that took the lock and appended since the metas were read still holds
    /// the lock then, and one that has already published and let go has bumped the change counter, which makes
    /// ``consistentRead(_:_:)`` read again.
    private static func recoverOrExplain(
        _ disk: DiskFile, logPath: String, metas: MetaCodec, writerActive: () -> Bool = { false }
    ) throws(StorageError) -> (Meta, Mapping) {
        do throws(StorageError) {
            let recovered = try recover(disk, metas: metas)
            // Asked before too, which spares reading the whole log while a writer is busy.
            if !disk.isWritable, !writerActive(), let pending = try pendingLogVersion(logPath, metas: metas),
                pending > recovered.0.version, !writerActive()
            {
                let restore = "open the file read-write once to restore them from the log"
                if let problem = try newerCommitProblem(
                    than: recovered.0, in: recovered.1, fileSize: try disk.size(), metas: metas)
                {
                    throw StorageError.incompatibleFile(
                        path: disk.path,
                        reason: "\(problem); \(logPath) holds commits up to version \(pending): \(restore)")
                }
                throw StorageError.incompatibleFile(
                    path: disk.path,
                    reason: "commits up to version \(pending) are in \(logPath) and not yet applied; open the file "
                        + "read-write once to recover them")
            }
            return recovered
        } catch {
            if !disk.isWritable, case .incompatibleFile(_, let reason) = error,
                let pending = try? pendingLogVersion(logPath, metas: metas)
            {
                throw .incompatibleFile(
                    path: disk.path,
                    reason: "\(reason); \(logPath) holds commits up to version \(pending): open the file read-write "
                        + "once to restore them from the log")
            }
            throw error
        }
    }

    /// Why the main file's other meta slot was passed over for `recovered`: a newer commit that fails its checks
    /// (damaged, or cut short), or a meta page that cannot be read. Nil when that slot is simply older.
    private static func newerCommitProblem(than recovered: Meta, in mapping: Mapping, fileSize: Int, metas: MetaCodec)
        throws(StorageError) -> String?
    {
        let available = min(fileSize, mapping.capacity)
        for slot in 0..<2 {
            let offset = slot * recovered.pageSize
            guard offset < available else { continue }
            switch try metas.decode(mapping.base + offset, slot: PageNumber(slot), available: available - offset) {
            case .success(let meta):
                guard meta.version > recovered.version,
                    let problem = validate(meta, mapping: mapping, fileSize: fileSize, metas: metas)
                else { continue }
                return "the newest commit in the file (version \(meta.version)) fails its checks: \(problem), or the "
                    + "file was damaged since"
            case .failure(let rejection):
                return "meta page \(slot) is unreadable (\(describe(rejection)))"
            }
        }
        return nil
    }

    /// The newest version logged in the commit log at `path`, if it holds any complete record.
    /// (Records are signed in an encrypted file's log: `metas` has the key.)
    private static func pendingLogVersion(_ path: String, metas: MetaCodec) throws(StorageError) -> UInt64? {
        // Missing, or deleted since (Store.deleteFiles, before this process holds a slot): no log.
        guard let file = try openIfPresent(path, writable: false) else { return nil }
        return try CommitLog.read(file, authenticator: LogRecordAuthenticator(metas))?.records.last?.version
    }

    /// The file at `path`, or nil if there is none.
    private static func openIfPresent(_ path: String, writable: Bool) throws(StorageError) -> DiskFile? {
        do throws(StorageError) {
            return try DiskFile(path: path, writable: writable, create: false)
        } catch .fileNotFound {
            return nil
        }
    }

    /// Opens the commit log beside a writable disk file: replays what it holds (a crash left commits in it),
    /// and keeps it for small durable commits when durability is `.full`. A log that does not exist is not
    /// created here but by the first commit that goes through it (given `pageSize`, the main file's).
    private static func openCommitLog(
        path: String, main: DiskFile, lock: LockFile?, options: StoreOptions, metas: MetaCodec, pageSize: Int?,
        replayed: inout Int
    ) throws(StorageError) -> CommitLog? {
        guard main.isWritable else { return nil }
        guard let file = try openIfPresent(path, writable: true) else {
            guard options.durability == .full, let pageSize else { return nil }
            return CommitLog.onDemand(path: path, pageSize: pageSize, authenticator: LogRecordAuthenticator(metas))
        }
        let log = try prepareCommitLog(
            file, path: path, main: main, lock: lock, options: options, metas: metas, replayed: &replayed)
        return options.durability == .full ? log : nil
    }

    /// Brings the main file up to date with the log in `file` and returns the log, ready for appends.
    ///
    /// Complete records of the log's epoch are replayed (page images, then metas) into the main file, which is
    /// then synced, and a new epoch starts. A missing or damaged log is created afresh at the main file's
    /// version after syncing the main file. Done under the writer lock, since another process may be appending.
    /// `replayed` is set to the number of commits replayed. An encrypted file's log (`metas` sealed) is read with
    /// its records' signatures checked (``LogRecordAuthenticator``).
    static func prepareCommitLog(
        _ file: any PageFile, path: String? = nil, main: any PageFile, lock: LockFile?, options: StoreOptions,
        metas: MetaCodec, replayed: inout Int
    ) throws(StorageError) -> CommitLog {
        let authenticator = LogRecordAuthenticator(metas)
        if let (log, records) = try CommitLog.read(file, path: path, authenticator: authenticator), records.isEmpty {
            return log
        }
        try lock?.lockWriter(timeout: options.writeLockTimeout)
        defer { lock?.unlockWriter() }
        let log: CommitLog
        if let (existing, records) = try CommitLog.read(file, path: path, authenticator: authenticator) {
            try existing.replay(records, into: main)
            replayed = records.count
            log = existing
        } else {
            let (meta, _) = try recover(main, metas: metas)
            try main.sync()
            log = try CommitLog.create(
                file, path: path, pageSize: meta.pageSize, epoch: meta.version, authenticator: authenticator)
        }
        lock?.logState = log.position
        return log
    }

    /// Writes the two meta pages of an empty store (both version 0), under the writer lock when there is one.
    private static func initializeEmptyFile(_ file: any PageFile, lock: LockFile?, options: StoreOptions)
        throws(StorageError)
    {
        let pageSize = options.pageSize
        guard PageGeometry.isValid(pageSize: pageSize) else {
            throw .invalidArgument("page size \(pageSize) must be a power of two between 1024 and 32768")
        }
        try lock?.lockWriter(timeout: nil)
        defer { lock?.unlockWriter() }
        guard try file.size() == 0 else { return }
        let metas = try MetaCodec.forNewFile(options: options)
        let meta = Meta(
            version: 0, pageCount: 2, pageSize: pageSize, catalog: TreeRoot(kind: .keyed),
            freeTree: TreeRoot(kind: .keyed), commitTime: Clock.microsecondsSince1970(),
            reservedTail: metas.isSealed ? PageSealer.overhead : options.reservedPageTail)
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: pageSize * 2, alignment: 4096)
        defer { buffer.deallocate() }
        try metas.encode(meta, into: buffer, slot: 0)
        try metas.encode(meta, into: buffer + pageSize, slot: 1)
        try file.write(UnsafeRawBufferPointer(start: buffer, count: pageSize * 2), at: 0)
        try file.sync()
        if file.isPersistent { DiskFile.syncDirectory(of: file.path) }
    }

    /// Finds the newest valid version: the meta slot with the highest version whose checksum is right, whose page
    /// count fits in the file and whose tree roots are intact pages.
    static func recover(_ file: any PageFile, metas: MetaCodec = .plain) throws(StorageError) -> (Meta, Mapping) {
        let size = try file.size()
        guard size >= 2 * PageGeometry.minimumPageSize else {
            throw .incompatibleFile(path: file.path, reason: "file of \(size) bytes is too small to be a Strata file")
        }
        let mapping = try file.mapping(covering: size)
        let meta = try newestValidMeta(in: mapping, fileSize: size, path: file.path, metas: metas)
        let needed = Int(meta.pageCount) * meta.pageSize
        return (meta, needed <= mapping.capacity ? mapping : try file.mapping(covering: needed))
    }

    /// Decodes both meta slots and returns the best one, or throws `incompatibleFile` explaining why none is usable.
    ///
    /// Slot 0 is at offset 0 and names the page size; slot 1 is one page further. When slot 0 is unreadable,
    /// slot 1 is looked for at every valid page size, and accepted only where its own page size matches.
    /// `metas` reads the slots: plain, or sealed behind an encrypted file's header.
    static func newestValidMeta(in mapping: Mapping, fileSize: Int, path: String, metas: MetaCodec = .plain)
        throws(StorageError) -> Meta
    {
        if let meta = try claimedNewestMeta(in: mapping, fileSize: fileSize, metas: metas) { return meta }
        let available = min(fileSize, mapping.capacity)
        // Decoded slots, checked below newest first; why each slot is unusable, by slot.
        var decoded: [(slot: Int, meta: Meta)] = []
        var reasons: [(slot: Int, reason: String)] = []
        let first = try metas.decode(mapping.base, slot: 0, available: available)
        var secondOffsets = [4096, 1024, 2048, 8192, 16384, 32768]
        switch first {
        case .success(let meta):
            secondOffsets = [meta.pageSize]
            decoded.append((0, meta))
        case .failure(let rejection):
            reasons.append((0, "meta 0: \(describe(rejection))"))
        }
        var secondFound = false
        for offset in secondOffsets where offset < available {
            guard
                case .success(let meta) = try metas.decode(
                    mapping.base + offset, slot: 1, available: available - offset)
            else {
                continue
            }
            guard meta.pageSize == offset else { continue }
            secondFound = true
            decoded.append((1, meta))
            break
        }
        if !secondFound {
            if case .success(let meta) = first, meta.pageSize < available,
                case .failure(let rejection) = try metas.decode(
                    mapping.base + meta.pageSize, slot: 1, available: available - meta.pageSize)
            {
                reasons.append((1, "meta 1: \(describe(rejection))"))
            } else {
                reasons.append((1, "meta 1: not found"))
            }
        }
        // The newest slot that passes its checks wins (slot 0 on a tie), so the older slot is checked only when the
        // newer one fails: each check reads every page its commit listed, and in an encrypted file authenticates it.
        if decoded.count == 2 && decoded[1].meta.version > decoded[0].meta.version { decoded.swapAt(0, 1) }
        for (slot, meta) in decoded {
            if metas.foundWhole(meta) { return meta }
            guard let problem = validate(meta, mapping: mapping, fileSize: fileSize, metas: metas) else {
                metas.insertWhole(meta)
                return meta
            }
            reasons.append((slot, "meta \(slot) (version \(meta.version)): \(problem)"))
        }
        if case .failure(.notStrata) = first, !secondFound {
            throw .incompatibleFile(path: path, reason: "not a Strata file (no Strata header)")
        }
        let explained = reasons.sorted { $0.slot < $1.slot }.map(\.reason)
        throw .incompatibleFile(path: path, reason: explained.joined(separator: "; "))
    }

    /// An encrypted file's newest meta, found authenticating one slot: the one whose claimed version
    /// (``SealedMeta/claimedVersion(_:available:)``, decrypted without authentication) is the higher, when it is
    /// the version that slot holds (commit `v` writes slot `v % 2`) and the slot authenticates and passes its checks.
    /// Nil when anything is off (a slot claims nothing, both claim the same, the claimed slot fails), for the full
    /// procedure to decide.
    ///
    /// The result is the full procedure's: the other slot, if it authenticates, holds the version it claims, which
    /// is lower; if it does not, the full procedure passes it over. A forged claim only changes which slot is
    /// authenticated first. Authenticating a sealed slot (a whole page) was a sixth of what opening an encrypted
    /// file added to a plain open.
    static func claimedNewestMeta(in mapping: Mapping, fileSize: Int, metas: MetaCodec) throws(StorageError) -> Meta? {
        guard case .sealed(let sealed) = metas else { return nil }
        let pageSize = sealed.header.pageSize
        let available = min(fileSize, mapping.capacity)
        guard 2 * pageSize <= available,
            let first = try sealed.claimedVersion(mapping.base, available: available),
            let second = try sealed.claimedVersion(mapping.base + pageSize, available: available - pageSize),
            first != second
        else { return nil }
        let slot = first > second ? 0 : 1
        let claimed = max(first, second)
        guard claimed % 2 == UInt64(slot),
            case .success(let meta) = try metas.decode(
                mapping.base + slot * pageSize, slot: PageNumber(slot), available: available - slot * pageSize),
            meta.version == claimed, meta.pageSize == pageSize
        else { return nil }
        if metas.foundWhole(meta) { return meta }
        guard validate(meta, mapping: mapping, fileSize: fileSize, metas: metas) == nil else { return nil }
        metas.insertWhole(meta)
        return meta
    }

    static func describe(_ rejection: Meta.Rejection) -> String {
        switch rejection {
        case .notStrata: "not a Strata file"
        case .unsupportedFormat(let format): "unsupported format version \(format)"
        case .badPageSize(let size): "invalid page size \(size)"
        case .checksum: "checksum mismatch"
        case .inconsistent(let text): text
        }
    }

    /// Checks that a decoded meta fits the file, that every page its commit listed is intact (single-sync
    /// commits), and that its root pages are intact.
    /// In an encrypted file (`metas` sealed) the pages are checked decrypted; one that does not authenticate
    /// fails as a page that is not as written.
    static func validate(_ meta: Meta, mapping: Mapping, fileSize: Int, metas: MetaCodec = .plain) -> MetaProblem? {
        let needed = Int(meta.pageCount) * meta.pageSize
        if needed > fileSize {
            return MetaProblem(page: nil, reason: "needs \(needed) bytes but the file has \(fileSize)")
        }
        let readable = min(fileSize, mapping.capacity)
        for stamp in meta.written {
            let offset = Int(stamp.page) * meta.pageSize
            guard stamp.page >= 2, UInt64(stamp.page) < meta.pageCount, offset + meta.pageSize <= readable else {
                return MetaProblem(page: stamp.page, reason: "lists page \(stamp.page), outside the file")
            }
            let intact = metas.withClearPage(mapping.base + offset, number: stamp.page, pageSize: meta.pageSize) {
                page in
                guard let page else { return false }
                return page.u64(PageHeader.checksum) == stamp.checksum && page.u64(PageHeader.version) == meta.version
                    && PageChecksum.verify(page, page: stamp.page, pageSize: meta.pageSize)
            }
            guard intact else {
                return MetaProblem(
                    page: stamp.page,
                    reason: "its commit did not reach the disk whole (page \(stamp.page) is not as written)")
            }
        }
        for tree in [meta.catalog, meta.freeTree] where tree.root != 0 {
            let offset = Int(tree.root) * meta.pageSize
            guard offset + meta.pageSize <= min(fileSize, mapping.capacity) else {
                return MetaProblem(page: tree.root, reason: "root page outside the file")
            }
            let problem = metas.withClearPage(mapping.base + offset, number: tree.root, pageSize: meta.pageSize) {
                page -> MetaProblem? in
                guard let page, PageChecksum.verify(page, page: tree.root, pageSize: meta.pageSize) else {
                    return MetaProblem(page: tree.root, reason: "root page \(tree.root) fails its checksum")
                }
                let kind = page.u8(PageHeader.kind)
                if kind != (tree.depth == 1 ? PageKind.leaf : PageKind.branch).rawValue {
                    return MetaProblem(page: tree.root, reason: "root page \(tree.root) has the wrong kind")
                }
                return nil
            }
            if let problem { return problem }
        }
        return nil
    }

    // MARK: Readers

    /// Pins the newest version for a reader and returns it with a mapping that covers it.
    ///
    /// With a lock file, the first pin of this coordinator is published in the process's slot and then the
    /// change counter is read again: if a commit happened meanwhile, that writer may have scanned the reader
    /// table before the pin was visible, so the reader moves to the newer version and tries again.
    func pinLatest() throws(StorageError) -> (Meta, Mapping) {
        try state.withLock { (state: inout State) throws(StorageError) -> (Meta, Mapping) in
            guard let lockFile else {
                state.pins[state.latest.version, default: 0] += 1
                return (state.latest, state.mapping)
            }
            while true {
                let counter = lockFile.changeCounter
                if counter != state.counterSeen {
                    do throws(StorageError) {
                        try reloadFromDisk(&state)
                    } catch {
                        // A commit published during the read may have reused what it looked at: look again.
                        if lockFile.changeCounter != counter { continue }
                        throw error
                    }
                    state.counterSeen = counter
                }
                let version = state.latest.version
                state.pins[version, default: 0] += 1
                if state.published != 0 && state.published <= version { return (state.latest, state.mapping) }
                state.published = version
                lockFile.setPinnedVersion(version, source: ObjectIdentifier(self))
                if lockFile.changeCounter == counter { return (state.latest, state.mapping) }
                unpinLocked(version, &state)
            }
        }
    }

    /// Releases a reader's pin.
    func unpin(_ version: UInt64) {
        state.withLock { unpinLocked(version, &$0) }
    }

    private func unpinLocked(_ version: UInt64, _ state: inout State) {
        guard let count = state.pins[version] else { return }
        if count > 1 {
            state.pins[version] = count - 1
            return
        }
        state.pins[version] = nil
        guard let lockFile, version == state.published else { return }
        state.published = state.pins.keys.min() ?? 0
        lockFile.setPinnedVersion(state.published, source: ObjectIdentifier(self))
    }

    /// Number of distinct versions pinned in this process.
    var pinnedVersionCount: Int { state.withLock { $0.pins.count } }

    /// The versions pinned in this process, with the number of pins of each.
    var pinnedVersions: [UInt64: Int] { state.withLock { $0.pins } }

    /// The oldest pinned version in this process, if any.
    var oldestPinnedInProcess: UInt64? { state.withLock { $0.pins.keys.min() } }

    /// Versions at or below this may have their freed pages reused by a writer whose base is `base`. Other
    /// handles on the same file in this process publish through the same lock-file slot, so they are covered
    /// by `oldestPinnedByOthers` only through other processes; this coordinator's own pins are added here.
    func reclaimThreshold(base: UInt64) -> UInt64 {
        // A writer may build on a grouped commit not yet published: readers that start meanwhile pin the newest
        // published version, which reaches pages the pending versions freed.
        var threshold = min(base, latest.version)
        if let oldest = oldestPinnedInProcess { threshold = min(threshold, oldest) }
        if let lockFile {
            if let other = lockFile.oldestPinnedByOthers() { threshold = min(threshold, other) }
            if let own = lockFile.oldestPinnedInThisProcess() { threshold = min(threshold, own) }
        }
        return threshold
    }

    /// Re-reads the meta pages (another process committed) and extends the mapping if the file grew.
    private func reloadFromDisk(_ state: inout State) throws(StorageError) {
        // Another process committed: pages it rewrote may sit in decrypted slots known current until now.
        decrypted?.advanceEpoch()
        let size = try file.size()
        let mapping = try file.mapping(covering: size)
        let meta = try Self.newestValidMeta(in: mapping, fileSize: size, path: path, metas: metaCodec)
        guard meta.pageSize == state.latest.pageSize else {
            throw .incompatibleFile(path: path, reason: "page size changed while the file was open")
        }
        state.latest = meta
        state.mapping = mapping
    }

    // MARK: Writers

    /// Takes both halves of the write lock, blocking the calling thread.
    func lockForWriting() throws(StorageError) -> WriteContext {
        gate.lock()
        do {
            try holdWriterLock { () throws(StorageError) -> Bool in
                try lockFile?.lockWriter(timeout: options.writeLockTimeout)
                return true
            }
        } catch {
            gate.unlock()
            throw error
        }
        return try makeWriteContextOrUnlock()
    }

    /// Takes both halves of the write lock by suspending: the in-process gate through a continuation; when
    /// another process holds the file lock, a dedicated thread waits for it (polling, so that cancelling the
    /// task or the configured timeout ends the wait). Runs in the caller's isolation (see
    /// ``WriteGate/lock(isolation:)``).
    func lockForWriting(isolation: isolated (any Actor)? = #isolation) async throws(StorageError)
        -> sending WriteContext
    {
        try await gate.lock()
        do {
            let held = try holdWriterLock { () throws(StorageError) -> Bool in try lockFile?.tryLockWriter() ?? true }
            if let lockFile, !held {
                let timeout = options.writeLockTimeout
                let stop = Atomic<Bool>(false)
                let result: Result<Void, StorageError> = await withTaskCancellationHandler {
                    await withCheckedContinuation { continuation in
                        runOnDedicatedThread {
                            do throws(StorageError) {
                                try lockFile.lockWriter(timeout: timeout) { stop.load(ordering: .acquiring) }
                                continuation.resume(returning: .success(()))
                            } catch {
                                continuation.resume(returning: .failure(error))
                            }
                        }
                    }
                } onCancel: {
                    stop.store(true, ordering: .releasing)
                }
                try result.get()
                writerLockHolds.withLock { $0 += 1 }
            }
        } catch {
            gate.unlock()
            throw error
        }
        return try makeWriteContextOrUnlock()
    }

    private func makeWriteContextOrUnlock() throws(StorageError) -> WriteContext {
        do throws(StorageError) {
            guard file.isWritable, !options.readOnly else { throw .readOnly(path: path) }
            let (meta, mapping) = try state.withLock { (state: inout State) throws(StorageError) -> (Meta, Mapping) in
                if let poisoned = state.poisoned { throw poisoned }
                // Grouped commits of this process are pending: this process holds the writer lock, so nothing
                // newer exists elsewhere; build on the newest of them.
                if let head = state.head { return head }
                // Another process committed since this process last looked: start from the newest version on
                // disk. (Every acknowledged commit bumps the counter before it returns, so an unchanged counter
                // means nothing newer was acknowledged; a writer that died before bumping it is simply superseded.)
                if let lockFile, lockFile.changeCounter != state.counterSeen {
                    let counter = lockFile.changeCounter
                    try reloadFromDisk(&state)
                    state.counterSeen = counter
                }
                return (state.latest, state.mapping)
            }
            return WriteContext(shared: self, base: meta, mapping: mapping)
        } catch {
            unlockWriting()
            throw error
        }
    }

    /// Releases the write lock.
    func unlockWriting() {
        releaseWriterLockHold()
        gate.unlock()
    }

    /// Counts the caller as a party that needs the cross-process writer lock, taking it with `acquire` when this
    /// process does not hold it yet. Returns false (counting nothing) when `acquire` returns false. Called with
    /// the gate held: nobody else adds a hold meanwhile, and holds of pending commits only end.
    @discardableResult
    private func holdWriterLock(_ acquire: () throws(StorageError) -> Bool) throws(StorageError) -> Bool {
        if writerLockHolds.withLock({ (holds: inout Int) -> Bool in
            guard holds > 0 else { return false }
            holds += 1
            return true
        }) {
            return true
        }
        guard try acquire() else { return false }
        writerLockHolds.withLock { $0 += 1 }
        return true
    }

    /// Ends one party's need of the cross-process writer lock; the last one releases it.
    func releaseWriterLockHold() {
        writerLockHolds.withLock { holds in
            holds -= 1
            if holds == 0 { lockFile?.unlockWriter() }
        }
    }

    /// Writes the meta page of a new version (the commit point) and publishes it. Called with the write lock held.
    ///
    /// If writing or syncing the meta page fails, the slot may hold the new meta, a torn page or the old one.
    /// The previous meta is written back into that slot at once, still under the write lock, so that recovery
    /// and other processes can only see the previous version. If that fails too, this process stops writing.
    func writeMeta(_ meta: Meta, previous: Meta, durable: Bool) throws(StorageError) {
        try group.drain()
        // Make sure readers can map the new pages before the version becomes visible.
        let mapping = try file.mapping(covering: Int(meta.pageCount) * meta.pageSize)
        let slot = Int(meta.version % 2)
        do {
            try writeMetaPage(meta, slot: slot, durable: durable)
        } catch {
            do {
                try writeMetaPage(previous, slot: slot, durable: true)
            } catch let repair {
                state.withLock { $0.poisoned = repair }
            }
            throw error
        }
        publish(meta, mapping: mapping)
    }

    /// Makes a committed version the newest for this process and announces it to the others.
    private func publish(_ meta: Meta, mapping: Mapping) {
        state.withLock { state in
            state.latest = meta
            state.mapping = mapping
            if let head = state.head, head.meta.version <= meta.version { state.head = nil }
            if let lockFile {
                // Count our own commit as seen, unless another process's is also pending for readers.
                let previous = lockFile.changeCounter
                lockFile.announceCommit(version: meta.version)
                if previous == state.counterSeen { state.counterSeen = previous &+ 1 }
            }
        }
    }

    /// Commits through the redo log (small durable commits). Hands the pages' writes into the main file (`runs`,
    /// unsynced) to the ``WriteBehind`` thread, appends the log record and syncs the log, collects the page
    /// writes — the commit point is the later of the two — then writes the meta page into the main file (best
    /// effort: a checkpoint rewrites the newest meta before syncing the main file) and publishes. Called with
    /// the write lock held. If the page writes fail, the record is invalidated and the commit fails whole.
    ///
    /// Grouped (other writers wait for the lock, or grouped commits are still pending): the record is appended
    /// without a sync (after the page writes, made on the committer's thread) and the commit handed to
    /// ``GroupCommit``, whose thread syncs the log, writes the meta and publishes; the returned wait tells the
    /// committer, which waits for it after releasing the write lock, when that happened. Nil: the commit is durable and published.
    ///
    /// In an encrypted file `pages` are the sealed images and `gaps` their clear pages' gaps (``SealedGap``).
    func commitLogged(
        _ meta: Meta, pages: [(page: PageNumber, buffer: UnsafeMutableRawPointer)],
        gaps: [(head: Int, tail: Int)]? = nil, runs: [(start: PageNumber, buffers: [UnsafeRawBufferPointer])],
        base: Meta
    ) throws(StorageError) -> DurableWait? {
        guard let log = commitLog else { throw .invalidArgument("no commit log") }
        // Group when someone would wait for this commit's sync; not when the log wants a checkpoint (which needs
        // nothing pending), nor after a long run (releasing the writer lock lets other processes in).
        let grouped =
            !log.wantsCheckpoint && groupedRun < Self.maxGroupedRun && (group.hasPending || gate.hasWaiters)
        if !grouped {
            // An inline commit publishes itself: the pending ones must be published first.
            try group.drain()
            groupedRun = 0
        }
        // Everything that can fail before the commit point comes first.
        let mapping = try file.mapping(covering: Int(meta.pageCount) * meta.pageSize)
        try refreshLog(log, create: true)
        if log.nextVersion != meta.version {
            // The log does not continue from this commit's base (first logged commit, or the main file moved on
            // through large commits or another durability setting): make the main file durable at the base and
            // start a new epoch there. This commit's pages go to pages free in the base.
            try checkpointLog(base)
        }
        // The meta page as its slot stores it (sealed in an encrypted file): the log's image of it, written into
        // the main file once the commit is durable.
        let image = UnsafeMutableRawPointer.allocate(byteCount: meta.pageSize, alignment: 4096)
        defer { image.deallocate() }
        try metaCodec.encode(meta, into: image, slot: PageNumber(meta.version % 2))
        // A compact record when the pages' gaps are left out too (the meta page's gap follows from its list).
        let metaGap = gaps != nil && logsCompactRecords ? metaCodec.loggedGap(of: meta) : nil
        var record = try log.encode(
            version: meta.version, pages: pages, meta: UnsafeRawPointer(image), gaps: gaps, metaGap: metaGap)
        let capacity = log.capacity
        do {
            try log.reserve(record)
        } catch .diskFull where log.recordCount > 0 {
            // The disk is full and the log cannot grow: start it over (the main file becomes durable at the base)
            // and reuse the space it has.
            try checkpointLog(base)
            record = try log.encode(
                version: meta.version, pages: pages, meta: UnsafeRawPointer(image), gaps: gaps, metaGap: metaGap)
            try log.reserve(record)
        }
        if log.capacity != capacity { lockFile?.logState = log.position }
        let file = self.file
        let pageSize = meta.pageSize
        let writePages = { () throws(StorageError) in
            for run in runs { try file.write(run.buffers, at: Int(run.start) * pageSize) }
        }
        // A grouped record is appended without a sync, so there is nothing to hide the page writes behind: they
        // are written here, before the record (a failure then leaves nothing appended). Handing them to the
        // write-behind thread would cost two thread switches while the write lock is held, which is what
        // concurrent writers queue on.
        if grouped { try writePages() } else { writeBehind.start(writePages) }
        // Whatever happens, the page writes end before the buffers they read are released.
        var pagesCollected = grouped
        defer { if !pagesCollected { try? writeBehind.finish() } }
        let start = log.position.end
        do throws(StorageError) {
            // The page writes must be in before the record counts as appended: a failure rolls the record back.
            try log.append(record, synced: !grouped) { () throws(StorageError) in
                guard !pagesCollected else { return }
                pagesCollected = true
                try writeBehind.finish()
            }
        } catch {
            // The record may have reached the disk in part or even whole: make sure replay can never apply it.
            do {
                try log.invalidateFailedRecord()
            } catch let repair {
                state.withLock { $0.poisoned = repair }
            }
            throw error
        }
        lockFile?.logState = log.position
        if grouped {
            guard let logFile = log.file else { throw .invalidArgument("the commit log has no file") }
            groupedRun += 1
            // The next writer builds on this version; the pending commit keeps the writer lock for the process.
            state.withLock { $0.head = (meta, mapping) }
            writerLockHolds.withLock { $0 += 1 }
            let wait = DurableWait()
            do {
                try group.enqueue(
                    GroupCommit.Pending(start: start, end: log.position.end, meta: meta, mapping: mapping, wait: wait),
                    log: logFile, owner: self)
            } catch {
                releaseWriterLockHold()
                throw error
            }
            return wait
        }
        commitSyncs.add(1, ordering: .relaxed)
        // The commit is durable. Write its meta into the main file; a failure here only delays that until the
        // next checkpoint, which rewrites the newest meta.
        try? writeMainFileMeta(meta, logImage: image)
        publish(meta, mapping: mapping)
        if log.wantsCheckpoint { try? checkpointLog(meta) }
        return nil
    }

    /// The syncer thread's sync covered `newest` (and every grouped commit before it): writes its meta into the
    /// main file (best effort, as for an inline commit) and publishes it.
    func groupBecameDurable(_ newest: GroupCommit.Pending) {
        commitSyncs.add(1, ordering: .relaxed)
        let meta = newest.meta
        let image = UnsafeMutableRawPointer.allocate(byteCount: meta.pageSize, alignment: 4096)
        defer { image.deallocate() }
        // Best effort, as the write itself: a checkpoint rewrites the newest meta.
        if (try? metaCodec.encode(meta, into: image, slot: PageNumber(meta.version % 2))) != nil {
            try? writeMainFileMeta(meta, logImage: image)
        }
        publish(meta, mapping: newest.mapping)
    }

    /// The syncer thread's sync failed: the grouped commits not yet durable never become visible. Their records
    /// are made unreplayable from the first one on (if that fails too, a later open may still find them whole),
    /// and the file's writers stop with `error` until it is reopened, as a database stops on a failed `fsync`: the
    /// kernel may have dropped the pages, so nothing written since the last good sync can be trusted.
    func groupSyncFailed(_ error: StorageError, log: any PageFile, firstUnsynced: Int) {
        state.withLock { state in
            if state.poisoned == nil { state.poisoned = error }
            state.head = nil
        }
        try? CommitLog.invalidateRecord(in: log, at: firstUnsynced, pageSize: geometry.pageSize)
    }

    /// Makes the main file durable at `meta` (rewriting its meta page first) and starts a new log epoch there,
    /// keeping `keeping` bytes of the log (by default what the last epoch used). Nothing to do while no log file
    /// exists. Called with the write lock held; `meta` must be the newest committed version.
    func checkpointLog(_ meta: Meta, keeping: Int? = nil) throws(StorageError) {
        try group.drain()
        guard let log = commitLog, try refreshLog(log, create: false) else { return }
        let started = Clock.monotonicNanoseconds()
        let folded = log.recordCount
        try writeMetaPage(meta, slot: Int(meta.version % 2), durable: true)
        try log.checkpoint(at: meta.version, keeping: keeping)
        lockFile?.logState = log.position
        checkpoints?.append(
            StoreEvent.Checkpoint(
                path: path, version: meta.version, commitsFolded: folded,
                nanoseconds: Clock.monotonicNanoseconds() &- started))
    }

    /// Starts collecting the checkpoints the commit in progress makes, for its handle's events. Called with the
    /// write lock held.
    func collectCheckpoints() { checkpoints = [] }

    /// The checkpoints made since ``collectCheckpoints()``, oldest first; collecting stops. Called with the write
    /// lock held.
    func takeCheckpoints() -> [StoreEvent.Checkpoint] {
        defer { checkpoints = nil }
        return checkpoints ?? []
    }

    /// Brings this process's view of the log up to date with what the last writer recorded in the lock file,
    /// opening the log file if another process created it, or creating it with `create`. Returns whether the log
    /// has a file. Called with the write lock held.
    @discardableResult
    private func refreshLog(_ log: CommitLog, create: Bool) throws(StorageError) -> Bool {
        guard try log.attach(create: create) else { return false }
        if let state = lockFile?.logState { try log.adopt(state) }
        return true
    }

    /// Writes a logged commit's meta into its slot of the main file (unsynced): the log's image of it, plain or
    /// sealed as the slot stores it.
    private func writeMainFileMeta(_ meta: Meta, logImage: UnsafeMutableRawPointer) throws(StorageError) {
        let slot = Int(meta.version % 2)
        try file.write(UnsafeRawBufferPointer(start: logImage, count: meta.pageSize), at: slot * meta.pageSize)
    }

    private func writeMetaPage(_ meta: Meta, slot: Int, durable: Bool) throws(StorageError) {
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: meta.pageSize, alignment: 4096)
        defer { buffer.deallocate() }
        try metaCodec.encode(meta, into: buffer, slot: PageNumber(slot))
        try file.write(UnsafeRawBufferPointer(start: buffer, count: meta.pageSize), at: slot * meta.pageSize)
        if durable { try file.sync() }
    }

    /// The newest committed version known to this process.
    var latest: Meta { state.withLock { $0.latest } }
}

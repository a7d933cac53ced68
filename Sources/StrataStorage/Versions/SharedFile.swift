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
    let gate = WriteGate()
    private let registryKey: String?

    struct State {
        var latest: Meta
        var mapping: Mapping
        /// Reader counts per pinned version.
        var pins: [UInt64: Int] = [:]
        /// The version published in this process's lock-file slot (0 = none).
        var published: UInt64 = 0
        /// A meta write failed; before the next commit the targeted slot must be rewritten with this meta.
        var metaRepair: Meta?
    }
    let state: Mutex<State>

    private init(
        file: any PageFile, lockFile: LockFile?, meta: Meta, mapping: Mapping, options: StoreOptions,
        registryKey: String?
    ) {
        self.file = file
        self.path = file.path
        self.pathRef = PathRef(file.path)
        self.geometry = PageGeometry(pageSize: meta.pageSize)
        self.options = options
        self.lockFile = lockFile
        self.registryKey = registryKey
        self.state = Mutex(State(latest: meta, mapping: mapping))
    }

    deinit {
        if let registryKey {
            Self.registry.withLock { files in
                if files[registryKey]?.value == nil || files[registryKey]?.value === self { files[registryKey] = nil }
            }
        }
        file.close()
    }

    // MARK: Opening

    private final class WeakFile: @unchecked Sendable {
        weak var value: SharedFile?
        init(_ value: SharedFile) { self.value = value }
    }

    /// Open files of this process by identity (device and inode, or in-memory name).
    private static let registry = Mutex<[String: WeakFile]>([:])

    /// Opens (or joins this process's existing handle to) the file at `path`.
    static func open(path: String, options: StoreOptions) throws(StorageError) -> SharedFile {
        try registry.withLock { (files: inout [String: WeakFile]) throws(StorageError) -> SharedFile in
            let disk = try DiskFile(
                path: path, writable: !options.readOnly, create: options.createIfMissing && !options.readOnly)
            var info = stat()
            guard fstat(disk.fd, &info) == 0 else { throw Errno.error("fstat", path: path) }
            let key = "file:\(info.st_dev):\(info.st_ino)"
            if let existing = files[key]?.value {
                if existing.options.readOnly != options.readOnly && !options.readOnly {
                    throw .invalidArgument("\(path) is already open read-only in this process")
                }
                return existing
            }
            let lock = try LockFile.open(forDataFile: path, optional: options.readOnly)
            if try disk.size() == 0 {
                guard !options.readOnly else { throw .incompatibleFile(path: path, reason: "the file is empty") }
                try initializeEmptyFile(disk, lock: lock, options: options)
            }
            let (meta, mapping) = try recover(disk)
            if let lock, lock.latestVersion < meta.version { lock.publish(latest: meta.version) }
            let shared = SharedFile(
                file: disk, lockFile: lock, meta: meta, mapping: mapping, options: options, registryKey: key)
            files[key] = WeakFile(shared)
            return shared
        }
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
                file: memory, lockFile: nil, meta: meta, mapping: mapping, options: options,
                registryKey: identifier == nil ? nil : name)
            if identifier != nil { files[name] = WeakFile(shared) }
            return shared
        }
    }

    /// Opens a store over any page file (fault-injection tests). Not registered: each call is independent.
    static func open(file: any PageFile, options: StoreOptions) throws(StorageError) -> SharedFile {
        if try file.size() == 0 { try initializeEmptyFile(file, lock: nil, options: options) }
        let (meta, mapping) = try recover(file)
        return SharedFile(file: file, lockFile: nil, meta: meta, mapping: mapping, options: options, registryKey: nil)
    }

    /// Writes the two meta pages of an empty store (both version 0). Done under the writer lock so that two
    /// processes creating the file at once cannot interleave.
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
        let meta = Meta(
            version: 0, pageCount: 2, pageSize: pageSize, catalog: TreeRoot(kind: .keyed),
            freeTree: TreeRoot(kind: .keyed), commitTime: Clock.microsecondsSince1970())
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: pageSize * 2, alignment: 4096)
        defer { buffer.deallocate() }
        meta.encode(into: buffer, slot: 0)
        meta.encode(into: buffer + pageSize, slot: 1)
        try file.write(UnsafeRawBufferPointer(start: buffer, count: pageSize * 2), at: 0)
        try file.sync()
        if file.isPersistent { DiskFile.syncDirectory(of: file.path) }
    }

    /// Finds the newest valid version: the meta slot with the highest version whose checksum is right, whose page
    /// count fits in the file and whose tree roots are intact pages.
    static func recover(_ file: any PageFile) throws(StorageError) -> (Meta, Mapping) {
        let size = try file.size()
        guard size >= 2 * PageGeometry.minimumPageSize else {
            throw .incompatibleFile(path: file.path, reason: "file of \(size) bytes is too small to be a Strata file")
        }
        let mapping = try file.mapping(covering: size)
        let (meta, _) = try newestValidMeta(in: mapping, fileSize: size, path: file.path)
        let needed = Int(meta.pageCount) * meta.pageSize
        return (meta, needed <= mapping.capacity ? mapping : try file.mapping(covering: needed))
    }

    /// Decodes both meta slots and returns the best one, or throws `incompatibleFile` explaining why none is usable.
    static func newestValidMeta(in mapping: Mapping, fileSize: Int, path: String) throws(StorageError) -> (
        Meta, slot: Int
    ) {
        var candidates: [(Meta, Int)] = []
        var reasons: [String] = []
        let first = Meta.decode(mapping.base, slot: 0, available: fileSize)
        var pageSizes: [Int] = []
        if case .success(let meta) = first {
            pageSizes = [meta.pageSize]
        } else {
            pageSizes = [4096, 1024, 2048, 8192, 16384, 32768]
        }
        for (slot, result) in [(0, first)]
            + pageSizes.map({ (1, Meta.decode(mapping.base + $0, slot: 1, available: fileSize - $0)) })
        {
            switch result {
            case .success(let meta):
                if let problem = validate(meta, mapping: mapping, fileSize: fileSize) {
                    reasons.append("meta \(slot) (version \(meta.version)): \(problem)")
                } else if !candidates.contains(where: { $0.1 == slot }) {
                    candidates.append((meta, slot))
                }
            case .failure(let rejection):
                if slot == 0 || pageSizes.count == 1 { reasons.append("meta \(slot): \(describe(rejection))") }
            }
        }
        if let best = candidates.max(by: { $0.0.version < $1.0.version }) { return best }
        if case .failure(.notStrata) = first, reasons.allSatisfy({ $0.hasSuffix("not a Strata file") }) {
            throw .incompatibleFile(path: path, reason: "not a Strata file (no Strata header)")
        }
        throw .incompatibleFile(
            path: path, reason: reasons.isEmpty ? "no valid meta page" : reasons.joined(separator: "; "))
    }

    private static func describe(_ rejection: Meta.Rejection) -> String {
        switch rejection {
        case .notStrata: "not a Strata file"
        case .unsupportedFormat(let format): "unsupported format version \(format)"
        case .badPageSize(let size): "invalid page size \(size)"
        case .checksum: "checksum mismatch"
        case .inconsistent(let text): text
        }
    }

    /// Checks that a decoded meta fits the file and that its root pages are intact.
    private static func validate(_ meta: Meta, mapping: Mapping, fileSize: Int) -> String? {
        let needed = Int(meta.pageCount) * meta.pageSize
        if needed > fileSize { return "needs \(needed) bytes but the file has \(fileSize)" }
        for tree in [meta.catalog, meta.freeTree] where tree.root != 0 {
            let offset = Int(tree.root) * meta.pageSize
            guard offset + meta.pageSize <= min(fileSize, mapping.capacity) else { return "root page outside the file" }
            let page = mapping.base + offset
            if !PageChecksum.verify(page, page: tree.root, pageSize: meta.pageSize) {
                return "root page \(tree.root) fails its checksum"
            }
            let kind = page.u8(PageHeader.kind)
            if kind != (tree.depth == 1 ? PageKind.leaf : PageKind.branch).rawValue {
                return "root page \(tree.root) has the wrong kind"
            }
        }
        return nil
    }

    // MARK: Readers

    /// Pins the newest version for a reader and returns it with a mapping that covers it.
    func pinLatest() throws(StorageError) -> (Meta, Mapping) {
        try state.withLock { (state: inout State) throws(StorageError) -> (Meta, Mapping) in
            if let lockFile, lockFile.latestVersion != state.latest.version { try reloadFromDisk(&state) }
            while true {
                let version = state.latest.version
                state.pins[version, default: 0] += 1
                guard let lockFile, state.published == 0 || version < state.published else {
                    return (state.latest, state.mapping)
                }
                // First pin of this process (or an older one): publish it, then make sure no writer committed in
                // between, since such a writer may not have seen the pin.
                state.published = version
                lockFile.setPinnedVersion(version)
                if lockFile.latestVersion == version { return (state.latest, state.mapping) }
                unpinLocked(version, &state)
                try reloadFromDisk(&state)
            }
        }
    }

    /// Pins a version that is already pinned (a copy of a reader sharing its snapshot).
    func pinAgain(_ version: UInt64) {
        state.withLock { $0.pins[version, default: 0] += 1 }
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
        lockFile.setPinnedVersion(state.published)
    }

    /// Number of distinct versions pinned in this process.
    var pinnedVersionCount: Int { state.withLock { $0.pins.count } }

    /// The oldest pinned version in this process, if any.
    var oldestPinnedInProcess: UInt64? { state.withLock { $0.pins.keys.min() } }

    /// Versions at or below this may have their freed pages reused by a writer whose base is `base`.
    func reclaimThreshold(base: UInt64) -> UInt64 {
        var threshold = base
        if let oldest = oldestPinnedInProcess { threshold = min(threshold, oldest) }
        if let other = lockFile?.oldestPinnedByOthers() { threshold = min(threshold, other) }
        return threshold
    }

    /// Re-reads the meta pages (another process committed) and extends the mapping if the file grew.
    private func reloadFromDisk(_ state: inout State) throws(StorageError) {
        let size = try file.size()
        let mapping = try file.mapping(covering: size)
        let (meta, _) = try Self.newestValidMeta(in: mapping, fileSize: size, path: path)
        guard meta.pageSize == state.latest.pageSize else {
            throw .incompatibleFile(path: path, reason: "page size changed while the file was open")
        }
        if meta.version >= state.latest.version {
            state.latest = meta
            state.mapping = mapping
        }
    }

    // MARK: Writers

    /// Takes both halves of the write lock, blocking the calling thread.
    func lockForWriting() throws(StorageError) -> WriteContext {
        gate.lock()
        do {
            try lockFile?.lockWriter(timeout: options.writeLockTimeout)
            return try makeWriteContext()
        } catch {
            lockFile?.unlockWriter()
            gate.unlock()
            throw error
        }
    }

    /// Takes both halves of the write lock by suspending: the in-process gate through a continuation, the
    /// cross-process lock on a dedicated thread when another process holds it.
    func lockForWriting() async throws(StorageError) -> WriteContext {
        try await gate.lock()
        do {
            if let lockFile, !(try lockFile.tryLockWriter()) {
                let timeout = options.writeLockTimeout
                let result: Result<Void, StorageError> = await withCheckedContinuation { continuation in
                    runOnDedicatedThread {
                        do throws(StorageError) {
                            try lockFile.lockWriter(timeout: timeout)
                            continuation.resume(returning: .success(()))
                        } catch {
                            continuation.resume(returning: .failure(error))
                        }
                    }
                }
                try result.get()
            }
            return try makeWriteContext()
        } catch {
            lockFile?.unlockWriter()
            gate.unlock()
            throw error
        }
    }

    private func makeWriteContext() throws(StorageError) -> WriteContext {
        guard file.isWritable, !options.readOnly else { throw .readOnly(path: path) }
        let (meta, mapping, repair) = try state.withLock {
            (state: inout State) throws(StorageError) -> (Meta, Mapping, Meta?) in
            if lockFile != nil { try reloadFromDisk(&state) }
            return (state.latest, state.mapping, state.metaRepair)
        }
        if let repair {
            // The previous commit failed while writing its meta page, which may now hold garbage or that commit.
            // Overwrite that slot with the current version so that recovery can never pick the failed commit.
            try writeMetaPage(repair, slot: Int((repair.version + 1) % 2), durable: true)
            state.withLock { $0.metaRepair = nil }
        }
        return WriteContext(shared: self, base: meta, mapping: mapping)
    }

    /// Releases the write lock.
    func unlockWriting() {
        lockFile?.unlockWriter()
        gate.unlock()
    }

    /// Writes the meta page of a new version (the commit point) and publishes it.
    func writeMeta(_ meta: Meta, durable: Bool) throws(StorageError) {
        // Make sure readers can map the new pages before the version becomes visible.
        let mapping = try file.mapping(covering: Int(meta.pageCount) * meta.pageSize)
        do {
            try writeMetaPage(meta, slot: Int(meta.version % 2), durable: durable)
        } catch {
            let current = state.withLock { $0.latest }
            state.withLock { $0.metaRepair = current }
            throw error
        }
        state.withLock { state in
            state.latest = meta
            state.mapping = mapping
        }
        lockFile?.publish(latest: meta.version)
    }

    private func writeMetaPage(_ meta: Meta, slot: Int, durable: Bool) throws(StorageError) {
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: meta.pageSize, alignment: 4096)
        defer { buffer.deallocate() }
        meta.encode(into: buffer, slot: PageNumber(slot))
        try file.write(UnsafeRawBufferPointer(start: buffer, count: meta.pageSize), at: slot * meta.pageSize)
        if durable { try file.sync() }
    }

    /// The newest committed version known to this process.
    var latest: Meta { state.withLock { $0.latest } }
}

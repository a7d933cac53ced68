import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The `.lock` file beside a data file: the cross-process write lock and the shared reader table.
///
/// Layout (mapped shared by every process that has the data file open; native byte order, since only processes
/// on the same machine share it):
/// ```
/// 0   u64 magic "STRATALK"   8  u32 format version   12 u32 slot capacity
/// 16  u64 change counter: incremented by every commit, after the commit is durable
/// 24  u64 newest committed version (informational)
/// 32  u64 commit log epoch, 40 u64 commit log end offset, 48 u64 records in the log (0, 0, 0: not known yet)
/// 64  slots, 32 bytes each: u64 owner pid, u64 oldest version pinned by that process (0 = none), 16 reserved
/// ```
/// Byte-range locks (see ``RangeLock``): byte 0 is the writer lock; byte 1 serialises initialisation;
/// byte `1024 + i` is held by the process that owns slot `i` for as long as it has the file open. A slot whose
/// lock nobody holds belongs to a process that died, and its pinned version is ignored: that is how a crashed
/// reader stops holding pages back.
///
/// A process opens each lock file once (``shared(forDataFile:optional:)``): one descriptor, one slot, one write
/// gate, whatever the number of handles on the data file. The slot publishes the oldest version pinned by any
/// of them.
final class LockFile: @unchecked Sendable {
    static let capacity = 126
    static let headerSize = 64
    static let slotSize = 32
    static let fileSize = headerSize + capacity * slotSize
    static let magic: UInt64 = 0x4B4C_4154_4152_5453  // "STRATALK" little-endian
    static let formatVersion: UInt32 = 1
    static let writerByte = 0
    static let initByte = 1
    static let slotLockBase = 1024

    let path: String
    private let fd: Int32
    private let base: UnsafeMutableRawPointer
    let slot: Int
    /// The in-process half of the write lock, shared by every handle on the file in this process.
    let gate = WriteGate()
    /// Oldest pinned version per pinning source (each handle's coordinator), combined into the slot.
    private let pins = Locked<[ObjectIdentifier: UInt64]>([:])

    final class WeakLockFile {
        weak var value: LockFile?
        init(_ value: LockFile) { self.value = value }
    }
    static let registry = Locked<[String: WeakLockFile]>([:])

    /// The process's lock file for `dataPath` (`<dataPath>.lock`), opened and its slot claimed on first use. Returns nil when `optional` is set and the lock file cannot be created (read-only media).
    ///
    /// The registry is keyed by the lock file's own device and inode: where the locks are POSIX record locks,
    /// closing any descriptor of a file drops all of the process's locks on it, so a process must never hold two
    /// descriptors of one lock file (which keying by the data file would allow when the data file is replaced,
    /// see `Store.compactOnLaunch`).
    static func shared(forDataFile dataPath: String, optional: Bool) throws(StorageError) -> LockFile? {
        try registry.withLock { (files: inout [String: WeakLockFile]) throws(StorageError) -> LockFile? in
            let path = dataPath + ".lock"
            var info = stat()
            if stat(path, &info) == 0, let existing = files["\(info.st_dev):\(info.st_ino)"]?.value {
                return existing
            }
            let fd = posixOpen(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
            if fd < 0 {
                let code = errno
                if optional && (code == EACCES || code == EROFS || code == EPERM) { return nil }
                throw Errno.error("open", path: path, code: code)
            }
            guard fstat(fd, &info) == 0 else {
                let error = Errno.error("fstat", path: path)
                _ = posixClose(fd)
                throw error
            }
            let key = "\(info.st_dev):\(info.st_ino)"
            if let existing = files[key]?.value {
                // Created between the look and the open by this process: keep the one descriptor.
                _ = posixClose(fd)
                return existing
            }
            do throws(StorageError) {
                let file = try LockFile(fd: fd, path: path)
                files[key] = WeakLockFile(file)
                return file
            } catch {
                _ = posixClose(fd)
                throw error
            }
        }
    }

    /// Whether the lock file's path still names this lock file. ``Store/deleteFiles(path:)`` unlinks a lock file
    /// while it holds byte 1, so a process that was waiting for that byte claims a slot in a file nobody checks
    /// any more, and must open again.
    var isStillAtItsPath: Bool {
        var named = stat()
        var opened = stat()
        return stat(path, &named) == 0 && fstat(fd, &opened) == 0 && named.st_dev == opened.st_dev
            && named.st_ino == opened.st_ino
    }

    /// Runs `body` holding the initialisation lock, which every process takes while it claims a slot: no other
    /// process can finish opening the file meanwhile.
    func withInitializationLock<R>(_ body: () throws(StorageError) -> R) throws(StorageError) -> R {
        _ = try RangeLock.lock(fd, at: Self.initByte, wait: true, path: path)
        defer { RangeLock.unlock(fd, at: Self.initByte) }
        return try body()
    }

    private init(fd: Int32, path: String) throws(StorageError) {
        self.fd = fd
        self.path = path
        _ = try RangeLock.lock(fd, at: Self.initByte, wait: true, path: path)
        defer { RangeLock.unlock(fd, at: Self.initByte) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw Errno.error("fstat", path: path) }
        if Int(info.st_size) < Self.fileSize {
            guard ftruncate(fd, off_t(Self.fileSize)) == 0 else { throw Errno.error("ftruncate", path: path) }
        }
        guard let pointer = mmap(nil, Self.fileSize, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0), pointer != MAP_FAILED
        else { throw Errno.error("mmap", path: path) }
        base = pointer
        if base.load(fromByteOffset: 0, as: UInt64.self) == Self.magic {
            let format = base.load(fromByteOffset: 8, as: UInt32.self)
            let capacity = base.load(fromByteOffset: 12, as: UInt32.self)
            guard format == Self.formatVersion, capacity == UInt32(Self.capacity) else {
                munmap(base, Self.fileSize)
                throw .incompatibleFile(
                    path: path,
                    reason: "lock file format \(format) with \(capacity) slots belongs to another Strata version")
            }
        } else {
            // A new (or foreign) lock file: nobody uses it, since every user checks the magic under the init lock.
            base.initializeMemory(as: UInt8.self, repeating: 0, count: Self.fileSize)
            base.storeBytes(of: Self.formatVersion, toByteOffset: 8, as: UInt32.self)
            base.storeBytes(of: UInt32(Self.capacity), toByteOffset: 12, as: UInt32.self)
            base.storeBytes(of: Self.magic, toByteOffset: 0, as: UInt64.self)
        }
        var claimed = -1
        for index in 0..<Self.capacity
        where try RangeLock.lock(fd, at: Self.slotLockBase + index, wait: false, path: path) {
            claimed = index
            break
        }
        guard claimed >= 0 else {
            munmap(base, Self.fileSize)
            throw .readerTableFull(path: path, capacity: Self.capacity)
        }
        slot = claimed
        // The previous owner of this slot, if any, is dead: its lock was free.
        atomic(Self.slotOffset(claimed) + 8).pointee.store(0, ordering: .sequentiallyConsistent)
        atomic(Self.slotOffset(claimed)).pointee.store(UInt64(getpid()), ordering: .sequentiallyConsistent)
    }

    deinit {
        atomic(Self.slotOffset(slot) + 8).pointee.store(0, ordering: .sequentiallyConsistent)
        atomic(Self.slotOffset(slot)).pointee.store(0, ordering: .sequentiallyConsistent)
        RangeLock.unlock(fd, at: Self.slotLockBase + slot)
        munmap(base, Self.fileSize)
        _ = posixClose(fd)
    }

    private static func slotOffset(_ index: Int) -> Int { headerSize + index * slotSize }

    @inline(__always)
    private func atomic(_ offset: Int) -> UnsafeMutablePointer<Atomic<UInt64>> {
        (base + offset).assumingMemoryBound(to: Atomic<UInt64>.self)
    }

    /// Changes whenever any process commits. Readers compare it before and after publishing a pin.
    var changeCounter: UInt64 { atomic(16).pointee.load(ordering: .sequentiallyConsistent) }

    /// Announces a durable commit to other processes.
    func announceCommit(version: UInt64) {
        atomic(24).pointee.store(version, ordering: .sequentiallyConsistent)
        atomic(16).pointee.add(1, ordering: .sequentiallyConsistent)
    }

    /// Where the commit log stands, as the last writer left it (nil before any process recorded it): its epoch,
    /// end, record count and capacity (0 when recorded by a version that did not track it).
    /// Read and written only with the writer lock held.
    var logState: CommitLog.Position? {
        get {
            let end = atomic(40).pointee.load(ordering: .sequentiallyConsistent)
            guard end != 0 else { return nil }
            return (
                atomic(32).pointee.load(ordering: .sequentiallyConsistent), Int(end),
                Int(atomic(48).pointee.load(ordering: .sequentiallyConsistent)),
                Int(atomic(56).pointee.load(ordering: .sequentiallyConsistent))
            )
        }
        set {
            atomic(32).pointee.store(newValue?.epoch ?? 0, ordering: .sequentiallyConsistent)
            atomic(48).pointee.store(UInt64(newValue?.records ?? 0), ordering: .sequentiallyConsistent)
            atomic(56).pointee.store(UInt64(newValue?.capacity ?? 0), ordering: .sequentiallyConsistent)
            atomic(40).pointee.store(UInt64(newValue?.end ?? 0), ordering: .sequentiallyConsistent)
        }
    }

    /// Records the oldest version `source` pins (0 = none) and publishes the oldest over all sources, followed by
    /// a full fence: a reader that re-reads the change counter afterwards is ordered against writers scanning
    /// the table (the publish-then-revalidate handshake of FileFormat.md).
    func setPinnedVersion(_ version: UInt64, source: ObjectIdentifier) {
        pins.withLock { pins in
            pins[source] = version == 0 ? nil : version
            let oldest = pins.values.min() ?? 0
            atomic(Self.slotOffset(slot) + 8).pointee.store(oldest, ordering: .sequentiallyConsistent)
        }
        atomicMemoryFence(ordering: .sequentiallyConsistent)
    }

    /// The oldest version pinned by any handle of this process.
    func oldestPinnedInThisProcess() -> UInt64? { pins.withLock { $0.values.min() } }

    /// The oldest version pinned by another live process, if any. Slots of dead processes are skipped.
    func oldestPinnedByOthers() -> UInt64? {
        atomicMemoryFence(ordering: .sequentiallyConsistent)
        var oldest: UInt64?
        for index in 0..<Self.capacity where index != slot {
            let pinned = atomic(Self.slotOffset(index) + 8).pointee.load(ordering: .sequentiallyConsistent)
            guard pinned != 0, pinned < (oldest ?? .max) else { continue }
            guard RangeLock.isHeldElsewhere(fd, at: Self.slotLockBase + index) else { continue }
            oldest = pinned
        }
        return oldest
    }

    /// Process ids and pinned versions of the live slots (for `info` output).
    func liveReaders() -> [(pid: Int, pinned: UInt64)] {
        var readers = [(pid: Int, pinned: UInt64)]()
        for index in 0..<Self.capacity {
            let pid = atomic(Self.slotOffset(index)).pointee.load(ordering: .sequentiallyConsistent)
            guard pid != 0 else { continue }
            if index != slot && !RangeLock.isHeldElsewhere(fd, at: Self.slotLockBase + index) { continue }
            readers.append(
                (Int(pid), atomic(Self.slotOffset(index) + 8).pointee.load(ordering: .sequentiallyConsistent)))
        }
        return readers
    }

    /// Takes the cross-process writer lock, blocking the calling thread (use only off the cooperative pool).
    /// Without a deadline and a stop condition it sleeps in the kernel until the lock is free; otherwise it polls,
    /// throwing ``StorageError/lockTimeout(path:)`` at the deadline and ``StorageError/cancelled`` when
    /// `shouldStop` returns true.
    func lockWriter(timeout: Duration?, shouldStop: (@Sendable () -> Bool)? = nil) throws(StorageError) {
        if timeout == nil && shouldStop == nil {
            _ = try RangeLock.lock(fd, at: Self.writerByte, wait: true, path: path)
            return
        }
        let clock = ContinuousClock()
        let deadline = timeout.map { clock.now.advanced(by: $0) }
        var pause = 50_000  // nanoseconds
        while true {
            if try RangeLock.lock(fd, at: Self.writerByte, wait: false, path: path) { return }
            if let deadline, clock.now >= deadline { throw .lockTimeout(path: path) }
            if shouldStop?() == true { throw .cancelled }
            var request = timespec(tv_sec: 0, tv_nsec: pause)
            nanosleep(&request, nil)
            pause = min(pause * 2, 2_000_000)
        }
    }

    /// Takes the writer lock if it is free.
    func tryLockWriter() throws(StorageError) -> Bool {
        try RangeLock.lock(fd, at: Self.writerByte, wait: false, path: path)
    }

    /// Releases the writer lock.
    func unlockWriter() { RangeLock.unlock(fd, at: Self.writerByte) }

    /// Whether another process holds the writer lock (a write transaction of it is under way).
    var writerIsHeldElsewhere: Bool { RangeLock.isHeldElsewhere(fd, at: Self.writerByte) }
}

/// `open(2)` with a mode, callable from Swift on every platform.
func posixOpen(_ path: String, _ flags: Int32, _ mode: mode_t) -> Int32 {
    #if canImport(Darwin)
        return Darwin.open(path, flags, mode)
    #else
        return open(path, flags, mode)
    #endif
}

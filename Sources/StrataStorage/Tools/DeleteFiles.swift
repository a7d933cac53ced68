#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

extension Store {
    /// Deletes the store file at `path`, its commit log (`<path>.log`) and its lock file (`<path>.lock`) — unless a
    /// handle in this or another process has the file open, or is opening it: then nothing is deleted and this
    /// throws ``StorageError/fileInUse(path:)``. Returns whether the file existed.
    ///
    /// ```swift
    /// do {
    ///     try Store.deleteFiles(path: "cache.strata")
    /// } catch StorageError.fileInUse {
    ///     // close the stores that use it, then try again
    /// }
    /// ```
    ///
    /// Deleting a file that is open would lose data silently: its users would go on committing into a file that
    /// no path reaches any more, and the next open would create an empty one. So the check and the deletion are
    /// one step that no open can slip into:
    ///
    /// - in this process, the registry of open files is held throughout (every open holds it too, from its first
    ///   look at the path until it is registered), and the file must not be in it, nor its lock file in the
    ///   registry of lock files;
    /// - across processes, byte 1 of the lock file is held throughout (the lock file is created if it is missing,
    ///   so there is always one to lock). An opener claims its slot under that byte, so once it is held every
    ///   process with the file open shows as a held slot lock, and none may be; a process still opening waits for
    ///   the byte. The files go while the byte is held — the log first (a log left beside a new file of the same
    ///   name must never be replayed into it), then the file, then the lock file — and an opener that was
    ///   waiting compares the path with the file it opened once it holds its slot, finds it gone and opens again.
    ///
    /// Byte 1 is taken without waiting: if another process holds it (opening, or compacting the file on launch),
    /// the file is in use.
    @discardableResult
    public static func deleteFiles(path: String) throws(StorageError) -> Bool {
        let existed = try unlinkUnusedFiles(path: path)
        // Outside the registry: opens elsewhere in this process need not wait for the directory's sync.
        DiskFile.syncDirectory(of: path)
        return existed
    }

    /// The check and the unlinking of ``deleteFiles(path:)``; returns whether the file existed.
    private static func unlinkUnusedFiles(path: String) throws(StorageError) -> Bool {
        try SharedFile.registry.withLock { (files: inout [String: SharedFile.WeakFile]) throws(StorageError) -> Bool in
            var info = stat()
            if stat(path, &info) == 0, files["file:\(info.st_dev):\(info.st_ino)"]?.value != nil {
                throw .fileInUse(path: path)
            }
            return try LockFile.registry.withLock {
                (locks: inout [String: LockFile.WeakLockFile]) throws(StorageError) -> Bool in
                let lockPath = path + ".lock"
                if stat(lockPath, &info) == 0, locks["\(info.st_dev):\(info.st_ino)"]?.value != nil {
                    throw .fileInUse(path: path)
                }
                return try LockFile.whileUnused(lockPath: lockPath, dataPath: path) { () throws(StorageError) in
                    try unlinkIfPresent(path + ".log")
                    let existed = try unlinkIfPresent(path)
                    try unlinkIfPresent(lockPath)
                    return existed
                }
            }
        }
    }

    /// Whether an in-memory store opened with `identifier` is open in this process. Its data lives as long as
    /// some handle on it does and is gone after that: there are no files to delete.
    public static func isInMemoryStoreOpen(identifier: String) -> Bool {
        SharedFile.registry.withLock { $0["memory:" + identifier]?.value != nil }
    }

    /// Removes the file at `path`; returns false if there was none.
    @discardableResult
    private static func unlinkIfPresent(_ path: String) throws(StorageError) -> Bool {
        if unlink(path) == 0 { return true }
        if errno == ENOENT { return false }
        throw Errno.error("unlink", path: path)
    }
}

extension LockFile {
    /// Runs `body` holding byte 1 (the initialisation lock) of the lock file at `lockPath` while no other process
    /// holds a slot or the writer lock: no process has the data file open, and none can finish opening it before
    /// `body` returns. Throws ``StorageError/fileInUse(path:)`` (naming `dataPath`) otherwise, without waiting.
    ///
    /// The lock file is opened with a descriptor of its own. The caller makes sure that this process has no
    /// ``LockFile`` on it: where the locks are POSIX record locks, closing this descriptor would otherwise drop
    /// that object's locks, and `F_GETLK` does not report a process's own locks.
    static func whileUnused<R>(lockPath: String, dataPath: String, _ body: () throws(StorageError) -> R)
        throws(StorageError) -> R
    {
        let fd = posixOpen(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            let code = errno
            // No lock file and none can be made (a missing or read-only directory): fine if there is nothing to
            // delete either (an opener that creates the file meanwhile finds it gone and opens again).
            if access(dataPath, F_OK) != 0, access(dataPath + ".log", F_OK) != 0 { return try body() }
            throw Errno.error("open", path: lockPath, code: code)
        }
        defer { _ = posixClose(fd) }
        guard try RangeLock.lock(fd, at: initByte, wait: false, path: lockPath) else {
            throw .fileInUse(path: dataPath)
        }
        defer { RangeLock.unlock(fd, at: initByte) }
        if RangeLock.isHeldElsewhere(fd, at: writerByte)
            || RangeLock.isHeldElsewhere(fd, at: slotLockBase, count: capacity)
        {
            throw .fileInUse(path: dataPath)
        }
        return try body()
    }
}

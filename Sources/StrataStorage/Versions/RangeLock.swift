#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Byte-range locks on the lock file, shared across processes.
///
/// On Linux these are open-file-description locks (`F_OFD_*`): owned by the open file rather than the process,
/// so closing an unrelated descriptor of the same file cannot drop them. Elsewhere classic POSIX record locks
/// are used; the engine keeps exactly one descriptor per lock file per process, which avoids their pitfalls.
/// The kernel releases every lock of a process that dies, which is how crashed readers and writers are detected.
enum RangeLock {
    #if os(Linux)
        private static let getCommand: Int32 = 36  // F_OFD_GETLK
        private static let setCommand: Int32 = 37  // F_OFD_SETLK
        private static let waitCommand: Int32 = 38  // F_OFD_SETLKW
    #else
        private static let getCommand = F_GETLK
        private static let setCommand = F_SETLK
        private static let waitCommand = F_SETLKW
    #endif

    private static func request(_ type: Int32, start: Int, count: Int = 1) -> flock {
        var request = flock()
        request.l_type = Int16(type)
        request.l_whence = Int16(SEEK_SET)
        request.l_start = off_t(start)
        request.l_len = off_t(count)
        request.l_pid = 0
        return request
    }

    /// Takes an exclusive lock on byte `start`. Without `wait`, returns false when another holder has it.
    static func lock(_ fd: Int32, at start: Int, wait: Bool, path: String) throws(StorageError) -> Bool {
        var request = request(Int32(F_WRLCK), start: start)
        while true {
            if fcntl(fd, wait ? waitCommand : setCommand, &request) == 0 { return true }
            let code = errno
            if code == EINTR { continue }
            if !wait && (code == EAGAIN || code == EACCES) { return false }
            throw Errno.error("fcntl(lock)", path: path, code: code)
        }
    }

    /// Releases the lock on byte `start`.
    static func unlock(_ fd: Int32, at start: Int) {
        var request = request(Int32(F_UNLCK), start: start)
        _ = fcntl(fd, setCommand, &request)
    }

    /// Whether some other open file (another process) holds a lock on byte `start`, or on any of the `count`
    /// bytes from it (one system call for the whole range).
    static func isHeldElsewhere(_ fd: Int32, at start: Int, count: Int = 1) -> Bool {
        var request = request(Int32(F_WRLCK), start: start, count: count)
        guard fcntl(fd, getCommand, &request) == 0 else { return true }  // unknown: assume alive (conservative)
        return request.l_type != Int16(F_UNLCK)
    }
}

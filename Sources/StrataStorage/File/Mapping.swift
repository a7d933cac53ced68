#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A read-only view of a file's bytes: a memory map of a disk file, or the buffer of an in-memory file.
///
/// A mapping never moves. When a file outgrows it, the file creates a larger mapping for new readers while
/// readers that still hold this one keep using it; the bytes they can reach never change (copy-on-write),
/// so both views agree on every page a reader may visit. The region is released when the last holder goes away.
final class Mapping: @unchecked Sendable {
    /// First byte of the region.
    let base: UnsafeRawPointer
    /// Bytes addressable from `base`. Bytes past the file's end must not be read (the caller checks page numbers).
    let capacity: Int
    private let release: @Sendable (UnsafeMutableRawPointer, Int) -> Void

    init(
        base: UnsafeMutableRawPointer, capacity: Int,
        release: @escaping @Sendable (UnsafeMutableRawPointer, Int) -> Void
    ) {
        self.base = UnsafeRawPointer(base)
        self.capacity = capacity
        self.release = release
    }

    deinit { release(UnsafeMutableRawPointer(mutating: base), capacity) }

    /// Maps `capacity` bytes of `fd` read-only and shared, so writes through `pwrite` become visible in the map.
    static func mapFile(fd: Int32, capacity: Int, path: String) throws(StorageError) -> Mapping {
        var size = capacity
        // Some environments (sanitizers, address-space limits) refuse large reservations: halve until one fits,
        // but never below what the file needs right now.
        let minimum = max(Mapping.systemPageSize, capacity / 64)
        while true {
            let pointer = mmap(nil, size, PROT_READ, MAP_SHARED, fd, 0)
            if let pointer, pointer != MAP_FAILED {
                return Mapping(base: pointer, capacity: size) { base, count in _ = munmap(base, count) }
            }
            let code = errno
            if (code == ENOMEM || code == EINVAL) && size / 2 >= minimum {
                size /= 2
                continue
            }
            throw Errno.error("mmap", path: path, code: code)
        }
    }

    /// Reserves zero-filled anonymous memory (used by in-memory files).
    static func anonymous(capacity: Int) -> Mapping? {
        let pointer = mmap(nil, capacity, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANON | Mapping.noReserve, -1, 0)
        guard let pointer, pointer != MAP_FAILED else { return nil }
        return Mapping(base: pointer, capacity: capacity) { base, count in _ = munmap(base, count) }
    }

    /// The operating system's memory page size.
    static let systemPageSize = Int(sysconf(Int32(_SC_PAGESIZE)))

    #if canImport(Darwin)
        private static let noReserve: Int32 = 0
    #else
        private static let noReserve: Int32 = MAP_NORESERVE
    #endif

    /// Rounds `value` up to a multiple of `alignment` (a power of two).
    static func roundUp(_ value: Int, to alignment: Int) -> Int { (value + alignment - 1) & ~(alignment - 1) }
}

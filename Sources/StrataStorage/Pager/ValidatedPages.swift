import Synchronization

/// Which pages of one file have been validated (checksum and structure), and at which page version: the memory
/// that lets every page be checked on first use and never again while it keeps its contents.
///
/// A page reachable from a committed version never changes (copy-on-write), and its header carries the version
/// that wrote it. So "page N was validated when its header said version V" stays true until page N is rewritten,
/// which a later commit (of this or another process) does only after N was freed, stamping a newer version: a
/// reader that finds another version in the header validates the page again. Entries are only a shortcut: a
/// stale or missing entry costs one more validation, never a skipped one.
///
/// One instance per open file (``SharedFile``), shared by every reader and writer of the process. Lookups are
/// lock-free: a directory of chunks, each holding, per page, the version it was validated at (0 = not validated;
/// no tree page has version 0) and the number of entries under it (a leaf's entry count, a branch's sum of its
/// children's counts), which lets every descent check a parent's count against the child in O(1). Recording a
/// validation takes a lock; it happens once per page.
///
/// Memory: 16 bytes per page of the file that was ever read (0.4% of the file at 4 KiB pages), in chunks of
/// 4096 pages allocated on first use, so the table grows with the file and with what is read of it.
final class ValidatedPages: @unchecked Sendable {
    // @unchecked: the raw memory below is reached only through atomics, or under `lock` (installing a chunk,
    // growing the directory, recording an entry). Directories and chunks are freed only in deinit.

    private static let chunkShift = 12
    private static let chunkPages = 1 << chunkShift

    /// Address of the current directory: `capacity + 1` atomic words, word 0 the capacity (chunks it can
    /// address), then the address of each chunk (0 = not allocated yet). Replaced, never modified in place,
    /// when the file outgrows it; old directories stay allocated for readers that still look at them.
    private let directory: Atomic<UInt>
    /// Every directory and chunk ever allocated (freed in deinit); the lock serialises all stores.
    private let lock = Locked(Allocations())

    private struct Allocations {
        var directories: [UnsafeMutablePointer<Atomic<UInt>>] = []
        var chunks: [UnsafeMutablePointer<Atomic<UInt64>>] = []
    }

    /// An empty table. Its directory starts small and doubles as pages further into the file are validated, so
    /// opening a file costs nothing proportional to its size.
    init() {
        let directory = Self.makeDirectory(capacity: 16, copying: nil)
        self.directory = Atomic(UInt(bitPattern: directory))
        lock.withLock { $0.directories.append(directory) }
    }

    deinit {
        lock.withLock { allocations in
            for directory in allocations.directories {
                let words = Int(directory[0].load(ordering: .relaxed)) + 1
                directory.deinitialize(count: words)
                directory.deallocate()
            }
            for chunk in allocations.chunks {
                chunk.deinitialize(count: 2 * Self.chunkPages)
                chunk.deallocate()
            }
        }
    }

    private static func makeDirectory(capacity: Int, copying old: UnsafeMutablePointer<Atomic<UInt>>?)
        -> UnsafeMutablePointer<Atomic<UInt>>
    {
        let directory = UnsafeMutablePointer<Atomic<UInt>>.allocate(capacity: capacity + 1)
        directory.initialize(to: Atomic(UInt(capacity)))
        let copied = old.map { Int($0[0].load(ordering: .relaxed)) } ?? 0
        for index in 1...capacity {
            let chunk = index <= copied ? old![index].load(ordering: .relaxed) : 0
            (directory + index).initialize(to: Atomic(chunk))
        }
        return directory
    }

    /// The chunk holding `page`'s entry, if allocated (lock-free).
    @inline(__always)
    private func chunk(of page: PageNumber) -> UnsafeMutablePointer<Atomic<UInt64>>? {
        let directory = UnsafeMutablePointer<Atomic<UInt>>(bitPattern: self.directory.load(ordering: .acquiring))
            .unsafelyUnwrapped
        let index = Int(page) >> Self.chunkShift + 1
        guard index <= Int(directory[0].load(ordering: .relaxed)) else { return nil }
        return UnsafeMutablePointer(bitPattern: directory[index].load(ordering: .acquiring))
    }

    /// The number of entries under `page` when it was validated with its header saying `version`; nil when it
    /// was not (yet) validated at that version.
    @inline(__always)
    func entries(_ page: PageNumber, version: UInt64) -> UInt64? {
        guard let chunk = chunk(of: page) else { return nil }
        let slot = chunk + 2 * (Int(page) & (Self.chunkPages - 1))
        // A sequence-lock read: `record` clears the version, stores the count, then publishes the version, so a
        // count read between two loads of the same version belongs to that version.
        guard slot[0].load(ordering: .acquiring) == version else { return nil }
        let entries = slot[1].load(ordering: .relaxed)
        atomicMemoryFence(ordering: .acquiring)
        guard slot[0].load(ordering: .relaxed) == version else { return nil }
        return entries
    }

    /// Notes that `page` passed validation with its header saying `version`, holding `entries` entries.
    func record(_ page: PageNumber, version: UInt64, entries: UInt64) {
        lock.withLock { allocations in
            let chunk = chunk(of: page) ?? install(page, &allocations)
            let slot = chunk + 2 * (Int(page) & (Self.chunkPages - 1))
            slot[0].store(0, ordering: .relaxed)
            atomicMemoryFence(ordering: .releasing)
            slot[1].store(entries, ordering: .relaxed)
            slot[0].store(version, ordering: .releasing)
        }
    }

    /// Allocates the chunk of `page` (growing the directory first when it is too small). Called under the lock.
    private func install(_ page: PageNumber, _ allocations: inout Allocations) -> UnsafeMutablePointer<Atomic<UInt64>> {
        var directory = UnsafeMutablePointer<Atomic<UInt>>(bitPattern: self.directory.load(ordering: .relaxed))
            .unsafelyUnwrapped
        let index = Int(page) >> Self.chunkShift + 1
        if index > Int(directory[0].load(ordering: .relaxed)) {
            directory = Self.makeDirectory(capacity: index * 2, copying: directory)
            allocations.directories.append(directory)
            self.directory.store(UInt(bitPattern: directory), ordering: .releasing)
        }
        let chunk = UnsafeMutablePointer<Atomic<UInt64>>.allocate(capacity: 2 * Self.chunkPages)
        for entry in 0..<(2 * Self.chunkPages) { (chunk + entry).initialize(to: Atomic(0)) }
        allocations.chunks.append(chunk)
        directory[index].store(UInt(bitPattern: chunk), ordering: .releasing)
        return chunk
    }
}

/// The memory an encrypted file's commits seal their pages into before writing them: one buffer per open file,
/// kept from commit to commit.
///
/// A commit used to allocate a buffer the size of everything it wrote and free it afterwards. For a large commit
/// that is fresh memory the kernel must fault in page by page (on this machine's virtual machine about 3 µs a
/// 4 KiB page, as much as sealing the page), and the same again at the next commit. Now a large commit seals and
/// writes its pages in batches of at most ``batchPages`` through this buffer, and a logged commit (a few hundred
/// pages at most, all needed at once by its log record) seals them all into it; the buffer only grows.
///
/// Used by the writer holding the file's write lock only (commits of one file never overlap in a process), and
/// never after the commit returns: a logged commit's page writes end before it does.
final class SealingStage: @unchecked Sendable {
    // @unchecked: only the committing writer touches it (see above).

    /// Pages a large commit seals and writes at a time: 1 MiB of 4 KiB pages, few enough to stay in the caches,
    /// enough for long sequential writes.
    static let batchPages = 256

    private var buffer: UnsafeMutableRawPointer?
    private var capacity = 0

    deinit { buffer?.deallocate() }

    /// A buffer of at least `pages` pages of `pageSize` bytes, valid until the next call.
    func buffer(pages: Int, pageSize: Int) -> UnsafeMutableRawPointer {
        let needed = max(1, pages) * pageSize
        if let buffer, capacity >= needed { return buffer }
        buffer?.deallocate()
        let grown = max(needed, capacity * 2)
        let fresh = UnsafeMutableRawPointer.allocate(byteCount: grown, alignment: 4096)
        buffer = fresh
        capacity = grown
        return fresh
    }
}

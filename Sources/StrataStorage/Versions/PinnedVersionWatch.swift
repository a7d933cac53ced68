#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Noticing, at a commit, a reader that keeps old versions alive (``StoreEvent/PinnedVersions``).
///
/// A commit that reused (or tried to reuse) freed pages has already asked how old the oldest reader is (the
/// reclaim threshold: the oldest version pinned in this or another process), so the check itself costs a
/// subtraction. Only when it fires — the gap reached ``StoreEvent/PinnedVersions/warningThreshold`` for a newly
/// pinned version, or doubled since it was last reported — does it find out who pins the version and count the
/// free pages held (one walk over the free tree's records newer than it).
extension WriteContext {
    /// The warning this commit (creating `version`) should report, if any. Called with the write lock held, after
    /// the commit succeeded.
    func pinnedVersionWarning() -> StoreEvent.PinnedVersions? {
        guard let pinned = threshold, pinned < version else { return nil }
        let behind = version - pinned
        guard behind >= StoreEvent.PinnedVersions.warningThreshold else { return nil }
        if let reported = shared.pinnedVersionReported, reported.version == pinned, behind < reported.behind * 2 {
            return nil
        }
        shared.pinnedVersionReported = (pinned, behind)
        let readersHere = shared.pinnedVersions[pinned] ?? 0
        var pid: Int?
        if readersHere > 0 {
            pid = Int(getpid())
        } else if let lockFile = shared.lockFile {
            pid = lockFile.liveReaders().first { $0.pinned == pinned && $0.pid != Int(getpid()) }?.pid
        }
        let held = (try? pagesFreed(after: pinned)) ?? 0
        return StoreEvent.PinnedVersions(
            path: shared.path, pinnedVersion: pinned, newestVersion: version, pid: pid,
            inThisProcess: readersHere > 0, readers: readersHere, pagesHeld: held,
            bytesHeld: held * geometry.pageSize)
    }

    /// Pages in the free tree's records of versions newer than `pinned`: freed since then, reusable only once
    /// nothing pins `pinned` (or older).
    private func pagesFreed(after pinned: UInt64) throws(StorageError) -> Int {
        var count = 0
        var cursor = CursorCore(source: pages, tree: freeTree)
        var more = try cursor.first()
        while more {
            let entry = try cursor.entry()
            if entry.key.count == Self.freeKeySize, entry.storage == .inline, entry.length >= 4,
                Bytes.readBigEndian(UInt64.self, entry.key, at: 0) > pinned
            {
                count += Int(entry.inlineValue.loadUnaligned(fromByteOffset: 0, as: UInt32.self).littleEndian)
            }
            more = try cursor.next()
        }
        return count
    }
}

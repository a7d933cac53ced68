/// Why a store opened at an older version than the newest commit its file holds.
///
/// Opening picks the newest meta page whose checksum, root pages and (for small commits) written pages are
/// intact, so a newest commit that cannot be read — its meta page or a root page damaged, or its pages cut short
/// by a power loss before they reached the disk — is dropped and the file opens at the commit before it. Nothing
/// acknowledged is lost when the commit was cut by a crash (it never returned); anything else is damage. Either
/// way the open says so here, instead of silently going back one version.
///
/// ```swift
/// let store = try Store.open(path: "data.strata")
/// if let notice = store.recovery {
///     print(notice)  // opened version 41; dropped version 42: root page 7 fails its checksum
/// }
/// ```
public struct RecoveryNotice: Sendable, Equatable, CustomStringConvertible {
    /// The commit that was dropped, or nil when its meta page is too damaged to tell (the slot then held either
    /// the commit after ``openedVersion`` or the one before it).
    public let droppedVersion: UInt64?
    /// The version the store opened at.
    public let openedVersion: UInt64
    /// The page found wrong: the dropped commit's meta page (0 or 1), one of its root pages, or a page it wrote;
    /// nil when no single page is at fault (the file is shorter than that commit needs).
    public let page: UInt32?
    /// What was wrong, in words.
    public let reason: String

    /// "opened version V; dropped version D: reason".
    public var description: String {
        let dropped = droppedVersion.map { "version \($0)" } ?? "the newest commit (its version cannot be read)"
        return "opened version \(openedVersion); dropped \(dropped): \(reason)"
    }
}

/// Why a meta page's commit cannot be used, and the page at fault when there is one.
struct MetaProblem: CustomStringConvertible {
    let page: PageNumber?
    let reason: String
    var description: String { reason }
}

extension SharedFile {
    /// The notice for a file opened at `opened`: what the other meta slot holds when it is a newer commit that was
    /// passed over, or a meta page that cannot be read and may have been one. Nil when the other slot simply
    /// holds an older (or the same) intact version.
    /// `metas` reads the slots (sealed in an encrypted file).
    static func recoveryNotice(opened: Meta, mapping: Mapping, fileSize: Int, metas: MetaCodec = .plain)
        throws(StorageError) -> RecoveryNotice?
    {
        let available = min(fileSize, mapping.capacity)
        for slot in 0..<2 {
            let offset = slot * opened.pageSize
            guard offset + opened.pageSize <= available else { continue }
            let page = mapping.base + offset
            // An encrypted slot claiming an older version (or this one) is not authenticated, as a plain slot's
            // agreeing version fields are trusted below: an older slot is the fallback this open did not need.
            if case .sealed(let sealed) = metas,
                let claimed = try sealed.claimedVersion(page, available: available - offset),
                claimed <= opened.version, slot != Int(opened.version % 2)
            {
                continue
            }
            switch try metas.decode(page, slot: PageNumber(slot), available: available - offset) {
            case .success(let meta):
                guard meta.version > opened.version,
                    let problem = validate(meta, mapping: mapping, fileSize: fileSize, metas: metas)
                else { continue }
                return RecoveryNotice(
                    droppedVersion: meta.version, openedVersion: opened.version, page: problem.page,
                    reason: problem.reason)
            case .failure(let rejection):
                // The unverified version fields tell which commit the slot held, when both copies agree and are
                // not zero (a zeroed page tells nothing): only a newer one is a loss (an older one is the fallback
                // this open did not need). A sealed slot's fields are ciphertext: they tell nothing either.
                let header = page.u64(PageHeader.version)
                let claimed: UInt64? =
                    !metas.isSealed && header == page.u64(Meta.versionOffset) && header != 0 ? header : nil
                if let claimed, claimed <= opened.version { continue }
                return RecoveryNotice(
                    droppedVersion: claimed, openedVersion: opened.version, page: PageNumber(slot),
                    reason: "meta page \(slot) is unreadable (\(describe(rejection)))")
            }
        }
        return nil
    }

    /// ``recoveryNotice(opened:mapping:fileSize:)`` for a disk file that other processes may be committing to.
    ///
    /// A commit in flight writes the meta slot this looks at (the one of the version before the newest), so a
    /// slot that looks damaged is looked at again holding the writer lock, on a fresh mapping. When another
    /// process is writing, nothing is reported: the slot may be half written, and a false alarm about damage is
    /// worse than none here (that writer's process got the notice when it opened the file, and its commit is
    /// about to replace the slot).
    static func recoveryNotice(
        _ disk: DiskFile, opened: Meta, mapping: Mapping, lock: LockFile?, metas: MetaCodec = .plain
    ) throws(StorageError) -> RecoveryNotice? {
        let first = try recoveryNotice(opened: opened, mapping: mapping, fileSize: try disk.size(), metas: metas)
        guard first != nil, let lock else { return first }
        guard try lock.tryLockWriter() else { return nil }
        defer { lock.unlockWriter() }
        let size = try disk.size()
        return try recoveryNotice(
            opened: opened, mapping: try disk.mapping(covering: size), fileSize: size, metas: metas)
    }
}

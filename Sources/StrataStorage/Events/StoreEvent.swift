/// Something a ``Store`` did or found that an operator may want to see: what ``StoreOptions/events`` receives.
///
/// Each case carries a small value with the facts, and every event's `description` is one log line, so the
/// simplest handler prints or logs it:
///
/// ```swift
/// var options = StoreOptions()
/// options.events = { event in print(event) }  // "commit: version 7, 3 pages (12288 bytes), durable in 41 µs"
/// let store = try Store.open(path: "data.strata", options: options)
/// ```
///
/// The handler runs synchronously on the thread that caused the event (the committing thread, the opening thread),
/// after the write lock is released for commits: keep it quick (hand the event to a logger or a counter) and do not
/// call back into the store from it.
public enum StoreEvent: Sendable, CustomStringConvertible {
    /// A handle opened the file (see ``Opened``).
    case opened(Opened)
    /// A write transaction committed a new version (see ``Commit``).
    case committed(Commit)
    /// The commit log was folded into the main file (see ``Checkpoint``).
    case checkpointed(Checkpoint)
    /// A copy of the file (``Store/compact(to:)``, compaction on launch) advanced (see ``CopyProgress``).
    case copyProgress(CopyProgress)
    /// A reader keeps many old versions alive, and the pages they hold cannot be reused (see ``PinnedVersions``).
    case pinnedVersions(PinnedVersions)
    /// The file was found damaged (see ``Damage``).
    case damage(Damage)

    /// One log line describing the event.
    public var description: String {
        switch self {
        case .opened(let event): event.description
        case .committed(let event): event.description
        case .checkpointed(let event): event.description
        case .copyProgress(let event): event.description
        case .pinnedVersions(let event): event.description
        case .damage(let event): event.description
        }
    }

    /// A handle opened the file.
    ///
    /// The file itself is opened (recovered, its commit log replayed) once per process; every handle opened on it
    /// later in the process reports the same ``recovery`` and ``replayedCommits``.
    public struct Opened: Sendable, Equatable, CustomStringConvertible {
        /// The file's path (for in-memory stores, a descriptive name).
        public let path: String
        /// The newest committed version when the handle opened.
        public let version: UInt64
        /// Whether the handle is read-only.
        public let readOnly: Bool
        /// Why the file opened at an older version than the newest commit it holds, or nil when it opened at its
        /// newest commit (see ``RecoveryNotice``).
        public let recovery: RecoveryNotice?
        /// Commits replayed from the commit log into the main file when the process opened it (a crash or power
        /// loss had left them only in the log); 0 when the main file was up to date.
        public let replayedCommits: Int

        /// Whether the open had to recover: commits were replayed from the log or a damaged newest commit was
        /// dropped.
        public var recovered: Bool { recovery != nil || replayedCommits > 0 }

        /// "opened PATH at version V", with what recovery did.
        public var description: String {
            var line = "opened \(path) at version \(version)"
            if readOnly { line += " (read-only)" }
            if replayedCommits > 0 { line += "; replayed \(replayedCommits) commits from the commit log" }
            if let recovery { line += "; recovered: \(recovery)" }
            return line
        }
    }

    /// A write transaction committed a new version.
    public struct Commit: Sendable, Equatable, CustomStringConvertible {
        /// The file's path.
        public let path: String
        /// The version the commit created.
        public let version: UInt64
        /// Pages the commit wrote (data, tree and free-list pages; not the meta page).
        public let pagesWritten: Int
        /// Bytes of those pages.
        public let bytesWritten: Int
        /// Whether the commit was synced to disk before it returned (``StoreOptions/Durability/full``).
        public let durable: Bool
        /// Whether the commit went through the commit log (a small durable commit: one sequential append and one
        /// sync) rather than syncing the main file.
        public let logged: Bool
        /// Nanoseconds from the start of the commit (the transaction's changes written out) until it was durable
        /// (or, without durability, published); the writer's own work before `commit()` is not included.
        public let nanosecondsToDurable: UInt64

        /// "commit: version V, N pages (B bytes), durable in T µs".
        public var description: String {
            let microseconds = Double(nanosecondsToDurable) / 1000
            let time = microseconds < 10 ? String(Double(Int(microseconds * 10)) / 10) : String(Int(microseconds))
            let how =
                durable
                ? (logged ? "durable (logged) in \(time) µs" : "durable in \(time) µs")
                : "published in \(time) µs, not synced"
            return "commit \(path): version \(version), \(pagesWritten) pages (\(bytesWritten) bytes), \(how)"
        }
    }

    /// The commit log was folded into the main file: the main file was synced at ``version`` and the log started
    /// over. Happens when the log has grown past its budget, before a commit too large for the log, and when the
    /// log must restart for another reason (a full disk).
    public struct Checkpoint: Sendable, Equatable, CustomStringConvertible {
        /// The file's path.
        public let path: String
        /// The version the main file is durable at.
        public let version: UInt64
        /// Commits the log held that the checkpoint made redundant.
        public let commitsFolded: Int
        /// Nanoseconds the checkpoint took (mostly the main file's sync).
        public let nanoseconds: UInt64

        /// "checkpoint: main file durable at version V, N logged commits folded in T µs".
        public var description: String {
            "checkpoint \(path): main file durable at version \(version), \(commitsFolded) logged commits folded in \(nanoseconds / 1000) µs"
        }
    }

    /// A copy of the live data into a new file advanced.
    ///
    /// Reported about every 1% (and at least every 1024 pages) and once more at the end, when ``pagesDone``
    /// equals ``pagesTotal``. ``pagesTotal`` is the pages in use in the version copied (all pages but the meta
    /// pages and the free ones); ``pagesDone`` counts the leaf pages copied so far, so it never decreases and the
    /// last report jumps over the branch and overflow pages.
    public struct CopyProgress: Sendable, Equatable, CustomStringConvertible {
        /// What the copy is for.
        public enum Operation: Sendable, Equatable, CustomStringConvertible {
            /// ``Store/compact(to:)`` (a Realm's `writeCopy(toFile:)`, `strata compact`).
            case copy
            /// ``Store/compactOnLaunch(path:options:shouldCompact:)`` rewriting the file in place.
            case compactOnLaunch

            /// "copy" or "compaction on launch".
            public var description: String { self == .copy ? "copy" : "compaction on launch" }
        }

        /// The file copied.
        public let path: String
        /// The new file being written.
        public let destination: String
        /// What the copy is for.
        public let operation: Operation
        /// Pages copied so far.
        public let pagesDone: Int
        /// Pages to copy.
        public let pagesTotal: Int

        /// "copy PATH → DESTINATION: done/total pages".
        public var description: String {
            "\(operation) \(path) → \(destination): \(pagesDone)/\(pagesTotal) pages"
        }
    }

    /// A reader keeps old versions alive.
    ///
    /// Pages a commit frees stay reserved while any reader still reads a version that uses them; a reader that
    /// stays on an old version (a frozen snapshot or a Realm that never refreshes, a long read transaction, a hung
    /// process) makes the file grow instead of reusing them. Reported by a commit when the oldest pinned version
    /// is ``PinnedVersions/warningThreshold`` or more versions behind the new one, then again each time the gap
    /// doubles while the same version stays pinned, so a stuck reader costs a few log lines, not one per commit.
    public struct PinnedVersions: Sendable, Equatable, CustomStringConvertible {
        /// Versions behind the newest at which a pinned version is reported: 128.
        public static let warningThreshold: UInt64 = 128

        /// The file's path.
        public let path: String
        /// The oldest version a reader pins.
        public let pinnedVersion: UInt64
        /// The newest version (the commit that found it).
        public let newestVersion: UInt64
        /// The process that pins it (this one or another with the file open), when known.
        public let pid: Int?
        /// Whether the reader is in this process.
        public let inThisProcess: Bool
        /// How many read transactions of this process pin that version (0 for another process's reader).
        public let readers: Int
        /// Pages freed since the pinned version that cannot be reused while it is pinned.
        public let pagesHeld: Int
        /// Bytes of those pages.
        public let bytesHeld: Int

        /// Versions between the pinned and the newest version.
        public var versionsBehind: UInt64 { newestVersion - pinnedVersion }

        /// "pinned version: …".
        public var description: String {
            let who =
                inThisProcess
                ? "\(readers) reader\(readers == 1 ? "" : "s") in this process (pid \(pid ?? 0))"
                : pid.map { "process \($0)" } ?? "an unknown reader"
            return
                "pinned version \(path): \(who) still reads version \(pinnedVersion), \(versionsBehind) versions behind \(newestVersion), holding \(pagesHeld) pages (\(bytesHeld) bytes) from reuse"
        }
    }

    /// The file was found damaged.
    public struct Damage: Sendable, Equatable, CustomStringConvertible {
        /// The file's path.
        public let path: String
        /// The damaged page, when one page is at fault.
        public let page: UInt32?
        /// What is wrong, in words.
        public let reason: String

        /// Creates a damage report (the object layer reports damage its reads find).
        public init(path: String, page: UInt32?, reason: String) {
            self.path = path
            self.page = page
            self.reason = reason
        }

        /// "damage: PATH page N: reason".
        public var description: String {
            "damage \(path)\(page.map { " page \($0)" } ?? ""): \(reason)"
        }
    }
}

extension StoreEvent.Damage {
    /// The damage `error` reports, or nil when `error` is not damage of a file (a full disk, a misuse).
    public init?(_ error: StorageError) {
        switch error {
        case .corruptPage(let path, let page, let reason): self.init(path: path, page: page, reason: reason)
        case .incompatibleFile(let path, let reason): self.init(path: path, page: nil, reason: reason)
        default: return nil
        }
    }
}

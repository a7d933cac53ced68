/// How a ``Store`` opens its file.
public struct StoreOptions: Sendable, Equatable {
    /// How hard a commit works to survive a power loss.
    public enum Durability: Sendable, Equatable {
        /// Each commit syncs its pages, then its meta page (two `fdatasync` calls; `F_FULLFSYNC` on Apple
        /// platforms). A commit that returned survives a crash or power loss.
        case full
        /// No syncs. A process crash loses nothing that committed: the kernel holds the written pages and
        /// recovery finds the newest version. A power loss or operating-system crash may lose recent commits, and
        /// on file systems that reorder writes it can leave the newest version damaged (``Store/verify()``
        /// reports it). For tests, bulk loads and rebuildable caches.
        case none
    }

    /// Page size for a new file: a power of two from 1024 to 32768. Existing files keep their own.
    public var pageSize: Int
    /// Open without write access; write transactions fail with ``StorageError/readOnly(path:)``.
    public var readOnly: Bool
    /// Create the file when it does not exist.
    public var createIfMissing: Bool
    /// Sync policy of commits.
    public var durability: Durability
    /// Give up waiting for another process's write lock after this long (nil: wait indefinitely).
    public var writeLockTimeout: Duration?
    /// Memory for data derived from the file's unchanging tree segments (see ``Store/segmentCache``), shared by
    /// every handle on the file in the process. The first handle opened on a file decides it.
    public var segmentCacheBytes: Int
    /// Called with what the handle does and finds: the open, each commit, checkpoints of the commit log, copy
    /// progress, readers keeping many old versions alive, damage (see ``StoreEvent``). Nil (the default) reports
    /// nothing and costs nothing measurable.
    ///
    /// The handler belongs to the handle opened with these options (other handles on the same file have their
    /// own). It is called synchronously on the thread that caused the event — a commit's after the write lock is
    /// released — so it must be quick (hand the event to a logger or a counter) and must not call back into the
    /// store. Not part of `==`: closures cannot be compared.
    public var events: (@Sendable (StoreEvent) -> Void)?
    /// The 64-byte key of an encrypted file, as the Realm SDK's `encryptionKey` (a new file is encrypted with
    /// AES-256-GCM under a key derived from all 64 bytes; files made before that keep AES-256 under the first 32
    /// bytes and HMAC-SHA-256 under the last 32), or nil for a plain file. A key of another length fails the open with
    /// ``StorageError/invalidArgument(_:)``; a key for a plain file, no key for an encrypted one and a wrong key
    /// each fail with their own error (``StorageError/notEncrypted(path:)``,
    /// ``StorageError/encryptionKeyRequired(path:)``, ``StorageError/wrongEncryptionKey(path:)``), and nothing is
    /// written. See Documentation/Encryption.md.
    public var encryptionKey: [UInt8]?
    /// Bytes at the end of every page of a new file that the page layout leaves alone (``PageGeometry``): what
    /// an encrypted file keeps its pages' nonces and tags in. Settable here so that tests can lay out a plain
    /// file the way an encrypted one is laid out. Existing files keep their own.
    var reservedPageTail = 0
    /// The cipher suite of a new encrypted file (existing files keep their own, recorded in their header). Settable
    /// here so that tests can make files of the suite files had before AES-256-GCM.
    var cipherSuite = CipherSuite.newFiles

    /// Options with the given values; the defaults suit most uses.
    public init(
        pageSize: Int = 4096, readOnly: Bool = false, createIfMissing: Bool = true, durability: Durability = .full,
        writeLockTimeout: Duration? = nil, segmentCacheBytes: Int = 128 << 20,
        events: (@Sendable (StoreEvent) -> Void)? = nil, encryptionKey: [UInt8]? = nil
    ) {
        self.pageSize = pageSize
        self.readOnly = readOnly
        self.createIfMissing = createIfMissing
        self.durability = durability
        self.writeLockTimeout = writeLockTimeout
        self.segmentCacheBytes = segmentCacheBytes
        self.events = events
        self.encryptionKey = encryptionKey
    }

    /// Whether the options open a file the same way; ``events`` is not compared.
    public static func == (lhs: StoreOptions, rhs: StoreOptions) -> Bool {
        lhs.pageSize == rhs.pageSize && lhs.readOnly == rhs.readOnly && lhs.createIfMissing == rhs.createIfMissing
            && lhs.durability == rhs.durability && lhs.writeLockTimeout == rhs.writeLockTimeout
            && lhs.segmentCacheBytes == rhs.segmentCacheBytes && lhs.encryptionKey == rhs.encryptionKey
    }
}

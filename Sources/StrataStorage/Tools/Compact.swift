#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// What ``Store/compact(to:)`` did.
public struct CompactionResult: Sendable {
    /// The version that was copied.
    public let version: UInt64
    /// Pages of the source version.
    public let sourcePages: Int
    /// Pages of the new file.
    public let compactedPages: Int
    /// Page size of both files.
    public let pageSize: Int
}

extension Store {
    /// Writes the live data of the newest version into a new file at `path`, which must not exist.
    ///
    /// Trees are rebuilt in key order, so pages come out full, the free list is empty and nothing but live data
    /// remains. Runs on a read transaction: writers may keep committing meanwhile (their commits are not copied).
    /// The copy is built in one write transaction and synced before this returns; it needs memory about the size
    /// of the live data.
    ///
    /// The copy is one self-contained file: it is built under a temporary name beside `path` and linked into place
    /// only once it is whole and durable (nobody can open it half-written, and a crash leaves at most the temporary
    /// file), and it gets no lock file and no commit log (nobody has written it yet; its first writer makes them).
    ///
    /// With ``StoreOptions/events``, the copy reports its progress (``StoreEvent/copyProgress(_:)``).
    ///
    /// The copy of an encrypted file is encrypted with the same key (see ``compact(to:encryptionKey:)`` to choose).
    @discardableResult
    public func compact(to path: String) throws(StorageError) -> CompactionResult {
        try compact(to: path, encryptionKey: options.encryptionKey, operation: .copy)
    }

    /// ``compact(to:)``, the copy encrypted with `encryptionKey` (64 bytes, as ``StoreOptions/encryptionKey``) or
    /// plain when it is nil, whether this file is encrypted or not: so a file is encrypted, decrypted or re-keyed
    /// into the new one. The new file gets a file id of its own. A key of another length throws
    /// ``StorageError/invalidArgument(_:)``, as opening does, before anything is written.
    ///
    /// ```swift
    /// try store.compact(to: "/tmp/rekeyed.strata", encryptionKey: newKey)
    /// ```
    @discardableResult
    public func compact(to path: String, encryptionKey: [UInt8]?) throws(StorageError) -> CompactionResult {
        try compact(to: path, encryptionKey: encryptionKey, operation: .copy)
    }

    /// ``compact(to:encryptionKey:)``, reporting progress as `operation`.
    @discardableResult
    func compact(to path: String, encryptionKey: [UInt8]?, operation: StoreEvent.CopyProgress.Operation)
        throws(StorageError) -> CompactionResult
    {
        guard access(path, F_OK) != 0 else { throw .invalidArgument("\(path) already exists") }
        // A bad key (or no cryptography on this machine) fails here, before anything is created.
        _ = try encryptionKey.map { (key) throws(StorageError) in try BlockCipher(key: key) }
        let source = try read()
        let temporary = path + ".writing-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        defer { for file in [temporary, temporary + ".lock", temporary + ".log"] { unlink(file) } }
        let progress = try events.map { (events) throws(StorageError) in
            try CopyProgressCounter(events: events, source: source, destination: path, operation: operation)
        }
        let pages = try Self.writeCopy(of: source, to: temporary, encryptionKey: encryptionKey, progress: progress)
        if link(temporary, path) != 0 {
            if errno == EEXIST { throw .invalidArgument("\(path) already exists") }
            throw Errno.error("link", path: path)
        }
        DiskFile.syncDirectory(of: path)
        progress?.finish()
        return CompactionResult(
            version: source.version, sourcePages: source.pageCount, compactedPages: pages, pageSize: source.pageSize)
    }

    /// Copies the live data of `source` into a new store at `path` in one transaction, syncs it and returns its
    /// page count. The store is opened without durability, so it never makes a commit log; the one sync at the end
    /// makes the copy durable. With a key, the new store seals its pages as it writes them, and the entries read
    /// from the source (decrypted if it is encrypted) are laid out again for its pages' usable size.
    private static func writeCopy(
        of source: ReadTransaction, to path: String, encryptionKey: [UInt8]?, progress: CopyProgressCounter?
    ) throws(StorageError) -> Int {
        let target = try Store.open(
            path: path,
            options: StoreOptions(pageSize: source.pageSize, durability: .none, encryptionKey: encryptionKey))
        defer { target.close() }
        let transaction = try target.beginWrite()
        do {
            let context = transaction.context
            var cursor = CursorCore(source: source.pages, tree: source.meta.catalog)
            var more = try cursor.first()
            while more {
                let entry = try cursor.entry()
                let tree = try source.read.subtree(of: entry, pageCount: source.meta.pageCount)
                let copy = try target.copyTree(tree, from: source, into: context, progress: progress)
                try context.put(entry.key, value: .subtree(copy), into: &context.catalog)
                more = try cursor.next()
            }
            try transaction.commit()
        } catch {
            transaction.abort()
            throw error
        }
        try target.shared.file.sync()
        return try target.read().pageCount
    }

    private func copyTree(
        _ tree: TreeRoot, from source: ReadTransaction, into context: WriteContext, progress: CopyProgressCounter?
    ) throws(StorageError) -> TreeRoot {
        var copy = TreeRoot(kind: tree.kind)
        copy.sequence = tree.sequence
        var cursor = CursorCore(source: source.pages, tree: tree)
        var leaf: PageNumber?  // the leaf last counted as done
        var more = try cursor.first()
        while more {
            let entry = try cursor.entry()
            if let progress, cursor.page != leaf {
                leaf = cursor.page
                progress.pageDone()
            }
            switch entry.storage {
            case .subtree:
                let nested = try copyTree(
                    try source.read.subtree(of: entry, pageCount: source.meta.pageCount), from: source, into: context,
                    progress: progress)
                try context.put(entry.key, value: .subtree(nested), into: &copy)
            case .inline:
                try store(entry.inlineValue, key: entry.key, into: &copy, context: context)
            case .overflow:
                let value = try source.read.value(of: entry)
                try value.withStorageBytes { (bytes) throws(StorageError) in
                    try store(bytes, key: entry.key, into: &copy, context: context)
                }
            }
            more = try cursor.next()
        }
        return copy
    }

    private func store(
        _ value: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer, into tree: inout TreeRoot, context: WriteContext
    ) throws(StorageError) {
        if tree.kind == .list {
            try context.insert(.bytes(value), at: tree.count, into: &tree)
        } else {
            try context.put(key, value: .bytes(value), into: &tree)
        }
    }
}

extension Store {
    /// Rewrites the file at `path` compactly when it is not open anywhere else and `shouldCompact(totalBytes,
    /// usedBytes)` returns true. Returns whether it did.
    ///
    /// The file is not compacted when this process already has it open or another process does. The check and
    /// the swap happen under the lock file's initialisation lock, which every opener takes to claim its slot, and
    /// openers that read the old file before the swap notice the new inode and open again. The copy is written
    /// and synced beside the file, then renamed over it, so a crash leaves either file whole.
    @discardableResult
    public static func compactOnLaunch(
        path: String, options: StoreOptions = StoreOptions(),
        shouldCompact: (_ totalBytes: Int, _ usedBytes: Int) -> Bool
    ) throws(StorageError) -> Bool {
        guard !options.readOnly, access(path, F_OK) == 0, !SharedFile.isOpen(path: path)
        else { return false }
        let store = try Store.open(path: path, options: options)
        defer { store.close() }
        guard let lock = store.shared.lockFile else { return false }
        return try lock.withInitializationLock { () throws(StorageError) -> Bool in
            let statistics = try store.statistics()
            guard statistics.otherProcesses.isEmpty else { return false }
            let total = statistics.pageCount * statistics.pageSize
            let used = (statistics.pageCount - statistics.freePages) * statistics.pageSize
            guard shouldCompact(total, used) else { return false }
            // No writer of this process can start meanwhile either.
            let transaction = try store.beginWrite()
            defer { transaction.abort() }
            let temporary = path + ".compacting"
            for file in [temporary, temporary + ".lock", temporary + ".log"] { unlink(file) }
            do throws(StorageError) {
                // An encrypted file's copy is sealed with the same key, so it opens as the file did.
                try store.compact(to: temporary, encryptionKey: options.encryptionKey, operation: .compactOnLaunch)
            } catch {
                for file in [temporary, temporary + ".lock", temporary + ".log"] { unlink(file) }
                throw error
            }
            for file in [temporary + ".lock", temporary + ".log"] { unlink(file) }
            guard rename(temporary, path) == 0 else {
                let error = Errno.error("rename", path: path)
                unlink(temporary)
                throw error
            }
            // The commit log described the old file: the next opener starts a new one.
            unlink(path + ".log")
            lock.logState = nil
            DiskFile.syncDirectory(of: path)
            return true
        }
    }
}

/// Size and contents of a store, for tools.
public struct StoreStatistics: Sendable {
    /// One named tree.
    public struct Tree: Sendable {
        /// The tree's name.
        public let name: String
        /// Keyed or list.
        public let kind: TreeKind
        /// Number of entries.
        public let count: Int
    }

    /// The newest committed version.
    public let version: UInt64
    /// Page size in bytes.
    public let pageSize: Int
    /// Pages in the newest version.
    public let pageCount: Int
    /// Pages recorded as free (reusable now or once older readers finish).
    public let freePages: Int
    /// The named trees.
    public let trees: [Tree]
    /// Versions pinned by readers of this process.
    public let pinnedVersionsInProcess: Int
    /// Other processes with the file open, and the oldest version each pins (0: none).
    public let otherProcesses: [(pid: Int, pinnedVersion: UInt64)]
    /// When the newest version was committed, in microseconds since 1970.
    public let commitTimeMicroseconds: UInt64
}

extension Store {
    /// Counts pages, free pages and trees of the newest version. Reads the catalog and free list only.
    public func statistics() throws(StorageError) -> StoreStatistics {
        let snapshot = try read()
        var trees: [StoreStatistics.Tree] = []
        for name in try snapshot.treeNames() {
            if let view = try snapshot.tree(named: name) {
                trees.append(.init(name: name, kind: view.kind, count: view.count))
            }
        }
        let free = try snapshot.freePageCount()
        let others = shared.lockFile?.liveReaders().filter { $0.pid != Int(getpid()) } ?? []
        return StoreStatistics(
            version: snapshot.version, pageSize: snapshot.pageSize, pageCount: snapshot.pageCount, freePages: free,
            trees: trees, pinnedVersionsInProcess: shared.pinnedVersionCount - 1,
            otherProcesses: others.map { (pid: $0.pid, pinnedVersion: $0.pinned) },
            commitTimeMicroseconds: snapshot.commitTimeMicroseconds)
    }
}

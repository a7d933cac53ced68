import StrataStorage

final class StrataEngine: Engine {
    static let name = "Strata"
    static let slug = "strata"
    static let settings =
        "StrataStorage `StoreOptions(pageSize: 4096, durability: .full)` (small commits: the pages' used bytes and the meta appended to the commit log in one O_DIRECT|O_DSYNC write while another thread writes the pages into the main file, unsynced; large commits: fdatasync of the pages, then of the meta page)"

    private static let treeName = "bench"
    private let store: Store

    static func options(encryptionKey: [UInt8]?) -> StoreOptions {
        StoreOptions(pageSize: 4096, durability: .full, encryptionKey: encryptionKey)
    }

    convenience init(directory: String) throws {
        try self.init(directory: directory, encryptionKey: nil)
    }

    /// A database encrypted with `encryptionKey` (64 bytes), or a plain one without (see ``EncryptedStrataEngine``).
    init(directory: String, encryptionKey: [UInt8]?) throws {
        store = try Store.open(path: directory + "/bench.strata", options: Self.options(encryptionKey: encryptionKey))
        try store.write { txn in
            _ = try txn.tree(named: StrataEngine.treeName, create: .keyed)
        }
    }

    deinit { store.close() }

    func insertAll(_ keys: KeyTable) throws {
        let values = ValueBuffer()
        try store.write { txn in
            guard let tree = try txn.tree(named: StrataEngine.treeName) else { throw BenchError.engine("no tree") }
            for index in 0..<keys.count {
                try txn.put(keys[index], values.value(for: index), in: tree)
            }
        }
    }

    func getAll(_ keys: KeyTable, order: [Int]) throws -> Int {
        let snapshot = try store.read()
        guard let view = try snapshot.tree(named: StrataEngine.treeName) else { throw BenchError.engine("no tree") }
        var good = 0
        for index in order {
            let matched = try view.withValue(forKey: keys[index]) { value in ValueBuffer.matches(value, index: index) }
            if matched == true { good &+= 1 }
        }
        return good
    }

    func scanAll() throws -> ScanSummary {
        let snapshot = try store.read()
        guard let view = try snapshot.tree(named: StrataEngine.treeName) else { throw BenchError.engine("no tree") }
        var summary = ScanSummary()
        try view.forEachEntry { key, value in
            summary.addKey(key)
            summary.addValue(value)
            return true
        }
        return summary
    }

    func commitEach(_ keys: KeyTable, firstIndex: Int) throws {
        let values = ValueBuffer()
        for index in 0..<keys.count {
            try store.write { txn in
                guard let tree = try txn.tree(named: StrataEngine.treeName) else { throw BenchError.engine("no tree") }
                try txn.put(keys[index], values.value(for: firstIndex + index), in: tree)
            }
        }
    }

    static func openAndGet(directory: String, keys: KeyTable, index: Int) throws -> Bool {
        try openAndGet(directory: directory, keys: keys, index: index, encryptionKey: nil)
    }

    /// ``openAndGet(directory:keys:index:)`` on a file encrypted with `encryptionKey`, or a plain one without.
    static func openAndGet(directory: String, keys: KeyTable, index: Int, encryptionKey: [UInt8]?) throws -> Bool {
        let store = try Store.open(
            path: directory + "/bench.strata", options: options(encryptionKey: encryptionKey))
        defer { store.close() }
        let snapshot = try store.read()
        guard let view = try snapshot.tree(named: StrataEngine.treeName) else { throw BenchError.engine("no tree") }
        return try view.withValue(forKey: keys[index]) { ValueBuffer.matches($0, index: index) } == true
    }

    func entryCount() throws -> Int {
        try store.read().tree(named: StrataEngine.treeName)?.count ?? -1
    }
}

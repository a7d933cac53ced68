import CLMDB

final class LMDBEngine: Engine {
    static let name = "LMDB"
    static let slug = "lmdb"
    static let settings =
        "LMDB default environment flags (synced commits: no MDB_NOSYNC/MDB_NOMETASYNC/MDB_WRITEMAP), map size 8 GiB, a named database (`mdb_dbi_open(\"bench\", MDB_CREATE)`, as Strata uses a named tree), plain `mdb_put` (no MDB_APPEND), zero-copy `mdb_get`/cursor reads"

    /// Library version string, e.g. "LMDB 0.9.24: (July 24, 2019)".
    static var version: String { String(cString: mdb_version(nil, nil, nil)) }

    private let env: OpaquePointer
    private var dbi: MDB_dbi = 0

    private static func check(_ code: Int32, _ what: String) throws {
        if code != MDB_SUCCESS { throw BenchError.engine("\(what): \(String(cString: mdb_strerror(code)))") }
    }

    init(directory: String) throws {
        var env: OpaquePointer?
        try Self.check(mdb_env_create(&env), "mdb_env_create")
        guard let env else { throw BenchError.engine("mdb_env_create returned no environment") }
        self.env = env
        try Self.check(mdb_env_set_mapsize(env, 8 << 30), "mdb_env_set_mapsize")
        // A named database, like Strata's named tree: a commit then also rewrites the main database's record of
        // it, as Strata rewrites its catalog entry (the unnamed main database would save LMDB that page).
        try Self.check(mdb_env_set_maxdbs(env, 4), "mdb_env_set_maxdbs")
        try Self.check(mdb_env_open(env, directory, 0, 0o644), "mdb_env_open")
        var txn: OpaquePointer?
        try Self.check(mdb_txn_begin(env, nil, 0, &txn), "mdb_txn_begin")
        do {
            try Self.check(mdb_dbi_open(txn, "bench", UInt32(MDB_CREATE), &dbi), "mdb_dbi_open")
        } catch {
            mdb_txn_abort(txn)
            throw error
        }
        try Self.check(mdb_txn_commit(txn), "mdb_txn_commit")
    }

    deinit { mdb_env_close(env) }

    func insertAll(_ keys: KeyTable) throws {
        let values = ValueBuffer()
        var txn: OpaquePointer?
        try Self.check(mdb_txn_begin(env, nil, 0, &txn), "mdb_txn_begin")
        for index in 0..<keys.count { try put(keys, index, value: values.value(for: index), in: txn) }
        try Self.check(mdb_txn_commit(txn), "mdb_txn_commit")
    }

    /// Puts key `index` with `value` in `txn`; aborts the transaction if the put fails.
    @inline(__always)
    private func put(_ keys: KeyTable, _ index: Int, value: UnsafeRawBufferPointer, in txn: OpaquePointer?) throws {
        var key = MDB_val(mv_size: KeyTable.keySize, mv_data: keys.pointer(index))
        var data = MDB_val(mv_size: value.count, mv_data: UnsafeMutableRawPointer(mutating: value.baseAddress))
        let code = mdb_put(txn, dbi, &key, &data, 0)
        if code != MDB_SUCCESS {
            mdb_txn_abort(txn)
            try Self.check(code, "mdb_put")
        }
    }

    func getAll(_ keys: KeyTable, order: [Int]) throws -> Int {
        var txn: OpaquePointer?
        try Self.check(mdb_txn_begin(env, nil, UInt32(MDB_RDONLY), &txn), "mdb_txn_begin")
        defer { mdb_txn_abort(txn) }
        var good = 0
        var key = MDB_val()
        var data = MDB_val()
        for index in order {
            key.mv_size = KeyTable.keySize
            key.mv_data = keys.pointer(index)
            let code = mdb_get(txn, dbi, &key, &data)
            if code == MDB_SUCCESS {
                if ValueBuffer.matches(data.mv_data, count: data.mv_size, index: index) { good &+= 1 }
            } else if code != MDB_NOTFOUND {
                try Self.check(code, "mdb_get")
            }
        }
        return good
    }

    func scanAll() throws -> ScanSummary {
        var txn: OpaquePointer?
        try Self.check(mdb_txn_begin(env, nil, UInt32(MDB_RDONLY), &txn), "mdb_txn_begin")
        defer { mdb_txn_abort(txn) }
        var cursor: OpaquePointer?
        try Self.check(mdb_cursor_open(txn, dbi, &cursor), "mdb_cursor_open")
        defer { mdb_cursor_close(cursor) }
        var summary = ScanSummary()
        var key = MDB_val()
        var data = MDB_val()
        var code = mdb_cursor_get(cursor, &key, &data, MDB_FIRST)
        while code == MDB_SUCCESS {
            summary.add(key: key.mv_data, keyCount: key.mv_size, value: data.mv_data, valueCount: data.mv_size)
            code = mdb_cursor_get(cursor, &key, &data, MDB_NEXT)
        }
        if code != MDB_NOTFOUND { try Self.check(code, "mdb_cursor_get") }
        return summary
    }

    func commitEach(_ keys: KeyTable, firstIndex: Int) throws {
        let values = ValueBuffer()
        for index in 0..<keys.count {
            var txn: OpaquePointer?
            try Self.check(mdb_txn_begin(env, nil, 0, &txn), "mdb_txn_begin")
            try put(keys, index, value: values.value(for: firstIndex + index), in: txn)
            try Self.check(mdb_txn_commit(txn), "mdb_txn_commit")
        }
    }

    static func openAndGet(directory: String, keys: KeyTable, index: Int) throws -> Bool {
        var env: OpaquePointer?
        try check(mdb_env_create(&env), "mdb_env_create")
        guard let env else { throw BenchError.engine("mdb_env_create returned no environment") }
        defer { mdb_env_close(env) }
        // As the instance opened it (read-write environment, same map size), so that the two opens compare.
        try check(mdb_env_set_mapsize(env, 8 << 30), "mdb_env_set_mapsize")
        try check(mdb_env_set_maxdbs(env, 4), "mdb_env_set_maxdbs")
        try check(mdb_env_open(env, directory, 0, 0o644), "mdb_env_open")
        var txn: OpaquePointer?
        try check(mdb_txn_begin(env, nil, UInt32(MDB_RDONLY), &txn), "mdb_txn_begin")
        defer { mdb_txn_abort(txn) }
        var dbi: MDB_dbi = 0
        try check(mdb_dbi_open(txn, "bench", 0, &dbi), "mdb_dbi_open")
        var key = MDB_val(mv_size: KeyTable.keySize, mv_data: keys.pointer(index))
        var data = MDB_val()
        let code = mdb_get(txn, dbi, &key, &data)
        if code == MDB_NOTFOUND { return false }
        try check(code, "mdb_get")
        return ValueBuffer.matches(data.mv_data, count: data.mv_size, index: index)
    }

    func entryCount() throws -> Int {
        var txn: OpaquePointer?
        try Self.check(mdb_txn_begin(env, nil, UInt32(MDB_RDONLY), &txn), "mdb_txn_begin")
        defer { mdb_txn_abort(txn) }
        var stat = MDB_stat()
        try Self.check(mdb_stat(txn, dbi, &stat), "mdb_stat")
        return stat.ms_entries
    }
}

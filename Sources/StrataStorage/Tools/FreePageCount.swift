// How many pages a version's free tree holds: storage statistics and copy progress both need it.

extension ReadTransaction {
    /// Pages recorded as free in this version's free tree (each entry's inline value holds its page count).
    func freePageCount() throws(StorageError) -> Int {
        var free = 0
        var cursor = CursorCore(source: pages, tree: meta.freeTree)
        var more = try cursor.first()
        while more {
            let entry = try cursor.entry()
            if entry.storage == .inline, entry.length >= 4 {
                free += Int(UInt32(littleEndian: entry.inlineValue.loadUnaligned(fromByteOffset: 0, as: UInt32.self)))
            }
            more = try cursor.next()
        }
        return free
    }
}

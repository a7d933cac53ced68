import Synchronization

/// The memory behind one ``DecryptedPages``: the address space its slots are reserved in, and its table of
/// entries (the directory and the chunks installed). The process keeps a few of them after their files close
/// (``keep(_:slotsWritten:)``) and the next open of an encrypted file takes one (``reuse(pageSize:capacity:)``).
///
/// Every open of an encrypted file used to reserve 1 TiB of address space and fault in afresh each slot and
/// chunk it touched, and every close to give them back; on a virtual machine, where a system call costs about
/// 0.5 µs and memory touched for the first time about 2.5 µs a 4 KiB page, that was a fifth of an encrypted open.
/// A kept reservation's slots still hold what they held (decrypted pages of the file that closed), which no reader
/// can reach: a slot is read only when its entry names the sealed page's nonce, and the entries are cleared before
/// a reservation is kept. Only reservations that wrote few slots are kept, so what a closed file leaves in memory
/// stays small (``keptBytes``); the decrypted bytes in it are outside what encryption at rest protects (the threat
/// model in Documentation/Encryption.md excludes reading the process's memory), as the open file's are.
struct SlotReservation: @unchecked Sendable {
    // @unchecked: a reservation is used by one DecryptedPages at a time, or lies in the pool under its lock.

    let slots: Mapping
    let pageSize: Int
    /// Pages the slots can hold.
    let capacity: Int
    /// One word per chunk of entries: its address, or 0 while not allocated.
    let directory: UnsafeMutablePointer<Atomic<UInt>>
    let chunkCount: Int
    /// The chunks installed in the directory.
    let chunks: [UnsafeMutablePointer<Atomic<UInt64>>]
    /// Words in a chunk (two per page).
    let chunkWords: Int
    /// The entries the file set: the only ones to clear when the reservation is kept.
    let entriesSet: SetEntries

    /// How many reservations the process keeps.
    static let kept = 2
    /// The most slot memory a kept reservation may have written (4 MiB).
    static let keptBytes = 4 << 20

    private static let pool = Locked<[SlotReservation]>([])

    /// A kept reservation of `capacity` slots of `pageSize` bytes, its entries all clear, if the process has one.
    static func reuse(pageSize: Int, capacity: Int) -> SlotReservation? {
        pool.withLock { pool in
            guard let index = pool.firstIndex(where: { $0.pageSize == pageSize && $0.capacity == capacity }) else {
                return nil
            }
            return pool.remove(at: index)
        }
    }

    /// Keeps `reservation` for a later open when it wrote at most ``keptBytes`` of slots (`slotsWritten` counts
    /// slot writes, at least one per slot written) and the process keeps fewer than ``kept``; false when the caller
    /// must free it.
    static func keep(_ reservation: SlotReservation, slotsWritten: Int) -> Bool {
        guard slotsWritten <= keptBytes / reservation.pageSize, pool.withLock({ $0.count < kept }) else {
            return false
        }
        // Clear every entry the file set: no slot matches any nonce until it is filled again. Clearing whole
        // chunks (64 KiB each) was a quarter of what an encrypted open added to a plain one, for the few entries
        // an open sets.
        reservation.entriesSet.clear(in: reservation.directory)
        return pool.withLock { pool in
            guard pool.count < kept else { return false }
            pool.append(reservation)
            return true
        }
    }

    /// How many reservations the process keeps now (tests).
    static var keptCount: Int { pool.withLock { $0.count } }
}

import Synchronization

/// The part of ``DecryptedPages`` a reader needs to find a slot known current in the epoch: raw pointers into
/// memory the decrypted pages own, so the read path neither retains nor releases anything.
///
/// Reaching the slot through the ``DecryptedPages`` object made each page access retain and release it (and the
/// file's path, passed on for errors): three atomic read-modify-writes a page, most of what an encrypted
/// object-layer lookup paid over a plain one. Everything else (comparing the sealed page's nonce, filling a slot,
/// errors) stays in ``DecryptedPages/page(_:sealed:file:)``, reached only when this finds nothing.
struct CurrentSlots {
    /// Pages the slots can hold.
    let capacity: Int
    let pageSize: Int
    /// Slots: page `n` at `n · pageSize`.
    let base: UnsafeRawPointer
    /// One word per chunk of entries: its address, or 0 while not allocated (``DecryptedPages``).
    let directory: UnsafeMutablePointer<Atomic<UInt>>
    /// The current epoch, in place in an entry's second word.
    let epoch: UnsafeMutablePointer<Atomic<UInt64>>

    static let chunkShift = 12
    static let chunkPages = 1 << chunkShift
    static let filled: UInt64 = 1 << 32
    /// An entry's second word: the nonce's last 4 bytes (bits 0–31), "filled" (bit 32), and the epoch in which the
    /// slot was last known current (bits 33–63, ``DecryptedPages/advanceEpoch()``).
    static let nonceBits: UInt64 = (1 << 33) - 1

    /// The two entry words of `number`, if its chunk exists (lock-free).
    @inline(__always)
    func entry(_ number: PageNumber) -> UnsafeMutablePointer<Atomic<UInt64>>? {
        let chunk = directory[Int(number) >> Self.chunkShift].load(ordering: .acquiring)
        guard let chunk = UnsafeMutablePointer<Atomic<UInt64>>(bitPattern: chunk) else { return nil }
        return chunk + 2 * (Int(number) & (Self.chunkPages - 1))
    }

    @inline(__always)
    func slot(_ number: PageNumber) -> UnsafeRawPointer { base + Int(number) &* pageSize }

    /// Page `number`'s slot when it is filled and known current in this epoch (no other process has committed
    /// since it was last found current, and this process's commits keep their slots current); nil when the sealed
    /// page must be looked at.
    @inline(__always)
    func knownCurrent(_ number: PageNumber) -> UnsafeRawPointer? {
        guard Int(number) < capacity, let entry = entry(number) else { return nil }
        let word = entry[1].load(ordering: .acquiring)
        guard word & Self.filled != 0 && word & ~Self.nonceBits == epoch[0].load(ordering: .relaxed) else {
            return nil
        }
        return slot(number)
    }
}

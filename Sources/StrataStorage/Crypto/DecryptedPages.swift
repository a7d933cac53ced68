import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The decrypted copy of an encrypted file's pages that its readers read (issue 26): one per open file in the
/// process, shared by every reader and writer, as ``ValidatedPages`` is.
///
/// Page `n` is decrypted into a slot at `n · pageSize` of an anonymous mapping reserved for the largest file
/// supported, so a reader's pointer arithmetic is the plain path's and a slot never moves. Slots need no pins and
/// no epochs: a page reachable from a version some reader pins is never rewritten (the rule that lets plain readers
/// read the file's mapping directly), so neither is its slot. A slot is refilled only for a page rewritten after
/// every reader that could reach its old content has gone.
///
/// What must be checked on every use is whether a slot is current. Each slot's entry records the nonce it was
/// decrypted from; the sealed page on disk carries the nonce it was written with, fresh and random for every
/// write. Equal nonces mean equal content, whoever wrote the page — this process or another one — so a lookup
/// compares 12 bytes and decrypts nothing when they match. A miss authenticates and decrypts the page once
/// (``PageSealer``); a page whose tag fails is reported as damage and leaves its slot as it was.
///
/// Entries are read lock-free: per page two atomic words, the nonce's first 8 bytes and its last 4 with a "filled"
/// bit, in chunks of 4096 pages allocated on first use. A fill takes a lock, clears the second word, writes the
/// slot, stores the first word and publishes the second with release ordering; a reader loads the second word
/// with acquire ordering before anything else, so a match proves the slot's bytes are the ones decrypted from
/// that nonce.
///
/// A slot found current is marked with the current epoch, and while no other process commits it is used without
/// looking at the sealed page at all (``advanceEpoch()``): comparing the nonce touched the file's mapping on every
/// page access, a fault of the mapping for a page this process never read there and two more cache misses.
///
/// Not yet: giving slots back. Memory grows with the pages read since the file was opened (at most the file's
/// size).
final class DecryptedPages: @unchecked Sendable {
    // @unchecked: slots are written only under `lock`, and only while no reader can use them (see above); entries
    // are atomics; the directory is written once per chunk under `lock`. Everything is freed in deinit, or kept for
    // another open (``SlotReservation``).

    private static let chunkShift = CurrentSlots.chunkShift
    private static let chunkPages = CurrentSlots.chunkPages
    private static let filled = CurrentSlots.filled
    private static let nonceBits = CurrentSlots.nonceBits
    private static let epochShift: UInt64 = 33
    private static let epochLimit: UInt64 = (1 << 31) - 1

    let sealer: PageSealer
    /// Slots: page `n` at `n · pageSize`.
    private let slots: Mapping
    /// Pages the slots can hold.
    let capacity: Int
    /// One word per chunk of entries: its address, or 0 while not allocated.
    private let directory: UnsafeMutablePointer<Atomic<UInt>>
    private let chunkCount: Int
    private let lock: Locked<[UnsafeMutablePointer<Atomic<UInt64>>]>
    /// What readers use lock-free, without reference counting (``CurrentSlots``); lives as long as this object.
    let current: UnsafeMutablePointer<CurrentSlots>
    /// Slot writes (fills, stores, claims): at least the slots this file made resident, which decides whether its
    /// reservation is kept for the next open (``SlotReservation``).
    private let slotsWritten = Atomic<Int>(0)
    /// Which entries this file set, so that a kept reservation clears only those (``SlotReservation``).
    private let entriesSet = SetEntries()
    /// The current epoch, in place in an entry's second word (``advanceEpoch()``); in memory of its own, which
    /// ``CurrentSlots`` points to.
    private let epochBits: UnsafeMutablePointer<Atomic<UInt64>>

    /// Decrypted pages of a file sealed by `sealer`, for files of up to `maximumBytes` bytes: in a reservation the
    /// process kept from a file it closed, if it has one of that size, else in a new one. Nil when the address
    /// space cannot be reserved.
    init?(sealer: PageSealer, maximumBytes: Int = 1 << 40) {
        let capacity = maximumBytes / sealer.pageSize
        guard capacity > 0 else { return nil }
        let slots: Mapping
        let directory: UnsafeMutablePointer<Atomic<UInt>>
        if let kept = SlotReservation.reuse(pageSize: sealer.pageSize, capacity: capacity) {
            slots = kept.slots
            directory = kept.directory
            chunkCount = kept.chunkCount
            lock = Locked(kept.chunks)
        } else {
            guard let reserved = Mapping.anonymous(capacity: capacity * sealer.pageSize) else { return nil }
            slots = reserved
            chunkCount = (capacity + Self.chunkPages - 1) >> Self.chunkShift
            // Zeroed by calloc, which for this size (512 KiB for a 1 TiB reservation) maps fresh pages that the
            // kernel zeroes only when touched: every open of an encrypted file makes a directory, and writing each
            // word of it made a tenth of an open's time. An atomic word's zero bits are `Atomic(0)`.
            guard let zeroed = calloc(chunkCount, MemoryLayout<Atomic<UInt>>.stride) else { return nil }
            directory = zeroed.bindMemory(to: Atomic<UInt>.self, capacity: chunkCount)
            lock = Locked([])
        }
        self.sealer = sealer
        self.capacity = capacity
        self.slots = slots
        self.directory = directory
        epochBits = .allocate(capacity: 1)
        epochBits.initialize(to: Atomic(0))
        current = .allocate(capacity: 1)
        current.initialize(
            to: CurrentSlots(
                capacity: capacity, pageSize: sealer.pageSize, base: UnsafeRawPointer(slots.base),
                directory: directory, epoch: epochBits))
    }

    deinit {
        current.deinitialize(count: 1)
        current.deallocate()
        epochBits.deinitialize(count: 1)
        epochBits.deallocate()
        let reservation = SlotReservation(
            slots: slots, pageSize: sealer.pageSize, capacity: capacity, directory: directory, chunkCount: chunkCount,
            chunks: lock.withLock { $0 }, chunkWords: 2 * Self.chunkPages, entriesSet: entriesSet)
        if SlotReservation.keep(reservation, slotsWritten: slotsWritten.load(ordering: .relaxed)) { return }
        // Atomic words need no deinitialisation; the memory came from calloc.
        free(directory)
        for chunk in reservation.chunks {
            chunk.deinitialize(count: 2 * Self.chunkPages)
            chunk.deallocate()
        }
    }

    /// The decrypted bytes of page `number`, whose sealed bytes are at `sealed` (``PageSealer/pageSize`` of them,
    /// which must stay unchanged while the page is used: the file's mapping of a version the caller pins). The
    /// page's usable bytes are valid; what follows them is not part of the page. Throws
    /// ``StorageError/corruptPage(path:page:reason:)`` when the page does not authenticate.
    @inline(__always)
    func page(_ number: PageNumber, sealed: UnsafeRawPointer, file: PathRef) throws(StorageError) -> UnsafeRawPointer {
        guard Int(number) < capacity else {
            throw file.corrupt(number, "page \(number) lies beyond the \(capacity) pages an encrypted file may have")
        }
        // Known current in this epoch: no other process has committed since (see ``advanceEpoch()``), and this
        // process's commits keep their slots current, so the sealed page need not be looked at.
        if let known = current.pointee.knownCurrent(number) { return known }
        if let entry = entry(number) {
            let word = entry[1].load(ordering: .acquiring)
            let epoch = epochBits[0].load(ordering: .relaxed)
            let (low, high) = nonce(of: sealed)
            if word & Self.nonceBits == high && entry[0].load(ordering: .relaxed) == low {
                // Current: say so for this epoch. Losing a race with a fill or another reader only means
                // comparing the nonce again next time; the exchange continues the fill's release.
                _ = entry[1].compareExchange(
                    expected: word, desired: high | epoch, ordering: .acquiringAndReleasing)
                return slot(number)
            }
            return try fill(number, sealed: sealed, low: low, high: high, file: file)
        }
        let (low, high) = nonce(of: sealed)
        return try fill(number, sealed: sealed, low: low, high: high, file: file)
    }

    /// Starts a new epoch: every slot must show its nonce equal to the sealed page's again before it is used
    /// without looking at the sealed page. Called before this process reads a version another process
    /// committed (``SharedFile``'s reload from disk, under its state lock, before any reader or writer gets the
    /// new version).
    ///
    /// Why a slot known current in the epoch stays current while no other process commits: a page reachable from
    /// a version some reader pins is never rewritten, this process's own commits store each page they write in its
    /// slot (or leave its slot matching nothing, ``claim(_:)``), and another process's commit is only read after
    /// a reload, which starts a new epoch first. The epoch saves a reader the sealed page's nonce, on a page
    /// never touched a fault of the file's mapping and two cache misses.
    func advanceEpoch() {
        lock.withLock { chunks in
            let next = (epochBits[0].load(ordering: .relaxed) >> Self.epochShift) + 1
            guard next > Self.epochLimit else {
                epochBits[0].store(next << Self.epochShift, ordering: .releasing)
                return
            }
            // After 2³¹ epochs the numbers would come round again: clear every slot's filled bit instead (under
            // the lock, as a fill), then start again from epoch 0.
            for chunk in chunks {
                for page in 0..<Self.chunkPages { chunk[2 * page + 1].store(0, ordering: .relaxed) }
            }
            epochBits[0].store(0, ordering: .releasing)
        }
    }

    @inline(__always)
    private func slot(_ number: PageNumber) -> UnsafeRawPointer { current.pointee.slot(number) }

    /// The sealed page's nonce as the two entry words (the second with the filled bit).
    @inline(__always)
    private func nonce(of sealed: UnsafeRawPointer) -> (UInt64, UInt64) {
        let tail = sealed + sealer.usableSize
        let low = tail.loadUnaligned(as: UInt64.self)
        let high = UInt64(tail.loadUnaligned(fromByteOffset: 8, as: UInt32.self)) | Self.filled
        return (low, high)
    }

    /// The two entry words of `number`, if its chunk exists (lock-free).
    @inline(__always)
    private func entry(_ number: PageNumber) -> UnsafeMutablePointer<Atomic<UInt64>>? {
        current.pointee.entry(number)
    }

    @inline(never)
    private func fill(_ number: PageNumber, sealed: UnsafeRawPointer, low: UInt64, high: UInt64, file: PathRef)
        throws(StorageError) -> UnsafeRawPointer
    {
        // Authenticate and decrypt outside the lock (the expensive part), into a buffer of our own: a page that
        // fails leaves its slot untouched.
        let usable = sealer.usableSize
        let scratch = UnsafeMutableRawPointer.allocate(byteCount: usable, alignment: 16)
        defer { scratch.deallocate() }
        guard try sealer.open(sealed, page: number, into: scratch) else {
            throw file.corrupt(
                number, "the page fails its authentication tag: it was damaged or changed, or moved from elsewhere")
        }
        lock.withLock { chunks in
            let entry = entry(number) ?? install(number, &chunks)
            // Another reader may have filled it meanwhile, from the same nonce: then the slot is already right.
            if entry[1].load(ordering: .relaxed) & Self.nonceBits == high && entry[0].load(ordering: .relaxed) == low {
                return
            }
            entry[1].store(0, ordering: .relaxed)
            UnsafeMutableRawPointer(mutating: slot(number)).copyMemory(from: scratch, byteCount: usable)
            entriesSet.note(number)
            entry[0].store(low, ordering: .relaxed)
            entry[1].store(high | epochBits[0].load(ordering: .relaxed), ordering: .releasing)
            slotsWritten.add(1, ordering: .relaxed)
        }
        return slot(number)
    }

    /// Puts the clear bytes of page `number` (`clear`, of which the usable ones are copied) into its slot as the
    /// decryption of `sealed`, which holds them sealed: a commit does this for each page it writes, so that readers
    /// after it do not authenticate and decrypt again what it just encrypted.
    ///
    /// Safe at commit: the writer only writes pages that no reader can reach in any version still pinned, so no
    /// reader uses the slot. If the commit fails, the slot's nonce matches nothing on disk and is refilled on the next
    /// read. For the same reason no fill can write the slot meanwhile, and the lock is taken only to install a chunk
    /// of entries: a commit's two sealing threads store their pages at once (the copy into a slot never touched
    /// before faults in its memory, which costs as much as sealing the page on a virtual machine).
    func store(_ number: PageNumber, clear: UnsafeRawPointer, sealed: UnsafeRawPointer) {
        guard Int(number) < capacity else { return }
        let (low, high) = nonce(of: sealed)
        let entry = self.entry(number) ?? lock.withLock { chunks in self.entry(number) ?? install(number, &chunks) }
        entry[1].store(0, ordering: .relaxed)
        // A page the transaction wrote in its slot (``claim(_:)``) is there already.
        if clear != slot(number) {
            UnsafeMutableRawPointer(mutating: slot(number)).copyMemory(from: clear, byteCount: sealer.usableSize)
        }
        entriesSet.note(number)
        entry[0].store(low, ordering: .relaxed)
        entry[1].store(high | epochBits[0].load(ordering: .relaxed), ordering: .releasing)
        slotsWritten.add(1, ordering: .relaxed)
    }

    /// The slot of page `number`, as the buffer a write transaction writes the page in (nil beyond the slots), no
    /// longer current for any nonce.
    ///
    /// The transaction only writes pages that no reader can reach in any version still pinned (the rule that makes
    /// ``store(_:clear:sealed:)`` safe), so no reader uses the slot meanwhile. Writing the page where its decrypted
    /// copy will live spares the commit a copy into memory never touched before: on a virtual machine, faulting in
    /// such memory costs about 2.5 µs a 4 KiB page, as much as sealing it, where a plain file's transaction pays
    /// only for its own buffers. A transaction that fails leaves the slot matching no nonce, to be filled again by
    /// the next read of the page.
    func claim(_ number: PageNumber) -> UnsafeMutableRawPointer? {
        guard Int(number) < capacity else { return nil }
        entry(number)?[1].store(0, ordering: .relaxed)
        slotsWritten.add(1, ordering: .relaxed)
        return UnsafeMutableRawPointer(mutating: slot(number))
    }

    /// Whether `buffer` is one of the slots (given out by ``claim(_:)``).
    func holds(_ buffer: UnsafeRawPointer) -> Bool {
        buffer >= UnsafeRawPointer(slots.base) && buffer < UnsafeRawPointer(slots.base) + capacity * sealer.pageSize
    }

    /// Allocates the chunk of entries holding `number`. Called under the lock.
    private func install(_ number: PageNumber, _ chunks: inout [UnsafeMutablePointer<Atomic<UInt64>>])
        -> UnsafeMutablePointer<Atomic<UInt64>>
    {
        let chunk = UnsafeMutablePointer<Atomic<UInt64>>.allocate(capacity: 2 * Self.chunkPages)
        for index in 0..<(2 * Self.chunkPages) { (chunk + index).initialize(to: Atomic(0)) }
        chunks.append(chunk)
        directory[Int(number) >> Self.chunkShift].store(UInt(bitPattern: chunk), ordering: .releasing)
        return chunk + 2 * (Int(number) & (Self.chunkPages - 1))
    }
}

extension DecryptedPages {
    /// The decrypted pages of a file whose metas are `metas`: nil for a plain file.
    ///
    /// The slots are reserved for a file of 1 TiB where the address space allows it; where it does not (a process
    /// limited by `ulimit -v`, a platform with a small address space, a tool like valgrind), for the largest of
    /// 256, 64, 16 and 4 GiB that can be reserved, so the file opens and only pages beyond that fail to read.
    static func forFile(sealedBy metas: MetaCodec) throws(StorageError) -> DecryptedPages? {
        guard let sealer = metas.pageSealer else { return nil }
        for shift in [40, 38, 36, 34, 32] {
            if let pages = DecryptedPages(sealer: sealer, maximumBytes: 1 << shift) { return pages }
        }
        throw .encryptionUnavailable(reason: "no address space could be reserved for the decrypted pages")
    }
}

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// An in-memory file that simulates a disk with a volatile write cache, for power-loss and I/O-error tests.
///
/// Every write lands in the visible bytes at once (as in a page cache) and is also queued as *pending*.
/// `sync()` makes pending writes durable. ``crashImage(using:)`` returns what a disk could hold after a power
/// cut: the durable bytes plus an arbitrary subset of the pending writes, one of them torn at a sector boundary.
/// Faults can be scheduled: the n-th write or sync fails with a chosen `errno`.
final class FaultInjectingFile: MemoryFile, @unchecked Sendable {
    struct Faults {
        /// The write (counting from 1) that fails, if any.
        var failWrite: Int?
        /// The sync (counting from 1) that fails, if any.
        var failSync: Int?
        /// `errno` of the injected failure.
        var code: Int32 = EIO
        /// When the scheduled failure hits, the power goes out: that write lands torn (a random prefix of whole
        /// sectors) and every later write and sync fails.
        var powerLoss = false
        /// Once set, every write and sync fails: the simulated machine has lost power.
        var poweredOff = false
        /// A nearly full disk: a write that would make the file longer than this many bytes fails with `ENOSPC`
        /// (the file may already be longer; writes inside it still succeed).
        var spaceLimit: Int?
    }

    private struct Tracking {
        var durable: [UInt8] = []
        var pending: [(offset: Int, bytes: [UInt8])] = []
        /// The write that was cut by the power loss, if any: always torn in crash images.
        var cut: (offset: Int, bytes: [UInt8])?
        var writes = 0
        var syncs = 0
        var faults = Faults()
    }
    private let tracking = Locked(Tracking())

    /// Creates a simulated disk whose durable and visible contents are `image`.
    init(name: String, image: [UInt8] = []) {
        super.init(name: name)
        if !image.isEmpty {
            load(image)
            tracking.withLock { $0.durable = image }
        }
    }

    /// Schedules faults; counters restart from zero.
    func schedule(_ faults: Faults) {
        tracking.withLock {
            $0.faults = faults
            $0.writes = 0
            $0.syncs = 0
            $0.cut = nil
        }
    }

    /// Bytes that survived the last successful sync.
    var durableImage: [UInt8] { tracking.withLock { $0.durable } }

    override func write(_ buffer: UnsafeRawBufferPointer, at offset: Int) throws(StorageError) {
        let path = self.path
        let size = try size()
        try tracking.withLock { (state: inout Tracking) throws(StorageError) in
            state.writes += 1
            if state.faults.poweredOff { throw Errno.error("pwrite", path: path, code: state.faults.code) }
            if let limit = state.faults.spaceLimit, offset + buffer.count > max(size, limit) {
                throw Errno.error("pwrite", path: path, code: ENOSPC)
            }
            if state.faults.failWrite == state.writes {
                if state.faults.powerLoss {
                    state.faults.poweredOff = true
                    state.cut = (offset, Array(buffer))
                }
                throw Errno.error("pwrite", path: path, code: state.faults.code)
            }
            state.pending.append((offset, Array(buffer)))
        }
        try super.write(buffer, at: offset)
    }

    override func sync() throws(StorageError) {
        let path = self.path
        try tracking.withLock { (state: inout Tracking) throws(StorageError) in
            state.syncs += 1
            if state.faults.poweredOff { throw Errno.error("fdatasync", path: path, code: state.faults.code) }
            if state.faults.failSync == state.syncs {
                if state.faults.powerLoss { state.faults.poweredOff = true }
                throw Errno.error("fdatasync", path: path, code: state.faults.code)
            }
            for write in state.pending { Self.apply(write.bytes, at: write.offset, to: &state.durable) }
            state.pending.removeAll()
        }
    }

    /// Shortens the visible file. The durable image keeps its length: a power cut may undo an unsynced truncation,
    /// which is the pessimistic reading (the bytes cut off come back).
    override func truncate(to size: Int) throws(StorageError) {
        let path = self.path
        try tracking.withLock { (state: inout Tracking) throws(StorageError) in
            if state.faults.poweredOff { throw Errno.error("ftruncate", path: path, code: state.faults.code) }
            state.pending.removeAll { $0.offset >= size }
        }
        try super.truncate(to: size)
    }

    /// Stops all further writes and syncs, as if the power went out.
    func powerOff() { tracking.withLock { $0.faults.poweredOff = true } }

    /// What the disk may hold after a power cut now: the durable bytes plus a random subset of the pending writes
    /// (applied in order), one of which is torn after a random number of 512-byte sectors, and the write that
    /// the power loss cut, torn likewise.
    func crashImage<G: RandomNumberGenerator>(using generator: inout G) -> [UInt8] {
        tracking.withLock { state in
            var image = state.durable
            let torn = state.pending.isEmpty ? -1 : Int.random(in: 0..<state.pending.count, using: &generator)
            for (index, write) in state.pending.enumerated() {
                if index == torn {
                    Self.applyTorn(write.bytes, at: write.offset, to: &image, using: &generator)
                } else if Bool.random(using: &generator) {
                    Self.apply(write.bytes, at: write.offset, to: &image)
                }
            }
            if let cut = state.cut { Self.applyTorn(cut.bytes, at: cut.offset, to: &image, using: &generator) }
            return image
        }
    }

    private static func applyTorn<G: RandomNumberGenerator>(
        _ bytes: [UInt8], at offset: Int, to image: inout [UInt8], using generator: inout G
    ) {
        let sectors = (bytes.count + 511) / 512
        let kept = Int.random(in: 0...sectors, using: &generator) * 512
        apply(Array(bytes.prefix(kept)), at: offset, to: &image)
    }

    private static func apply(_ bytes: [UInt8], at offset: Int, to image: inout [UInt8]) {
        if image.count < offset + bytes.count {
            image += [UInt8](repeating: 0, count: offset + bytes.count - image.count)
        }
        image.replaceSubrange(offset..<(offset + bytes.count), with: bytes)
    }
}

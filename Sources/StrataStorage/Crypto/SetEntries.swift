import Synchronization

/// The entries of a ``DecryptedPages`` that were set (filled, or stored at commit), so that keeping its reservation
/// for another open (``SlotReservation``) clears those and not whole chunks.
///
/// An open that reads a few pages sets a few entries; a file that wrote or read many sets many, up to its page
/// count. So the first ``listed`` page numbers are listed, and past them only the highest page number is kept,
/// and every entry up to it is cleared.
final class SetEntries: @unchecked Sendable {
    // @unchecked: `pages` slots are each written once, by the caller that claimed the index; read only in
    // ``clear(in:)``, once no caller is left (the file is closing).

    /// How many page numbers are listed.
    static let listed = 64

    private let count = Atomic<Int>(0)
    private let highest = Atomic<Int>(-1)
    private let pages = UnsafeMutablePointer<Int>.allocate(capacity: listed)

    deinit { pages.deallocate() }

    /// Notes that page `number`'s entry is set. Called by fills (under the pages' lock) and by a commit's two
    /// sealing threads at once.
    func note(_ number: PageNumber) {
        let page = Int(number)
        var seen = highest.load(ordering: .relaxed)
        while page > seen {
            let (exchanged, original) = highest.compareExchange(
                expected: seen, desired: page, ordering: .relaxed)
            if exchanged { break }
            seen = original
        }
        guard count.load(ordering: .relaxed) <= Self.listed else { return }
        let index = count.wrappingAdd(1, ordering: .relaxed).oldValue
        if index < Self.listed { pages[index] = page }
    }

    /// Clears every entry noted (both words), in the chunks `directory` names: afterwards no slot matches any nonce.
    /// An atomic word's zero bits are `Atomic(0)`.
    func clear(in directory: UnsafeMutablePointer<Atomic<UInt>>) {
        func entries(from first: Int) -> UnsafeMutableRawPointer? {
            let chunk = directory[first >> CurrentSlots.chunkShift].load(ordering: .acquiring)
            guard let chunk = UnsafeMutableRawPointer(bitPattern: chunk) else { return nil }
            return chunk + 2 * (first & (CurrentSlots.chunkPages - 1)) * MemoryLayout<Atomic<UInt64>>.stride
        }
        let entryBytes = 2 * MemoryLayout<Atomic<UInt64>>.stride
        let noted = count.load(ordering: .acquiring)
        if noted <= Self.listed {
            for index in 0..<noted {
                entries(from: pages[index])?.initializeMemory(as: UInt8.self, repeating: 0, count: entryBytes)
            }
            return
        }
        // Every entry up to the highest noted, chunk by chunk.
        let end = highest.load(ordering: .acquiring) + 1
        var first = 0
        while first < end {
            let run = min(CurrentSlots.chunkPages, end - first)
            entries(from: first)?.initializeMemory(as: UInt8.self, repeating: 0, count: run * entryBytes)
            first += run
        }
    }
}

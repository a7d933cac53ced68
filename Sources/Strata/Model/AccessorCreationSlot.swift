import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// What the `@Persisted` initialisers of an accessor the Realm is creating take their properties from, for the
/// one thread that holds this slot (see `Realm.accessor(for:)`).
///
/// The thread's `BoxStack` carries the same state, but reaching it is a thread-local read (~60 instructions), and
/// an accessor's `ObjectBase.init` and each of its `@Persisted` initialisers read it: one per property of every
/// object a query or an iteration hands out. Here each of them finds its thread's slot by hashing
/// `pthread_self()`, loads one atomic word and compares it with the thread's identity. A thread that finds its
/// slot taken by another thread (two threads hashed alike) uses its stack instead.
///
/// The slots are striped, one of ``count`` per hash of the thread's identity, each on cache lines of its own: a
/// single process-wide slot would be written by every thread creating accessors and read by every `@Persisted`
/// initialiser on every thread, so threads iterating at the same time would pass its cache line back and forth
/// on every object.
///
/// Only the holder reads or writes the fields below: it takes the slot with an acquiring exchange and gives it
/// back with a releasing store, and a thread always sees its own writes, so a thread that reads its own identity
/// in ``holder`` is the one that stored it.
final class AccessorCreationSlot: @unchecked Sendable {
    /// The identity of the thread holding the slot (`pthread_self()`'s bits), or 0 while it is free.
    private let holder = Atomic<UInt>(0)
    /// The managed object of the accessor being created. Not retained: `Realm.accessor(for:)` holds it.
    @exclusivity(unchecked) var owner: Unmanaged<ManagedObject>?
    /// The class whose accessor is being created (an initialiser creating another object traps).
    @exclusivity(unchecked) var type: ObjectIdentifier?
    /// The column of each `@Persisted` property, in declaration order, and the next one to hand out.
    @exclusivity(unchecked) var columns = UnsafeBufferPointer<Int>(start: nil, count: 0)
    @exclusivity(unchecked) var next = 0
    /// Keeps the next slot's fields off the cache line of this one's (the allocator places the slots, all made at
    /// once, side by side).
    private let padding: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0)

    /// How many slots threads are spread over.
    static let count = 64

    /// The slots, made once and never freed (read without reference counting). Reached through
    /// `slotsAddress`: a `static let` with an initialiser is a `swift_once` call on every read on Linux (~14
    /// instructions), and the slot is read once per property of every object made.
    private nonisolated(unsafe) static let slots: UnsafeMutableBufferPointer<Unmanaged<AccessorCreationSlot>> = {
        let slots = UnsafeMutableBufferPointer<Unmanaged<AccessorCreationSlot>>.allocate(capacity: count)
        for index in 0..<count { slots.initializeElement(at: index, to: .passRetained(AccessorCreationSlot())) }
        return slots
    }()

    /// The address of `slots`, once the first caller made them; 0 before. A global of a constant initial value,
    /// which needs no one-time initialisation.
    @inline(__always)
    private static var slotsAddress: UInt {
        let address = publishedSlotsAddress.load(ordering: .acquiring)
        return address != 0 ? address : publishSlots()
    }

    /// Makes `slots` (once) and publishes their address.
    @inline(never)
    private static func publishSlots() -> UInt {
        let address = UInt(bitPattern: slots.baseAddress)
        publishedSlotsAddress.store(address, ordering: .releasing)
        return address
    }

    /// The calling thread's identity, never 0.
    @inline(__always)
    static var currentThread: UInt {
        // An integer with glibc, a pointer with Darwin and musl.
        #if canImport(Glibc)
            UInt(pthread_self())
        #else
            UInt(bitPattern: pthread_self())
        #endif
    }

    /// Runs `body` with the slot of the thread `thread` (the calling thread's unless a test says otherwise),
    /// without retaining it.
    @inline(__always)
    static func withSlot<Result>(
        of thread: UInt = currentThread, _ body: (AccessorCreationSlot, _ thread: UInt) -> Result
    ) -> Result {
        // Fibonacci hashing: thread identities are addresses far apart whose low bits are alike.
        let index = Int(truncatingIfNeeded: (thread &* 0x9E37_79B9_7F4A_7C15) >> 58)
        let slots = UnsafePointer<Unmanaged<AccessorCreationSlot>>(bitPattern: slotsAddress).unsafelyUnwrapped
        return slots[index]._withUnsafeGuaranteedRef { body($0, thread) }
    }

    /// Whether `thread` (the caller) holds the slot. One relaxed load when no accessor is being created.
    @inline(__always)
    func isHeld(by thread: UInt) -> Bool {
        holder.load(ordering: .relaxed) == thread
    }

    /// Takes the slot for `thread` (the caller); false if another thread holds it.
    func acquire(for thread: UInt) -> Bool {
        holder.compareExchange(expected: 0, desired: thread, ordering: .acquiring).exchanged
    }

    /// Gives the slot back (the holder only).
    func release() {
        owner = nil
        type = nil
        columns = UnsafeBufferPointer(start: nil, count: 0)
        holder.store(0, ordering: .releasing)
    }

    /// The next property of the accessor being created (its owner and column), or nil once the class declared all
    /// it was expected to (the holder only).
    @inline(__always)
    func nextProperty() -> (owner: Unmanaged<ManagedObject>, column: Int)? {
        let index = next
        guard index < columns.count, let owner else { return nil }
        next = index &+ 1
        return (owner, columns[index])
    }
}

/// The address of `AccessorCreationSlot.slots` once made, 0 before (see `AccessorCreationSlot.slotsAddress`).
private let publishedSlotsAddress = Atomic<UInt>(0)

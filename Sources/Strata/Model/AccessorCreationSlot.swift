import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// What the `@Persisted` initialisers of an accessor the Realm is creating take their properties from, for the
/// one thread that holds this process-wide slot (see `Realm.accessor(for:)`).
///
/// The thread's `BoxStack` carries the same state, but reaching it is a thread-local read (~60 instructions), and
/// an accessor's `ObjectBase.init` and each of its `@Persisted` initialisers read it: one per property of every
/// object a query or an iteration hands out. Here each of them loads one atomic word and, when it is not zero,
/// compares it with `pthread_self()`. A thread that finds the slot taken by another thread uses its stack instead.
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

    /// The calling thread's identity, never 0.
    @inline(__always)
    private static var currentThread: UInt {
        // An integer with glibc, a pointer with Darwin and musl.
        #if canImport(Glibc)
            UInt(pthread_self())
        #else
            UInt(bitPattern: pthread_self())
        #endif
    }

    /// Whether the calling thread holds the slot. One relaxed load when no accessor is being created anywhere.
    @inline(__always)
    func isHeldHere() -> Bool {
        let holder = holder.load(ordering: .relaxed)
        return holder != 0 && holder == Self.currentThread
    }

    /// Takes the slot for the calling thread; false if another thread holds it.
    func acquire() -> Bool {
        holder.compareExchange(expected: 0, desired: Self.currentThread, ordering: .acquiring).exchanged
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

/// The process's ``AccessorCreationSlot``.
let accessorCreationSlot = AccessorCreationSlot()

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The nonces pages and metas are sealed under: unique within the process, and across processes unless two draw
/// the same 64 random bits, at a few nanoseconds each instead of a system call.
///
/// Counter mode needs a nonce that never repeats under one key. Drawing all 96 bits from the system generator for
/// every page cost two `getrandom` calls a page, about 3 µs on a virtual machine: as much as encrypting and
/// authenticating the page. Here a nonce is a 64-bit random prefix, drawn when the process first seals, followed by a
/// 32-bit counter; after 2³² nonces a new prefix is drawn. Two nonces can only be equal if two prefixes are, which
/// for `m` prefixes ever drawn under one key has a probability of about m² / 2⁶⁵ (a million processes: 2⁻²⁵),
/// and within one prefix never.
///
/// A forked child would count on from its parent's prefix, so the child replaces the sequence (a `pthread_atfork`
/// handler) and draws its own. The handler does not take the lock: the fork may have happened while another thread
/// of the parent held it.
final class NonceSequence: @unchecked Sendable {
    // @unchecked: `state` is only touched under its lock.

    /// The process's sequence. Written only in a forked child, by the fork handler, before anything else runs
    /// there, so no reader in the parent can race with the write.
    nonisolated(unsafe) static var shared: NonceSequence = {
        pthread_atfork(nil, nil) { NonceSequence.shared = NonceSequence() }
        return NonceSequence()
    }()

    private struct State {
        var prefix: UInt64 = 0
        /// The counter of the next nonce; `period` means a new prefix is due.
        var counter: UInt64
    }

    /// Nonces per prefix: 2³², all the 32-bit counter holds (smaller only in tests).
    private let period: UInt64
    private let state: Locked<State>

    init(period: UInt64 = 1 << 32) {
        precondition(period > 0 && period <= 1 << 32, "a prefix covers at most 2³² nonces")
        self.period = period
        state = Locked(State(counter: period))
    }

    /// Writes the next nonce (``BlockCipher/nonceSize`` bytes) to `nonce`: the prefix, then the counter, both
    /// little-endian.
    func next(into nonce: UnsafeMutableRawPointer) {
        let period = period
        let (prefix, counter) = state.withLock { state -> (UInt64, UInt32) in
            if state.counter == period {
                var generator = SystemRandomNumberGenerator()
                state.prefix = generator.next()
                state.counter = 0
            }
            defer { state.counter += 1 }
            return (state.prefix, UInt32(state.counter))
        }
        nonce.storeBytes(of: prefix.littleEndian, toByteOffset: 0, as: UInt64.self)
        nonce.storeBytes(of: counter.littleEndian, toByteOffset: 8, as: UInt32.self)
    }

    /// The next nonce as an array.
    func next() -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: BlockCipher.nonceSize) { buffer, count in
            next(into: UnsafeMutableRawPointer(buffer.baseAddress!))
            count = BlockCipher.nonceSize
        }
    }
}

#if canImport(Glibc)
    public import Glibc
#elseif canImport(Musl)
    public import Musl
#elseif canImport(Darwin)
    public import Darwin
#endif

/// One instance of `Value` per thread, created on first use and released when the thread exits.
///
/// A pthread key: reading it costs a few nanoseconds, far less than `Thread.current.threadDictionary`, which
/// matters on paths that run for every object created.
public final class ThreadLocal<Value: AnyObject>: @unchecked Sendable {
    /// A constant, so that reading it needs no exclusivity check.
    @usableFromInline let key: pthread_key_t
    private let make: @Sendable () -> Value

    /// A thread-local slot whose value `make` creates on each thread's first access.
    public init(_ make: @escaping @Sendable () -> Value) {
        self.make = make
        var key = pthread_key_t()
        #if canImport(Darwin)
            pthread_key_create(&key) { Unmanaged<AnyObject>.fromOpaque($0).release() }
        #else
            pthread_key_create(&key) { pointer in
                if let pointer { Unmanaged<AnyObject>.fromOpaque(pointer).release() }
            }
        #endif
        self.key = key
    }

    deinit { pthread_key_delete(key) }

    /// Calls `body` with this thread's value without retaining it (the thread keeps it alive). Inlinable so that
    /// callers in other modules get a specialised call to `pthread_getspecific`, not a generic function.
    @inlinable @inline(__always)
    public func withValue<R>(_ body: (Value) throws -> R) rethrows -> R {
        if let pointer = pthread_getspecific(key) {
            return try Unmanaged<Value>.fromOpaque(pointer)._withUnsafeGuaranteedRef(body)
        }
        return try body(firstValue())
    }

    /// This thread's value.
    @inlinable @inline(__always)
    public var value: Value {
        if let pointer = pthread_getspecific(key) {
            return Unmanaged<Value>.fromOpaque(pointer).takeUnretainedValue()
        }
        return firstValue()
    }

    /// Creates this thread's value (first access on the thread).
    @usableFromInline @inline(never)
    func firstValue() -> Value {
        let value = make()
        pthread_setspecific(key, Unmanaged.passRetained(value as AnyObject).toOpaque())
        return value
    }
}

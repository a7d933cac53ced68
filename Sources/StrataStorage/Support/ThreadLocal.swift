#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// One instance of `Value` per thread, created on first use and released when the thread exits.
///
/// A pthread key: reading it costs a few nanoseconds, far less than `Thread.current.threadDictionary`, which
/// matters on paths that run for every object created.
public final class ThreadLocal<Value: AnyObject>: @unchecked Sendable {
    private var key = pthread_key_t()
    private let make: @Sendable () -> Value

    /// A thread-local slot whose value `make` creates on each thread's first access.
    public init(_ make: @escaping @Sendable () -> Value) {
        self.make = make
        #if canImport(Darwin)
            pthread_key_create(&key) { Unmanaged<AnyObject>.fromOpaque($0).release() }
        #else
            pthread_key_create(&key) { pointer in
                if let pointer { Unmanaged<AnyObject>.fromOpaque(pointer).release() }
            }
        #endif
    }

    deinit { pthread_key_delete(key) }

    /// Calls `body` with this thread's value without retaining it (the thread keeps it alive).
    @inline(__always)
    public func withValue<R>(_ body: (Value) throws -> R) rethrows -> R {
        if let pointer = pthread_getspecific(key) {
            return try Unmanaged<Value>.fromOpaque(pointer)._withUnsafeGuaranteedRef(body)
        }
        return try body(value)
    }

    /// This thread's value.
    @inline(__always)
    public var value: Value {
        if let pointer = pthread_getspecific(key) {
            return Unmanaged<Value>.fromOpaque(pointer).takeUnretainedValue()
        }
        let value = make()
        pthread_setspecific(key, Unmanaged.passRetained(value as AnyObject).toOpaque())
        return value
    }
}

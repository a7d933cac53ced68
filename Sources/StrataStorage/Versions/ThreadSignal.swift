#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A pthread mutex with one condition variable, for the few threads that block (outside Swift's cooperative
/// pool). Subclasses keep their state guarded by it.
class PThreadCondition: @unchecked Sendable {
    let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    init() {
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(condition, nil)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
        condition.deallocate()
    }
}

/// A one-shot signal a plain thread can block on (a pthread mutex and condition variable).
///
/// Only used for threads that chose a blocking API; async callers suspend instead.
final class ThreadSignal: PThreadCondition, @unchecked Sendable {
    private var signalled = false

    /// Blocks until ``signal()`` has been called (returns at once if it already was).
    func wait() {
        pthread_mutex_lock(mutex)
        while !signalled { pthread_cond_wait(condition, mutex) }
        pthread_mutex_unlock(mutex)
    }

    /// Wakes the waiter.
    func signal() {
        pthread_mutex_lock(mutex)
        signalled = true
        pthread_cond_signal(condition)
        pthread_mutex_unlock(mutex)
    }
}

/// Runs `body` on a new detached thread outside Swift's cooperative pool (used for blocking waits on
/// cross-process locks, so that async callers never block a pool thread).
func runOnDedicatedThread(_ body: @escaping @Sendable () -> Void) {
    if !startDedicatedThread(body) {
        // No thread could be created: run inline rather than lose the work.
        body()
    }
}

/// Starts `body` on a new detached thread; false (and `body` not run) if no thread could be created.
func startDedicatedThread(_ body: @escaping @Sendable () -> Void) -> Bool {
    final class Box: @unchecked Sendable {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }
    let context = Unmanaged.passRetained(Box(body)).toOpaque()
    #if canImport(Darwin)
        var thread: pthread_t?
    #else
        var thread = pthread_t()
    #endif
    let result = pthread_create(
        &thread, nil,
        { raw in
            #if canImport(Darwin)
                let box = Unmanaged<Box>.fromOpaque(raw).takeRetainedValue()
            #else
                let box = Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue()
            #endif
            box.body()
            return nil
        }, context)
    if result != 0 {
        Unmanaged<Box>.fromOpaque(context).release()
        return false
    }
    #if canImport(Darwin)
        if let thread { pthread_detach(thread) }
    #else
        pthread_detach(thread)
    #endif
    return true
}

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A thread that writes a logged commit's pages into the main file while the committing thread appends the
/// commit's record to the log and waits for the log's sync.
///
/// A small durable commit spends most of its time waiting for one `fdatasync` of the log (about 110 µs on the
/// test machine). Its pages must also be in the main file (unsynced) before the version is published, and
/// writing them costs one `pwrite` per run of consecutive pages (five or six for a single put into a 100,000-key
/// tree, 2–3 µs each). Those writes do not have to precede the log record: the log alone makes the commit
/// durable and the main file is only read for versions already published. So they run here, hidden behind the
/// sync, and the committer collects the outcome before it publishes.
///
/// One job at a time: the committer holds the write lock from ``start(_:)`` to ``finish()``, and the buffers a
/// job writes must stay alive until ``finish()`` returns. The thread is created with the first job and ends when
/// the writer is released.
final class WriteBehind: PThreadCondition, @unchecked Sendable {
    typealias Job = () throws(StorageError) -> Void

    // Guarded by `mutex`.
    private var job: Job?
    private var outcome: Result<Void, StorageError>?
    private var running = false
    private var stopping = false

    /// Ends the thread once it is idle. Call when the owner goes away (the thread keeps this object alive).
    func stop() {
        pthread_mutex_lock(mutex)
        stopping = true
        pthread_cond_broadcast(condition)
        pthread_mutex_unlock(mutex)
    }

    /// Hands `job` to the thread (runs it inline if no thread can be created).
    func start(_ job: @escaping Job) {
        pthread_mutex_lock(mutex)
        precondition(self.job == nil && outcome == nil, "one write-behind job at a time")
        self.job = job
        if !running {
            running = true
            pthread_mutex_unlock(mutex)
            if !startDedicatedThread({ [self] in loop() }) {
                // No thread: write inline, as if the thread had done it at once.
                pthread_mutex_lock(mutex)
                running = false
                self.job = nil
                outcome = Result { () throws(StorageError) in try job() }
                pthread_mutex_unlock(mutex)
            }
            return
        }
        pthread_cond_signal(condition)
        pthread_mutex_unlock(mutex)
    }

    /// Waits for the job handed to ``start(_:)`` and rethrows its error.
    func finish() throws(StorageError) {
        pthread_mutex_lock(mutex)
        while outcome == nil { pthread_cond_wait(condition, mutex) }
        let result = outcome!
        outcome = nil
        pthread_mutex_unlock(mutex)
        try result.get()
    }

    private func loop() {
        pthread_mutex_lock(mutex)
        while true {
            while job == nil && !stopping { pthread_cond_wait(condition, mutex) }
            guard let current = job else { break }
            job = nil
            pthread_mutex_unlock(mutex)
            let result: Result<Void, StorageError>
            do throws(StorageError) {
                try current()
                result = .success(())
            } catch {
                result = .failure(error)
            }
            pthread_mutex_lock(mutex)
            outcome = result
            pthread_cond_broadcast(condition)
        }
        running = false
        pthread_mutex_unlock(mutex)
    }
}

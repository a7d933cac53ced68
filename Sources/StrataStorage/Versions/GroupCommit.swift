#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Durable group commit: the commits that writers append to the commit log while a sync of it runs share the
/// next sync.
///
/// A small durable commit spends most of its time in one `fdatasync` of the log (about 110 µs on the test
/// machine). When other writers wait for the write lock, a committer appends its record *without* syncing,
/// hands the commit to this object and lets the next writer in at once (``SharedFile/commitLogged(_:pages:runs:base:)``);
/// the next writer builds on the appended version while a dedicated thread here syncs the log. One sync covers
/// every record appended before it started, so N writers arriving together pay about two syncs, not N.
///
/// Guarantees, kept by ``SharedFile``: a commit returns only once a sync covered its record and its version is
/// published; readers (in this and other processes) see published versions only; the process keeps the
/// cross-process writer lock until every appended commit is durable, so no other process builds on a version
/// that is not; a failed sync fails every pending commit with its error and stops the file's writers
/// (``SharedFile/State/poisoned``), after making the failed records unreplayable.
final class GroupCommit: PThreadCondition, @unchecked Sendable {
    /// A commit whose record is in the log but not yet synced.
    struct Pending {
        /// Where its record starts and ends in the log.
        let start: Int
        let end: Int
        let meta: Meta
        let mapping: Mapping
        let wait: DurableWait
    }

    // Guarded by `mutex`.
    private var pending: [Pending] = []
    /// The log file the pending records are in, and the file they belong to (kept alive while commits pend).
    private var log: (any PageFile)?
    private var owner: SharedFile?
    /// The sync error that stopped this file's writers, if one did.
    private var failure: StorageError?
    private var running = false
    private var stopping = false
    private var syncCount = 0

    /// Syncs the syncer thread made (tests check that concurrent commits share them).
    var syncs: Int {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return syncCount
    }

    /// Whether commits are appended and not yet durable.
    var hasPending: Bool {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return !pending.isEmpty
    }

    /// Hands an appended commit to the syncer thread. Throws the error of a sync that already failed: the record
    /// then lies past the one made unreplayable and the commit fails.
    func enqueue(_ commit: Pending, log: any PageFile, owner: SharedFile) throws(StorageError) {
        pthread_mutex_lock(mutex)
        if let failure {
            pthread_mutex_unlock(mutex)
            throw failure
        }
        pending.append(commit)
        self.log = log
        self.owner = owner
        if running {
            pthread_cond_broadcast(condition)
            pthread_mutex_unlock(mutex)
            return
        }
        running = true
        pthread_mutex_unlock(mutex)
        if !startDedicatedThread({ [self] in loop(untilIdle: false) }) {
            // No thread: sync on the committer's thread, as a commit without grouping does.
            loop(untilIdle: true)
        }
    }

    /// Blocks until no commit is pending (each is durable or failed); throws the sync error that stopped the
    /// file's writers, if any. Called with the write lock held, before work that must not overtake pending
    /// commits: a commit published directly, a checkpoint of the log.
    func drain() throws(StorageError) {
        pthread_mutex_lock(mutex)
        while !pending.isEmpty { pthread_cond_wait(condition, mutex) }
        let failure = self.failure
        pthread_mutex_unlock(mutex)
        if let failure { throw failure }
    }

    /// Blocks until at least `count` commits are pending or `seconds` have passed (tests: a burst of commits is
    /// all appended while the log's syncs are held back).
    func waitForPending(atLeast count: Int, seconds: Int) {
        var deadline = timespec()
        clock_gettime(CLOCK_REALTIME, &deadline)
        deadline.tv_sec += seconds
        pthread_mutex_lock(mutex)
        while pending.count < count && pthread_cond_timedwait(condition, mutex, &deadline) == 0 {}
        pthread_mutex_unlock(mutex)
    }

    /// Ends the thread once nothing is pending. Call when the owner goes away.
    func stop() {
        pthread_mutex_lock(mutex)
        stopping = true
        pthread_cond_broadcast(condition)
        pthread_mutex_unlock(mutex)
    }

    /// Syncs batches of pending commits: everything appended before a sync starts is covered by it.
    private func loop(untilIdle: Bool) {
        pthread_mutex_lock(mutex)
        while true {
            while pending.isEmpty && !stopping && !untilIdle { pthread_cond_wait(condition, mutex) }
            guard let log, let owner, let newest = pending.last else { break }
            let batch = pending.count
            let start = pending[0].start
            pthread_mutex_unlock(mutex)
            var outcome: Result<Void, StorageError>
            do throws(StorageError) {
                try log.sync()
                owner.groupBecameDurable(newest)
                outcome = .success(())
            } catch {
                owner.groupSyncFailed(error, log: log, firstUnsynced: start)
                outcome = .failure(error)
            }
            pthread_mutex_lock(mutex)
            syncCount += 1
            let finished: [Pending]
            if case .failure(let error) = outcome {
                // Records appended during the failed sync lie past the invalidated one: they fail too.
                failure = error
                finished = pending
                pending = []
            } else {
                finished = Array(pending[..<batch])
                pending.removeFirst(batch)
            }
            if pending.isEmpty {
                self.log = nil
                self.owner = nil
            }
            pthread_cond_broadcast(condition)
            pthread_mutex_unlock(mutex)
            for _ in finished { owner.releaseWriterLockHold() }
            for commit in finished { commit.wait.complete(outcome) }
            pthread_mutex_lock(mutex)
        }
        running = false
        pthread_mutex_unlock(mutex)
    }
}

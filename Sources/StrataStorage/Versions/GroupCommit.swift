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
    /// Threads blocked in ``drain()``: the syncer then syncs at once instead of holding for queued writers.
    private var draining = 0
    /// How long the last sync took, in nanoseconds: the most a sync is held for queued writers (see
    /// `holdForQueuedWriters`).
    private var lastSyncNanoseconds = 0

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
        draining += 1
        pthread_cond_broadcast(condition)
        while !pending.isEmpty { pthread_cond_wait(condition, mutex) }
        draining -= 1
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
            if !untilIdle { holdForQueuedWriters() }
            guard let log, let owner, let newest = pending.last else { break }
            let batch = pending.count
            let start = pending[0].start
            pthread_mutex_unlock(mutex)
            var outcome: Result<Void, StorageError>
            do throws(StorageError) {
                let began = Self.nanoseconds()
                try log.sync()
                let took = Self.nanoseconds() - began
                pthread_mutex_lock(mutex)
                lastSyncNanoseconds = took
                pthread_mutex_unlock(mutex)
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

    /// Called with `mutex` held and a commit pending. Writers queued for the write lock each append a commit
    /// moments after they get it, and then wait for a sync: syncing now would cover only what is pending and make
    /// them wait for the next sync as well. So the sync waits while a writer is queued — woken by each append —
    /// for at most as long as the last sync took (a sync it saves them is longer than the wait), and not at all
    /// when someone drains, the file is closing or the batch is already large. PostgreSQL's `commit_delay`,
    /// bounded and skipped when nobody waits. Correctness does not depend on it: every commit still returns only
    /// after a sync covers it.
    private func holdForQueuedWriters() {
        guard let owner, lastSyncNanoseconds > 0 else { return }
        var deadline = timespec()
        clock_gettime(CLOCK_REALTIME, &deadline)
        let end = Int(deadline.tv_nsec) + min(lastSyncNanoseconds, Self.maximumHoldNanoseconds)
        deadline.tv_sec += end / 1_000_000_000
        deadline.tv_nsec = end % 1_000_000_000
        while !stopping && draining == 0 && pending.count < Self.largeBatch && owner.gate.hasWaiters {
            if pthread_cond_timedwait(condition, mutex, &deadline) != 0 { return }
        }
    }

    /// The longest a sync is held for queued writers, whatever the last sync took.
    private static let maximumHoldNanoseconds = 2_000_000
    /// A batch this large is synced at once.
    private static let largeBatch = 64

    private static func nanoseconds() -> Int {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Int(now.tv_sec) * 1_000_000_000 + Int(now.tv_nsec)
    }
}

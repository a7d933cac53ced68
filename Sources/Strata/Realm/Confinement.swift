#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Where a live Realm may be used: the isolation domain that opened it.
///
/// Swift concurrency, not threads, decides: on Linux the main actor runs on whichever thread the executor picks
/// after its first suspension (not the main thread), and a task resumes on any thread of the cooperative pool, so
/// a Realm opened in async code cannot be tied to a thread.
enum Confinement {
    /// Opened on a plain thread outside any task: usable only on that thread.
    case thread(pthread_t)
    /// Opened on an actor (the main actor included, or through `Realm(actor:)` / `Realm.open()`): usable only
    /// while that actor runs. The actor itself is the Realm's `ownerActor` (held weakly).
    case actor
    /// Opened in nonisolated code running in a task (a route handler, `Task {}`, `Task.detached`): usable across
    /// any number of `await`s of that task, never by another one. The compiler keeps a non-`Sendable` Realm in
    /// its task's region; the run-time check compares task identities.
    case task(TaskIdentity)
    /// Opened with `Realm(configuration:queue:)`: usable only in blocks of that serial
    /// `DispatchQueue`.
    case queue(RealmQueue)
    /// A frozen Realm, readable anywhere.
    case none

    /// The confinement of a Realm opened now, by code isolated to `isolation` (`#isolation` at the call site).
    static func current(isolation: (any Actor)?) -> Confinement {
        if isolation != nil { return .actor }
        if let task = TaskIdentity.current { return .task(task) }
        return .thread(pthread_self())
    }

    /// Which isolation the Realm instance cache files a Realm of this confinement under (nil: not cached).
    func cacheKey(actor: (any Actor)?) -> RealmCache.Isolation? {
        switch self {
        case .thread(let thread): .thread(Confinement.number(of: thread))
        case .actor: actor.map { .actor(ObjectIdentifier($0)) }
        case .task(let task): .task(task)
        case .queue(let queue): .queue(ObjectIdentifier(queue.marker))
        case .none: nil
        }
    }

    /// A thread's identity as a number (`pthread_t` is a pointer on Darwin, an integer on Linux).
    static func number(of thread: pthread_t) -> UInt {
        #if canImport(Darwin)
            UInt(bitPattern: Int(bitPattern: UnsafeMutableRawPointer(thread)))
        #else
            UInt(thread)
        #endif
    }

    /// What the caller of a Realm confined like this should do instead of using it here: printed when a check
    /// fails, after ``RealmError/wrongThread``'s description.
    var advice: String {
        switch self {
        case .thread:
            "this Realm was opened on a plain thread and may be used only there. In async code open a Realm where "
                + "it is used (try Realm() in a task or an actor returns that isolation's own instance), or confine "
                + "one to an actor with Realm(actor:) or Realm.open(); hand values to other threads and tasks as "
                + "Frozen (freeze()) or as a ThreadSafeReference"
        case .actor:
            "this Realm is confined to the actor that opened it (the main actor, for code on @MainActor or in an "
                + "async main). Use it from that actor only; elsewhere open a Realm there (try Realm()), or pass "
                + "Frozen values (freeze()) or a ThreadSafeReference"
        case .task:
            "this Realm is confined to the task that opened it (nonisolated async code): child tasks, Task {} and "
                + "Task.detached open their own (try Realm()) or receive Frozen values (freeze()) or a "
                + "ThreadSafeReference; to share one Realm between tasks, confine it to an actor with "
                + "Realm(actor:) or Realm.open()"
        case .queue:
            "this Realm is confined to the DispatchQueue it was opened for (Realm(configuration:queue:)): use it "
                + "only in blocks dispatched to that queue; elsewhere open a Realm there (try Realm()), or pass "
                + "Frozen values (freeze()) or a ThreadSafeReference"
        case .none: "a frozen Realm is readable anywhere"
        }
    }
}

/// The identity of a running task, for confinement checks and the instance cache. Only compared while that task
/// runs (a Realm confined to it cannot outlive it without being smuggled past the compiler), so a finished task's
/// identity being reused by a later task is harmless.
struct TaskIdentity: Hashable, Sendable {
    let value: Int

    /// The task running the caller, nil outside any task (a plain thread).
    static var current: TaskIdentity? {
        withUnsafeCurrentTask { task in task.map { TaskIdentity(value: $0.hashValue) } }
    }
}

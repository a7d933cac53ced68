import StrataStorage

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The checks that keep a Realm in the isolation that opened it (see ``Confinement``).
extension Realm {
    /// Traps with ``RealmError/wrongThread`` (and what to do instead) when called outside the Realm's thread, actor
    /// or task (frozen Realms are readable anywhere).
    @usableFromInline
    func checkThread() {
        switch confinement {
        case .none:
            return
        case .thread(let owner):
            guard pthread_equal(owner, pthread_self()) != 0 else { fatalError(wrongIsolationMessage) }
        case .actor, .task, .queue:
            // Asking the runtime which actor, task or queue runs costs more than a property read: skip it while
            // the calling thread is the one the last check passed on (an actor, a task or a serial queue runs on
            // one thread at a time, so only code that smuggled the Realm past the compiler could be on that
            // thread for another actor, task or queue).
            let thread = pthread_self()
            if let verifiedThread, pthread_equal(verifiedThread, thread) != 0 { return }
            if case .task(let owner) = confinement {
                guard TaskIdentity.current == owner else { fatalError(wrongIsolationMessage) }
            } else if case .queue(let queue) = confinement {
                guard queue.isCurrent else { fatalError(wrongIsolationMessage) }
            } else {
                guard let ownerActor else { fatalError("\(wrongIsolationMessage) (and the actor is gone)") }
                ownerActor.preconditionIsolated(wrongIsolationMessage)
            }
            verifiedThread = thread
        }
    }

    /// Why a check failed and what to do instead.
    private var wrongIsolationMessage: String { "\(Realm.Error.wrongThread): \(confinement.advice)" }

    /// Throws ``RealmError/wrongThread`` when called outside the Realm's thread, task or queue. An actor-confined Realm
    /// used off its actor traps instead: Swift offers no way to ask which actor is running without trapping (and the
    /// compiler already keeps a non-`Sendable` Realm on its actor).
    func checkThreadThrowing() throws(Realm.Error) {
        switch confinement {
        case .none:
            return
        case .thread(let owner):
            guard pthread_equal(owner, pthread_self()) != 0 else { throw .wrongThread }
        case .task(let owner):
            guard TaskIdentity.current == owner else { throw .wrongThread }
        case .queue(let queue):
            guard queue.isCurrent else { throw .wrongThread }
        case .actor:
            guard let ownerActor else { throw .wrongThread }
            ownerActor.preconditionIsolated(wrongIsolationMessage)
        }
    }
}

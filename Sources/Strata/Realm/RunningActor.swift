import StrataStorage

/// Which actor runs the caller, for code that has no `#isolation` to ask: a property getter such as
/// ``ThreadSafe/wrappedValue`` cannot take an isolation parameter, yet must resolve in the reading actor's Realm,
/// as the Realm SDK resolves in the reading thread's. The runtime is asked, without trapping, whether one of the
/// candidate actors' executors runs the caller (``ExecutorProbe``).
enum RunningActor {
    /// Whether the caller runs isolated to `actor`.
    static func isRunning(on actor: any Actor) -> Bool { ExecutorProbe.isCurrent(actor.unownedExecutor) }

    /// The actor among the owners of `path`'s actor-confined Realms that runs the caller, else the main actor
    /// when it runs the caller, else nil (a plain thread, a task, or an actor without a Realm of the file).
    static func current(forRealmAt path: String) -> (any Actor)? {
        if let actor = RealmCache.shared.actorOwners(ofRealmsAt: path).first(where: isRunning(on:)) { return actor }
        return isRunning(on: MainActor.shared) ? MainActor.shared : nil
    }
}

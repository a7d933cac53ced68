import StrataStorage

/// One per file per process: knows the Realms confined to actors (or opened on the main thread) and, after
/// every commit (of this process, or of another one, noticed through the file), refreshes each of them on its
/// actor, which delivers their observers' changes there.
///
/// A refresh is scheduled at most once per Realm at a time: commits that land while one is pending are covered
/// by it (the Realm advances to the newest version), so a busy writer never floods an actor.
final class Coordinator: Sendable {
    private struct Member {
        weak var realm: Realm?
        weak var actor: (any Actor)?
        var scheduled = false
    }

    private struct State {
        var members: [ObjectIdentifier: Member] = [:]
        /// Whether a task watches the file for other processes' commits.
        var watching = false
        var lastSeen: UInt64 = 0
    }

    private let path: String
    private let inMemory: Bool
    private let state = Locked(State())

    private static let all = Locked([String: Coordinator]())

    private init(path: String, inMemory: Bool) {
        self.path = path
        self.inMemory = inMemory
    }

    /// The coordinator of `realm`'s file.
    static func `for`(_ realm: Realm) -> Coordinator {
        let inMemory = realm.configuration.inMemoryIdentifier != nil
        return all.withLock { all in
            if let coordinator = all[realm.path] { return coordinator }
            let coordinator = Coordinator(path: realm.path, inMemory: inMemory)
            all[realm.path] = coordinator
            return coordinator
        }
    }

    /// Refreshes `realm` on its actor after each commit from now on (while both live).
    func register(_ realm: Realm) {
        guard let actor = realm.ownerActor else { return }
        let box = UncheckedRealm(realm)
        state.withLock { state in
            state.members = state.members.filter { $0.value.realm != nil }
            state.members[ObjectIdentifier(box.realm)] = Member(realm: box.realm, actor: actor)
        }
    }

    /// `realm` gained an observer: make sure commits reach it (also from other processes).
    func observing(_ realm: Realm) {
        if realm.ownerActor != nil {
            let known = state.withLock { $0.members[ObjectIdentifier(realm)] != nil }
            if !known { register(realm) }
        }
        startWatching(from: realm)
    }

    /// A commit landed: schedule a refresh of every member on its actor (unless one is pending).
    func committed(by writer: Realm? = nil) {
        let skip = writer.map(ObjectIdentifier.init)
        let due = state.withLock { state -> [(UncheckedRealm, any Actor)] in
            var due: [(UncheckedRealm, any Actor)] = []
            for (id, member) in state.members where !member.scheduled && id != skip {
                guard let realm = member.realm, let actor = member.actor else {
                    state.members[id] = nil
                    continue
                }
                state.members[id]?.scheduled = true
                due.append((UncheckedRealm(realm), actor))
            }
            return due
        }
        for (box, actor) in due {
            Task { await Self.refresh(box, on: actor, coordinator: self) }
        }
    }

    /// Runs on `actor`: advances the Realm (delivering its observers' changes) unless it is mid-write (its
    /// commit delivers) or has autorefresh off.
    private static func refresh(_ box: UncheckedRealm, on actor: isolated any Actor, coordinator: Coordinator) {
        let realm = box.realm
        coordinator.state.withLock { $0.members[ObjectIdentifier(realm)]?.scheduled = false }
        guard realm.autorefresh, !realm.isInWriteTransaction else { return }
        realm.refresh()
    }

    /// Starts the task that notices other processes' commits (every 10 ms while the file has live members
    /// with observers). In-memory Realms only have this process.
    private func startWatching(from realm: Realm) {
        guard !inMemory else { return }
        let store = realm.store
        let start = state.withLock { state -> Bool in
            guard !state.watching else { return false }
            state.watching = true
            state.lastSeen = store.latestVersion
            return true
        }
        guard start else { return }
        Task.detached { [self] in
            while true {
                try? await Task.sleep(for: .milliseconds(10))
                let live = state.withLock { state -> Bool in
                    state.members = state.members.filter { $0.value.realm != nil }
                    if state.members.isEmpty { state.watching = false }
                    return state.watching
                }
                guard live else { return }
                guard let version = try? store.read().version else { continue }
                let newer = state.withLock { state -> Bool in
                    defer { state.lastSeen = max(state.lastSeen, version) }
                    return version > state.lastSeen
                }
                if newer { committed() }
            }
        }
    }

    /// Notes a commit of this process (so the watcher does not report it again).
    func noteVersion(_ version: UInt64) {
        state.withLock { $0.lastSeen = max($0.lastSeen, version) }
    }

    /// Runs `body` isolated to `actor`.
    static func run<A: Actor>(on actor: A, _ body: @Sendable (isolated A) -> Void) async {
        await body(actor)
    }
}

/// A Realm reference carried to its own actor by the coordinator, which only touches it there.
struct UncheckedRealm: @unchecked Sendable {
    let realm: Realm
    init(_ realm: Realm) { self.realm = realm }
}

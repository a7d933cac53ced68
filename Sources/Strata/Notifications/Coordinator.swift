import StrataStorage

/// One per file per process: knows the Realms with observers that live on an actor (confined to one, or opened on
/// the main thread) and, after every commit (of this process, or of another one, noticed through the file),
/// refreshes each of them on its actor, which delivers their observers' changes there. Realms without observers
/// are left alone: they advance when they write or refresh, so writers do not pay for each other's Realms.
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

    /// `realm` gained an observer: refresh it on its actor after each commit from now on (while both live), and
    /// watch the file for other processes' commits.
    func observing(_ realm: Realm) {
        if let actor = realm.ownerActor {
            state.withLock { state in
                state.members = state.members.filter { $0.value.realm != nil }
                if state.members[ObjectIdentifier(realm)] == nil {
                    state.members[ObjectIdentifier(realm)] = Member(realm: realm, actor: actor)
                }
            }
        }
        startWatching(from: realm)
    }

    /// Version `version` was committed (by `writer`, whose own commit delivers to its observers): schedule a
    /// refresh of every other member on its actor (unless one is pending).
    func committed(version: UInt64, by writer: Realm? = nil) {
        let skip = writer.map(ObjectIdentifier.init)
        let due = state.withLock { state -> [(UncheckedRealm, any Actor)] in
            state.lastSeen = max(state.lastSeen, version)
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
                if state.withLock({ version > $0.lastSeen }) { committed(version: version) }
            }
        }
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

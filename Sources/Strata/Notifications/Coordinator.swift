import Foundation
import StrataStorage

/// One per file per process: knows the Realms with observers that live on an actor (confined to one, or opened on
/// the main thread) or on a plain thread and, after every commit (of this process, or of another one, noticed
/// through the file), refreshes each of them on its actor, which delivers their observers' changes there — or, for
/// a thread's Realm, on that thread's run loop, whenever the thread runs it (as the Realm SDK does); a thread that
/// never runs its run loop gets its changes when it refreshes or writes. A task's Realm cannot be refreshed from
/// outside its task: the coordinator wakes its `AsyncSequence`s (``TaskWakeup``), whose `next()` refreshes it in the
/// task. Realms without observers
/// are left alone: they advance when they write or refresh, so writers do not pay for each other's Realms.
///
/// A refresh is scheduled at most once per Realm at a time: commits that land while one is pending are covered
/// by it (the Realm advances to the newest version), so a busy writer never floods an actor.
///
/// What changed is computed off the members' actors: a task pins the newest version and diffs it once against
/// each distinct version the members read (usually one, shared by all of them); each actor then only advances to
/// exactly that version and runs its observers' queries.
final class Coordinator: Sendable {
    private struct Member {
        weak var realm: Realm?
        weak var actor: (any Actor)?
        /// For a Realm confined to a plain thread: that thread's run loop.
        var runLoop: ThreadRunLoop?
        /// For a Realm confined to a task: what wakes its `AsyncSequence`s, which refresh it in the task.
        var wakeup: TaskWakeup?
        /// For a Realm confined to a serial queue: that queue, where its refreshes are dispatched.
        var queue: RealmQueue?
        /// The version the Realm read when it last advanced (as far as the coordinator knows).
        var snapshot: ReadTransaction?
        var store: Store?
        var configuration: Realm.Configuration?
        /// The Realm's observers' work that runs off its actor (query re-evaluation), held weakly.
        var preparers: [WeakPreparer] = []
        var scheduled = false
    }

    struct WeakPreparer: @unchecked Sendable {
        weak var preparer: (any AnyPreparedIdentities)?
    }

    private struct State {
        var members: [ObjectIdentifier: Member] = [:]
        /// Whether a task watches the file for other processes' commits.
        var watching = false
        var lastSeen: UInt64 = 0
        /// The class definitions last read, and the root page of the tree they were read from.
        var schema: [String: StoredClass] = [:]
        var schemaRoot: TreeRoot?
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
    /// watch the file for other processes' commits. A task-confined Realm cannot be refreshed from outside its
    /// task: it gets the wakeup returned, which its `AsyncSequence`s wait on.
    @discardableResult
    func observing(_ realm: Realm, prepared: (any AnyPreparedIdentities)? = nil) -> TaskWakeup? {
        var wakeup: TaskWakeup?
        if case .task = realm.confinement {
            realm.coordinated = true
            let newest = realm.store.latestVersion
            wakeup = state.withLock { state in
                state.members = state.members.filter { $0.value.realm != nil }
                let id = ObjectIdentifier(realm)
                if let existing = state.members[id]?.wakeup { return existing }
                let wakeup = TaskWakeup(newest: newest)
                state.members[id] = Member(realm: realm, wakeup: wakeup)
                return wakeup
            }
        } else if case .queue(let queue) = realm.confinement {
            // A Realm on a serial queue: refreshed in a block dispatched to the queue.
            realm.coordinated = true
            state.withLock { state in
                state.members = state.members.filter { $0.value.realm != nil }
                let id = ObjectIdentifier(realm)
                if state.members[id] == nil { state.members[id] = Member(realm: realm, queue: queue) }
            }
        } else if realm.ownerActor == nil, case .thread = realm.confinement, !Self.isInTask {
            // A Realm on a plain thread (outside any task, so not a pool thread): refreshed on its run loop.
            realm.coordinated = true
            let runLoop = ThreadRunLoop(runLoop: RunLoop.current)
            state.withLock { state in
                state.members = state.members.filter { $0.value.realm != nil }
                let id = ObjectIdentifier(realm)
                if state.members[id] == nil { state.members[id] = Member(realm: realm, runLoop: runLoop) }
            }
        } else if let actor = realm.ownerActor {
            realm.coordinated = true
            let snapshot = realm.currentSnapshot
            let store = realm.store
            let configuration = realm.configuration
            state.withLock { state in
                state.members = state.members.filter { $0.value.realm != nil }
                let id = ObjectIdentifier(realm)
                if state.members[id] == nil {
                    state.members[id] = Member(
                        realm: realm, actor: actor, snapshot: snapshot, store: store, configuration: configuration)
                }
                if let prepared {
                    state.members[id]?.preparers.removeAll { $0.preparer == nil }
                    state.members[id]?.preparers.append(WeakPreparer(preparer: prepared))
                }
            }
        }
        startWatching(from: realm)
        return wakeup
    }

    /// A member Realm is being released: forget it at once, so that nothing here keeps its version pinned or its
    /// file open (`Realm.deleteFiles(for:)` refuses a file that is still open).
    func left(_ realm: ObjectIdentifier) {
        state.withLock { $0.members[realm] = nil }
    }

    /// `realm` (a member) now reads `snapshot`.
    func advanced(_ realm: Realm, to snapshot: ReadTransaction) {
        state.withLock { $0.members[ObjectIdentifier(realm)]?.snapshot = snapshot }
    }

    /// Version `version` was committed (by `writer`, whose own commit delivers to its observers): schedule a
    /// refresh of every other member on its actor (unless one is pending), with the changes computed here, off
    /// the actors.
    func committed(version: UInt64, by writer: Realm? = nil) {
        schedule(version: version, skip: writer.map(ObjectIdentifier.init), only: nil)
    }

    /// Schedules refreshes of the members (all but `skip`, or just `only`) that have none pending.
    private func schedule(version: UInt64, skip: ObjectIdentifier?, only: ObjectIdentifier?) {
        var wakeups: [TaskWakeup] = []
        let due = state.withLock { state -> [Due] in
            state.lastSeen = max(state.lastSeen, version)
            var due: [Due] = []
            for (id, member) in state.members where !member.scheduled && id != skip && (only == nil || id == only) {
                if let wakeup = member.wakeup {
                    // A task's Realm refreshes itself when its sequences wake (outside this lock).
                    if member.realm == nil { state.members[id] = nil } else { wakeups.append(wakeup) }
                    continue
                }
                if let queue = member.queue {
                    guard let realm = member.realm else {
                        state.members[id] = nil
                        continue
                    }
                    state.members[id]?.scheduled = true
                    queue.refresh(realm) { self.ranRefresh(of: id) }
                    continue
                }
                if let runLoop = member.runLoop {
                    guard let realm = member.realm else {
                        state.members[id] = nil
                        continue
                    }
                    state.members[id]?.scheduled = true
                    runLoop.refresh(realm, coordinator: self)
                    continue
                }
                guard let realm = member.realm, let actor = member.actor, let store = member.store else {
                    state.members[id] = nil
                    continue
                }
                state.members[id]?.scheduled = true
                due.append(
                    Due(
                        realm: UncheckedRealm(realm), actor: actor, snapshot: member.snapshot, store: store,
                        configuration: member.configuration,
                        preparers: member.preparers.compactMap(\.preparer).filter(\.isWorthwhile)))
            }
            return due
        }
        for wakeup in wakeups { wakeup.post(version: version) }
        guard let store = due.first?.store else { return }
        Task.detached { [self] in
            // The newest version, pinned, and what changed since each version the members read.
            guard let newest = try? store.read() else {
                for member in due { Task { await Self.refresh(member, newest: nil, changes: nil, coordinator: self) } }
                return
            }
            let schema = classes(of: newest)
            var computed: [UInt64: VersionChanges] = [:]
            for member in due {
                guard let old = member.snapshot, old.version < newest.version, computed[old.version] == nil else {
                    continue
                }
                computed[old.version] = VersionChanges.computed(old, newest, schema: schema)
            }
            // A frozen view of the newest version for the members' queries.
            let pinned = due.first(where: { !$0.preparers.isEmpty })?.configuration.flatMap { configuration in
                try? PinnedVersion(configuration: configuration, store: store, snapshot: newest)
            }
            // Each member on its own task, so that a busy actor does not hold up the others; the last one runs on
            // this task (one hop fewer when a single Realm observes). Its observers' queries run there first,
            // off its actor, on a private frozen view.
            for (index, member) in due.enumerated() {
                let changes = member.snapshot.flatMap { computed[$0.version] }
                let work = { @Sendable in
                    if let pinned, !member.preparers.isEmpty {
                        let frozen = Realm(frozen: pinned)
                        for preparer in member.preparers { preparer.prepare(on: frozen) }
                    }
                    await Self.refresh(member, newest: newest, changes: changes, coordinator: self)
                }
                if index == due.count - 1 {
                    await work()
                } else {
                    Task { await work() }
                }
            }
        }
    }

    /// A member due for a refresh.
    private struct Due: Sendable {
        let realm: UncheckedRealm
        let actor: any Actor
        let snapshot: ReadTransaction?
        let store: Store
        let configuration: Realm.Configuration?
        let preparers: [any AnyPreparedIdentities]
    }

    /// The class definitions of `snapshot` (read again only when their tree changed).
    private func classes(of snapshot: ReadTransaction) -> [String: StoredClass] {
        let root = try? snapshot.tree(named: TableNames.schema)?.root
        if let cached = state.withLock({ $0.schemaRoot == root && root != nil ? $0.schema : nil }) { return cached }
        let classes = (try? Realm.readSchema(transaction: nil, snapshot: snapshot, path: path).classes) ?? [:]
        state.withLock { state in
            state.schema = classes
            state.schemaRoot = root
        }
        return classes
    }

    /// Runs on the member's actor: advances the Realm to `newest` with `changes` (delivering its observers'
    /// changes) unless it is mid-write (its commit delivers) or has autorefresh off.
    private static func refresh(
        _ member: Due, newest: ReadTransaction?, changes: VersionChanges?, coordinator: Coordinator
    ) async {
        await run(on: member.actor) { _ in
            let realm = member.realm.realm
            coordinator.state.withLock { $0.members[ObjectIdentifier(realm)]?.scheduled = false }
            guard realm.autorefresh, !realm.isInWriteTransaction else { return }
            if let newest, let changes, let base = member.snapshot?.version {
                realm.refresh(to: newest, changes: changes, from: base)
                // Commits that landed after `newest` was pinned found this refresh pending: schedule another.
                let latest = coordinator.state.withLock { $0.lastSeen }
                if latest > newest.version {
                    coordinator.schedule(version: latest, skip: nil, only: ObjectIdentifier(realm))
                }
            } else {
                realm.refresh()
            }
        }
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
        // Held weakly between polls: the members' Realms keep the file open, not the watcher.
        let watched = WeakStore(store: store)
        Task.detached { [self] in
            while true {
                try? await Task.sleep(for: .milliseconds(10))
                let live = state.withLock { state -> Bool in
                    state.members = state.members.filter { $0.value.realm != nil }
                    if state.members.isEmpty { state.watching = false }
                    return state.watching
                }
                guard live, let store = watched.store else { return }
                guard let version = try? store.read().version else { continue }
                if state.withLock({ version > $0.lastSeen }) { committed(version: version) }
            }
        }
    }

    /// A thread- or queue-confined member's refresh ran: later commits may schedule another.
    func ranRefresh(of realm: ObjectIdentifier) {
        state.withLock { $0.members[realm]?.scheduled = false }
    }

    /// Whether the caller runs in a task (its thread is a pool's or an executor's, not one with its own run loop).
    private static var isInTask: Bool { withUnsafeCurrentTask { $0 != nil } }

    /// Runs `body` isolated to `actor`.
    static func run<A: Actor>(on actor: A, _ body: @Sendable (isolated A) -> Void) async {
        await body(actor)
    }

    /// Runs `body` isolated to `actor` (an existential).
    static func run(on actor: any Actor, _ body: @Sendable (isolated any Actor) -> Void) async {
        await body(actor)
    }
}

/// A weak reference to a store, for the task that watches a file.
private struct WeakStore: Sendable {
    weak var store: Store?
}

/// A Realm reference carried to its own actor by the coordinator, which only touches it there.
struct UncheckedRealm: @unchecked Sendable {
    let realm: Realm
    init(_ realm: Realm) { self.realm = realm }
}

/// The run loop of a thread whose Realm has observers. The coordinator adds a timer to it from whichever thread
/// commits, which Foundation allows from any thread (and which wakes the loop if it is waiting); the timer runs on
/// the Realm's own thread.
struct ThreadRunLoop: @unchecked Sendable {
    let runLoop: RunLoop

    /// Refreshes `realm` (delivering its observers' changes) the next time its thread runs its run loop, in any
    /// common mode (a default-mode `run(until:)` and XCTest's `wait(for:)` included). Nothing happens while the
    /// thread does not run it: the Realm then delivers when it refreshes or writes.
    func refresh(_ realm: Realm, coordinator: Coordinator) {
        let target = WeakRealm(realm: realm)
        let id = ObjectIdentifier(realm)
        let timer = Timer(timeInterval: 0, repeats: false) { _ in
            coordinator.ranRefresh(of: id)
            guard let realm = target.realm, realm.autorefresh, !realm.isInWriteTransaction else { return }
            realm.refresh()
        }
        runLoop.add(timer, forMode: .common)
    }
}

/// A Realm carried to its own thread's run loop, held weakly (the thread may have released it meanwhile).
private struct WeakRealm: @unchecked Sendable {
    weak var realm: Realm?
}

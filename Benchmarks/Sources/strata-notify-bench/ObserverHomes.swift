import BenchSupport
import Foundation
import Strata

// Latency observers whose Realm lives elsewhere than on an actor of their own: in a task (opened in a nonisolated
// async function, as a route handler would) or on the main actor. They follow the same changes as
// `StrataObserver`, so their rows compare with the actor-confined ones.

/// Where a latency observer's Realm lives.
enum ObserverHome: String, CaseIterable {
    /// Its own actor (`StrataObserver`): the rows against GRDB.
    case actor = "actor-confined"
    /// A task: the Realm opened in nonisolated code of a detached task.
    case task = "task-confined"
    /// The main actor (every main-actor observer shares the main actor's one Realm instance).
    case mainActor = "main-actor"
}

/// A running latency observer: how to stop it.
struct RunningObserver: Sendable {
    let stop: @Sendable () async -> Void
}

/// Starts observer `index` of a latency run with its Realm in `home`; returns once its observation is registered.
func startObserver(
    index: Int, home: ObserverHome, kind: ObservedKind, configuration: Realm.Configuration,
    recorder: LatencyRecorder
) async throws -> RunningObserver {
    switch home {
    case .actor:
        let observer = StrataObserver(index: index, recorder: recorder)
        try await observer.start(configuration, kind: kind)
        return RunningObserver { await observer.stop() }
    case .task, .mainActor:
        let (ready, signal) = AsyncStream<Void>.makeStream()
        let task: Task<Void, Never>
        if home == .task {
            task = Task.detached {
                await followInTask(configuration, kind: kind, index: index, recorder: recorder, ready: signal)
            }
        } else {
            task = Task { @MainActor in
                await followOnMainActor(configuration, kind: kind, index: index, recorder: recorder, ready: signal)
            }
        }
        for await _ in ready { break }
        return RunningObserver {
            task.cancel()
            await task.value
        }
    }
}

/// Opens the Realm in nonisolated code (so it is confined to the running task) and follows it there.
func followInTask(
    _ configuration: Realm.Configuration, kind: ObservedKind, index: Int, recorder: LatencyRecorder,
    ready: AsyncStream<Void>.Continuation
) async {
    defer { ready.finish() }
    do {
        let realm = try Realm(configuration: configuration)
        await follow(realm, kind: kind, index: index, recorder: recorder, ready: ready)
    } catch {
        recorder.failed(observer: index, "open: \(error)")
    }
}

/// Opens the main actor's Realm and follows it there.
@MainActor func followOnMainActor(
    _ configuration: Realm.Configuration, kind: ObservedKind, index: Int, recorder: LatencyRecorder,
    ready: AsyncStream<Void>.Continuation
) async {
    defer { ready.finish() }
    do {
        let realm = try Realm(configuration: configuration)
        await follow(realm, kind: kind, index: index, recorder: recorder, ready: ready)
    } catch {
        recorder.failed(observer: index, "open: \(error)")
    }
}

/// The loop of a latency observer, in the caller's isolation (the Realm's): records each value its body sees.
/// Finishes `ready` once the observation is registered.
func follow(
    _ realm: Realm, kind: ObservedKind, index: Int, recorder: LatencyRecorder,
    ready: AsyncStream<Void>.Continuation, isolation: isolated (any Actor)? = #isolation
) async {
    switch kind {
    case .collection:
        for await change in realm.objects(NotifyTick.self).changes {
            let now = ContinuousClock.now
            switch change {
            case .initial: ready.finish()
            case .update(let ticks, _, _, _):
                guard let tick = ticks.first else {
                    recorder.failed(observer: index, "update without the object")
                    continue
                }
                recorder.saw(observer: index, value: tick.value, at: now)
            case .error(let error): recorder.failed(observer: index, "error \(error)")
            }
        }
    case .object:
        guard let tick = realm.object(ofType: NotifyTick.self, forPrimaryKey: 1) else {
            recorder.failed(observer: index, "object 1 not found")
            return
        }
        let changes = tick.changes
        ready.finish()
        for await change in changes {
            let now = ContinuousClock.now
            switch change {
            case .change(let tick, _): recorder.saw(observer: index, value: tick.value, at: now)
            case .deleted: recorder.failed(observer: index, "object deleted")
            case .error(let error): recorder.failed(observer: index, "error \(error)")
            }
        }
    }
}

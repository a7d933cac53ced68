import Foundation
import Strata
import Synchronization
import Testing

final class LoopItem: Object {
    @Persisted var value = 0
}

/// What the observing thread saw, read by the test once the thread has finished.
private final class LoopOutcome: Sendable {
    struct State {
        var ready = false
        var deliveredCounts: [Int] = []
        var finished = false
    }

    let state = Mutex(State())
}

@Suite("Notification: run-loop delivery on plain threads")
struct RunLoopDeliveryTests {
    /// A Realm on a plain thread that spins its run loop receives another thread's commit without calling
    /// `refresh()`: the coordinator schedules the refresh on that thread's run loop.
    @Test(arguments: ["run(until:)", "run(mode:before:)"])
    func aThreadSpinningItsRunLoopReceivesAnotherThreadsCommit(spin: String) throws {
        let configuration = Realm.Configuration(
            inMemoryIdentifier: "run-loop-\(UUID())", objectTypes: [LoopItem.self])
        // Keeps the in-memory file alive across threads.
        let writer = try Realm(configuration: configuration)
        let outcome = LoopOutcome()
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            defer { done.signal() }
            guard let realm = try? Realm(configuration: configuration) else { return }
            let items = realm.objects(LoopItem.self)
            let token = items.observe { change in
                if case .update(let results, _, _, _) = change {
                    outcome.state.withLock { $0.deliveredCounts.append(results.count) }
                }
            }
            outcome.state.withLock { $0.ready = true }
            // The deadline only guards against a hang when delivery is broken; the loop ends when the change
            // arrives.
            let deadline = Date().addingTimeInterval(20)
            while outcome.state.withLock({ $0.deliveredCounts.isEmpty }) && Date() < deadline {
                let slice = Date().addingTimeInterval(0.05)
                if spin == "run(until:)" {
                    RunLoop.current.run(until: slice)
                } else {
                    _ = RunLoop.current.run(mode: .default, before: slice)
                }
            }
            token.invalidate()
            outcome.state.withLock { $0.finished = true }
        }
        thread.start()
        // Commit once the observer is registered (the thread says so; no sleeping).
        while !outcome.state.withLock({ $0.ready }) { sched_yield() }
        try writer.write { writer.add(LoopItem()) }
        done.wait()
        let state = outcome.state.withLock { $0 }
        #expect(state.finished)
        #expect(state.deliveredCounts == [1])
    }

    /// A thread that does not run its run loop gets the change when it calls `refresh()`, once: the refresh the
    /// run loop still holds finds nothing new when the loop runs later.
    @Test func aThreadThatDoesNotRunItsRunLoopGetsTheChangeAtRefreshOnce() throws {
        let configuration = Realm.Configuration(
            inMemoryIdentifier: "run-loop-\(UUID())", objectTypes: [LoopItem.self])
        let writer = try Realm(configuration: configuration)
        let outcome = LoopOutcome()
        let committed = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            defer { done.signal() }
            guard let realm = try? Realm(configuration: configuration) else { return }
            let token = realm.objects(LoopItem.self).observe { change in
                if case .update(let results, _, _, _) = change {
                    outcome.state.withLock { $0.deliveredCounts.append(results.count) }
                }
            }
            outcome.state.withLock { $0.ready = true }
            committed.wait()
            let beforeRefresh = outcome.state.withLock { $0.deliveredCounts }
            realm.refresh()
            // Runs the timers already due (the pending refresh among them), without waiting.
            _ = RunLoop.current.run(mode: .default, before: Date())
            token.invalidate()
            outcome.state.withLock {
                $0.finished = beforeRefresh.isEmpty
            }
        }
        thread.start()
        while !outcome.state.withLock({ $0.ready }) { sched_yield() }
        try writer.write { writer.add(LoopItem()) }
        committed.signal()
        done.wait()
        let state = outcome.state.withLock { $0 }
        #expect(state.finished, "nothing is delivered before the thread refreshes or runs its run loop")
        #expect(state.deliveredCounts == [1])
    }
}

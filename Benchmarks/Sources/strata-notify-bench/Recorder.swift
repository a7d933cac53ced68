import BenchSupport
import Foundation
import Synchronization

// The clock shared by the writer and the observers of a latency run, and what they recorded.

/// Timestamps of one latency run: when each commit returned to the writer and when each observer's loop body
/// first saw each value. Written from the writer and from every observer (any thread), under one lock.
///
/// Value `v` is the `v`-th commit (commits set the observed row's `value` to 1, 2, 3, …). The writer calls
/// ``committed(_:started:returned:)`` right after the commit returned, then ``waitForAll(_:)`` until every observer
/// has seen it, so each commit is observed on its own (latency, not throughput).
final class LatencyRecorder: Sendable {
    private struct State {
        let observers: Int
        /// When the writer called the commit (asyncWrite / pool.write), by value.
        var started: [ContinuousClock.Instant?]
        /// When the commit returned to the writer, by value.
        var returned: [ContinuousClock.Instant?]
        /// `seen[observer][value]`: when that observer's loop body first ran with that value (or a later one).
        var seen: [[ContinuousClock.Instant?]]
        /// The newest value each observer saw.
        var lastSeen: [Int]
        /// How many observers have seen each value.
        var seenCount: [Int]
        /// The value the writer waits for (0: none).
        var awaited = 0
        var waiter: CheckedContinuation<Bool, Never>?
        var waitStarted: ContinuousClock.Instant?
        /// Deliveries that repeated a value already seen (not errors: GRDB may notify an unchanged value).
        var repeats = 0
        /// Deliveries that skipped values (coalesced): should not happen, the writer waits for every commit.
        var skips: [String] = []
        /// Failures: errors from an observer, a missing row, a commit no one delivered in time.
        var failures: [String] = []
    }

    private let state: Mutex<State>

    /// A recorder for `observers` observers and values 1...`commits`.
    init(observers: Int, commits: Int) {
        state = Mutex(
            State(
                observers: observers,
                started: Array(repeating: nil, count: commits + 1),
                returned: Array(repeating: nil, count: commits + 1),
                seen: Array(repeating: Array(repeating: nil, count: commits + 1), count: observers),
                lastSeen: Array(repeating: 0, count: observers),
                seenCount: Array(repeating: 0, count: commits + 1)))
    }

    /// The writer's commit of `value` was called at `started` and returned at `returned`.
    func committed(_ value: Int, started: ContinuousClock.Instant, returned: ContinuousClock.Instant) {
        state.withLock { state in
            state.started[value] = started
            state.returned[value] = returned
        }
    }

    /// Observer `observer`'s loop body ran at `time` with the observed row's value `value`.
    func saw(observer: Int, value: Int, at time: ContinuousClock.Instant) {
        let waiter = state.withLock { state -> CheckedContinuation<Bool, Never>? in
            let last = state.lastSeen[observer]
            guard value > last else {
                if value == last {
                    state.repeats += 1
                } else {
                    state.failures.append("observer \(observer) saw value \(value) after \(last)")
                }
                return nil
            }
            guard value < state.seenCount.count else {
                state.failures.append("observer \(observer) saw value \(value), never committed")
                return nil
            }
            if value > last + 1 {
                state.skips.append("observer \(observer): \(last) -> \(value)")
            }
            for covered in (last + 1)...value {
                state.seen[observer][covered] = time
                state.seenCount[covered] += 1
            }
            state.lastSeen[observer] = value
            guard state.awaited > 0, state.seenCount[state.awaited] == state.observers else { return nil }
            state.awaited = 0
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: true)
    }

    /// Observer `observer` failed (an error, a missing row, a sequence that ended).
    func failed(observer: Int, _ what: String) {
        state.withLock { $0.failures.append("observer \(observer): \(what)") }
    }

    /// Returns true once every observer has seen `value`; false when ``expire(after:)`` gave up on it.
    func waitForAll(_ value: Int) async -> Bool {
        await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let done = state.withLock { state -> Bool in
                if state.seenCount[value] == state.observers { return true }
                state.awaited = value
                state.waiter = continuation
                state.waitStarted = .now
                return false
            }
            if done { continuation.resume(returning: true) }
        }
    }

    /// Gives up on the awaited commit when the writer has waited longer than `timeout`: records which observers
    /// never saw it and what they saw last, resumes the writer with false and returns true.
    func expire(after timeout: Duration) -> Bool {
        let waiter = state.withLock { state -> CheckedContinuation<Bool, Never>? in
            guard let waiter = state.waiter, let started = state.waitStarted, started.duration(to: .now) > timeout
            else { return nil }
            let value = state.awaited
            let missing = state.lastSeen.indices.filter { state.lastSeen[$0] < value }
            let described = missing.prefix(10).map { "observer \($0) last saw \(state.lastSeen[$0])" }
            state.failures.append(
                "commit of value \(value) returned, but after \(timeout) \(missing.count) of \(state.observers) "
                    + "observers had not seen it (\(described.joined(separator: "; "))"
                    + (missing.count > 10 ? "; …" : "") + ")")
            state.waiter = nil
            state.awaited = 0
            return waiter
        }
        waiter?.resume(returning: false)
        return waiter != nil
    }

    /// What one run measured, from value `first` on (earlier values were the warm-up).
    struct Summary {
        /// From the commit call returning to the writer to each observer's body, one per (commit, observer) pair,
        /// sorted. Negative when the observer's body ran before the writer got control back from the commit.
        var fromReturn: [Duration]
        /// From the writer calling the commit (durable commit included) to each observer's body, sorted.
        var fromCall: [Duration]
        /// How many observations ran before the commit had returned to the writer.
        var early: Int
        /// The commit call's own time (call to return), sorted.
        var commits: [Duration]
        /// Deliveries that repeated a value.
        var repeats: Int
        /// Deliveries that covered more than one commit.
        var skips: [String]
        /// What went wrong.
        var failures: [String]
    }

    /// The latencies of values `first`...`last`.
    func summary(from first: Int, to last: Int) -> Summary {
        state.withLock { state in
            var fromReturn: [Duration] = []
            var fromCall: [Duration] = []
            var commits: [Duration] = []
            for value in first...last {
                guard let returned = state.returned[value], let started = state.started[value] else { continue }
                commits.append(started.duration(to: returned))
                for observer in 0..<state.observers {
                    guard let seen = state.seen[observer][value] else { continue }
                    fromReturn.append(returned.duration(to: seen))
                    fromCall.append(started.duration(to: seen))
                }
            }
            return Summary(
                fromReturn: fromReturn.sorted(), fromCall: fromCall.sorted(),
                early: fromReturn.filter { $0 < .zero }.count, commits: commits.sorted(), repeats: state.repeats,
                skips: state.skips, failures: state.failures)
        }
    }
}

/// The nearest-rank `fraction` percentile of `sorted` (ascending, not empty).
func percentile(_ sorted: [Duration], _ fraction: Double) -> Duration {
    let rank = Int((fraction * Double(sorted.count)).rounded(.up))
    return sorted[min(max(rank, 1), sorted.count) - 1]
}

/// Checks a latency run every 100 ms and gives up on a commit that no observer delivered within `timeout`.
func watchdog(_ recorder: LatencyRecorder, timeout: Duration) -> Task<Void, Never> {
    Task.detached {
        while !Task.isCancelled {
            try? await Task.sleep(for: .milliseconds(100))
            _ = recorder.expire(after: timeout)
        }
    }
}

import BenchSupport
import Foundation
import Strata
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

// Property reads and small durable asyncWrites on each confinement (an actor, the main actor, a task), as ratios
// to the actor's, with the cost of one executor hop measured on its own: it is what separates the main actor from
// an actor on Linux, where the main actor's executor is a serial Dispatch queue, not an actor of the cooperative
// pool (a thread of the pool can take an idle actor over without a context switch; reaching the main actor
// always means enqueueing on its queue and waking the thread that drains it).

/// What one round on one confinement cost.
struct ConfinementRound {
    /// Per property read.
    var read: Duration
    /// Per commit, wall clock (the durable sync included: it varies with the disk).
    var write: Duration
    /// Per commit, CPU time of the whole process (every thread: what the commit and its hops cost the machine).
    var writeCPU: Duration
    /// Per commit, the process's voluntary context switches (a thread going to sleep: waiting for the disk, or
    /// handing the work to another thread and waiting for more).
    var switches: Double
}

/// The process's voluntary context switches so far (all threads).
func voluntarySwitches() -> Int {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return usage.ru_nvcsw
}

/// The process's CPU time so far (all threads).
func processCPUTime() -> Duration {
    var spec = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &spec)
    return .seconds(spec.tv_sec) + .nanoseconds(spec.tv_nsec)
}

/// One round on a Realm opened where the caller runs (an actor's, the main actor's or, in nonisolated code, the
/// task's) over the file ``propertyReadComparison(size:directory:)`` wrote: `reads` reads of `Item.count` of
/// 1,000 objects, then `commits` small `asyncWrite`s.
func confinedRound(
    directory: URL, reads: Int, commits: Int, _isolation: isolated (any Actor)? = #isolation
) async throws -> ConfinementRound {
    let realm = try Realm(
        configuration: Realm.Configuration(
            fileURL: directory.appendingPathComponent("read.strata"), objectTypes: [Item.self]))
    let objects = Array(realm.objects(Item.self).prefix(1000))
    var sum = 0
    let property = time {
        for round in 0..<reads { sum &+= objects[round % objects.count].count }
    }
    try check(sum > 0, "confined read comparison")
    let clock = ContinuousClock()
    let cpuStart = processCPUTime()
    let switchesStart = voluntarySwitches()
    let start = clock.now
    for round in 0..<commits {
        try await realm.asyncWrite { objects[round % objects.count].count += 1 }
    }
    let wall = clock.now - start
    let cpu = processCPUTime() - cpuStart
    let switches = Double(voluntarySwitches() - switchesStart) / Double(commits)
    return ConfinementRound(read: property / reads, write: wall / commits, writeCPU: cpu / commits, switches: switches)
}

/// A round on a Realm confined to this actor.
actor ConfinementActor {
    func round(directory: URL, reads: Int, commits: Int) async throws -> ConfinementRound {
        try await confinedRound(directory: directory, reads: reads, commits: commits)
    }
}

/// A round on a Realm confined to the main actor.
@MainActor func mainActorRound(directory: URL, reads: Int, commits: Int) async throws -> ConfinementRound {
    try await confinedRound(directory: directory, reads: reads, commits: commits)
}

/// Counts the calls of ``countedNonisolated()``: its work cannot be optimised away, so its caller must switch to
/// the generic executor to run it.
let nonisolatedCalls = Atomic<Int>(0)

/// Increments ``nonisolatedCalls``.
@inline(never) func countCall() { nonisolatedCalls.add(1, ordering: .relaxed) }

/// A nonisolated async function with a little work: a caller on an actor or on the main actor switches to the
/// generic executor to run it, and back.
@inline(never) func countedNonisolated() async { countCall() }

/// Executor hops timed from an actor.
actor HopActor {
    /// Time per call of a nonisolated async function from this actor (a switch off the actor and back).
    func nonisolatedCalls(_ count: Int) async -> Duration {
        let clock = ContinuousClock()
        let start = clock.now
        for _ in 0..<count { await countedNonisolated() }
        return (clock.now - start) / count
    }

    /// Counts a call, on this actor.
    func counted() { countCall() }
}

/// Time per call of a nonisolated async function from the main actor.
@MainActor func mainActorNonisolatedCalls(_ count: Int) async -> Duration {
    let clock = ContinuousClock()
    let start = clock.now
    for _ in 0..<count { await countedNonisolated() }
    return (clock.now - start) / count
}

/// Time per hop from a task (on the cooperative pool) onto `MainActor.run {}` or onto an actor, and back.
func hopsFromTask(_ count: Int) async -> (main: Duration, actor: Duration) {
    let clock = ContinuousClock()
    var start = clock.now
    for _ in 0..<count { await MainActor.run { countCall() } }
    let main = (clock.now - start) / count
    let actor = HopActor()
    start = clock.now
    for _ in 0..<count { await actor.counted() }
    return (main, (clock.now - start) / count)
}

/// Prints the confinement table: medians over `rounds` rounds, the actor, the main actor and a task taking turns
/// within each round (so that the machine's load and the disk's latency drift over all three alike), and the hop
/// costs that explain the difference.
func confinementTable(directory: URL, rounds: Int) async throws {
    let reads = 200_000
    let commits = 20
    var costs: [String: [ConfinementRound]] = [:]
    for round in 0..<rounds {
        if round % 10 == 0 { log("confinement costs: round \(round + 1) of \(rounds)") }
        costs["actor", default: []].append(
            try await ConfinementActor().round(directory: directory, reads: reads, commits: commits))
        costs["main", default: []].append(
            try await mainActorRound(directory: directory, reads: reads, commits: commits))
        costs["task", default: []].append(
            try await Task.detached {
                try await confinedRound(directory: directory, reads: reads, commits: commits)
            }.value)
    }
    func medians(_ key: String) -> ConfinementRound {
        ConfinementRound(
            read: median(costs[key]!.map(\.read)), write: median(costs[key]!.map(\.write)),
            writeCPU: median(costs[key]!.map(\.writeCPU)),
            switches: costs[key]!.map(\.switches).sorted()[costs[key]!.count / 2])
    }
    let onActor = medians("actor")
    func ratio(_ value: Duration, _ base: Duration) -> String { String(format: "%.2f×", value / base) }
    print("\n### Confinements: an actor, the main actor, a task\n")
    print(
        "Each round: \(group(reads)) reads of `Item.count` over 1,000 objects, then \(commits) durable "
            + "`asyncWrite { count += 1 }` commits, on a Realm confined to an actor, to the main actor, to a task, in "
            + "turn; median of \(rounds) rounds. CPU = the process's CPU time per commit (all threads). Ratio = "
            + "time / the actor's; switches = the process's voluntary context switches per commit.\n")
    print(
        "| Realm confined to | Property read | Ratio | asyncWrite, wall | Ratio | asyncWrite, CPU | Ratio | Switches |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for (name, key) in [("an actor", "actor"), ("the main actor", "main"), ("a task (nonisolated async)", "task")] {
        let cost = medians(key)
        print(
            "| \(name) | \(nanosecondsText(cost.read)) | \(ratio(cost.read, onActor.read)) | \(format(cost.write)) | "
                + "\(ratio(cost.write, onActor.write)) | \(microseconds(cost.writeCPU)) | "
                + "\(ratio(cost.writeCPU, onActor.writeCPU)) | \(String(format: "%.1f", cost.switches)) |")
    }
    let count = 20_000
    let fromActor = await HopActor().nonisolatedCalls(count)
    let fromMain = await mainActorNonisolatedCalls(count)
    let fromTask = await Task.detached { await hopsFromTask(count) }.value
    print(
        "\nExecutor hops, \(group(count)) each: calling a nonisolated async function (off the caller's executor "
            + "and back) costs \(nanosecondsText(fromActor)) from an actor and \(nanosecondsText(fromMain)) from "
            + "the main actor; from a task, a hop onto an actor and back costs \(nanosecondsText(fromTask.actor)), "
            + "onto the main actor (`await MainActor.run {}`) \(nanosecondsText(fromTask.main)).\n")
}

/// "123 µs".
func microseconds(_ duration: Duration) -> String {
    String(
        format: "%.0f µs", Double(duration.components.attoseconds) / 1e12 + Double(duration.components.seconds) * 1e6)
}

/// "12.3 ns".
func nanosecondsText(_ duration: Duration) -> String {
    String(
        format: "%.1f ns", Double(duration.components.attoseconds) / 1e9 + Double(duration.components.seconds) * 1e9)
}

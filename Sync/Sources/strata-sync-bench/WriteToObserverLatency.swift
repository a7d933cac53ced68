import Strata
import StrataSync

/// Write on A → observer fired on B, with both clients running as a service would run them: each of `writes`
/// writes on A (after 10 to warm up) is made after B's observer saw the one before, and timed from the start of
/// A's write transaction to B's observer. Returns the latencies in milliseconds, sorted. The clients are left
/// stopped running but not ``SyncClient/stop()``ped.
func measureWriteToObserverLatency(
    writes: Int, a: Realm.Configuration, b: Realm.Configuration, syncA: SyncClient, syncB: SyncClient
) async throws -> [Double] {
    let (ready, readyContinuation) = AsyncStream.makeStream(of: Void.self)
    let (arrivals, arrivalsContinuation) = AsyncStream.makeStream(of: (id: Int, at: ContinuousClock.Instant).self)
    let watcher = Watcher()
    let watching = Task { try await watcher.watch(b, ready: readyContinuation, arrivals: arrivalsContinuation) }
    var readyIterator = ready.makeAsyncIterator()
    _ = await readyIterator.next()
    let runA = Task { await syncA.run() }
    let runB = Task { await syncB.run() }
    var arrivalIterator = arrivals.makeAsyncIterator()
    var latencies: [Double] = []
    let warmUp = 10
    for id in 1...(warmUp + writes) {
        let start = try await onThread {
            let start = ContinuousClock.now
            try writeItems(a, from: id, count: 1)
            return start
        }
        guard let arrival = await arrivalIterator.next() else { fatalError("B's observer stopped") }
        precondition(arrival.id == id, "B's observer saw item \(arrival.id), expected \(id)")
        if id > warmUp { latencies.append(milliseconds(arrival.at - start)) }
    }
    runA.cancel()
    runB.cancel()
    watching.cancel()
    _ = await (runA.value, runB.value)
    return latencies.sorted()
}

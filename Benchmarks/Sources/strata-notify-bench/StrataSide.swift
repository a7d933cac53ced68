import BenchSupport
import Foundation
import Strata

// The Strata half of every workload: each writer, observer and reader is an actor with its own actor-confined
// Realm on the same file, as an app would use them.

/// The latency rows' model: one object, id 1, whose `value` each commit sets to the commit's number.
final class NotifyTick: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var value = 0
    @Persisted var stamp = 0.0
}

/// The throughput and reader rows' model: small objects inserted or updated one per commit.
final class NotifyItem: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var value = 0
    @Persisted var stamp = 0.0
}

/// A configuration for a Strata file at `url` holding `types`.
func strataConfiguration(_ url: URL, _ types: [ObjectBase.Type]) -> Realm.Configuration {
    Realm.Configuration(fileURL: url, objectTypes: types)
}

/// Seconds since an arbitrary start, stored in `stamp` (informational).
func stampNow() -> Double { Double(DispatchTime.now().uptimeNanoseconds) * 1e-9 }

/// What a Strata latency observer follows.
enum ObservedKind {
    /// `realm.objects(NotifyTick.self).changes`.
    case collection
    /// `tick.changes` on the object with id 1.
    case object
}

/// Writes the latency rows' commits on its own actor-confined Realm.
actor StrataLatencyWriter {
    private var realm: Realm?
    private var tick: NotifyTick?

    /// Opens the Realm and creates the observed object (value 0).
    func open(_ configuration: Realm.Configuration) async throws {
        let realm = try await Realm(configuration: configuration, actor: self)
        try await realm.asyncWrite {
            realm.create(
                NotifyTick.self, value: ["id": 1, "value": 0, "stamp": 0.0] as [String: Any], update: .modified)
        }
        self.realm = realm
        tick = realm.object(ofType: NotifyTick.self, forPrimaryKey: 1)
    }

    /// Commits values 1...`commits`, each in its own `asyncWrite`, timestamping right after each returns and
    /// waiting until every observer has seen it. Returns false when a commit was not delivered in time.
    func run(commits: Int, recorder: LatencyRecorder) async throws -> Bool {
        guard let realm, let tick else { throw Failure(description: "Strata writer not opened") }
        for value in 1...commits {
            let started = ContinuousClock.now
            try await realm.asyncWrite {
                tick.value = value
                tick.stamp = stampNow()
            }
            let returned = ContinuousClock.now
            recorder.committed(value, started: started, returned: returned)
            guard await recorder.waitForAll(value) else { return false }
        }
        return true
    }

    /// Drops the Realm.
    func close() {
        tick = nil
        realm = nil
    }
}

/// One latency observer: its own actor, its own Realm, a `for await` loop over changes started from the actor.
actor StrataObserver {
    private let index: Int
    private let recorder: LatencyRecorder
    private var realm: Realm?
    private var task: Task<Void, Never>?

    /// Observer number `index`, reporting to `recorder`.
    init(index: Int, recorder: LatencyRecorder) {
        self.index = index
        self.recorder = recorder
    }

    /// Opens the Realm and starts the loop; returns once the observation is registered (after `.initial` for a
    /// collection, after `changes` was asked for an object).
    func start(_ configuration: Realm.Configuration, kind: ObservedKind) async throws {
        realm = try await Realm(configuration: configuration, actor: self)
        let (ready, signal) = AsyncStream<Void>.makeStream()
        switch kind {
        case .collection: task = Task { await self.followCollection(signal) }
        case .object: task = Task { await self.followObject(signal) }
        }
        for await _ in ready { break }
    }

    private func followCollection(_ ready: AsyncStream<Void>.Continuation) async {
        defer { ready.finish() }
        guard let realm else { return }
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
    }

    private func followObject(_ ready: AsyncStream<Void>.Continuation) async {
        defer { ready.finish() }
        guard let realm, let tick = realm.object(ofType: NotifyTick.self, forPrimaryKey: 1) else {
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

    /// Ends the loop (cancelling its task) and drops the Realm.
    func stop() async {
        task?.cancel()
        await task?.value
        task = nil
        realm = nil
    }
}

/// One of the throughput row's writers: small commits on its own actor-confined Realm.
actor StrataThroughputWriter {
    private let index: Int
    private var realm: Realm?

    /// Writer number `index`.
    init(index: Int) { self.index = index }

    /// Opens the Realm (not timed).
    func open(_ configuration: Realm.Configuration) async throws {
        realm = try await Realm(configuration: configuration, actor: self)
    }

    /// `commits` `asyncWrite`s, each inserting one object (this writer's ids: index * commits + 0..<commits).
    func run(commits: Int) async throws {
        guard let realm else { throw Failure(description: "Strata writer not opened") }
        for offset in 0..<commits {
            let id = index * commits + offset
            try await realm.asyncWrite {
                realm.create(
                    NotifyItem.self, value: ["id": id, "value": offset, "stamp": stampNow()] as [String: Any],
                    update: .modified)
            }
        }
    }

    /// Drops the Realm.
    func close() { realm = nil }
}

/// The reader row's writer: moves one unit of `value` from one object to another per commit (the sum stays).
actor StrataChurnWriter {
    private var realm: Realm?

    /// Opens the Realm.
    func open(_ configuration: Realm.Configuration) async throws {
        realm = try await Realm(configuration: configuration, actor: self)
    }

    /// Loads `items` objects with value 1,000 each.
    func load(items: Int) async throws {
        guard let realm else { throw Failure(description: "Strata writer not opened") }
        try await realm.asyncWrite {
            for id in 0..<items {
                realm.create(
                    NotifyItem.self, value: ["id": id, "value": 1_000, "stamp": 0.0] as [String: Any], update: .modified
                )
            }
        }
    }

    /// Commits until `deadline`; returns the number of commits.
    func run(items: Int, until deadline: ContinuousClock.Instant) async throws -> Int {
        guard let realm else { throw Failure(description: "Strata writer not opened") }
        var generator = SplitMix64(seed: 7)
        var commits = 0
        while ContinuousClock.now < deadline {
            let from = Int(generator.next() % UInt64(items))
            let to = Int(generator.next() % UInt64(items))
            try await realm.asyncWrite {
                guard let source = realm.object(ofType: NotifyItem.self, forPrimaryKey: from),
                    let target = realm.object(ofType: NotifyItem.self, forPrimaryKey: to)
                else { return }
                source.value -= 1
                target.value += 1
                source.stamp = stampNow()
            }
            commits += 1
        }
        return commits
    }

    /// Drops the Realm.
    func close() { realm = nil }
}

/// One of the reader row's readers: refresh, then count and sum, in a loop.
actor StrataReader {
    private var realm: Realm?

    /// Opens the Realm.
    func open(_ configuration: Realm.Configuration) async throws {
        realm = try await Realm(configuration: configuration, actor: self)
    }

    /// Reads until `deadline`: `asyncRefresh()`, then `count` and `sum(ofProperty: "value")` of all objects,
    /// checked against `count` and `sum`, then `Task.yield()` so the writer and the coordinator's refreshes get
    /// the cooperative threads too. Returns the number of reads and of wrong answers.
    func run(until deadline: ContinuousClock.Instant, count: Int, sum: Int) async throws -> (reads: Int, wrong: Int) {
        guard let realm else { throw Failure(description: "Strata reader not opened") }
        var reads = 0
        var wrong = 0
        while ContinuousClock.now < deadline {
            await realm.asyncRefresh()
            let items = realm.objects(NotifyItem.self)
            let seenCount = items.count
            let seenSum: Int = items.sum(ofProperty: "value")
            if seenCount != count || seenSum != sum { wrong += 1 }
            reads += 1
            await Task.yield()
        }
        return (reads, wrong)
    }

    /// The number of objects and the sum of their `value`s, in the newest version.
    func totals() async throws -> (count: Int, sum: Int) {
        guard let realm else { throw Failure(description: "Strata reader not opened") }
        await realm.asyncRefresh()
        let items = realm.objects(NotifyItem.self)
        return (items.count, items.sum(ofProperty: "value"))
    }

    /// Drops the Realm.
    func close() { realm = nil }
}

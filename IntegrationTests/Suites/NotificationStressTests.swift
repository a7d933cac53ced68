import Foundation
import Strata
import StrataTestSupport
import Synchronization
import Testing

final class StressAccount: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var balance = 0
    /// Set on every account by the last commit: observers stop once they see it.
    @Persisted var closed = false
}

/// The same class as the child's `Tally`.
final class Tally: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var count = 0
}

private let accountCount = 32
private let initialBalance = 1_000

/// Moves money between random accounts with `asyncWrite`.
actor Teller {
    let configuration: Realm.Configuration
    init(configuration: Realm.Configuration) { self.configuration = configuration }

    func transfer(times: Int, seed: UInt64) async throws {
        let realm = try await Realm(configuration: configuration, actor: self)
        var generator = SeededGenerator(seed: seed)
        for _ in 0..<times {
            let from = Int.random(in: 0..<accountCount, using: &generator)
            let to = Int.random(in: 0..<accountCount, using: &generator)
            try await realm.asyncWrite {
                let source = realm.object(ofType: StressAccount.self, forPrimaryKey: from)!
                let target = realm.object(ofType: StressAccount.self, forPrimaryKey: to)!
                let amount = Int.random(in: 0...min(source.balance, 40), using: &generator)
                source.balance -= amount
                target.balance += amount
            }
        }
    }
}

/// What an observer saw.
struct Observation: Sendable {
    var elements = 0
    var violations: [String] = []
    var finalTotal = 0
    var sawClosed = false
}

/// Observes the accounts with `for await` on its own actor: live changes (checking the invariant on the live
/// results and that versions only grow), or frozen snapshots (checking them on another task too).
actor Auditor {
    let configuration: Realm.Configuration
    let frozenSnapshots: Bool
    private var realm: Realm?
    private var task: Task<Observation, Never>?
    private var ready: AsyncStream<Void>.Continuation?

    init(configuration: Realm.Configuration, frozenSnapshots: Bool) {
        self.configuration = configuration
        self.frozenSnapshots = frozenSnapshots
    }

    /// Starts observing; returns once the observation is registered.
    func start() async throws {
        realm = try await Realm(configuration: configuration, actor: self)
        let (stream, continuation) = AsyncStream<Void>.makeStream()
        ready = continuation
        task = Task { await self.frozenSnapshots ? self.watchSnapshots() : self.watchChanges() }
        for await _ in stream { break }
    }

    func result() async -> Observation { await task!.value }

    private static func check(_ accounts: Results<StressAccount>, into observation: inout Observation) -> Bool {
        let total = accounts.sum(of: \.balance)
        if total != accountCount * initialBalance { observation.violations.append("total \(total)") }
        if accounts.count != accountCount { observation.violations.append("\(accounts.count) accounts") }
        observation.finalTotal = total
        return accounts.allSatisfy(\.closed)
    }

    private func watchChanges() async -> Observation {
        var observation = Observation()
        let accounts = realm!.objects(StressAccount.self)
        var versions = realm!.changes.makeAsyncIterator()
        var changes = accounts.changes.makeAsyncIterator()
        ready?.yield()
        var lastVersion: UInt64 = 0
        while let change = await changes.next(isolation: self) {
            observation.elements += 1
            if case .error(let error) = change { observation.violations.append("\(error)") }
            // Each update follows at least one version the Realm advanced to: those come in increasing order.
            if observation.elements > 1, let version = await versions.next(isolation: self) {
                if version <= lastVersion { observation.violations.append("version \(version) after \(lastVersion)") }
                lastVersion = version
            }
            if Self.check(accounts, into: &observation) {
                observation.sawClosed = true
                break
            }
        }
        return observation
    }

    private func watchSnapshots() async -> Observation {
        var observation = Observation()
        var snapshots = realm!.objects(StressAccount.self).snapshots.makeAsyncIterator()
        ready?.yield()
        while let frozen = await snapshots.next(isolation: self) {
            observation.elements += 1
            let accounts = frozen.value
            let closed = Self.check(accounts, into: &observation)
            // The same snapshot read on another task sums to the same total.
            let elsewhere = await Task.detached { frozen.value.sum(of: \.balance) }.value
            if elsewhere != observation.finalTotal { observation.violations.append("detached sum \(elsewhere)") }
            if closed {
                observation.sawClosed = true
                break
            }
        }
        return observation
    }
}

/// Many actors writing and observing one file at once (the CI runs this suite under ThreadSanitizer).
@Suite("Notification concurrency stress", .serialized)
struct NotificationStressTests {
    /// 16 tellers transfer money with `asyncWrite` while 8 auditors follow live changes and 8 follow frozen
    /// snapshots: every state any of them sees keeps the total, versions only grow, and all reach the final
    /// state. Default: 16 × 60 commits; `STRATA_SOAK=1`: 16 × 1,000.
    @Test func tellersAndAuditorsKeepTheInvariant() async throws {
        let directory = TemporaryDirectory()
        let configuration = Realm.Configuration(fileURL: URL(fileURLWithPath: directory.file("bank.strata")))
        let setup = try Realm(configuration: configuration)
        try setup.write {
            for id in 0..<accountCount { setup.add(StressAccount(value: ["id": id, "balance": initialBalance])) }
        }
        let auditors = (0..<16).map { Auditor(configuration: configuration, frozenSnapshots: $0 % 2 == 1) }
        for auditor in auditors { try await auditor.start() }
        let transfers = soak ? 1_000 : 60
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<16 {
                let teller = Teller(configuration: configuration)
                group.addTask { try await teller.transfer(times: transfers, seed: UInt64(index)) }
            }
            try await group.waitForAll()
        }
        let closer = Teller(configuration: configuration)
        try await closer.close()
        for auditor in auditors {
            let observation = await auditor.result()
            #expect(observation.violations.isEmpty, "\(observation.violations.prefix(5))")
            #expect(observation.sawClosed)
            #expect(observation.elements >= 2)
            #expect(observation.finalTotal == accountCount * initialBalance)
        }
    }

    /// Another process commits while this one observes: each of its commits reaches the `for await` loop here
    /// (noticed through the file), in order, ending with the final count.
    @Test func commitsOfAnotherProcessReachObservers() async throws {
        let directory = TemporaryDirectory()
        let path = directory.file("tally.strata")
        let configuration = Realm.Configuration(fileURL: URL(fileURLWithPath: path))
        let setup = try Realm(configuration: configuration)
        try setup.write { setup.add(Tally(value: ["id": 1])) }
        let commits = soak ? 500 : 40
        let watcher = TallyWatcher()
        try await watcher.start(configuration: configuration, until: commits)
        let child = try Child(["tally", path, "\(commits)"])
        child.send("go")
        let seen = await watcher.result()
        #expect(seen.last == commits)
        #expect(seen == seen.sorted())
        #expect(child.readLine() == "done")
        #expect(child.wait() == 0)
    }
}

extension Teller {
    /// The last commit: marks every account closed.
    func close() async throws {
        let realm = try await Realm(configuration: configuration, actor: self)
        try await realm.asyncWrite {
            for account in realm.objects(StressAccount.self) { account.closed = true }
        }
    }
}

actor TallyWatcher {
    private var realm: Realm?
    private var task: Task<[Int], Never>?
    private var ready: AsyncStream<Void>.Continuation?

    func start(configuration: Realm.Configuration, until count: Int) async throws {
        realm = try await Realm(configuration: configuration, actor: self)
        let (stream, continuation) = AsyncStream<Void>.makeStream()
        ready = continuation
        task = Task { await self.watch(until: count) }
        for await _ in stream { break }
    }

    private func watch(until count: Int) async -> [Int] {
        let tally = realm!.object(ofType: Tally.self, forPrimaryKey: 1)!
        var changes = tally.changes.makeAsyncIterator()
        ready?.yield()
        var seen: [Int] = []
        while let change = await changes.next(isolation: self) {
            guard case .change(let object, _) = change else { break }
            seen.append(object.count)
            if object.count >= count { break }
        }
        return seen
    }

    func result() async -> [Int] { await task!.value }
}

import Dispatch
import Foundation
import Strata
import StrataStorage
import Testing

final class QueueStressAccount: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var balance = 0
    @Persisted var transfers = 0
}

/// What the observers saw: every total, and how many deliveries.
private final class StressLedger: Sendable {
    // `Locked` (pthread), not the standard library's `Mutex`: ThreadSanitizer does not model the futex under
    // `Mutex` on Linux and reports every access it protects as a race.
    let totals = Locked<[Int]>([])
    /// The queues' observations, ended by the test.
    let tokens = Locked<[NotificationToken]>([])
}

/// Moves 1 from one account to another (and counts the transfer on the first account).
private func transfer(_ realm: Realm, step: Int, accounts: Int) {
    let accountsList = realm.objects(QueueStressAccount.self)
    let from = accountsList.where { $0.id == step % accounts }.first!
    let to = accountsList.where { $0.id == (step + 1) % accounts }.first!
    from.balance -= 1
    from.transfers += 1
    to.balance += 1
}

/// An actor writing transfers with the SDK's callbacks.
private actor CallbackTransferrer {
    var realm: Realm!

    func run(_ configuration: Realm.Configuration, transfers: Int, accounts: Int, offset: Int) async throws {
        realm = try await Realm(configuration: configuration, actor: self)
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            for step in 0..<transfers {
                realm.writeAsync(
                    { transfer(self.realm, step: step + offset, accounts: accounts) },
                    onComplete: { error in
                        precondition(error == nil, "\(error!)")
                        if step == transfers - 1 { done.resume() }
                    })
            }
        }
    }
}

/// Queue-confined Realms and actor Realms write transfers with `writeAsync` at once while queue Realms observe
/// and `@ThreadSafe` results are read on plain threads: every total seen is the starting total, and every transfer
/// is counted once. Runs under ThreadSanitizer in CI. `STRATA_SOAK=1` makes it 20 times longer.
@Suite("Concurrency: queue Realms and callback async writes under load")
struct ConcurrencyQueueStressTests {
    @Test(.timeLimit(.minutes(5))) func queuesAndActorsWriteAsynchronouslyWhileQueuesObserve() async throws {
        let directory = TemporaryDirectory()
        let configuration = Realm.Configuration(
            fileURL: URL(fileURLWithPath: directory.file("queues.strata")), objectTypes: [QueueStressAccount.self])
        let soak = ProcessInfo.processInfo.environment["STRATA_SOAK"] == "1"
        let transfers = soak ? 1_000 : 50
        let accounts = 5
        let writers = 3
        let setup = try Realm(configuration: configuration)
        try setup.write {
            for id in 0..<accounts { setup.create(QueueStressAccount.self, value: ["id": id, "balance": 100]) }
        }
        @ThreadSafe var everyAccount = setup.objects(QueueStressAccount.self)
        let accountsReference = _everyAccount
        let ledger = StressLedger()
        let queues = (0..<writers).map { DispatchQueue(label: "stress-\($0)") }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (index, queue) in queues.enumerated() {
                group.addTask {
                    try await withCheckedThrowingContinuation { (done: CheckedContinuation<Void, any Error>) in
                        queue.async {
                            do {
                                let realm = try Realm(configuration: configuration, queue: queue)
                                let token = realm.objects(QueueStressAccount.self).observe { change in
                                    if case .update(let all, _, _, _) = change {
                                        let total: Int = all.sum(ofProperty: "balance")
                                        ledger.totals.withLock { $0.append(total) }
                                    }
                                }
                                ledger.tokens.withLock { $0.append(token) }
                                for step in 0..<transfers {
                                    realm.writeAsync(
                                        { transfer(realm, step: step + index, accounts: accounts) },
                                        onComplete: { error in
                                            if let error {
                                                done.resume(throwing: error)
                                            } else if step == transfers - 1 {
                                                done.resume()
                                            }
                                        })
                                }
                            } catch {
                                done.resume(throwing: error)
                            }
                        }
                    }
                }
                group.addTask {
                    try await CallbackTransferrer().run(
                        configuration, transfers: transfers, accounts: accounts, offset: index)
                }
                group.addTask {
                    let totals = await withCheckedContinuation { (done: CheckedContinuation<[Int], Never>) in
                        Thread {
                            var seen: [Int] = []
                            for _ in 0..<10 {
                                let all = accountsReference.wrappedValue!
                                seen.append(all.sum(ofProperty: "balance"))
                            }
                            done.resume(returning: seen)
                        }.start()
                    }
                    ledger.totals.withLock { $0.append(contentsOf: totals) }
                }
            }
            try await group.waitForAll()
        }
        setup.refresh()
        let all = setup.objects(QueueStressAccount.self)
        #expect(all.sum(ofProperty: "balance") as Int == 100 * accounts)
        #expect(all.sum(ofProperty: "transfers") as Int == 2 * writers * transfers)
        let seen = ledger.totals.withLock { $0 }
        #expect(!seen.isEmpty)
        #expect(seen.allSatisfy { $0 == 100 * accounts })
        // The queues' Realms and tokens go on their queues.
        let released = ledger.tokens.withLock { tokens -> [NotificationToken] in
            defer { tokens = [] }
            return tokens
        }
        for token in released { token.invalidate() }
    }
}

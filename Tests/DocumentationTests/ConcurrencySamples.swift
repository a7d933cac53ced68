import Foundation
import Strata
import Testing

// Documentation/Concurrency.md

enum ConcurrencySample {
    final class Reading: Object {
        @Persisted var sensor = ""
        @Persisted var celsius = 0.0
    }

    final class Account: Object {
        @Persisted(primaryKey: true) var id = 0
        @Persisted var owner = ""
        @Persisted var balance = 0
    }

    /// The main-actor and task-confinement samples, as methods so that they see this enum's models.
    struct Service {
        @MainActor
        func startService() async throws -> Int {
            let realm = try Realm()  // confined to the main actor, whichever thread it runs on
            await Task.yield()
            try realm.write { realm.add(Reading(value: ["sensor": "boot", "celsius": 20.0])) }
            return realm.objects(Reading.self).count
        }

        func recordReading(sensor: String, celsius: Double) async throws -> Int {
            let realm = try Realm()  // confined to the task running this function
            try await realm.asyncWrite {
                realm.add(Reading(value: ["sensor": sensor, "celsius": celsius]))
            }
            return realm.objects(Reading.self).count  // the same Realm, after the await
        }

        func oneInstancePerIsolation() throws -> Bool {
            let realm = try Realm()
            try realm.write {
                let same = try Realm()  // this isolation's instance, already in the write
                same.add(Reading(value: ["sensor": "t2", "celsius": 19.0]))
            }
            let again = try Realm()
            print(again === realm)  // true
            return again === realm && realm.objects(Reading.self).count == 1
        }
    }

    actor Ingest {
        var realm: Realm!

        func start() async throws { realm = try await Realm(actor: self) }

        func add(sensor: String, celsius: Double) async throws {
            try await realm.asyncWrite {  // waits for the write lock by suspending
                realm.add(Reading(value: ["sensor": sensor, "celsius": celsius]))
            }
        }

        func count() -> Int { realm.objects(Reading.self).count }
    }

    @MainActor
    final class AccountsScreen {
        var realm: Realm?
        var rows: [String] = []

        func load() async throws {
            let realm = try await Realm.open()  // confined to the main actor
            rows = realm.objects(Account.self).sorted(byKeyPath: "owner").map(\.owner)
            self.realm = realm
        }
    }

    actor Bank {
        func total(configuration: Realm.Configuration) async throws -> Int {
            let realm = try await Realm(configuration: configuration, actor: self)
            let snapshot = Frozen(realm.objects(Account.self))  // Sendable
            let total = await Task.detached { snapshot.value.sum(of: \.balance) }.value
            return total
        }
    }

    actor Auditor {
        let configuration: Realm.Configuration
        init(configuration: Realm.Configuration) { self.configuration = configuration }

        func audit(_ reference: ThreadSafeReference<Account>) async throws -> String {
            let realm = try await Realm(configuration: configuration, actor: self)
            guard let account = realm.resolve(reference) else { return "deleted" }  // live on this actor
            try await realm.asyncWrite { account.balance -= 1 }
            return "\(account.owner): \(account.balance)"
        }
    }
}

extension DefaultConfigurationSamples {
    @Suite("Concurrency")
    struct ConcurrencyDefaultTests {
        @Test func anActorOwnsItsRealm() async throws {
            DefaultConfigurationSamples.useFreshDefaultConfiguration("concurrency-ingest")
            let ingest = ConcurrencySample.Ingest()
            try await ingest.start()
            try await ingest.add(sensor: "t1", celsius: 21.5)
            try await ingest.add(sensor: "t1", celsius: 21.7)
            #expect(await ingest.count() == 2)
        }

        @Test func theMainActorKeepsItsRealmAcrossAwaits() async throws {
            DefaultConfigurationSamples.useFreshDefaultConfiguration("concurrency-main-actor")
            #expect(try await ConcurrencySample.Service().startService() == 1)
        }

        @Test func aTaskKeepsItsRealmAcrossAwaits() async throws {
            DefaultConfigurationSamples.useFreshDefaultConfiguration("concurrency-task")
            let keeper = try Realm()  // keeps the in-memory file between the tasks
            let first = try await Task.detached {
                try await ConcurrencySample.Service().recordReading(sensor: "t1", celsius: 21.5)
            }.value
            let second = try await ConcurrencySample.Service().recordReading(sensor: "t1", celsius: 21.7)
            #expect(first == 1 && second == 2)
            _ = keeper
        }

        @Test func oneInstancePerIsolation() throws {
            DefaultConfigurationSamples.useFreshDefaultConfiguration("concurrency-cache")
            #expect(try ConcurrencySample.Service().oneInstancePerIsolation())
        }

        @MainActor @Test func theMainActorOpensItsOwnRealm() async throws {
            let configuration = DefaultConfigurationSamples.useFreshDefaultConfiguration("concurrency-main")
            let writer = try await Realm.open(configuration: configuration)
            try await writer.asyncWrite {
                writer.create(ConcurrencySample.Account.self, value: ["id": 1, "owner": "Bo"])
                writer.create(ConcurrencySample.Account.self, value: ["id": 2, "owner": "Al"])
            }
            let screen = ConcurrencySample.AccountsScreen()
            try await screen.load()
            #expect(screen.rows == ["Al", "Bo"])
        }
    }
}

@Suite("Concurrency")
struct ConcurrencySampleTests {
    typealias Account = ConcurrencySample.Account

    @Test func frozenValuesCrossTasks() async throws {
        let configuration = inMemoryConfiguration("concurrency-frozen")
        let keeper = Keeper()
        try await keeper.fill(configuration: configuration)
        let total = try await ConcurrencySample.Bank().total(configuration: configuration)
        #expect(total == 150)
        await keeper.close()
    }

    @Test func threadSafeReferencesCarryLiveObjects() async throws {
        let configuration = inMemoryConfiguration("concurrency-reference")
        let keeper = Keeper()
        try await keeper.fill(configuration: configuration)
        let reference = try await keeper.reference(id: 1)
        let auditor = ConcurrencySample.Auditor(configuration: configuration)
        let result = try await auditor.audit(reference)
        #expect(result == "Ann: 99")
        // A reference may be resolved again.
        #expect(try await auditor.audit(reference) == "Ann: 98")
        await keeper.close()
    }

    @Test func freezeAndThaw() throws {
        let realm = try Realm(configuration: inMemoryConfiguration("concurrency-thaw"))
        let account = try realm.write { realm.create(Account.self, value: ["id": 1, "owner": "Ann", "balance": 5]) }

        let frozen = account.freeze()
        try realm.write { account.balance = 6 }
        print(frozen.isFrozen, frozen.balance, account.balance)  // true 5 6
        let live = frozen.thaw()  // the live object in this isolation's Realm, or nil if it was deleted
        print(live?.balance ?? 0)  // 6
        #expect(frozen.isFrozen && frozen.balance == 5 && live?.balance == 6)

        let frozenRealm = realm.freeze()
        try realm.write { realm.create(Account.self, value: ["id": 2, "owner": "Bob"]) }
        print(frozenRealm.objects(Account.self).count, realm.objects(Account.self).count)  // 1 2
        #expect(frozenRealm.objects(Account.self).count == 1 && realm.objects(Account.self).count == 2)
    }

    /// Keeps a Realm (and so the in-memory file) open for a test, with two accounts.
    actor Keeper {
        var realm: Realm?

        func fill(configuration: Realm.Configuration) async throws {
            let realm = try await Realm(configuration: configuration, actor: self)
            try await realm.asyncWrite {
                realm.create(Account.self, value: ["id": 1, "owner": "Ann", "balance": 100])
                realm.create(Account.self, value: ["id": 2, "owner": "Bob", "balance": 50])
            }
            self.realm = realm
        }

        func reference(id: Int) throws -> ThreadSafeReference<Account> {
            let account = try #require(realm?.object(ofType: Account.self, forPrimaryKey: id))
            let reference = ThreadSafeReference(to: account)
            return reference
        }

        func close() { realm = nil }
    }
}

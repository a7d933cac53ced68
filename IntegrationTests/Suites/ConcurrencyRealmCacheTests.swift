import Foundation
import Strata
import StrataTestSupport
import Testing

/// An entry of the instance-cache tests.
final class CachedEntry: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var text = ""
}

/// Opening a Realm where the same file is already open returns that instance, as the Realm SDK does: on a thread,
/// an actor or a task, `try Realm()` twice gives one Realm, in its write transaction if one is in progress, and a
/// second write on one isolation is a nested-write error, never a wait for the first's lock. (The CI runs this
/// suite under ThreadSanitizer.)
@Suite("Concurrency: Realm instance cache")
struct ConcurrencyRealmCacheTests {
    private static func configuration(_ name: String) -> Realm.Configuration {
        Realm.Configuration(
            inMemoryIdentifier: "\(name)-\(UInt64.random(in: 0...UInt64.max))", objectTypes: [CachedEntry.self])
    }

    /// Runs `body` on a plain thread (no task: the Realms it opens are thread-confined) and waits for it. A body
    /// that never returns (a second instance waiting for the first's write lock) fails the test after a minute
    /// instead of hanging the run.
    private static func onThread(_ body: @escaping @Sendable () throws -> Void) -> (any Error)? {
        let finished = DispatchSemaphore(value: 0)
        let outcome = ThreadOutcome()
        let thread = Thread {
            do { try body() } catch { outcome.error = error }
            finished.signal()
        }
        thread.start()
        guard finished.wait(timeout: .now() + 60) == .success else {
            Issue.record("the thread never finished: a second Realm waited for the first's write lock")
            return nil
        }
        return outcome.error
    }

    @Test func aThreadGetsOneInstanceAlsoInsideAWrite() {
        let configuration = Self.configuration("thread-cache")
        let error = Self.onThread {
            let first = try Realm(configuration: configuration)
            let second = try Realm(configuration: configuration)
            #expect(first === second)
            first.beginWrite()
            // `try! Realm()` wherever a Realm is needed: the same instance, already in the write.
            let inside = try Realm(configuration: configuration)
            #expect(inside === first)
            #expect(inside.isInWriteTransaction)
            let entry = inside.create(CachedEntry.self, value: ["id": 1, "text": "one"])
            first.delete(entry)  // the same Realm manages the object
            inside.create(CachedEntry.self, value: ["id": 2, "text": "two"])
            // A nested write is an error, not a wait for the lock this thread holds.
            #expect(throws: Realm.Error.self) { try inside.write {} }
            try first.commitWrite()
            #expect(second.objects(CachedEntry.self).map(\.id) == [2])
        }
        #expect(error == nil)
    }

    @Test func anActorGetsOneInstanceHoweverItOpens() async throws {
        let keeper = CacheKeeper(configuration: Self.configuration("actor-cache"))
        #expect(try await keeper.opensOneInstance())
    }

    @Test func aTaskGetsOneInstanceAcrossAwaits() async throws {
        let configuration = Self.configuration("task-cache")
        let first = try Realm(configuration: configuration)
        try await first.asyncWrite { first.create(CachedEntry.self, value: ["id": 1]) }
        await Task.detached {}.value
        let second = try Realm(configuration: configuration)
        #expect(second === first)
        try await second.asyncWrite {
            // Inside the write: opening again gives the Realm in its write transaction.
            let inside = try Realm(configuration: configuration)
            #expect(inside === first && inside.isInWriteTransaction)
            inside.create(CachedEntry.self, value: ["id": 2])
        }
        #expect(first.objects(CachedEntry.self).count == 2)
    }

    /// Another thread, actor or task gets its own instance.
    @Test func otherIsolationsGetTheirOwnInstances() async throws {
        let configuration = Self.configuration("distinct-cache")
        let mine = try Realm(configuration: configuration)
        let keeper = CacheKeeper(configuration: configuration)
        let actorsOwn = try await keeper.identity()
        let tasksOwn = try await Task.detached {
            let realm = try Realm(configuration: configuration)
            return ObjectIdentifier(realm) == (try ObjectIdentifier(Realm(configuration: configuration)))
        }.value
        #expect(tasksOwn)
        #expect(actorsOwn != ObjectIdentifier(mine))
        let threadsOwn = ThreadOutcome()
        let error = Self.onThread { threadsOwn.identity = ObjectIdentifier(try Realm(configuration: configuration)) }
        #expect(error == nil)
        #expect(threadsOwn.identity != ObjectIdentifier(mine))
        _ = keeper
    }

    /// The same file opened again on one isolation with settings the open instance cannot honour is a typed error.
    @Test func anIncompatibleConfigurationOnOneIsolationThrows() throws {
        let configuration = Self.configuration("incompatible-cache")
        let realm = try Realm(configuration: configuration)
        var newer = configuration
        newer.schemaVersion = 1
        #expect(throws: Realm.Error.self) { _ = try Realm(configuration: newer) }
        var readOnly = configuration
        readOnly.readOnly = true
        #expect(throws: Realm.Error.self) { _ = try Realm(configuration: readOnly) }
        #expect(try Realm(configuration: configuration) === realm)
    }

    /// A migration block that opens its own Realm again gets a typed error instead of waiting forever for the
    /// migration's write lock.
    @Test func openingTheRealmFromItsMigrationThrows() {
        let directory = TemporaryDirectory()
        let url = URL(fileURLWithPath: directory.file("migrating.strata"))
        let error = Self.onThread {
            _ = try Realm(configuration: Realm.Configuration(fileURL: url, objectTypes: [CachedEntry.self]))
        }
        #expect(error == nil)
        let reentered = ThreadOutcome()
        let migrationError = Self.onThread {
            var configuration = Realm.Configuration(fileURL: url, schemaVersion: 1, objectTypes: [CachedEntry.self])
            let copy = configuration
            configuration.migrationBlock = { _, _ in
                do {
                    _ = try Realm(configuration: copy)
                } catch {
                    reentered.error = error
                }
            }
            _ = try Realm(configuration: configuration)
        }
        #expect(migrationError == nil)
        #expect(reentered.error is Realm.Error)
    }
}

/// Opens its Realm every way an actor can and checks that each gives one instance.
actor CacheKeeper {
    let configuration: Realm.Configuration
    private var realm: Realm?

    init(configuration: Realm.Configuration) { self.configuration = configuration }

    func opensOneInstance() async throws -> Bool {
        let byInit = try Realm(configuration: configuration)
        let byActor = try await Realm(configuration: configuration, actor: self)
        let byOpen = try await Realm.open(configuration: configuration)
        realm = byInit
        return byInit === byActor && byActor === byOpen
    }

    func identity() throws -> ObjectIdentifier {
        let realm = try Realm(configuration: configuration)
        self.realm = realm
        return ObjectIdentifier(realm)
    }
}

/// What a thread of a test produced.
final class ThreadOutcome: @unchecked Sendable {
    var error: (any Error)?
    var identity: ObjectIdentifier?
}

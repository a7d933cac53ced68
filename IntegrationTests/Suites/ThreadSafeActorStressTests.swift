import Foundation
import Strata
import Testing

final class ThreadSafeStressCounter: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var count = 0
}

/// An actor with its own Realm that increments a counter it reads through a shared `@ThreadSafe` wrapper.
private actor ThreadSafeIncrementer {
    private var realm: Realm!

    func run(_ configuration: Realm.Configuration, counter: ThreadSafe<ThreadSafeStressCounter>, times: Int)
        async throws
    {
        realm = try await Realm(configuration: configuration, actor: self)
        for _ in 0..<times {
            // Resolved in this actor's Realm, so the read-modify-write belongs to this actor's transaction.
            guard let counter = counter.wrappedValue, counter.realm === realm else {
                throw Realm.Error.wrongThread
            }
            try await realm.asyncWrite { counter.count += 1 }
        }
        realm = nil
    }
}

/// Many actors open and release Realms of one file while each reads a shared `@ThreadSafe` object (the read looks
/// for the running actor among the file's actor Realms) and increments it in its own write: every value each
/// actor reads belongs to its own Realm, and no increment is lost. Runs under ThreadSanitizer in CI.
/// `STRATA_SOAK=1` makes it 20 times longer.
@Suite("Concurrency: @ThreadSafe read from many actors under load")
struct ThreadSafeActorStressTests {
    @Test(.timeLimit(.minutes(5))) func everyActorResolvesInItsOwnRealmAndNoIncrementIsLost() async throws {
        let directory = TemporaryDirectory()
        let configuration = Realm.Configuration(
            fileURL: URL(fileURLWithPath: directory.file("thread-safe.strata")),
            objectTypes: [ThreadSafeStressCounter.self])
        let soak = ProcessInfo.processInfo.environment["STRATA_SOAK"] == "1"
        let actors = 8
        let times = soak ? 500 : 25
        let realm = try Realm(configuration: configuration)
        let counter = try realm.write { realm.create(ThreadSafeStressCounter.self, value: ["id": 1]) }
        let wrapper = ThreadSafe(wrappedValue: counter)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<actors {
                group.addTask { try await ThreadSafeIncrementer().run(configuration, counter: wrapper, times: times) }
            }
            try await group.waitForAll()
        }
        realm.refresh()
        #expect(counter.count == actors * times)
    }
}

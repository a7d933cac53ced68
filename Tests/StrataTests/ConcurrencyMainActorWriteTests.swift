import Foundation
import Strata
import StrataTestSupport
import Testing

final class MainActorWriteItem: Object {
    @Persisted var value = 0
}

/// Whether a main-actor job ran, set by that job.
@MainActor private final class RanFlag {
    var ran = false
}

@Suite("Concurrency: a main-actor asyncWrite stays on the main actor")
struct ConcurrencyMainActorWriteTests {
    /// An uncontended `asyncWrite` on a main-actor Realm takes the write lock without leaving the main actor: a
    /// main-actor job queued just before it does not run before it returns. (Waiting for the lock in a nonisolated
    /// async function left the main actor on every call; on Linux, whose main actor is a Dispatch queue, that is
    /// two thread switches per write, which made a main-actor asyncWrite cost ~20 % more than an actor's.)
    @MainActor @Test func anUncontendedAsyncWriteDoesNotLeaveTheMainActor() async throws {
        let directory = TemporaryDirectory()
        let realm = try Realm(
            configuration: Realm.Configuration(
                fileURL: URL(fileURLWithPath: directory.file("main.strata")), objectTypes: [MainActorWriteItem.self]))
        var interleaved = 0
        for value in 0..<10 {
            let flag = RanFlag()
            Task { @MainActor in flag.ran = true }  // queued on the main actor behind this test
            try await realm.asyncWrite { realm.add(MainActorWriteItem(value: ["value": value])) }
            if flag.ran { interleaved += 1 }
            while !flag.ran { await Task.yield() }
        }
        #expect(interleaved == 0, "\(interleaved) of 10 writes let a queued main-actor job run first")
        #expect(realm.objects(MainActorWriteItem.self).count == 10)
    }
}

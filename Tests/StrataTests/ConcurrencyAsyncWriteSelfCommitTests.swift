import Foundation
import Strata
import Testing

/// What one `writeAsync` whose block ends the transaction itself left behind.
struct SelfEndedWrite: Sendable {
    var completions: [String] = []
    var versionsAdvanced = 0
    var items = 0
    var busyAfter = true
}

/// An actor whose Realm runs `writeAsync` blocks that commit or cancel their own transaction.
private actor SelfCommittingWriter {
    private var realm: Realm!

    func open(_ configuration: Realm.Configuration) async throws {
        realm = try await Realm(configuration: configuration, actor: self)
    }

    /// Runs one `writeAsync` whose block adds an item then calls `end` on the Realm; counts the versions the
    /// Realm advanced to (each commit advances it once) until `onComplete` ran.
    func write(ending end: @escaping @Sendable (Realm) throws -> Void) async -> SelfEndedWrite {
        var outcome = SelfEndedWrite()
        let token = realm.observe { _, _ in outcome.versionsAdvanced += 1 }
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            realm.writeAsync(
                {
                    self.realm.add(CallbackWriteItem(value: ["id": 70, "note": "self"]))
                    do {
                        try end(self.realm)
                    } catch {
                        outcome.completions.append("block threw \(error)")
                    }
                },
                onComplete: { error in
                    outcome.completions.append(error.map { "error \($0)" } ?? "nil")
                    done.resume()
                })
        }
        token.invalidate()
        outcome.items = realm.objects(CallbackWriteItem.self).count
        outcome.busyAfter = realm.isPerformingAsynchronousWriteOperations
        return outcome
    }
}

/// `writeAsync(_:onComplete:)` whose block commits (`commitWrite()`, `commitAsyncWrite`) or cancels (`cancelWrite()`)
/// the transaction itself, as the Realm SDK allows: `onComplete` gets nil, nothing is committed twice, and no
/// asynchronous operation is left pending.
@Suite("Concurrency: writeAsync blocks that end their own transaction")
struct ConcurrencyAsyncWriteSelfCommitTests {
    let configuration = Realm.Configuration(
        inMemoryIdentifier: "self-commit-\(UUID())", objectTypes: [CallbackWriteItem.self])

    private func writer() async throws -> SelfCommittingWriter {
        let writer = SelfCommittingWriter()
        try await writer.open(configuration)
        return writer
    }

    @Test(.timeLimit(.minutes(1))) func aBlockThatCommitsCompletesWithNilAndCommitsOnce() async throws {
        let outcome = try await writer().write { try $0.commitWrite() }
        #expect(outcome.completions == ["nil"])
        #expect(outcome.versionsAdvanced == 1)
        #expect(outcome.items == 1)
        #expect(!outcome.busyAfter)
    }

    @Test(.timeLimit(.minutes(1))) func aBlockThatCommitsAsynchronouslyCompletesWithNilAndCommitsOnce() async throws {
        let outcome = try await writer().write { $0.commitAsyncWrite() }
        #expect(outcome.completions == ["nil"])
        #expect(outcome.versionsAdvanced == 1)
        #expect(outcome.items == 1)
        #expect(!outcome.busyAfter)
    }

    @Test(.timeLimit(.minutes(1))) func aBlockThatCancelsCompletesWithNilAndWritesNothing() async throws {
        let outcome = try await writer().write { $0.cancelWrite() }
        #expect(outcome.completions == ["nil"])
        #expect(outcome.versionsAdvanced == 0)
        #expect(outcome.items == 0)
        #expect(!outcome.busyAfter)
    }
}

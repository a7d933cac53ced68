import Dispatch
import Foundation
import Strata
import Testing

final class CallbackWriteItem: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var note = ""
}

/// An actor whose Realm writes with the SDK's callbacks; `log` records what ran, in order.
actor CallbackWriter {
    var realm: Realm!
    var log: [String] = []

    func open(_ configuration: Realm.Configuration) async throws {
        realm = try await Realm(configuration: configuration, actor: self)
    }

    var count: Int { realm.objects(CallbackWriteItem.self).count }

    /// `writeAsync` returns before its block runs; its completion runs on this actor after the commit.
    func writeAsyncReturnsFirst() async -> (ranBeforeReturn: Bool, busyAfterCall: Bool, error: String, busyAfter: Bool)
    {
        var ran = false
        var busy = false
        let error = await withCheckedContinuation { (done: CheckedContinuation<String, Never>) in
            realm.writeAsync(
                {
                    ran = true
                    self.realm.add(CallbackWriteItem(value: ["id": 1]))
                },
                onComplete: { error in done.resume(returning: error.map { "\($0)" } ?? "none") })
            busy = realm.isPerformingAsynchronousWriteOperations
            log.append("returned, ran: \(ran)")
        }
        return (log.first == "returned, ran: false", busy, error, realm.isPerformingAsynchronousWriteOperations)
    }

    /// Three writes asked for at once, one more asked for inside the first block: blocks and completions in order.
    func fifo() async -> [String] {
        log = []
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            for id in 1...3 {
                realm.writeAsync(
                    {
                        self.log.append("block \(id)")
                        self.realm.add(CallbackWriteItem(value: ["id": 10 + id]))
                        if id == 1 {
                            self.realm.beginAsyncWrite {
                                self.log.append("nested block")
                                self.realm.add(CallbackWriteItem(value: ["id": 20]))
                                self.realm.commitAsyncWrite { _ in
                                    self.log.append("nested complete")
                                    done.resume()
                                }
                            }
                        }
                    },
                    onComplete: { _ in self.log.append("complete \(id)") })
            }
        }
        return log
    }

    /// A duplicate primary key rolls the write back and reaches `onComplete` as the typed error.
    func duplicateKey() async -> (error: Realm.Error?, notes: [String]) {
        let error = await withCheckedContinuation { (done: CheckedContinuation<Realm.Error?, Never>) in
            realm.writeAsync(
                {
                    self.realm.create(CallbackWriteItem.self, value: ["id": 30, "note": "first"])
                    self.realm.create(CallbackWriteItem.self, value: ["id": 30, "note": "second"])
                },
                onComplete: { error in done.resume(returning: error as? Realm.Error) })
        }
        return (error, realm.objects(CallbackWriteItem.self).where { $0.id == 30 }.map(\.note))
    }

    /// A queued write cancelled before it runs never runs; a commit's cancelled completion is not called (the
    /// commit stays); an id never returned throws; a block that returns without committing writes nothing.
    func cancellation() async throws -> (log: [String], count: Int, unknownThrew: Bool) {
        log = []
        let before = count
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            realm.writeAsync({ self.log.append("first") })
            let second = realm.writeAsync({ self.log.append("second (cancelled)") })
            try? realm.cancelAsyncWrite(second)
            realm.beginAsyncWrite {
                self.log.append("commit with cancelled completion")
                self.realm.add(CallbackWriteItem(value: ["id": 40]))
                let completion = self.realm.commitAsyncWrite { _ in self.log.append("completion (cancelled)") }
                try? self.realm.cancelAsyncWrite(completion)
            }
            realm.beginAsyncWrite {
                self.log.append("left open")
                self.realm.add(CallbackWriteItem(value: ["id": 41]))
            }
            realm.writeAsync({}, onComplete: { _ in done.resume() })
        }
        var unknownThrew = false
        do {
            try realm.cancelAsyncWrite(9999)
        } catch Realm.Error.invalidValue {
            unknownThrew = true
        }
        return (log, count - before, unknownThrew)
    }
}

@Suite("Concurrency: callback-style async writes")
struct ConcurrencyAsyncWriteCallbackTests {
    let configuration = Realm.Configuration(
        inMemoryIdentifier: "callback-writes-\(UUID())", objectTypes: [CallbackWriteItem.self])

    @Test(.timeLimit(.minutes(1))) func writeAsyncRunsLaterOnTheActorAndCompletesThere() async throws {
        let writer = CallbackWriter()
        try await writer.open(configuration)
        let outcome = await writer.writeAsyncReturnsFirst()
        #expect(outcome.ranBeforeReturn)
        #expect(outcome.busyAfterCall)
        #expect(outcome.error == "none")
        #expect(!outcome.busyAfter)
        #expect(await writer.count == 1)
    }

    @Test(.timeLimit(.minutes(1))) func writesRunInTheOrderAskedForWithEachCompletionBeforeTheNextBlock() async throws {
        let writer = CallbackWriter()
        try await writer.open(configuration)
        let log = await writer.fifo()
        #expect(
            log == [
                "block 1", "complete 1", "block 2", "complete 2", "block 3", "complete 3", "nested block",
                "nested complete",
            ])
        #expect(await writer.count == 4)
    }

    @Test(.timeLimit(.minutes(1))) func aFailedCommitReachesOnCompleteAndWritesNothing() async throws {
        let writer = CallbackWriter()
        try await writer.open(configuration)
        let outcome = await writer.duplicateKey()
        #expect(outcome.error == .primaryKeyExists(type: "CallbackWriteItem", value: "30"))
        #expect(outcome.notes.isEmpty)
    }

    @Test(.timeLimit(.minutes(1))) func cancelledWritesAndCompletionsDoNotRun() async throws {
        let writer = CallbackWriter()
        try await writer.open(configuration)
        let outcome = try await writer.cancellation()
        #expect(outcome.log == ["first", "commit with cancelled completion", "left open"])
        #expect(outcome.count == 1)  // the commit whose completion was cancelled; the block left open wrote nothing
        #expect(outcome.unknownThrew)
    }

    /// A main-actor Realm writes asynchronously on the main actor.
    @MainActor @Test(.timeLimit(.minutes(1))) func aMainActorRealmWritesAsynchronously() async throws {
        let realm = try Realm(configuration: configuration)
        let error: String = await withCheckedContinuation { done in
            realm.writeAsync(
                { realm.add(CallbackWriteItem(value: ["id": 50])) },
                onComplete: { error in done.resume(returning: error.map { "\($0)" } ?? "none") })
        }
        #expect(error == "none")
        #expect(realm.object(ofType: CallbackWriteItem.self, forPrimaryKey: 50) != nil)
    }

    /// A queue-confined Realm runs the block and the completion in blocks of its queue.
    @Test(.timeLimit(.minutes(1))) func aQueueRealmWritesAsynchronouslyOnItsQueue() async throws {
        let keep = try Realm(configuration: configuration)
        let queue = MarkedQueue("async-writes")
        let configuration = configuration
        let realm = QueueLocal<Realm>()
        let (events, sink) = AsyncStream.makeStream(of: QueueDelivery.self)
        try await queue.run {
            let opened = try Realm(configuration: configuration, queue: queue.queue)
            realm.value = opened
            opened.writeAsync(
                {
                    sink.yield(QueueDelivery(onQueue: queue.isCurrent, what: "block"))
                    opened.add(CallbackWriteItem(value: ["id": 60]))
                },
                onComplete: { error in
                    sink.yield(QueueDelivery(onQueue: queue.isCurrent, what: "complete \(error == nil)"))
                })
        }
        var iterator = events.makeAsyncIterator()
        #expect(await iterator.next() == QueueDelivery(onQueue: true, what: "block"))
        #expect(await iterator.next() == QueueDelivery(onQueue: true, what: "complete true"))
        keep.refresh()
        #expect(keep.object(ofType: CallbackWriteItem.self, forPrimaryKey: 60) != nil)
        try await queue.run { realm.value = nil }
    }
}

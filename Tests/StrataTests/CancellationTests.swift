import Foundation
import StrataTestSupport
import Testing

@testable import Strata
@testable import StrataStorage

/// A note written by the cancellation tests.
final class CancellableNote: Object {
    @Persisted var text = ""
}

/// An actor owning a Realm, as a service would: the tests cancel the tasks that call it.
actor CancellableWriter {
    private var realm: Realm?

    func open(_ configuration: Realm.Configuration) async throws {
        realm = try await Realm(configuration: configuration, actor: self)
    }

    /// Opens through `Realm.open`, which takes this actor as the Realm's isolation.
    func openWithRealmOpen(_ configuration: Realm.Configuration) async throws {
        realm = try await Realm.open(configuration: configuration)
    }

    func add(_ text: String) async throws {
        let realm = try #require(realm)
        try await realm.asyncWrite { realm.add(CancellableNote(value: ["text": text])) }
    }

    func texts() throws -> [String] {
        try #require(realm).objects(CancellableNote.self).map(\.text).sorted()
    }

    func setAutorefresh(_ on: Bool) throws { try #require(realm).autorefresh = on }

    func refresh() async throws -> Bool {
        let realm = try #require(realm)
        return await realm.asyncRefresh()
    }
}

/// How a task ended.
private typealias Outcome<T> = Result<T, any Error>

/// Runs `body` in a task that is cancelled before `body` starts, and returns that task's outcome.
private func inCancelledTask<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) async -> Outcome<T> {
    let task = Task {
        withUnsafeCurrentTask { $0?.cancel() }
        return try await body()
    }
    return await task.result
}

@Suite("Cancellation of async Realm calls")
struct CancellationTests {
    private func configuration(_ directory: TemporaryDirectory, _ name: String = "cancel.strata")
        -> Realm.Configuration
    {
        Realm.Configuration(fileURL: URL(fileURLWithPath: directory.file(name)), objectTypes: [CancellableNote.self])
    }

    /// A task already cancelled when it calls `asyncWrite` gets `CancellationError`, and its block never runs.
    @Test func anAlreadyCancelledTaskWritesNothing() async throws {
        let directory = TemporaryDirectory()
        let writer = CancellableWriter()
        try await writer.open(configuration(directory))
        let outcome = await inCancelledTask { try await writer.add("cancelled") }
        #expect(throws: CancellationError.self) { try outcome.get() }
        #expect(try await writer.texts() == [])
        try await writer.add("later")
        #expect(try await writer.texts() == ["later"])
    }

    /// A task cancelled while it waits for the write lock (another writer holds it) gets `CancellationError`,
    /// writes nothing, and does not keep the lock: the next write goes through.
    @Test func aTaskCancelledWhileWaitingForTheLockWritesNothing() async throws {
        let directory = TemporaryDirectory()
        let writer = CancellableWriter()
        try await writer.open(configuration(directory))
        let store = try Store.open(path: directory.file("cancel.strata"))
        let holder = try await store.beginWrite()
        let waiting = Task { try await writer.add("waited") }
        while store.queuedWriterTasks == 0 { await Task.yield() }
        waiting.cancel()
        let outcome = await waiting.result
        #expect(throws: CancellationError.self) { try outcome.get() }
        holder.abort()
        try await writer.add("after")
        #expect(try await writer.texts() == ["after"])
    }

    /// `asyncRefresh` cannot throw: in a cancelled task it returns false and leaves the Realm where it was.
    @Test func asyncRefreshInACancelledTaskDoesNotAdvance() async throws {
        let directory = TemporaryDirectory()
        let reader = CancellableWriter()
        try await reader.open(configuration(directory))
        try await reader.setAutorefresh(false)
        let other = CancellableWriter()
        try await other.open(configuration(directory))
        try await other.add("new")

        let cancelled = await inCancelledTask { try await reader.refresh() }
        #expect(try cancelled.get() == false)
        #expect(try await reader.texts() == [])
        #expect(try await reader.refresh())
        #expect(try await reader.texts() == ["new"])
    }

    /// Opening in a cancelled task, with `Realm(configuration:actor:)` or `Realm.open`, throws
    /// `CancellationError` and creates no file.
    @Test func openingInACancelledTaskOpensNothing() async throws {
        let directory = TemporaryDirectory()
        let first = configuration(directory, "actor.strata")
        let actorOpen = await inCancelledTask { try await CancellableWriter().open(first) }
        #expect(throws: CancellationError.self) { try actorOpen.get() }
        let second = configuration(directory, "open.strata")
        let realmOpen = await inCancelledTask { try await CancellableWriter().openWithRealmOpen(second) }
        #expect(throws: CancellationError.self) { try realmOpen.get() }
        #expect(!FileManager.default.fileExists(atPath: directory.file("actor.strata")))
        #expect(!FileManager.default.fileExists(atPath: directory.file("open.strata")))
    }
}

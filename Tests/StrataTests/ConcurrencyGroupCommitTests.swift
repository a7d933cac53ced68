import Foundation
import Strata
import StrataTestSupport
import Testing

final class GroupCommitItem: Object {
    @Persisted var writer = 0
    @Persisted var value = 0
}

/// One actor's Realm, written by several of the actor's tasks at once.
private actor GroupCommitWriter {
    private var realm: Realm?

    static func make(path: String) async throws -> GroupCommitWriter {
        let writer = GroupCommitWriter()
        try await writer.open(path: path)
        return writer
    }

    private func open(path: String) async throws {
        realm = try await Realm(
            configuration: Realm.Configuration(
                fileURL: URL(fileURLWithPath: path), objectTypes: [GroupCommitItem.self]),
            actor: self)
    }

    /// `commits` `asyncWrite`s, each adding one item; each must be visible in the Realm once it returns.
    func write(writer: Int, commits: Int) async throws {
        let realm = try #require(realm)
        for value in 0..<commits {
            try await realm.asyncWrite {
                realm.add(GroupCommitItem(value: ["writer": writer, "value": value]))
            }
            #expect(realm.objects(GroupCommitItem.self).where { $0.writer == writer && $0.value == value }.count == 1)
        }
    }

    /// Items in the newest version.
    func count() -> Int {
        realm?.refresh()
        return realm?.objects(GroupCommitItem.self).count ?? 0
    }
}

@Suite("Concurrency: Realm asyncWrites under group commit")
struct ConcurrencyGroupCommitTests {
    /// Eight actors on one disk file (durable commits, so those made while others wait are grouped), two of them
    /// with three tasks writing their actor's Realm at once: while one of an actor's `asyncWrite`s waits for its
    /// commit to be durable (the write lock already passed on), another of its tasks may get the lock; it waits
    /// for the first to end instead of finding the Realm still in a write transaction. Every commit lands once.
    @Test func actorsAndTheirTasksCommitConcurrently() async throws {
        let directory = TemporaryDirectory()
        let path = directory.file("group.strata")
        var writers: [GroupCommitWriter] = []
        for _ in 0..<8 { writers.append(try await GroupCommitWriter.make(path: path)) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            var writer = 0
            for (index, actor) in writers.enumerated() {
                for _ in 0..<(index < 2 ? 3 : 1) {
                    let number = writer
                    group.addTask { try await actor.write(writer: number, commits: 20) }
                    writer += 1
                }
            }
            try await group.waitForAll()
        }
        #expect(await writers[7].count() == 12 * 20)
    }
}

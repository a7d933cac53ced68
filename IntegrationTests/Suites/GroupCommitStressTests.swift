import Foundation
import StrataStorage
import StrataTestSupport
import Testing

/// Many writer actors commit small durable transactions at once on a disk file, so that their commits are
/// grouped (they share log syncs). Each commit must be visible to a reader as soon as it returns, and the file,
/// reopened, must hold every commit. (The CI runs this suite under ThreadSanitizer.)
@Suite("Group commit stress", .serialized)
struct GroupCommitStressTests {
    static var commitsPerWriter: Int { soak ? 1000 : 60 }

    @Test(arguments: [8, 32]) func writerActorsLoseNoCommit(writers: Int) async throws {
        let directory = TemporaryDirectory()
        let path = directory.file("group.strata")
        let commits = Self.commitsPerWriter
        do {
            let store = try Store.open(path: path, options: StoreOptions(pageSize: 4096, durability: .full))
            try await withThrowingTaskGroup(of: Void.self) { group in
                for writer in 0..<writers {
                    let stressWriter = StressWriter(store: store, writer: UInt64(writer))
                    group.addTask { try await stressWriter.run(commits: commits) }
                }
                try await group.waitForAll()
            }
        }
        let reopened = try Store.open(path: path, options: StoreOptions(pageSize: 4096, durability: .full))
        #expect(try reopened.verify().isValid)
        let data = try #require(try reopened.read().tree(named: "data"))
        #expect(data.count == writers * commits)
        for writer in 0..<UInt64(writers) {
            for count in [0, UInt64(commits / 2), UInt64(commits - 1)] {
                #expect(try data.get(bigEndian(writer << 32 | count)) == bigEndian(count))
            }
        }
    }
}

/// One writer of the stress suite: `commits` transactions, each adding one key; after each returns, a new read
/// transaction must see it (a commit returns only once durable and published).
actor StressWriter {
    let store: Store
    let writer: UInt64

    init(store: Store, writer: UInt64) {
        self.store = store
        self.writer = writer
    }

    func run(commits: Int) async throws {
        for count in 0..<UInt64(commits) {
            let key = bigEndian(writer << 32 | count)
            try await store.asyncWrite { txn in
                try txn.put(key, bigEndian(count), in: try txn.tree(named: "data", create: .keyed)!)
            }
            #expect(try store.read().tree(named: "data")?.get(key) == bigEndian(count))
        }
    }
}

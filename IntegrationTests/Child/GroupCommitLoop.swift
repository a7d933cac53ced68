import Foundation
import StrataStorage
import StrataTestSupport

/// `group-commit-loop PATH WRITERS`: WRITERS writer actors commit small durable transactions forever, together (so
/// their commits are grouped); after each commit returns, print "acked K" (K = the key it added: writer × 2^32 +
/// its count). The parent kills the process at a random moment and checks that every acknowledged key survived.
func runGroupCommitLoop(path: String, writers: Int) throws -> Never {
    let store = try Store.open(path: path, options: StoreOptions(pageSize: 1024, durability: .full))
    // Resume after the keys earlier runs left, so each run's keys are new.
    let start = UInt64(try store.read().tree(named: "group-acked")?.count ?? 0)
    for writer in 0..<writers {
        let committer = GroupCommitter(store: store, writer: UInt64(writer), first: start)
        Task {
            do {
                try await committer.run()
            } catch {
                fail("\(error)")
            }
        }
    }
    while true { pause() }
}

/// One writer of the group-commit loop.
actor GroupCommitter {
    let store: Store
    let writer: UInt64
    let first: UInt64

    init(store: Store, writer: UInt64, first: UInt64) {
        self.store = store
        self.writer = writer
        self.first = first
    }

    func run() async throws {
        var count = first
        while true {
            let key = writer << 32 | count
            try await store.asyncWrite { txn in
                try txn.put(bigEndian(key), crashValue(key), in: try txn.tree(named: "group-acked", create: .keyed)!)
            }
            say("acked \(key)")
            count += 1
        }
    }
}

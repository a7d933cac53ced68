import Foundation
import StrataStorage
import Synchronization
import Testing

/// Several processes on one file: the writer lock and the shared reader table of the `.lock` file. Every test runs
/// on a plain and on an encrypted file: each process has its own decrypted copy of the pages, kept current by the
/// nonces of the pages other processes rewrite.
@Suite("Multiple processes", .serialized)
struct MultiProcessTests {
    /// Two child processes and this process increment one counter concurrently; no increment is lost.
    @Test(arguments: FileEncryption.allCases)
    func concurrentIncrementsFromThreeProcesses(_ encryption: FileEncryption) throws {
        let directory = TemporaryDirectory()
        let path = directory.file("counter.strata")
        let perProcess = soak ? 3000 : 400
        let store = try Store.open(path: path, options: encryption.options(StoreOptions(durability: .none)))
        let children = try (0..<2).map { _ in try Child(["increment", path, "\(perProcess)"], encryption: encryption) }
        for _ in 0..<perProcess { try incrementCounter(store) }
        for child in children {
            let line = child.readLine()
            let status = child.wait()
            #expect(line == "done" && status == 0, "child exited with \(status): \(child.errorOutput())")
        }
        #expect(try readCounter(store) == UInt64(3 * perProcess))
        #expect(try store.verify().isValid)
    }

    /// Opening a file while other processes commit as fast as it can: the opener's first look at the metas
    /// races with commits that extend the file and reuse the pages older metas named, so it must recognise a
    /// moving file (the lock file's change counter) and look again instead of calling the file damaged.
    @Test(arguments: FileEncryption.allCases)
    func openingWhileOtherProcessesCommit(_ encryption: FileEncryption) throws {
        let directory = TemporaryDirectory()
        let path = directory.file("reopen.strata")
        let store = try Store.open(path: path, options: encryption.options(StoreOptions(durability: .none)))
        try incrementCounter(store)
        // More runnable threads than cores, so that openers are preempted in the middle of their look.
        let openers = try (0..<3).map { _ in
            try Child(["reopen", path, soak ? "5000" : "400"], encryption: encryption)
        }
        let finished = Atomic<Bool>(false)
        let stopped = DispatchSemaphore(value: 0)
        Thread {
            while !finished.load(ordering: .acquiring) { try? incrementCounter(store) }
            stopped.signal()
        }.start()
        for opener in openers {
            let line = opener.readLine()
            let status = opener.wait()
            #expect(line == "done" && status == 0, "child exited with \(status): \(opener.errorOutput())")
        }
        finished.store(true, ordering: .releasing)
        stopped.wait()
        #expect(try store.verify().isValid)
    }

    /// Read-only opens (the `strata` tool) while another process commits small durable commits through the
    /// commit log: a commit appended to the log but not yet published is the writer's, not a crash's leftover,
    /// so the open reads the newest published version instead of refusing the file.
    @Test(arguments: FileEncryption.allCases)
    func readOnlyOpensWhileAWriterCommitsThroughTheLog(_ encryption: FileEncryption) throws {
        let directory = TemporaryDirectory()
        let path = directory.file("logged.strata")
        let writer = try Child(["commit-loop", path, "7"], encryption: encryption)
        defer { writer.kill() }
        let acknowledged = Atomic<Int>(-1)
        // Drain the writer's output on a thread of its own so that it never blocks on a full pipe. From here on
        // only that thread reads its output.
        nonisolated(unsafe) let output = writer
        Thread {
            while let line = output.readLine() {
                if let n = line.split(separator: " ").last.flatMap({ Int($0) }) {
                    acknowledged.store(n, ordering: .releasing)
                }
            }
        }.start()
        while acknowledged.load(ordering: .acquiring) < 0 {}
        // An encrypted open costs about ten times a plain one here (20 ms against 2, debug build, loaded machine):
        // fewer rounds keep the suite's time modest.
        let opens = encryption == .plain ? 1500 : 300
        for _ in 0..<(soak ? 20_000 : opens) {
            let before = acknowledged.load(ordering: .acquiring)
            let store = try Store.open(
                path: path, options: encryption.options(StoreOptions(pageSize: 1024, readOnly: true)))
            let count = try store.read().tree(named: "acked")?.count ?? 0
            #expect(count >= before + 1, "\(count) keys, \(before) acknowledged")
        }
    }

    private func writeRound(_ store: Store, _ round: Int) throws {
        try store.write { txn in
            let data = try txn.tree(named: "data", create: .keyed)!
            for k in 0..<200 {
                try txn.put(
                    bigEndian(UInt64(k)), [UInt8](repeating: UInt8(truncatingIfNeeded: round), count: 150), in: data)
            }
        }
    }

    /// A reader in another process pins a version: this process's writes must not reuse its pages (its snapshot
    /// stays byte-identical), and once it is gone, pages are recycled again.
    @Test(arguments: FileEncryption.allCases)
    func pinInAnotherProcessProtectsItsPages(_ encryption: FileEncryption) throws {
        let directory = TemporaryDirectory()
        let path = directory.file("pin.strata")
        let store = try Store.open(path: path, options: encryption.options(StoreOptions(durability: .none)))
        try writeRound(store, 0)
        let reader = try Child(["pin", path], encryption: encryption)
        let pinned = try #require(reader.readLine())
        #expect(pinned.hasPrefix("pinned 1 "))
        for round in 1...30 { try writeRound(store, round) }
        let grownWhilePinned = try store.read().pageCount
        reader.send("check")
        #expect(reader.readLine() == "same")
        #expect(reader.wait() == 0)
        let stats = try store.statistics()
        #expect(stats.otherProcesses.isEmpty)
        var counts: [Int] = []
        for round in 31...60 {
            try writeRound(store, round)
            counts.append(try store.read().pageCount)
        }
        #expect(counts.last! <= grownWhilePinned, "pinned: \(grownWhilePinned), after: \(counts)")
    }

    /// Compaction on launch replaces the file, so it must not happen while another process has it open; once the
    /// other process is gone it does, and the copy holds the same data.
    @Test(arguments: FileEncryption.allCases)
    func compactionOnLaunchWaitsForOtherProcessesToClose(_ encryption: FileEncryption) throws {
        let directory = TemporaryDirectory()
        let path = directory.file("compact.strata")
        do {
            let store = try Store.open(path: path, options: encryption.options(StoreOptions(durability: .none)))
            for round in 0..<20 { try writeRound(store, round) }
            try store.write { txn in
                let data = try txn.tree(named: "data")!
                for k in 0..<190 { _ = try txn.delete(bigEndian(UInt64(k)), in: data) }
            }
        }
        let reader = try Child(["pin", path], encryption: encryption)
        let pinned = try #require(reader.readLine())
        var asked = 0
        #expect(
            try !Store.compactOnLaunch(path: path, options: encryption.options()) { _, _ in
                asked += 1
                return true
            })
        #expect(asked == 0)
        reader.send("check")
        #expect(reader.readLine() == "same")
        #expect(reader.wait() == 0)
        var sizes: (total: Int, used: Int) = (0, 0)
        #expect(
            try Store.compactOnLaunch(path: path, options: encryption.options()) { total, used in
                sizes = (total, used)
                return used < total / 2
            })
        #expect(sizes.used < sizes.total / 2, "\(sizes)")
        let store = try Store.open(path: path, options: encryption.options())
        #expect(try store.read().pageCount * store.pageSize <= sizes.used)
        #expect(try store.read().tree(named: "data")?.count == 10)
        #expect(try store.verify().isValid)
        _ = pinned
    }

    /// A reader process killed while pinning an old version must not hold pages back forever: its slot's lock
    /// died with it.
    @Test(arguments: FileEncryption.allCases)
    func killedReaderDoesNotPinForever(_ encryption: FileEncryption) throws {
        let directory = TemporaryDirectory()
        let path = directory.file("dead-reader.strata")
        let store = try Store.open(path: path, options: encryption.options(StoreOptions(durability: .none)))
        try writeRound(store, 0)
        let reader = try Child(["pin", path], encryption: encryption)
        _ = reader.readLine()
        #expect(try store.statistics().otherProcesses.count == 1)
        reader.kill()
        #expect(try store.statistics().otherProcesses.isEmpty)
        for round in 1...5 { try writeRound(store, round) }
        let settled = try store.read().pageCount
        for round in 6...40 { try writeRound(store, round) }
        #expect(try store.read().pageCount <= settled)
    }
}

import Foundation
import StrataTestSupport
import Testing

@testable import StrataStorage

/// Power loss and I/O errors simulated under the pager with ``FaultInjectingFile``.
@Suite("Fault injection")
struct FaultInjectionTests {
    typealias Model = [[UInt8]: [UInt8]]

    static var trials: Int { ProcessInfo.processInfo.environment["STRATA_SOAK"] != nil ? 3000 : 250 }

    /// The power-loss trials of a file so encrypted: encrypted files run fewer (each seals and authenticates every
    /// page it writes and reads) but for a soak run.
    static func trials(_ encryption: FileEncryption) -> Int { encryption == .plain ? trials : min(trials, 100) }

    /// Applies a random batch of puts and deletes to `tree` and to `model`.
    private func randomBatch(
        _ txn: WriteTransaction, _ tree: TreeHandle, _ model: inout Model, _ generator: inout SeededGenerator
    ) throws {
        for _ in 0..<Int.random(in: 1...30, using: &generator) {
            let k = key(Int.random(in: 0..<400, using: &generator))
            if Int.random(in: 0..<4, using: &generator) == 0 {
                try txn.delete(k, in: tree)
                model[k] = nil
            } else {
                let length =
                    Int.random(in: 0..<100, using: &generator) == 0 ? 3000 : Int.random(in: 1...150, using: &generator)
                let value = [UInt8](repeating: UInt8.random(in: 0...255, using: &generator), count: length)
                try txn.put(k, value, in: tree)
                model[k] = value
            }
        }
    }

    private func commitRandom(_ store: Store, _ model: inout Model, _ generator: inout SeededGenerator) throws -> UInt64
    {
        let txn = try store.beginWrite()
        var working = model
        try randomBatch(txn, try #require(try txn.tree(named: "data", create: .keyed)), &working, &generator)
        let version = try txn.commit()
        model = working
        return version
    }

    /// Power is cut at a random write or sync of a commit (that write torn, unsynced writes dropped at random,
    /// another pending write torn). Recovery must open, verify clean, and hold either the last acknowledged
    /// commit or, if the interrupted one made it to disk whole, exactly that one.
    /// Encrypted files too: their pages and metas are sealed, so a torn write is also a page that fails its tag.
    @Test(arguments: FileEncryption.allCases)
    func powerLossAtRandomPoints(_ encryption: FileEncryption) throws {
        var generator = SeededGenerator(seed: 2024)
        var outcomes = (acknowledged: 0, interruptedCommitSurvived: 0)
        for trial in 0..<Self.trials(encryption) {
            let disk = FaultInjectingFile(name: "power-\(trial)")
            let store = try Store.open(
                file: disk, options: encryption.options(StoreOptions(pageSize: 1024, durability: .full)))
            var acknowledged: Model = [:]
            var ackedVersion: UInt64 = 0
            for _ in 0..<Int.random(in: 0...12, using: &generator) {
                ackedVersion = try commitRandom(store, &acknowledged, &generator)
            }
            // The interrupted commit: small (one sync) or too large to list its pages (two syncs).
            let txn = try store.beginWrite()
            var attempted = acknowledged
            _ = try txn.tree(named: "data", create: .keyed)
            _ = try prepareCommit(txn, large: Int.random(in: 0..<4, using: &generator) == 0, &attempted, &generator)
            let faults = randomPowerCut(maxWrite: 12, &generator)
            disk.schedule(faults)
            let outcome = commitThroughPowerCut(txn)
            if case .failure(let error) = outcome {
                #expect(
                    error
                        == .io(path: disk.path, operation: faults.failWrite != nil ? "pwrite" : "fdatasync", code: EIO))
            }
            let committed = (try? outcome.get()) != nil
            if case .success(let version) = outcome {
                acknowledged = attempted
                ackedVersion = version
            }
            disk.powerOff()

            let image = disk.crashImage(using: &generator)
            let recovered = try Store.open(
                file: FaultInjectingFile(name: "recovered-\(trial)", image: image),
                options: encryption.options(StoreOptions(pageSize: 1024)))
            if try expectRecovered(
                recovered, acknowledged: acknowledged, ackedVersion: ackedVersion, attempted: attempted,
                committed: committed,
                trial: trial)
            {
                outcomes.acknowledged += 1
            } else {
                outcomes.interruptedCommitSurvived += 1
            }
        }
        // Both outcomes should occur across trials (crash before and after the meta page reached the disk).
        #expect(outcomes.acknowledged > 0 && outcomes.interruptedCommitSurvived > 0, "\(outcomes)")
    }

    /// An I/O error (EIO or ENOSPC) at any write or sync of a commit fails that commit with a typed error; the
    /// store stays at the previous version, the next commit succeeds, and the file on disk stays consistent.
    @Test(arguments: [EIO, ENOSPC])
    func ioErrorAtEachStepOfACommit(code: Int32) throws {
        var generator = SeededGenerator(seed: UInt64(code))
        for point in 1...16 {
            for failSync in [false, true] where !(failSync && point > 2) {
                let disk = FaultInjectingFile(name: "io-\(point)-\(failSync)")
                let store = try Store.open(file: disk, options: StoreOptions(pageSize: 1024, durability: .full))
                var model: Model = [:]
                for _ in 0..<5 { _ = try commitRandom(store, &model, &generator) }
                let before = store.latestVersion

                let txn = try store.beginWrite()
                var attempted = model
                try randomBatch(txn, try #require(try txn.tree(named: "data")), &attempted, &generator)
                disk.schedule(failSync ? .init(failSync: point, code: code) : .init(failWrite: point, code: code))
                do {
                    try txn.commit()
                    // The commit had fewer steps than `point`: it must have succeeded completely.
                    model = attempted
                } catch {
                    let expected: StorageError =
                        code == ENOSPC
                        ? .diskFull(path: disk.path)
                        : .io(path: disk.path, operation: failSync ? "fdatasync" : "pwrite", code: code)
                    #expect(error == expected)
                    #expect(store.latestVersion == before)
                    #expect(try contents(of: try store.read().tree(named: "data")) == model)
                }
                #expect(!txn.isActive)
                disk.schedule(.init())
                _ = try commitRandom(store, &model, &generator)
                #expect(try contents(of: try store.read().tree(named: "data")) == model)
                #expect(try store.verify().isValid)
                // What is on disk after the last sync reopens to the same state.
                let reopened = try Store.open(file: FaultInjectingFile(name: "reopen", image: disk.durableImage))
                #expect(try contents(of: try reopened.read().tree(named: "data")) == model)
                #expect(try reopened.verify().isValid)
            }
        }
    }

    /// Fills a transaction with either a few changes (a single-sync commit: its pages fit in the meta's list)
    /// or many (too many to list: the two-sync protocol). Returns the number of the sync that follows the meta
    /// write in that protocol.
    private func prepareCommit(
        _ txn: WriteTransaction, large: Bool, _ model: inout Model, _ generator: inout SeededGenerator
    ) throws -> Int {
        let tree = try #require(try txn.tree(named: "data"))
        if large {
            for k in 0..<300 {
                let value = [UInt8](repeating: UInt8.random(in: 0...255, using: &generator), count: 400)
                try txn.put(key(10_000 + k), value, in: tree)
                model[key(10_000 + k)] = value
            }
            return 2
        }
        try randomBatch(txn, tree, &model, &generator)
        return 1
    }

    /// One committed version, then a commit whose sync after the meta write fails with `faults`. Returns the
    /// disk, the store and the contents of the committed version.
    private func failMetaSync(
        seed: UInt64, large: Bool, _ faults: FaultInjectingFile.Faults
    ) throws -> (FaultInjectingFile, Store, Model, SeededGenerator) {
        var generator = SeededGenerator(seed: seed)
        let disk = FaultInjectingFile(name: "meta-\(seed)")
        let store = try Store.open(file: disk, options: StoreOptions(pageSize: 1024, durability: .full))
        var model: Model = [:]
        _ = try commitRandom(store, &model, &generator)
        let txn = try store.beginWrite()
        var attempted = model
        var faults = faults
        faults.failSync = try prepareCommit(txn, large: large, &attempted, &generator)
        disk.schedule(faults)
        #expect(throws: StorageError.self) { try txn.commit() }
        disk.schedule(.init())
        return (disk, store, model, generator)
    }

    /// A failed meta write must never let recovery pick the failed commit later: the slot is put back to the
    /// previous version at once, under the write lock, before anyone can build on the failed version.
    @Test(arguments: [false, true])
    func failedMetaSyncIsRepairedImmediately(large: Bool) throws {
        // The meta page reached the file but its sync failed: without the repair the file would open at version 2.
        var (disk, store, model, generator) = try failMetaSync(seed: 5, large: large, .init())
        #expect(store.latestVersion == 1)
        for image in [disk.durableImage, disk.snapshot()] {
            let recovered = try Store.open(file: FaultInjectingFile(name: "check", image: image))
            #expect(recovered.latestVersion == 1)
            #expect(try contents(of: try recovered.read().tree(named: "data")) == model)
        }
        // Writing goes on normally.
        _ = try commitRandom(store, &model, &generator)
        #expect(try contents(of: try store.read().tree(named: "data")) == model)
    }

    /// When even the repair fails, the process stops writing rather than build on an ambiguous file.
    @Test(arguments: [false, true])
    func failedRepairStopsWrites(large: Bool) throws {
        let (disk, store, model, _) = try failMetaSync(seed: 6, large: large, .init(powerLoss: true))
        #expect(throws: StorageError.io(path: disk.path, operation: "pwrite", code: EIO)) { try store.beginWrite() }
        // Readers keep working on the last good version.
        #expect(try contents(of: try store.read().tree(named: "data")) == model)
    }
}

/// The redo log of small durable commits, under simulated power loss: the main file's writes are never synced
/// between checkpoints, so after a cut it may miss any of them, and recovery must replay the log.
@Suite("Commit log")
struct CommitLogTests {
    typealias Model = [[UInt8]: [UInt8]]

    static var trials: Int { ProcessInfo.processInfo.environment["STRATA_SOAK"] != nil ? 3000 : 250 }

    /// The power-loss trials of a file so encrypted: encrypted files run fewer (each seals and authenticates every
    /// page it writes and reads) but for a soak run.
    static func trials(_ encryption: FileEncryption) -> Int { encryption == .plain ? trials : min(trials, 100) }

    fileprivate func batch(
        _ txn: WriteTransaction, _ model: inout Model, _ generator: inout SeededGenerator, large: Bool
    )
        throws
    {
        let tree = try #require(try txn.tree(named: "data", create: .keyed))
        for _ in 0..<(large ? 400 : Int.random(in: 1...12, using: &generator)) {
            let k = key(Int.random(in: 0..<(large ? 5000 : 400), using: &generator))
            if !large && Int.random(in: 0..<4, using: &generator) == 0 {
                try txn.delete(k, in: tree)
                model[k] = nil
            } else {
                let value = [UInt8](
                    repeating: UInt8.random(in: 0...255, using: &generator),
                    count: Int.random(in: 1...300, using: &generator))
                try txn.put(k, value, in: tree)
                model[k] = value
            }
        }
    }

    /// The log also grows in small steps here (a write and a sync of zeros each), so that cuts hit its growth
    /// too and recovery reads records written across several steps.
    /// Encrypted files too: their log records carry sealed pages and are signed with the key.
    @Test(arguments: FileEncryption.allCases)
    func powerLossWithTheCommitLog(_ encryption: FileEncryption) throws {
        var generator = SeededGenerator(seed: 77)
        var outcomes = (acknowledged: 0, interrupted: 0, replayed: 0, grown: 0)
        let trials = Self.trials(encryption)
        for trial in 0..<trials {
            let main = FaultInjectingFile(name: "main-\(trial)")
            let logFile = FaultInjectingFile(name: "log-\(trial)")
            let store = try Store.open(
                file: main, log: logFile, options: encryption.options(StoreOptions(pageSize: 1024, durability: .full)))
            let log = try #require(store.shared.commitLog)
            log.checkpointThreshold = Int.random(in: 4...40, using: &generator) * 1024
            log.growthStep = Int.random(in: 1...4, using: &generator) * 1024
            var acknowledged: Model = [:]
            var ackedVersion: UInt64 = 0
            for _ in 0..<Int.random(in: 0...25, using: &generator) {
                let txn = try store.beginWrite()
                var working = acknowledged
                try batch(txn, &working, &generator, large: Int.random(in: 0..<15, using: &generator) == 0)
                ackedVersion = try txn.commit()
                acknowledged = working
            }
            // The interrupted commit: the power goes at a write or sync of the main file or of the log.
            let txn = try store.beginWrite()
            var attempted = acknowledged
            try batch(txn, &attempted, &generator, large: Int.random(in: 0..<6, using: &generator) == 0)
            let target = Bool.random(using: &generator) ? main : logFile
            target.schedule(randomPowerCut(maxWrite: 8, &generator))
            let outcome = commitThroughPowerCut(txn)
            let committed = (try? outcome.get()) != nil
            if case .success(let version) = outcome {
                acknowledged = attempted
                ackedVersion = version
            }
            main.powerOff()
            logFile.powerOff()
            if log.capacity > 3 * log.growthStep { outcomes.grown += 1 }

            let mainImage = main.crashImage(using: &generator)
            let logImage = logFile.crashImage(using: &generator)
            if (try? Store.open(
                file: FaultInjectingFile(name: "main-only", image: mainImage), options: encryption.options()
            ).latestVersion) != ackedVersion {
                outcomes.replayed += 1
            }
            let recovered = try Store.open(
                file: FaultInjectingFile(name: "recovered-main-\(trial)", image: mainImage),
                log: FaultInjectingFile(name: "recovered-log-\(trial)", image: logImage),
                options: encryption.options(StoreOptions(pageSize: 1024)))
            if try expectRecovered(
                recovered, acknowledged: acknowledged, ackedVersion: ackedVersion, attempted: attempted,
                committed: committed,
                trial: trial)
            {
                outcomes.acknowledged += 1
            } else {
                outcomes.interrupted += 1
            }
        }
        // Recovery must have needed the log (the main file alone was behind) in a good share of the trials.
        #expect(outcomes.replayed > trials / 10 && outcomes.acknowledged > 0, "\(outcomes)")
        #expect(outcomes.grown > trials / 4, "\(outcomes)")
    }

    /// A transient I/O error anywhere in a commit (log or main file, write or sync), then more commits, then a
    /// power cut: recovery must hold exactly the last acknowledged commit.
    @Test func transientErrorsThenPowerLoss() throws {
        var generator = SeededGenerator(seed: 31)
        for point in 1...10 {
            for (onLog, onSync) in [(true, false), (true, true), (false, false), (false, true)]
            where !(onSync && point > 3) {
                let main = FaultInjectingFile(name: "main")
                let logFile = FaultInjectingFile(name: "log")
                let store = try Store.open(
                    file: main, log: logFile, options: StoreOptions(pageSize: 1024, durability: .full))
                try #require(store.shared.commitLog).checkpointThreshold = 8 * 1024
                var model: Model = [:]
                var version: UInt64 = 0
                for round in 0..<12 {
                    let txn = try store.beginWrite()
                    var working = model
                    try batch(txn, &working, &generator, large: round % 5 == 4)
                    if round == 6 {
                        let faults: FaultInjectingFile.Faults =
                            onSync ? .init(failSync: point) : .init(failWrite: point)
                        (onLog ? logFile : main).schedule(faults)
                    }
                    do {
                        version = try txn.commit()
                        model = working
                    } catch {
                        #expect(store.latestVersion == version)
                    }
                    (onLog ? logFile : main).schedule(.init())
                }
                let recovered = try Store.open(
                    file: FaultInjectingFile(name: "m", image: main.durableImage),
                    log: FaultInjectingFile(name: "l", image: logFile.durableImage))
                #expect(recovered.latestVersion == version, "point \(point) log \(onLog) sync \(onSync)")
                #expect(try contents(of: try recovered.read().tree(named: "data")) == model)
                #expect(try recovered.verify().isValid)
            }
        }
    }

    /// A store on simulated disks with a commit log and three small (logged) commits, and what they hold.
    fileprivate func loggedStore(_ generator: inout SeededGenerator) throws -> (
        main: FaultInjectingFile, log: FaultInjectingFile, store: Store, model: Model
    ) {
        let main = FaultInjectingFile(name: "main")
        let logFile = FaultInjectingFile(name: "log")
        let store = try Store.open(file: main, log: logFile, options: StoreOptions(pageSize: 1024, durability: .full))
        var model: Model = [:]
        for _ in 0..<3 {
            let txn = try store.beginWrite()
            try batch(txn, &model, &generator, large: false)
            try txn.commit()
        }
        return (main, logFile, store, model)
    }

    /// An append that fails (its sync reports an error) must never come back at the next open.
    @Test func failedAppendIsNeverReplayed() throws {
        var generator = SeededGenerator(seed: 8)
        let (main, logFile, store, model) = try loggedStore(&generator)
        let txn = try store.beginWrite()
        var attempted = model
        try batch(txn, &attempted, &generator, large: false)
        logFile.schedule(.init(failSync: 1))  // the record's bytes reach the log, its sync fails
        #expect(throws: StorageError.self) { try txn.commit() }
        logFile.schedule(.init())
        #expect(store.latestVersion == 3)
        let recovered = try Store.open(
            file: FaultInjectingFile(name: "m", image: main.snapshot()),
            log: FaultInjectingFile(name: "l", image: logFile.snapshot()))
        #expect(recovered.latestVersion == 3)
        #expect(try contents(of: try recovered.read().tree(named: "data")) == model)
    }
}

extension CommitLogTests {
    /// A logged commit writes its pages into the main file on the write-behind thread while the log syncs. If one
    /// of those writes fails after the record is durable, the commit must still fail whole: the record is
    /// invalidated, the store stays at its base, and the next commit and a reopen both see exactly the base.
    @Test func failedPageWriteBehindTheLogRollsTheCommitBack() throws {
        var generator = SeededGenerator(seed: 19)
        let (main, logFile, store, committed) = try loggedStore(&generator)
        var model = committed
        let logged = try #require(store.shared.commitLog).recordCount
        #expect(logged > 0, "the small commits above went through the log")
        let txn = try store.beginWrite()
        var attempted = model
        try batch(txn, &attempted, &generator, large: false)
        main.schedule(.init(failWrite: 1, code: ENOSPC))
        #expect(throws: StorageError.self) { try txn.commit() }
        main.schedule(.init())
        #expect(store.latestVersion == 3)
        #expect(try #require(store.shared.commitLog).recordCount == logged)
        let recovered = try Store.open(
            file: FaultInjectingFile(name: "m", image: main.durableImage),
            log: FaultInjectingFile(name: "l", image: logFile.durableImage))
        #expect(recovered.latestVersion == 3)
        #expect(try contents(of: try recovered.read().tree(named: "data")) == model)
        // The store goes on: the next commit takes the failed one's place in the log.
        let next = try store.beginWrite()
        try batch(next, &model, &generator, large: false)
        #expect(try next.commit() == 4)
        let again = try Store.open(
            file: FaultInjectingFile(name: "m2", image: main.durableImage),
            log: FaultInjectingFile(name: "l2", image: logFile.durableImage))
        #expect(again.latestVersion == 4)
        #expect(try contents(of: try again.read().tree(named: "data")) == model)
        #expect(try again.verify().isValid)
    }
}

/// Checks a store recovered after a power cut: it verifies clean and holds either the last acknowledged commit
/// or, whole, the commit that was interrupted (never acknowledged). Returns true for the first case.
func expectRecovered(
    _ recovered: Store, acknowledged: [[UInt8]: [UInt8]], ackedVersion: UInt64, attempted: [[UInt8]: [UInt8]],
    committed: Bool, trial: Int
) throws -> Bool {
    let report = try recovered.verify()
    #expect(report.isValid, "trial \(trial): \(report)")
    let contents = try contents(of: try recovered.read().tree(named: "data"))
    if recovered.latestVersion == ackedVersion {
        #expect(contents == acknowledged, "trial \(trial): acknowledged commit \(ackedVersion) damaged")
        return true
    }
    #expect(
        !committed && recovered.latestVersion == ackedVersion + 1,
        "trial \(trial): recovered version \(recovered.latestVersion), acknowledged \(ackedVersion)")
    #expect(contents == attempted, "trial \(trial): the interrupted commit survived only in part")
    return false
}

/// A power cut at a random write (1...maxWrite) or at one of the first two syncs.
func randomPowerCut(maxWrite: Int, _ generator: inout SeededGenerator) -> FaultInjectingFile.Faults {
    var faults = FaultInjectingFile.Faults(powerLoss: true)
    if Bool.random(using: &generator) {
        faults.failWrite = Int.random(in: 1...maxWrite, using: &generator)
    } else {
        faults.failSync = Int.random(in: 1...2, using: &generator)
    }
    return faults
}

/// Commits `transaction`, returning the version it acknowledged or the error it reported.
func commitThroughPowerCut(_ transaction: WriteTransaction) -> Result<UInt64, StorageError> {
    do throws(StorageError) { return .success(try transaction.commit()) } catch { return .failure(error) }
}

import Foundation
@_spi(StrataSync) import Strata
import SyncConvergence
import Testing

@testable import StrataSync

/// One replica of the convergence suite, in this process or in a child process: the suite writes, syncs and
/// reads it the same way.
protocol ConvergenceReplica: AnyObject {
    var name: String { get }
    /// Runs `count` random transactions of its workload; returns their records.
    func write(_ count: Int) async throws -> [TransactionRecord]
    /// Creates item `key` (fresh, or deleted everywhere) in a transaction of its own.
    func create(_ key: Int) async throws -> TransactionRecord
    /// One sync round (upload, then download), run again while the server is away (a restart).
    func sync() async throws
    /// The canonical lines of its objects (``canonicalDump(_:)``).
    func dump() async throws -> [String]
}

/// How many times a sync round is tried before the run fails: a round fails while PostgreSQL restarts.
let syncAttempts = 30

/// A replica in this process: a ``ClientReplica`` (its file, its client, a wall clock the suite moves) and its
/// workload.
final class InProcessReplica: ConvergenceReplica {
    let replica: ClientReplica
    var workload: ConvergenceWorkload
    private var number = 0
    var name: String { replica.id }

    init(_ replica: ClientReplica, index: Int, seed: UInt64) {
        self.replica = replica
        workload = ConvergenceWorkload(
            replica: replica.id, index: index, seed: seed, keys: (index * 1000)..<(index * 1000 + 1000))
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        replica.wall.withLock { $0 = now }
    }

    func write(_ count: Int) async throws -> [TransactionRecord] {
        var records: [TransactionRecord] = []
        for _ in 0..<count {
            number += 1
            records.append(
                try workload.transaction(in: try Realm(configuration: replica.configuration), number: number))
        }
        return records
    }

    func create(_ key: Int) async throws -> TransactionRecord {
        number += 1
        return try workload.recreate(key, in: try Realm(configuration: replica.configuration), number: number)
    }

    func sync() async throws {
        try await retrying { try await replica.sync.syncOnce() }
    }

    func upload() async throws { try await retrying { try await replica.sync.uploadPending() } }

    /// Downloads (bootstrapping from a snapshot when the log was trimmed past the checkpoint).
    func download() async throws { try await retrying { try await replica.sync.downloadOrBootstrap() } }

    func dump() async throws -> [String] { canonicalDump(try Realm(configuration: replica.configuration)) }

    /// Moves the replica's wall clock by `milliseconds`.
    func tick(_ milliseconds: Int64) { replica.wall.withLock { $0 += milliseconds } }

    /// Whether the replica's file shows half of a pair (half of a server transaction).
    func halfPairs() throws -> [String] {
        let realm = try Realm(configuration: replica.configuration)
        realm.refresh()
        return SyncConvergence.halfPairs(realm)
    }

    private func retrying(_ body: () async throws -> Void) async throws {
        for attempt in 1...syncAttempts {
            do {
                return try await body()
            } catch  where attempt < syncAttempts {
                // The server is away (a restart): the round runs again, as `run()` would; a short pause between
                // attempts only spares the CPU while PostgreSQL comes back.
                try await Task.sleep(for: .milliseconds(50))
            }
        }
    }
}

/// A replica in a child process (`strata-sync-replica`), which the suite kills with SIGKILL mid-upload and
/// mid-apply and starts again on the same file.
final class ChildReplica: ConvergenceReplica {
    let name: String
    let index: Int
    let seed: UInt64
    let path: String
    let namespace: String
    let directory: URL
    private var process: ReplicaProcess?
    private(set) var generation = 0
    /// What the child printed last before it was killed (for the failure messages).
    private(set) var events: [String] = []

    init(_ name: String, index: Int, seed: UInt64, directory: URL, namespace: String) throws {
        self.name = name
        self.index = index
        self.seed = seed
        self.directory = directory
        self.namespace = namespace
        path = directory.appendingPathComponent("\(name).strata").path
        try start()
    }

    /// Starts the child on its file (again, after a kill: the next generation).
    private func start() throws {
        let process = try ReplicaProcess(
            [path, name, "\(index)", "\(seed)", "\(generation)", namespace],
            errorPath: directory.appendingPathComponent("\(name)-\(generation).stderr").path)
        self.process = process
        _ = try process.waitFor("ready")
    }

    private var running: ReplicaProcess {
        get throws {
            guard let process else { throw ReplicaProcess.Failure(description: "replica \(name) is not running") }
            return process
        }
    }

    func write(_ count: Int) async throws -> [TransactionRecord] {
        let process = try running
        process.send("write \(count)")
        var records: [TransactionRecord] = []
        _ = try process.waitFor("written") { line in
            guard line.hasPrefix("record "), let record = TransactionRecord(json: line.dropFirst("record ".count))
            else {
                throw ReplicaProcess.Failure(description: "replica \(name) said \(line)")
            }
            records.append(record)
        }
        return records
    }

    func create(_ key: Int) async throws -> TransactionRecord {
        throw ReplicaProcess.Failure(description: "child replicas create only their own keys")
    }

    func sync() async throws {
        let process = try running
        for attempt in 1...syncAttempts {
            process.send("sync")
            let line = try process.waitFor("sync")
            if line == "synced" { return }
            if attempt == syncAttempts { throw ReplicaProcess.Failure(description: "replica \(name): \(line)") }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    /// Arms the hook `point` ("upload" or "apply"), starts a sync round, waits until the child stops there,
    /// kills it with SIGKILL and starts it again on the same file. Returns what the child said where it stopped.
    func kill(at point: String) throws -> String {
        let process = try running
        process.send("pause \(point)")
        _ = try process.waitFor("armed")
        process.send("sync")
        let line = try process.waitFor("paused \(point)") { line in
            if line.hasPrefix("sync") {
                throw ReplicaProcess.Failure(description: "replica \(name) finished a round without reaching \(point)")
            }
        }
        process.kill()
        self.process = nil
        events.append("killed at \(line)")
        generation += 1
        try start()
        return line
    }

    /// Stops the child (it exits) and reads its file here.
    func dump() async throws -> [String] {
        process?.finish()
        process = nil
        let realm = try Realm(
            configuration: Realm.Configuration(fileURL: URL(fileURLWithPath: path), objectTypes: convergenceClasses))
        return canonicalDump(realm)
    }

    /// Kills the child if it still runs (a failed test).
    func stop() {
        process?.kill()
        process = nil
    }
}

import Foundation
@_spi(StrataSync) import Strata
import SyncConvergence
import Synchronization
import Testing

@testable import StrataSync

/// Convergence, property-based, against a real PostgreSQL: 3–5 replicas in this process and 1–2 in child
/// processes (separate Strata files) run seeded random transactions over every property kind the client syncs
/// (scalars of every type, optionals, links, lists, maps and sets of values and links), creates, deletes and
/// re-creates, while replicas go offline for a few rounds (writing all the while), a child replica is killed
/// with SIGKILL mid-upload (after PostgreSQL's commit, before its queue is emptied), mid-apply (inside the
/// local write that applies downloaded entries) and mid-bootstrap (between two writes of a snapshot, after the log
/// was trimmed past every checkpoint) and started again on its file, and PostgreSQL is restarted mid-run. After
/// healing, every replica must hold the same objects as every other and as PostgreSQL's tables; every
/// acknowledged transaction must be in the log, and each item live or deleted, and each of its properties
/// valued, as the rules say (delete wins, last writer wins per property); an observer of one replica must never
/// see half of a server transaction (every write of a pair sets both of its objects).
///
/// Each run prints its seed and what happened on failure. `STRATA_SOAK=1` runs many more seeds.
@Suite("Convergence (property-based)", .serialized)
struct ConvergenceTests {
    /// Seeds 1–3, 1–40 under STRATA_SOAK, or those STRATA_CONVERGENCE_SEEDS lists (comma-separated: to replay a
    /// failure).
    static let seeds: [UInt64] = {
        let environment = ProcessInfo.processInfo.environment
        if let list = environment["STRATA_CONVERGENCE_SEEDS"] {
            return list.split(separator: ",").compactMap { UInt64($0.trimmingCharacters(in: .whitespaces)) }
        }
        return environment["STRATA_SOAK"] == nil ? [1, 2, 3] : Array(1...40)
    }()

    @Test(arguments: seeds)
    func randomHistoriesConvergeEverywhere(seed: UInt64) async throws {
        try await ConvergenceRun(seed: seed).run()
    }
}

/// One seeded run of the convergence suite (see ``ConvergenceTests``).
final class ConvergenceRun {
    let seed: UInt64
    private var generator: SeededGenerator
    private var oracle = ConvergenceOracle()
    /// What happened, for the failure messages: partitions, kills, the restart.
    private var events: [String] = []
    private var offlineUntil: [String: Int] = [:]
    /// The transaction times of the log entries trimmed away (the oracle reads the times from the log).
    private var trimmedTimes: [String: [Int: String]] = [:]
    private let verbose = ProcessInfo.processInfo.environment["STRATA_CONVERGENCE_VERBOSE"] != nil

    /// Keeps `event` for the failure message (and prints it at once under STRATA_CONVERGENCE_VERBOSE).
    private func note(_ event: String) {
        events.append(event)
        if verbose { print("seed \(seed): \(event)") }
    }

    init(seed: UInt64) {
        self.seed = seed
        generator = SeededGenerator(seed: seed)
    }

    /// The rounds of random writes and syncs.
    static let rounds = 15

    func run() async throws {
        try await TestDatabase.with(applicationName: convergenceApplicationName) { database in
            let schema = try await database.migratedSchema(convergenceClasses)
            let directory = try ReplicaDirectory()
            let inProcess = try ["a", "b", "c", "d", "e"].prefix(3 + Int(seed % 3)).enumerated().map { index, name in
                InProcessReplica(
                    try ClientReplica(
                        name, in: directory.url, database: database, schema: schema, batchSize: 50,
                        objectTypes: convergenceClasses),
                    index: index, seed: seed)
            }
            defer { for replica in inProcess { replica.replica.configuration.stopSyncCapture() } }
            let children = try ["x", "y"].prefix(1 + Int(seed % 2)).enumerated().map { index, name in
                try ChildReplica(
                    name, index: 10 + index, seed: seed, directory: directory.url, namespace: database.namespace)
            }
            defer { for child in children { child.stop() } }
            let replicas: [any ConvergenceReplica] = inProcess + children
            do {
                try await exercise(inProcess: inProcess, children: children, replicas: replicas, database: database)
                try await check(replicas, database: database)
            } catch {
                Issue.record("seed \(seed): \(error)\nevents: \(events.joined(separator: "; "))")
            }
            withExtendedLifetime(directory) {}
        }
    }

    /// The random history: people first, then rounds of writes, re-creates of deleted items, syncs, partitions,
    /// kills, a PostgreSQL restart, and every few rounds a barrier (everyone synced) after which two replicas
    /// create one fresh item concurrently.
    private func exercise(
        inProcess: [InProcessReplica], children: [ChildReplica], replicas: [any ConvergenceReplica],
        database: TestDatabase
    ) async throws {
        let first = inProcess[0]
        try first.replica.write { realm in
            for name in convergencePeople { realm.create(ConvergencePerson.self, value: ["name": name, "city": "-"]) }
        }
        try await heal(replicas)

        let observer = PairObserver(configuration: inProcess[1].replica.configuration)
        let killUploadRound = Int.random(in: 2..<6, using: &generator)
        let killApplyRound = Int.random(in: 6..<10, using: &generator)
        let restartRound = Int.random(in: 3..<12, using: &generator)
        let killBootstrapRound = Int.random(in: 10..<14, using: &generator)
        for round in 0..<Self.rounds {
            if verbose { print("seed \(seed): round \(round)") }
            for replica in replicas where (offlineUntil[replica.name] ?? 0) <= round {
                if Int.random(in: 0..<100, using: &generator) < 12 {
                    let until = round + Int.random(in: 2...4, using: &generator)
                    offlineUntil[replica.name] = until
                    note("round \(round): \(replica.name) offline until \(until)")
                }
            }
            for replica in replicas.shuffled(using: &generator) {
                (replica as? InProcessReplica)?.tick(Int64.random(in: 1...300, using: &generator))
                for record in try await replica.write(Int.random(in: 1...3, using: &generator)) { oracle.add(record) }
            }
            // A re-create at any time, whatever the others know: concurrent with deletes and with updates of
            // replicas that have not seen the delete (stamped before or after the create).
            let recreator = inProcess[Int.random(in: 0..<inProcess.count, using: &generator)]
            let live = Set(
                try await recreator.dump().filter { $0.hasPrefix("Item ") }.map { $0.split(separator: " ")[1] })
            let deleted = Set(oracle.records.flatMap(\.creates.keys)).filter { !live.contains("\($0)") }
            if let key = deleted.sorted().randomElement(using: &generator) {
                oracle.add(try await recreator.create(key))
                note("round \(round): \(recreator.name) re-creates \(key)")
            }
            for replica in replicas.shuffled(using: &generator) where (offlineUntil[replica.name] ?? 0) <= round {
                let choice = Int.random(in: 0..<10, using: &generator)
                if let local = replica as? InProcessReplica {
                    switch choice {
                    case 0..<2: continue
                    case 2..<4: try await local.upload()
                    case 4..<6: try await local.download()
                    default: try await local.sync()
                    }
                    let halves = try local.halfPairs()
                    if !halves.isEmpty { throw RunFailure("round \(round): \(local.name) shows half pairs \(halves)") }
                } else if choice >= 3 {
                    try await replica.sync()
                }
            }
            if round == killUploadRound, let child = children.first {
                for record in try await child.write(2) { oracle.add(record) }
                note("round \(round): \(child.name) \(try child.kill(at: "upload"))")
            }
            if round == killApplyRound, let child = children.last {
                // Something for the child to download: a write of an in-process replica, uploaded.
                let writer = inProcess[Int.random(in: 0..<inProcess.count, using: &generator)]
                for record in try await writer.write(1) { oracle.add(record) }
                try await writer.upload()
                note("round \(round): \(child.name) \(try child.kill(at: "apply"))")
            }
            if round == killBootstrapRound, let child = children.first {
                // Something for the child to miss, then the log trimmed past every checkpoint: the child's next round
                // bootstraps from a snapshot, and is killed between two of its writes (other replicas behind the
                // trim bootstrap at their next round too).
                let writer = inProcess[Int.random(in: 0..<inProcess.count, using: &generator)]
                for record in try await writer.write(1) { oracle.add(record) }
                try await writer.upload()
                note("round \(round): \(try await trimLog(database))")
                note("round \(round): \(child.name) \(try child.kill(at: "bootstrap"))")
            }
            if round == restartRound {
                note("round \(round): PostgreSQL \(try await restartPostgres(database))")
            }
            if round % 5 == 4 {
                note("round \(round): barrier")
                offlineUntil = [:]
                try await heal(replicas)
                try await createConcurrently(inProcess, round: round)
            }
        }
        offlineUntil = [:]
        let observed = try await observer.stop()
        try await heal(replicas)
        if !observed.halves.isEmpty {
            throw RunFailure("the observer of \(inProcess[1].name) saw half pairs: \(observed.halves)")
        }
        // An observer that saw nothing would check nothing: it must have seen the pairs change.
        if observed.updates < 2 { throw RunFailure("the observer saw \(observed.updates) updates") }
        note("observer saw \(observed.updates) updates")
    }

    /// After a barrier: two replicas create one fresh key concurrently.
    private func createConcurrently(_ replicas: [InProcessReplica], round: Int) async throws {
        let key = 900 + round
        for replica in replicas.shuffled(using: &generator).prefix(2) {
            replica.tick(Int64.random(in: 1...50, using: &generator))
            oracle.add(try await replica.create(key))
            note("round \(round): \(replica.name) creates \(key) concurrently")
        }
    }

    /// Every replica syncs twice in turn: the first pass uploads everything, the second downloads it all.
    private func heal(_ replicas: [any ConvergenceReplica]) async throws {
        for _ in 0..<2 {
            for replica in replicas { try await replica.sync() }
        }
    }

    /// Trims the whole change log (keeping the times of its transactions for the oracle); returns what it did.
    private func trimLog(_ database: TestDatabase) async throws -> String {
        for (replica, times) in try await PostgresDump(database: database).transactionTimes() {
            trimmedTimes[replica, default: [:]].merge(times) { _, logged in logged }
        }
        let rows = try await database.rows("SELECT last_seq::text FROM strata_scope WHERE scope = 'main'")
        guard let last = rows.first?.first.flatMap({ $0 }).flatMap({ Int64($0) }) else {
            throw RunFailure("no sequence to trim through")
        }
        let trimmed = try await database.merge(convergenceClasses).trimLog(scope: "main", through: last)
        return "log trimmed through \(last) (\(trimmed) entries)"
    }

    /// Restarts the test's PostgreSQL with `pg_ctl` when asked to (`STRATA_PG_RESTART=1`) and the cluster is the
    /// test's own (`.ci/postgres.sh` exports STRATA_PG_DIR and STRATA_PG_BIN), or else ends every connection of
    /// this suite (its in-process replicas' and its children's, known by ``convergenceApplicationName``) with
    /// `pg_terminate_backend`; returns which ran.
    ///
    /// A real restart ends every other suite's connections too, and suites that do not expect it can wait
    /// forever on a pooled connection; `.ci/run` therefore restarts the server only in a run of this suite alone.
    private func restartPostgres(_ database: TestDatabase) async throws -> String {
        let environment = ProcessInfo.processInfo.environment
        if environment["STRATA_PG_RESTART"] == "1", let directory = environment["STRATA_PG_DIR"],
            let bin = environment["STRATA_PG_BIN"], !directory.isEmpty
        {
            // The server runs as `postgres` when the tests run as root (see .ci/postgres.sh).
            let runAs = getuid() == 0 ? "runuser -u postgres -- " : ""
            let command =
                "\(runAs)'\(bin)/pg_ctl' --pgdata='\(directory)/data' --log='\(directory)/server.log' --mode=fast "
                + "--wait restart >/dev/null 2>&1"
            guard try runShell(command) == 0 else { throw RunFailure("pg_ctl restart failed: \(command)") }
            return "restarted (pg_ctl restart)"
        }
        let ended = try await database.rows(
            """
            SELECT count(pg_terminate_backend(pid))::text FROM pg_stat_activity
            WHERE datname = current_database() AND pid <> pg_backend_pid()
              AND application_name = '\(convergenceApplicationName)'
            """)
        return "this suite's connections ended (pg_terminate_backend: \(ended.first?.first.flatMap { $0 } ?? "?"))"
    }

    /// The checks after healing (see ``ConvergenceTests``).
    private func check(_ replicas: [any ConvergenceReplica], database: TestDatabase) async throws {
        let dumps = try await replicas.asyncMap { try await $0.dump() }
        let reference = dumps[0]
        for (replica, dump) in zip(replicas, dumps).dropFirst() where dump != reference {
            throw RunFailure(
                "\(replica.name) differs from \(replicas[0].name):\n\(difference(reference, dump, replicas[0].name, replica.name))"
            )
        }
        let server = try await retryingQuery { try await PostgresDump(database: database).lines() }
        if server != reference {
            throw RunFailure(
                "PostgreSQL differs from the replicas:\n\(difference(reference, server, "replicas", "postgres"))")
        }
        // Every acknowledged transaction's number is in its replica's ledger, and no other.
        for (replica, last) in oracle.acknowledged {
            let line = reference.first { $0.hasPrefix("Ledger \(replica) ") } ?? "none"
            let expected = canonicalLine(
                "Ledger", replica, ["last": "\(last)", "acked": Canonical.set((1...last).map { "\($0)" })])
            if line != expected { throw RunFailure("ledger of \(replica): \(line), expected \(expected)") }
        }
        var times = try await retryingQuery { try await PostgresDump(database: database).transactionTimes() }
        for (replica, trimmed) in trimmedTimes { times[replica, default: [:]].merge(trimmed) { logged, _ in logged } }
        var items: [Int: [String: String]] = [:]
        let realm = try Realm(configuration: (replicas[0] as! InProcessReplica).replica.configuration)
        realm.refresh()
        for item in realm.objects(ConvergenceItem.self) { items[item.id] = item.scalarFields }
        let problems = oracle.problems(items: items, times: times)
        if !problems.isEmpty {
            throw RunFailure("the rules give other items:\n" + problems.prefix(20).joined(separator: "\n"))
        }
    }

    private func retryingQuery<T>(_ body: () async throws -> T) async throws -> T {
        for attempt in 1... {
            do {
                return try await body()
            } catch  where attempt < syncAttempts {
                try await Task.sleep(for: .milliseconds(50))
            }
        }
        fatalError("unreachable")
    }

    /// The lines only one side has (at most 20 of each).
    private func difference(_ left: [String], _ right: [String], _ leftName: String, _ rightName: String) -> String {
        let onlyLeft = left.filter { !right.contains($0) }.prefix(20).map { "  \(leftName): \($0)" }
        let onlyRight = right.filter { !left.contains($0) }.prefix(20).map { "  \(rightName): \($0)" }
        return (onlyLeft + onlyRight).joined(separator: "\n")
    }
}

/// Runs `command` with /bin/sh and waits for it; returns its exit status. (posix_spawn and waitpid: Foundation's
/// `Process.waitUntilExit` did not return for `pg_ctl restart`, whose server outlives it.)
func runShell(_ command: String) throws -> Int32 {
    var pid: pid_t = 0
    let arguments = ["/bin/sh", "-c", command]
    var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
    defer { for argument in argv { free(argument) } }
    // The server started by the command must not inherit this process's descriptors (the children's pipes: a
    // child whose input stays open in the server never sees its end).
    let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
    for descriptor in descriptors.compactMap({ Int32($0) }) where descriptor > 2 {
        _ = fcntl(descriptor, F_SETFD, fcntl(descriptor, F_GETFD) | FD_CLOEXEC)
    }
    let spawned = posix_spawn(&pid, "/bin/sh", nil, nil, &argv, environ)
    guard spawned == 0 else { throw RunFailure("posix_spawn failed: \(spawned)") }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 {
        guard errno == EINTR else { throw RunFailure("waitpid failed: \(errno)") }
    }
    return (status >> 8) & 0xff
}

struct RunFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

extension Array {
    func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var result: [T] = []
        for element in self { result.append(try await transform(element)) }
        return result
    }
}

/// An observer of one replica's pairs, on a task of its own, as an application would observe: at every update it
/// delivers, both objects of each pair must hold the same value (a half-applied server transaction would show
/// one without the other).
final class PairObserver: Sendable {
    private let task: Task<(updates: Int, halves: [String]), Never>
    private let configuration: Realm.Configuration
    /// The id of the pair whose creation ends the observation.
    static let stopID = "stop"

    init(configuration: Realm.Configuration) {
        self.configuration = configuration
        task = Task {
            var updates = 0
            var halves: [String] = []
            do {
                let realm = try Realm(configuration: configuration)
                for await change in realm.objects(ConvergencePair.self).changes {
                    guard case .update = change else { continue }
                    updates += 1
                    halves += SyncConvergence.halfPairs(realm)
                    if realm.object(ofType: ConvergencePair.self, forPrimaryKey: Self.stopID) != nil { break }
                }
            } catch {
                halves.append("observer failed: \(error)")
            }
            return (updates, halves)
        }
    }

    /// Stops observing (by creating the stop pair in the observed file: a write the other replicas then sync);
    /// returns how many updates it saw and the half pairs it saw.
    func stop() async throws -> (updates: Int, halves: [String]) {
        let realm = try Realm(configuration: configuration)
        try realm.write { realm.create(ConvergencePair.self, value: ["id": Self.stopID]) }
        return await task.value
    }
}

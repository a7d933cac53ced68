import Foundation
import Logging
import PostgresNIO
@_spi(StrataSync) import Strata
@_spi(StrataSyncTesting) import StrataSync
import SyncConvergence
import Synchronization

// A replica of the convergence suite in a process of its own (Sync/Tests/StrataSyncTests/ConvergenceTests.swift),
// so that the suite can kill it with SIGKILL at chosen points and start it again on the same file:
//
//   strata-sync-replica PATH CLIENT-ID INDEX SEED GENERATION NAMESPACE
//
// opens the Strata file PATH with a SyncClient (scope "main") against the PostgreSQL that the PG* variables
// name, in the schema NAMESPACE (migrated by the parent), prints "ready LAST" (its ledger's last transaction
// number) and then obeys one command per line of standard input, printing one line when done:
//
//   write K        K random transactions of the suite's workload; after each commit "record JSON" (its
//                  TransactionRecord); then "written"
//   sync           one round (upload, download); "synced", or "sync-failed ERROR" (the server was away)
//   pause upload   the next upload round stops after PostgreSQL's commit, before the local queue is emptied:
//                  it prints "paused upload SEQUENCE" and blocks there until the parent kills it
//   pause apply    the next download blocks inside the local write that applies it, before the commit, after
//                  printing "paused apply SEQUENCES"
//   pause bootstrap  the next bootstrap (the log trimmed past the checkpoint) blocks after committing its first
//                  write of snapshot objects, before the last (which deletes and sets the checkpoint), after printing
//                  "paused bootstrap OBJECTS"
//   exit           (or end of input) exits
//
// The client applies at most 10 object changes per local write (maximumChangesPerApply), so that a bootstrap of the
// suite's scope takes several writes: the suite kills it between two.
//
// GENERATION numbers the runs on one file: run g creates fresh items with keys INDEX*1000 + g*100 ..< +100, so a
// restarted replica never creates a key again, and its workload's seed is SEED + g.

func say(_ line: String) {
    print(line)
    fflush(nil)
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("replica error: \(message)\n".utf8))
    exit(2)
}

/// Runs `body` on a detached task and waits for it (the main thread holds the Realm of the workload).
func blocking<Result: Sendable>(_ body: @escaping @Sendable () async throws -> Result) throws -> Result {
    let done = DispatchSemaphore(value: 0)
    let result = Mutex<Swift.Result<Result, any Error>?>(nil)
    Task.detached {
        do {
            let value = try await body()
            result.withLock { $0 = .success(value) }
        } catch {
            result.withLock { $0 = .failure(error) }
        }
        done.signal()
    }
    done.wait()
    return try result.withLock { $0! }.get()
}

/// Blocks the calling thread for good: the parent kills the process while it waits here.
func blockForever() -> Never {
    while true { sleep(1000) }
}

let arguments = CommandLine.arguments
guard arguments.count == 7, let index = Int(arguments[3]), let seed = UInt64(arguments[4]),
    let generation = Int(arguments[5])
else { fail("usage: strata-sync-replica PATH CLIENT-ID INDEX SEED GENERATION NAMESPACE") }
let clientID = arguments[2]
let namespace = arguments[6]

var logger = Logger(label: "strata-sync-replica")
logger.logLevel = .critical
let postgres = PostgresClient(
    configuration: PostgresEnvironment.clientConfiguration(applicationName: convergenceApplicationName),
    backgroundLogger: logger)
Task.detached { await postgres.run() }

let configuration = Realm.Configuration(fileURL: URL(fileURLWithPath: arguments[1]), objectTypes: convergenceClasses)
let sync: SyncClient
let realm: Realm
do {
    let schema = try ServerSchema(namespace: namespace, classes: convergenceClasses)
    sync = try SyncClient(
        configuration: configuration, schema: schema, client: postgres, scope: "main", clientID: clientID,
        batchSize: 50, maximumChangesPerApply: 10, logger: logger)
    realm = try Realm(configuration: configuration)
} catch {
    fail("cannot open: \(error)")
}

/// Which hook stops the process next (set by "pause upload", "pause apply" or "pause bootstrap").
let armed = Mutex<String?>(nil)
var hooks = SyncClientHooks()
hooks.uploadCommitted = { sequence in
    guard armed.withLock({ $0 }) == "upload" else { return }
    say("paused upload \(sequence)")
    blockForever()
}
hooks.applying = { sequences in
    guard armed.withLock({ $0 }) == "apply" else { return }
    say("paused apply \(sequences.map(String.init).joined(separator: ","))")
    blockForever()
}
hooks.bootstrapWritten = { objects in
    guard armed.withLock({ $0 }) == "bootstrap" else { return }
    say("paused bootstrap \(objects)")
    blockForever()
}
let installed = hooks
try blocking { await sync.setHooks(installed) }

realm.refresh()
var number = realm.object(ofType: ConvergenceLedger.self, forPrimaryKey: clientID)?.last ?? 0
var workload = ConvergenceWorkload(
    replica: clientID, index: index, seed: seed &+ UInt64(generation),
    keys: (index * 1000 + generation * 100)..<(index * 1000 + generation * 100 + 100))
say("ready \(number)")

while let line = readLine() {
    let words = line.split(separator: " ")
    switch words.first {
    case "write":
        for _ in 0..<(words.count > 1 ? Int(words[1]) ?? 1 : 1) {
            number += 1
            do {
                let record = try workload.transaction(in: realm, number: number)
                say("record \(record.json)")
            } catch {
                fail("write \(number): \(error)")
            }
        }
        say("written")
    case "sync":
        do {
            try blocking { try await sync.syncOnce() }
            say("synced")
        } catch {
            say("sync-failed \(String(describing: error).replacingOccurrences(of: "\n", with: " "))")
        }
    case "pause":
        armed.withLock { $0 = words.count > 1 ? String(words[1]) : nil }
        say("armed")
    case "exit": exit(0)
    default: fail("unknown command \(line)")
    }
}
exit(0)

import Foundation
import Strata
import StrataStorage
import StrataTestSupport

// A child process driven by the integration tests. Modes:
//
//   commit-loop PATH SEED   commit forever; after each commit returns, print "acked N" (N = the key it added)
//   group-commit-loop PATH WRITERS  WRITERS actors commit forever, their commits grouped; print "acked K" after
//                           each returns (see GroupCommitLoop.swift)
//   increment PATH COUNT    COUNT write transactions, each adding 1 to a shared counter; print "done"
//   reopen PATH COUNT       COUNT times: open the file, check that the counter never goes back, close it;
//                           print "done"
//   pin PATH                pin the newest version, print "pinned V SUM", wait for a line on stdin, re-read the
//                           pinned version and print "same" if it is unchanged, "changed" otherwise
//   trap-outside-write PATH store a Note, print "stored", then set its text outside a write transaction (traps)
//   trap-wrong-thread PATH  store a Note, print "stored", then read it from another thread (traps)
//   trap-wrong-actor PATH   store a Note from an actor-confined Realm, print "stored", then read it from a plain
//                           thread (traps)
//   trap-wrong-task PATH    store a Note from a task-confined Realm (and read it after an await in that task),
//                           print "stored", then read it from a plain thread (traps, saying what to do instead)
//   crash-in-migration PATH open the file with a newer Note model; the migration block rewrites every note,
//                           creates 5,000 more, prints "migrating" and crashes before the migration ends
//   tally PATH COUNT        wait for a line on stdin, then COUNT commits each adding 1 to Tally 1's count; print
//                           "done"
//   outbox-crash PATH       consume the Reading outbox: acknowledge the first delivery, print "received V" for
//                           the second and crash before acknowledging it
//
// Output is line-buffered and flushed after every line so that the parent sees acknowledgements at once. The
// commit-loop, increment, reopen, pin and damaged-file-probe modes open their files with the test key when the
// parent sets STRATA_TEST_ENCRYPTION=encrypted (``FileEncryption``).
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

func say(_ line: String) {
    print(line)
    fflush(nil)
}

func fail(_ message: String) -> Never {
    let text = Array("child error: \(message)\n".utf8)
    _ = text.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    exit(2)
}

/// Whether the parent's files are encrypted (``FileEncryption/environmentVariable``).
let encryption = FileEncryption.inherited

/// The value stored under crash-loop key `n`: recognisable, so the parent can check it byte for byte.
func crashValue(_ n: UInt64) -> [UInt8] { (0..<48).map { UInt8(truncatingIfNeeded: n &* 31 &+ UInt64($0)) } }

func run() throws {
    let arguments = CommandLine.arguments
    guard arguments.count >= 3 else { fail("usage: strata-integration-child MODE PATH ...") }
    let path = arguments[2]
    switch arguments[1] {
    case "hold-open", "reopen-write": try runFileDeletionMode(arguments[1], path: path, arguments)
    case "trap-outside-write", "trap-wrong-thread":
        let realm = try Realm(
            configuration: Realm.Configuration(fileURL: URL(fileURLWithPath: path), objectTypes: [Note.self]))
        let note = Note()
        note.text = "original"
        try realm.write { realm.add(note) }
        say("stored")
        if arguments[1] == "trap-outside-write" {
            note.text = "changed outside a write"
        } else {
            nonisolated(unsafe) let shared = note
            let thread = Thread { say("read \(shared.text)") }
            thread.start()
            while !thread.isFinished { usleep(1000) }
        }
        say("no trap")
    case "trap-wrong-actor":
        let stored = Smuggled()
        let done = DispatchSemaphore(value: 0)
        Task {
            do {
                stored.note = try await NoteKeeper().store(path: path).note
            } catch {
                fail("\(error)")
            }
            done.signal()
        }
        done.wait()
        readOnAnotherThread(stored)
    case "trap-wrong-task":
        let stored = Smuggled()
        let done = DispatchSemaphore(value: 0)
        Task.detached {
            do {
                let realm = try Realm(
                    configuration: Realm.Configuration(fileURL: URL(fileURLWithPath: path), objectTypes: [Note.self]))
                let note = try await realm.asyncWrite { realm.create(Note.self, value: ["text": "original"]) }
                await Task.yield()
                guard note.text == "original" else { fail("the task's own Realm read \(note.text)") }
                stored.note = note
            } catch {
                fail("\(error)")
            }
            done.signal()
        }
        done.wait()
        readOnAnotherThread(stored)
    case "crash-in-migration":
        var configuration = Realm.Configuration(
            fileURL: URL(fileURLWithPath: path), schemaVersion: 1, objectTypes: [WordyNote.self])
        configuration.migrationBlock = { migration, _ in
            migration.enumerateObjects(ofType: "Note") { old, new in
                new?["text"] = "rewritten"
                new?["words"] = (old?["text"] as? String ?? "").split(separator: " ").count
            }
            for index in 0..<5000 { migration.create("Note", value: ["text": "extra \(index)", "words": 2]) }
            say("migrating")
            fatalError("crash in migration")
        }
        _ = try Realm(configuration: configuration)
        say("no crash")
    case "outbox-crash":
        let realm = try Realm(
            configuration: Realm.Configuration(fileURL: URL(fileURLWithPath: path), objectTypes: [Reading.self]))
        let outbox = realm.outbox(Reading.self)
        let finished = DispatchSemaphore(value: 0)
        Task {
            var count = 0
            do {
                for try await delivery in outbox {
                    count += 1
                    if count == 1 {
                        try await delivery.acknowledge()
                    } else {
                        say("received \(delivery.object.value)")
                        fatalError("crash before acknowledging")
                    }
                }
            } catch {
                fail("\(error)")
            }
            finished.signal()
        }
        finished.wait()
    case "write-ledger": try writeLedger(path: path)
    case "group-commit-loop": try runGroupCommitLoop(path: path, writers: Int(arguments[3]) ?? 8)
    case "commit-loop":
        let store = try Store.open(
            path: path, options: encryption.options(StoreOptions(pageSize: 1024, durability: .full)))
        var generator = SeededGenerator(seed: UInt64(arguments.count > 3 ? arguments[3] : "1") ?? 1)
        var next = UInt64(try store.read().tree(named: "acked")?.count ?? 0)
        while true {
            try store.write { txn in
                let acked = try txn.tree(named: "acked", create: .keyed)!
                try txn.put(bigEndian(next), crashValue(next), in: acked)
                // Churn: rewrite and delete other data so that commits touch many pages and recycle free ones.
                let churn = try txn.tree(named: "churn", create: .keyed)!
                for _ in 0..<Int.random(in: 1...40, using: &generator) {
                    let key = bigEndian(UInt64.random(in: 0..<2000, using: &generator))
                    if Bool.random(using: &generator) {
                        let size =
                            Int.random(in: 0..<50, using: &generator) == 0
                            ? 4000 : Int.random(in: 1...200, using: &generator)
                        try txn.put(key, [UInt8](repeating: UInt8(truncatingIfNeeded: next), count: size), in: churn)
                    } else {
                        try txn.delete(key, in: churn)
                    }
                }
            }
            say("acked \(next)")
            next += 1
        }
    case "tally":
        guard arguments.count >= 4, let count = Int(arguments[3]) else { fail("tally needs a count") }
        let realm = try Realm(configuration: Realm.Configuration(fileURL: URL(fileURLWithPath: path)))
        _ = readLine()
        for _ in 0..<count {
            try realm.write {
                let tally =
                    realm.object(ofType: Tally.self, forPrimaryKey: 1) ?? realm.create(Tally.self, value: ["id": 1])
                tally.count += 1
            }
        }
        say("done")
    case "increment":
        guard arguments.count >= 4, let count = Int(arguments[3]) else { fail("increment needs a count") }
        let store = try Store.open(path: path, options: encryption.options(StoreOptions(durability: .none)))
        for _ in 0..<count { try incrementCounter(store) }
        say("done")
    case "reopen":
        guard arguments.count >= 4, let count = Int(arguments[3]) else { fail("reopen needs a count") }
        var last: UInt64 = 0
        for _ in 0..<count {
            let store = try Store.open(path: path, options: encryption.options(StoreOptions(durability: .none)))
            let value = try readCounter(store)
            if value < last { fail("the counter went back from \(last) to \(value)") }
            last = value
        }
        say("done")
    case "pin":
        let store = try Store.open(path: path, options: encryption.options())
        let snapshot = try store.read()
        func checksum() throws -> UInt64 {
            var sum: UInt64 = 0
            try snapshot.tree(named: "data")?.scan { key, value in
                for byte in key + value { sum = sum &* 31 &+ UInt64(byte) }
                return true
            }
            return sum
        }
        let before = try checksum()
        say("pinned \(snapshot.version) \(before)")
        _ = readLine()
        say(try checksum() == before ? "same" : "changed")
    case "damaged-file-probe": try runDamagedFileProbe(arguments)  // see DamagedFileProbe.swift
    case "sync-capture-loop": try runSyncCaptureLoop(arguments)  // see SyncCaptureLoop.swift
    default:
        if try runBadInputMode(arguments) { return }
        if try runObjectTrapMode(arguments) { return }  // see ObjectTraps.swift
        fail("unknown mode \(arguments[1])")
    }
}

do {
    try run()
} catch {
    fail("\(error)")
}

/// The model of the trap modes.
final class Note: Object {
    @Persisted var text = ""
}

/// The outbox model of outbox-crash.
final class Reading: AsymmetricObject {
    @Persisted var value = 0
}

/// The next version of `Note` (crash-in-migration).
final class WordyNote: Object {
    @Persisted var text = ""
    @Persisted var words = 0
    override class func className() -> String { "Note" }
}

/// The counter of `tally`, observed by the parent process.
final class Tally: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var count = 0
}

/// Carries an object out of its actor past the compiler (trap-wrong-actor).
final class Smuggled: @unchecked Sendable {
    var note: Note?
}

/// Says "stored", then reads the smuggled note on a new thread, which must trap; says "no trap" if it did not.
func readOnAnotherThread(_ stored: Smuggled) {
    say("stored")
    let thread = Thread { say("read \(stored.note!.text)") }
    thread.start()
    while !thread.isFinished { usleep(1000) }
    say("no trap")
}

/// Stores a note through a Realm confined to this actor (trap-wrong-actor).
actor NoteKeeper {
    func store(path: String) async throws -> Smuggled {
        let realm = try await Realm(
            configuration: Realm.Configuration(fileURL: URL(fileURLWithPath: path), objectTypes: [Note.self]),
            actor: self)
        let box = Smuggled()
        box.note = try await realm.asyncWrite { realm.create(Note.self, value: ["text": "original"]) }
        return box
    }
}

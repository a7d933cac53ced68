import Foundation
import Strata
import StrataStorage
import Testing

/// Misuse that cannot be reported by a throw (a property setter, a read from the wrong thread) stops the process
/// with a message naming what went wrong, and the file keeps what was committed.
@Suite("Traps")
struct TrapTests {
    private func run(_ mode: String) throws -> (status: Int32, errors: String, lines: [String], path: String) {
        let directory = TemporaryDirectory()
        let path = directory.path + "/notes.strata"
        let child = try Child([mode, path])
        var lines: [String] = []
        while let line = child.readLine() { lines.append(line) }
        let errors = child.errorOutput()
        let status = child.wait()
        // Reopen in this process: the committed note is intact.
        let realm = try Realm(
            configuration: Realm.Configuration(fileURL: URL(fileURLWithPath: path), objectTypes: [TrapNote.self]))
        #expect(realm.objects(TrapNote.self).map(\.text) == ["original"])
        return (status, errors, lines, path)
    }

    @Test func settingAPropertyOutsideAWriteTraps() throws {
        let outcome = try run("trap-outside-write")
        #expect(outcome.lines == ["stored"])
        #expect(outcome.status != 0)
        #expect(outcome.errors.contains("setting Note.text: this operation needs a write transaction"))
    }

    @Test func readingFromAnotherThreadTraps() throws {
        let outcome = try run("trap-wrong-thread")
        #expect(outcome.lines == ["stored"])
        #expect(outcome.status != 0)
        #expect(outcome.errors.contains("used outside the thread or actor it is confined to"))
        #expect(outcome.errors.contains("Realm.open()"))
        #expect(outcome.errors.contains("Frozen"))
    }

    @Test func readingAnActorsObjectFromAnotherThreadTraps() throws {
        let outcome = try run("trap-wrong-actor")
        #expect(outcome.lines == ["stored"])
        #expect(outcome.status != 0)
        #expect(outcome.errors.contains("used outside the thread or actor it is confined to"))
        #expect(outcome.errors.contains("confined to the actor that opened it"))
    }

    /// A Realm opened in nonisolated async code belongs to its task: usable across that task's awaits, and the
    /// trap for any other use says what to do instead.
    @Test func readingATasksObjectFromAnotherThreadTraps() throws {
        let outcome = try run("trap-wrong-task")
        #expect(outcome.lines == ["stored"])
        #expect(outcome.status != 0)
        #expect(outcome.errors.contains("used outside the thread or actor it is confined to"))
        #expect(outcome.errors.contains("confined to the task that opened it"))
        #expect(outcome.errors.contains("Realm(actor:)"))
        #expect(outcome.errors.contains("ThreadSafeReference"))
    }
}

extension TrapTests {
    @Test func aCrashDuringAMigrationLeavesTheOldFile() throws {
        let directory = TemporaryDirectory()
        let path = directory.path + "/notes.strata"
        let url = URL(fileURLWithPath: path)
        do {
            let realm = try Realm(configuration: Realm.Configuration(fileURL: url, objectTypes: [TrapNote.self]))
            try realm.write {
                for text in ["one two", "three four five"] { realm.create(TrapNote.self, value: ["text": text]) }
            }
        }
        let child = try Child(["crash-in-migration", path])
        var lines: [String] = []
        while let line = child.readLine() { lines.append(line) }
        let errors = child.errorOutput()
        let status = child.wait()
        #expect(lines == ["migrating"])
        #expect(status != 0)
        #expect(errors.contains("crash in migration"))
        // The file still has schema version 0, the old class and the old notes.
        do {
            let old = try Realm(configuration: Realm.Configuration(fileURL: url, objectTypes: [TrapNote.self]))
            #expect(old.objects(TrapNote.self).map(\.text).sorted() == ["one two", "three four five"])
        }
        let report = try Store.open(path: path).verify()
        #expect(report.problems.isEmpty, "\(report)")
        // And migrates when the block does not crash.
        var configuration = Realm.Configuration(fileURL: url, schemaVersion: 1, objectTypes: [WordyTrapNote.self])
        configuration.migrationBlock = { migration, _ in
            migration.enumerateObjects(ofType: "Note") { old, new in
                new?["words"] = (old?["text"] as? String ?? "").split(separator: " ").count
            }
        }
        let migrated = try Realm(configuration: configuration)
        #expect(migrated.objects(WordyTrapNote.self).map(\.words).sorted() == [2, 3])
    }
}

extension TrapTests {
    @Test func anOutboxDeliveryNotAcknowledgedBeforeACrashIsDeliveredAgain() async throws {
        let directory = TemporaryDirectory()
        let path = directory.path + "/outbox.strata"
        let configuration = Realm.Configuration(fileURL: URL(fileURLWithPath: path), objectTypes: [Reading.self])
        func create() throws -> Outbox<Reading> {
            let realm = try Realm(configuration: configuration)
            try realm.write {
                for value in [1, 2, 3] { realm.create(Reading.self, value: ["value": value]) }
            }
            return realm.outbox(Reading.self)
        }
        let outbox = try create()
        let child = try Child(["outbox-crash", path])
        var lines: [String] = []
        while let line = child.readLine() { lines.append(line) }
        let errors = child.errorOutput()
        #expect(child.wait() != 0)
        #expect(lines == ["received 2"])
        #expect(errors.contains("crash before acknowledging"))
        // 1 was acknowledged before the crash; 2 was received but not acknowledged, so it comes again.
        var values: [Int] = []
        for try await delivery in outbox {
            values.append(delivery.object.value)
            try await delivery.acknowledge()
            if values.count == 2 { break }
        }
        #expect(values == [2, 3])
    }
}

/// The outbox model of the child's outbox-crash mode.
final class Reading: AsymmetricObject {
    @Persisted var value = 0
}

/// The next version of the child's model.
final class WordyTrapNote: Object {
    @Persisted var text = ""
    @Persisted var words = 0
    override class func className() -> String { "Note" }
}

/// The child's model, under the same persisted name.
final class TrapNote: Object {
    @Persisted var text = ""
    override class func className() -> String { "Note" }
}

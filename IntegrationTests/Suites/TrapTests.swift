import Foundation
import Strata
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
    }
}

/// The child's model, under the same persisted name.
final class TrapNote: Object {
    @Persisted var text = ""
    override class func className() -> String { "Note" }
}

import Foundation
import Strata
import Testing

/// The Realm SDK's object API reports some misuse only by stopping the process (its methods do not throw): here,
/// in a child, the message names the cause, and the file keeps what was committed.
@Suite("Object API traps")
struct ObjectTrapTests {
    private func trap(_ misuse: String) throws -> (lines: [String], errors: String) {
        let directory = TemporaryDirectory()
        let path = directory.file("kites.strata")
        let run = try Child.runToTrap(["object-trap", path, misuse])
        #expect(run.trapped)
        let realm = try Realm(
            configuration: Realm.Configuration(fileURL: URL(fileURLWithPath: path), objectTypes: [TrapKite.self]))
        #expect(realm.objects(TrapKite.self).map(\.color) == ["red"])
        return (run.lines, run.errors)
    }

    /// `beginWrite()` does not throw (as in the SDK), so a write that cannot start stops the process naming why;
    /// the half-built transaction is not committed.
    @Test func beginWriteInsideAWriteTrapsNamingTheCause() throws {
        let outcome = try trap("nested-begin-write")
        #expect(outcome.lines == ["stored"])
        #expect(outcome.errors.contains("beginWrite(): the write transaction cannot start"))
        #expect(outcome.errors.contains("a write transaction is already in progress"))
    }

    /// After `realm.invalidate()`, an object read before it is invalidated: reading it stops with the SDK's
    /// message, not a wrong-thread one.
    @Test func readingAnObjectAfterInvalidateTrapsAsInvalidated() throws {
        let outcome = try trap("invalidated-read")
        #expect(outcome.lines == ["stored"])
        #expect(outcome.errors.contains("Object has been deleted or invalidated."))
        #expect(outcome.errors.contains("Kite.color"))
        #expect(!outcome.errors.contains("thread"))
    }

    /// A model initialiser that creates another object while the Realm creates an accessor for a stored object
    /// (the accessor has no boxes for it to claim) stops naming both classes.
    @Test func anInitialiserCreatingAnObjectDuringAccessorCreationTrapsNamingIt() throws {
        let outcome = try trap("object-in-accessor-initialiser")
        #expect(outcome.lines == ["stored"])
        #expect(
            outcome.errors.contains(
                "SpareKite's initialiser created a Kite while Strata was creating an accessor for a stored object"))
    }
}

/// The child's model, under the same persisted name.
final class TrapKite: Object {
    @Persisted var color = ""
    override class func className() -> String { "Kite" }
}

import Foundation
import Strata
import Testing

/// Misuse that a non-throwing API cannot report by a throw stops the process (in a child) with a message that
/// names the cause — a range error naming the collection, index and count, a frozen object and how to thaw it —
/// and the file keeps what was committed.
@Suite("Bad input traps")
struct BadInputTrapTests {
    private func trap(_ misuse: String) throws -> (lines: [String], errors: String) {
        let directory = TemporaryDirectory()
        let path = directory.file("shelf.strata")
        let run = try Child.runToTrap(["bad-input-trap", path, misuse])
        #expect(run.trapped)
        let realm = try Realm(
            configuration: Realm.Configuration(fileURL: URL(fileURLWithPath: path), objectTypes: [TrapShelf.self]))
        #expect(realm.objects(TrapShelf.self).map(\.name) == ["kept"])
        #expect(realm.objects(TrapShelf.self).first.map { Array($0.titles) } == ["a", "b", "c"])
        return (run.lines, run.errors)
    }

    @Test func readingOutsideACollectionIsARangeError() throws {
        let list = try trap("list-read")
        #expect(list.lines == ["stored"])
        #expect(list.errors.contains("Shelf.titles: index 999 is out of bounds (must be less than 3)"))
        #expect(
            try trap("results-read").errors.contains("Results<Shelf>: index 3 is out of bounds (must be less than 1)"))
        #expect(
            try trap("filtered-read").errors.contains("Results<Shelf>: index 1 is out of bounds (must be less than 1)"))
        #expect(
            try trap("unmanaged-remove").errors.contains(
                "List<String>: index 999 is out of bounds (must be less than 3)"))
    }

    @Test func changingAFrozenObjectInAWriteSaysItIsFrozen() throws {
        let set = try trap("frozen-set")
        #expect(set.lines == ["stored"])
        #expect(set.errors.contains("setting Shelf.name: the object is frozen"))
        #expect(set.errors.contains("call thaw()"))
        #expect(!set.errors.contains("needs a write transaction"))
        let append = try trap("frozen-append")
        #expect(append.errors.contains("inserting into Shelf.titles: the object is frozen"))
    }
}

/// The child's model, under the same persisted name.
final class TrapShelf: Object {
    @Persisted var name = ""
    @Persisted var titles: List<String>
    override class func className() -> String { "Shelf" }
}

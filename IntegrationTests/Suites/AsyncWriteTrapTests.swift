import Foundation
import Strata
import Testing

/// The callback-style async writes cannot throw (as in the SDK), so a Realm that has nowhere to run them later
/// (one confined to a plain thread) stops the process saying so, and writes nothing.
@Suite("Concurrency: callback async writes on a thread's Realm")
struct AsyncWriteTrapTests {
    @Test func writeAsyncOnAThreadConfinedRealmTrapsNamingTheCause() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("kites.strata")
        let run = try Child.runToTrap(["object-trap", path, "thread-write-async"])
        #expect(run.trapped)
        #expect(run.lines == ["stored"])
        #expect(run.errors.contains("writeAsync: asynchronous writes run their blocks and completions later"))
        #expect(run.errors.contains("confined to a thread"))
        #expect(run.errors.contains("Realm(configuration:queue:)"))
        let realm = try Realm(
            configuration: Realm.Configuration(fileURL: URL(fileURLWithPath: path), objectTypes: [TrapKite.self]))
        #expect(realm.objects(TrapKite.self).map(\.color) == ["red"])
    }
}

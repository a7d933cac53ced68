import Foundation
import Strata
import StrataStorage
import Synchronization
import Testing

/// `Realm.deleteFiles(for:)` against other processes: a file another process has open is not deleted, and a
/// deletion never slips in while another process is opening the file.
@Suite("Deleting files used by other processes", .serialized)
struct FileDeletionTests {
    private func names(in directory: TemporaryDirectory) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
    }

    private func configuration(_ path: String) -> Realm.Configuration {
        Realm.Configuration(fileURL: URL(fileURLWithPath: path), objectTypes: [DeletionEntry.self])
    }

    @Test func aFileAnotherProcessHasOpenIsNotDeleted() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("held.strata")
        let holder = try Child(["hold-open", path])
        #expect(holder.readLine() == "open")
        let files = try names(in: directory)
        #expect(files == ["held.strata", "held.strata.lock", "held.strata.log"])
        #expect(throws: Realm.Error.fileInUse(path: path)) { try Realm.deleteFiles(for: configuration(path)) }
        #expect(try names(in: directory) == files)
        // The other process goes on committing into the file, and nothing of it is lost.
        holder.send("commit")
        #expect(holder.readLine() == "committed")
        #expect(holder.wait() == 0, "\(holder.errorOutput())")
        do {
            let realm = try Realm(configuration: configuration(path))
            #expect(realm.objects(DeletionEntry.self).map(\.name).sorted() == ["first", "second"])
        }
        #expect(try Realm.deleteFiles(for: configuration(path)))
        #expect(try names(in: directory).isEmpty)
    }

    /// Two processes open the file, commit and close it in a loop while this one deletes it as fast as it can.
    /// Each round checks that its commit is in the file the path names: a deletion that slipped in between a
    /// process's look at the path and its claim of a slot would leave it writing into a file nobody can reach.
    @Test func deletingNeverSlipsInWhileAnotherProcessOpensTheFile() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("contended.strata")
        let rounds = soak ? 2000 : 150
        let writers = try (0..<2).map { _ in try Child(["reopen-write", path, "\(rounds)"]) }
        let running = Atomic<Int>(writers.count)
        let outcomes = Locked<[(line: String?, status: Int32, errors: String)]>([])
        for child in writers {
            // Each thread only waits for its own child.
            nonisolated(unsafe) let writer = child
            Thread {
                let line = writer.readLine()
                let status = writer.wait()
                let errors = writer.errorOutput()
                outcomes.withLock { $0.append((line, status, errors)) }
                running.subtract(1, ordering: .releasing)
            }.start()
        }
        var deleted = 0
        var refused = 0
        while running.load(ordering: .acquiring) > 0 {
            do {
                if try Realm.deleteFiles(for: configuration(path)) { deleted += 1 }
            } catch Realm.Error.fileInUse {
                refused += 1
            }
        }
        for outcome in outcomes.withLock({ $0 }) {
            #expect(outcome.line == "done" && outcome.status == 0, "\(outcome.errors)")
        }
        #expect(refused > 0, "deleted \(deleted) times, refused \(refused)")
        if access(path, F_OK) == 0 { #expect(try Store.open(path: path).verify().isValid) }
    }
}

/// The model of the child's hold-open mode.
final class DeletionEntry: Object {
    @Persisted(primaryKey: true) var name = ""
}

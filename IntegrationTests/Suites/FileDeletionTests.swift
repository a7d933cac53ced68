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
            // Not a synchronisation: this process's other tests open files too, and a loop that never lets go of
            // the registry of open files would hold them up.
            usleep(100)
        }
        for outcome in outcomes.withLock({ $0 }) {
            #expect(outcome.line == "done" && outcome.status == 0, "\(outcome.errors)")
        }
        #expect(refused > 0, "deleted \(deleted) times, refused \(refused)")
        if access(path, F_OK) == 0 { #expect(try Store.open(path: path).verify().isValid) }
    }
}

#if os(Linux)
    extension FileDeletionTests {
        /// The narrowest interleaving, made to happen: a deletion has unlinked the file (it holds byte 1 of the lock
        /// file), another process creates the file again and opens the old lock file, waiting for byte 1; then the
        /// deletion unlinks that lock file and ends. The opener gets its slot in a lock file nobody checks any
        /// more: it must notice and open again, or the next deletion removes the file it writes to.
        @Test func anOpenerThatWaitedOnADeletedLockFileOpensAgain() throws {
            let directory = TemporaryDirectory()
            let path = directory.file("reborn.strata")
            let lockPath = path + ".lock"
            try incrementCounter(Store.open(path: path))
            // The deletion, half-way: byte 1 held, the log and the file gone, the lock file still there.
            let deleter = open(lockPath, O_RDWR | O_CLOEXEC)
            #expect(deleter >= 0)
            #expect(ofdLock(deleter, byte: 1, F_WRLCK))
            unlink(path + ".log")
            unlink(path)
            let holder = try Child(["hold-open", path])
            var info = stat()
            #expect(stat(lockPath, &info) == 0)
            while !hasWaiter(inode: info.st_ino) { usleep(1000) }  // polls a condition; no timing assumed
            unlink(lockPath)
            #expect(ofdLock(deleter, byte: 1, F_UNLCK))
            close(deleter)
            #expect(holder.readLine() == "open")
            #expect(throws: Realm.Error.fileInUse(path: path)) { try Realm.deleteFiles(for: configuration(path)) }
            holder.send("commit")
            #expect(holder.readLine() == "committed")
            #expect(holder.wait() == 0, "\(holder.errorOutput())")
            let realm = try Realm(configuration: configuration(path))
            #expect(realm.objects(DeletionEntry.self).map(\.name).sorted() == ["first", "second"])
        }

        /// Takes (`F_WRLCK`) or releases (`F_UNLCK`) an open-file-description lock on one byte, without waiting.
        private func ofdLock(_ fd: Int32, byte: Int, _ type: Int32) -> Bool {
            var request = flock()
            request.l_type = Int16(type)
            request.l_whence = Int16(SEEK_SET)
            request.l_start = off_t(byte)
            request.l_len = 1
            return fcntl(fd, 37, &request) == 0  // F_OFD_SETLK
        }

        /// Whether some process waits for a lock on the file with inode `inode` (a "->" line of /proc/locks).
        private func hasWaiter(inode: ino_t) -> Bool {
            let locks = (try? String(contentsOfFile: "/proc/locks", encoding: .utf8)) ?? ""
            return locks.split(separator: "\n").contains { $0.contains("->") && $0.contains(":\(inode) ") }
        }
    }
#endif

/// The model of the child's hold-open mode.
final class DeletionEntry: Object {
    @Persisted(primaryKey: true) var name = ""
}

import Foundation
import Testing

@testable import StrataStorage

/// `Store.deleteFiles(path:)` deletes a file, its log and its lock file only when no handle has the file open.
@Suite("Deleting files")
struct FileDeletionTests {
    private func names(_ directory: TemporaryDirectory) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
    }

    @Test func anOpenFileIsNotDeletedUntilItsLastHandleIsGone() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("open.strata")
        var store: Store? = try Store.open(path: path)
        try incrementCounter(store!)
        let files = try names(directory)
        #expect(files == ["open.strata", "open.strata.lock", "open.strata.log"])
        #expect(throws: StorageError.fileInUse(path: path)) { try Store.deleteFiles(path: path) }
        #expect(try names(directory) == files)
        // A read transaction keeps the file open after its store handle is closed and released.
        let snapshot = try store!.read()
        store!.close()
        store = nil
        let refusal = #expect(throws: StorageError.self) { try Store.deleteFiles(path: path) }
        #expect(refusal?.description.contains(path) == true, "\(String(describing: refusal))")
        #expect(try names(directory) == files)
        #expect(try readCounter(Store.open(path: path)) == 1, "the file is still the one the handles use")
        _ = snapshot
    }

    @Test func aFileNobodyHasOpenIsDeletedWithItsLogAndLockFile() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("closed.strata")
        do {
            let store = try Store.open(path: path)
            try incrementCounter(store)
        }
        #expect(try Store.deleteFiles(path: path))
        #expect(try names(directory).isEmpty)
        #expect(try !Store.deleteFiles(path: path), "nothing left to delete")
        #expect(try !Store.deleteFiles(path: directory.file("missing/nothing.strata")))
        #expect(try readCounter(Store.open(path: path)) == 0, "a new, empty file")
    }

    @Test func inMemoryStoresAreReportedOpenWhileAHandleLives() throws {
        let identifier = "deletion-\(UUID())"
        #expect(!Store.isInMemoryStoreOpen(identifier: identifier))
        var store: Store? = try Store.inMemory(identifier: identifier)
        #expect(Store.isInMemoryStoreOpen(identifier: identifier))
        _ = store
        store = nil
        #expect(!Store.isInMemoryStoreOpen(identifier: identifier))
    }
}

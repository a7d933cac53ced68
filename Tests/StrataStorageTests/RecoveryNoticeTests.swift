import Foundation
import Testing

@testable import StrataStorage

/// A newest commit that cannot be read (its meta page or a root page damaged) and has no commit log beside it:
/// the file opens at the commit before, and says so.
@Suite("Recovery notice")
struct RecoveryNoticeTests {
    let directory = TemporaryDirectory()
    let path: String
    static let pageSize = 4096

    /// A file with versions 1 to 3 (`value` = the version that wrote it), no commit log, closed.
    init() throws {
        path = directory.file("recovered.strata")
        let store = try Store.open(path: path, options: StoreOptions(pageSize: Self.pageSize, durability: .none))
        for version in 1...3 {
            try store.write { txn in
                let tree = try #require(try txn.tree(named: "data", create: .keyed))
                try txn.put([UInt8]("value"), [UInt8(version)], in: tree)
            }
        }
        #expect(store.latestVersion == 3)
        #expect(!FileManager.default.fileExists(atPath: path + ".log"))
    }

    /// Opens the file afresh (no handle of this process is left open by the caller).
    func reopen() throws -> Store { try Store.open(path: path, options: StoreOptions(durability: .none)) }

    func value(_ store: Store) throws -> [UInt8]? { try store.read().tree(named: "data")?.get([UInt8]("value")) }

    /// Overwrites `count` bytes at `offset` of the file with `transform` of them.
    func damage(at offset: Int, count: Int = 1, _ transform: (UInt8) -> UInt8 = { ~$0 }) throws {
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
        try handle.seek(toOffset: UInt64(offset))
        let original = try #require(try handle.read(upToCount: count))
        try handle.seek(toOffset: UInt64(offset))
        try handle.write(contentsOf: Data(original.map(transform)))
        try handle.close()
    }

    @Test func anIntactFileHasNoNotice() throws {
        let store = try reopen()
        #expect(store.latestVersion == 3)
        #expect(store.recovery == nil)
    }

    @Test func aDamagedNewestMetaPageIsDroppedAndReported() throws {
        // Version 3 is in slot 1. Damage its catalog descriptor: the checksum fails, the version fields still read.
        try damage(at: Self.pageSize + Meta.catalogOffset + 8)
        let store = try reopen()
        #expect(store.latestVersion == 2)
        #expect(try value(store) == [2])
        let notice = try #require(store.recovery)
        #expect(notice.droppedVersion == 3)
        #expect(notice.openedVersion == 2)
        #expect(notice.page == 1)
        #expect(notice.reason == "meta page 1 is unreadable (checksum mismatch)")
        #expect(
            notice.description == "opened version 2; dropped version 3: meta page 1 is unreadable (checksum mismatch)")
        // Every handle of the process sees the same notice.
        #expect(try reopen().recovery == notice)
    }

    @Test func aZeroedNewestMetaPageIsReportedWithoutAVersion() throws {
        try damage(at: Self.pageSize, count: Self.pageSize) { _ in 0 }
        let store = try reopen()
        #expect(store.latestVersion == 2)
        let notice = try #require(store.recovery)
        #expect(notice.droppedVersion == nil)
        #expect(notice.page == 1)
        #expect(notice.description.contains("dropped the newest commit (its version cannot be read)"))
    }

    @Test func aDamagedRootPageOfTheNewestCommitIsDroppedAndReported() throws {
        let root = try {
            let store = try reopen()
            return store.shared.latest.catalog.root
        }()
        try damage(at: Int(root) * Self.pageSize + Self.pageSize / 2)
        let store = try reopen()
        #expect(store.latestVersion == 2)
        #expect(try value(store) == [2])
        let notice = try #require(store.recovery)
        #expect(notice.droppedVersion == 3)
        #expect(notice.openedVersion == 2)
        #expect(notice.page == root)
        // The commit was small enough to list its pages in its meta page, so the damage shows as a listed page
        // that is not as written.
        #expect(notice.reason == "its commit did not reach the disk whole (page \(root) is not as written)")
    }

    @Test func aDamagedOlderMetaPageLosesNothingAndIsNotReported() throws {
        // Slot 0 holds version 2, the fallback the open does not need.
        try damage(at: Meta.catalogOffset + 8)
        let store = try reopen()
        #expect(store.latestVersion == 3)
        #expect(store.recovery == nil)
    }
}

import Foundation
import Testing

@testable import Strata

/// A Realm whose file's newest commit is unreadable, with no commit log to restore it from, opens at the commit
/// before and says so in `recoveryNotice`.
@Suite("Realm recovery notice")
struct RealmRecoveryNoticeTests {
    @Test func aDamagedNewestCommitIsDroppedAndReported() throws {
        let scratch = try Scratch()
        let configuration = scratch.configuration([Person.self])
        do {
            let realm = try Realm(configuration: configuration)
            try realm.write { realm.create(Person.self, value: ["id": 1]) }
            try realm.write { realm.create(Person.self, value: ["id": 2]) }
            #expect(realm.recoveryNotice == nil)
        }
        let path = try #require(configuration.fileURL?.path)
        // The commit log holds the last commits; without it only the main file is left, and its newest meta page is
        // damaged (the checksum fails; the version fields still read).
        try FileManager.default.removeItem(atPath: path + ".log")
        var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        let pageSize = 4096
        func version(_ slot: Int) -> UInt64 {
            bytes[(slot * pageSize + 8)..<(slot * pageSize + 16)].reversed().reduce(0) { $0 << 8 | UInt64($1) }
        }
        let newest = max(version(0), version(1))
        let slot = version(0) == newest ? 0 : 1
        bytes[slot * pageSize + 72] ^= 0xFF
        try bytes.write(to: URL(fileURLWithPath: path))

        let realm = try Realm(configuration: configuration)
        let notice = try #require(realm.recoveryNotice)
        #expect(notice.droppedVersion == newest)
        #expect(notice.openedVersion == newest - 1)
        #expect(notice.page == UInt32(slot))
        #expect(notice.reason == "meta page \(slot) is unreadable (checksum mismatch)")
        #expect(realm.objects(Person.self).map(\.id) == [1])
    }
}

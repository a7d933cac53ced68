import Foundation
import Synchronization
import Testing

@testable import StrataStorage

/// The commit log of an encrypted file (issue 26): small durable commits go through it as in a plain file, its
/// records carry sealed pages and are signed with the key, a crash is recovered by replaying them, a record changed
/// by anyone without the key is never applied, and group commit shares syncs as it does for plain files.
@Suite("Encrypted commit log")
struct EncryptedCommitLogTests {
    private static let encryptionKey = (0..<64).map { UInt8(truncatingIfNeeded: $0 &* 11 &+ 5) }
    private static let options = StoreOptions(pageSize: 4096, durability: .full, encryptionKey: encryptionKey)
    /// Stored in every value: must not appear in the log's bytes.
    private static let marker = Array("Quokka-Tangerine-Lighthouse".utf8)

    private static func commitKey(_ store: Store, _ n: Int) throws {
        try store.write { txn in
            try txn.put(key(n), marker + key(n), in: try #require(try txn.tree(named: "data", create: .keyed)))
        }
    }

    private static func commitKeyAsync(_ store: Store, _ n: Int) async throws {
        try await store.asyncWrite { txn in
            try txn.put(key(n), marker + key(n), in: try #require(try txn.tree(named: "data", create: .keyed)))
        }
    }

    /// The keys of tree "data" in `store`'s newest version, each checked against its value.
    private static func committedKeys(_ store: Store) throws -> Set<Int> {
        let entries = try contents(of: try store.read().tree(named: "data"))
        for (key, value) in entries { #expect(value == marker + key) }
        return Set(entries.keys.map { Int(decodeBigEndian($0)) })
    }

    /// A power cut after the commits: what reached the disk of the main file and of its log.
    private static func crashed(_ main: FaultInjectingFile, _ log: FaultInjectingFile, log image: [UInt8]? = nil)
        throws -> Store
    {
        try Store.open(
            file: FaultInjectingFile(name: "main-crashed", image: main.durableImage),
            log: FaultInjectingFile(name: "log-crashed", image: image ?? log.durableImage), options: options)
    }

    /// Everything `file` holds.
    private static func bytes(of file: any PageFile) throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: try file.size())
        let read = try bytes.withUnsafeMutableBytes { buffer in try file.read(into: buffer, at: 0) }
        #expect(read == bytes.count)
        return bytes
    }

    private static func contains(_ bytes: [UInt8], _ needle: [UInt8]) -> Bool {
        guard bytes.count >= needle.count else { return false }
        return (0...(bytes.count - needle.count)).contains { start in
            bytes[start..<(start + needle.count)].elementsEqual(needle)
        }
    }

    /// The options of a new file of `suite` (an existing file keeps its own suite whatever the options say).
    private static func options(_ suite: CipherSuite) -> StoreOptions {
        var options = options
        options.cipherSuite = suite
        return options
    }

    @Test(arguments: CipherSuite.allCases)
    func commitsAreReplayedFromTheLogAfterACrash(suite: CipherSuite) throws {
        let main = FaultInjectingFile(name: "main")
        let log = FaultInjectingFile(name: "log")
        let store = try Store.open(file: main, log: log, options: Self.options(suite))
        for n in 0..<10 { try Self.commitKey(store, n) }
        #expect(try Self.committedKeys(store) == Set(0..<10))
        // The main file was synced only when the log started (before the first commit's pages went in): the
        // commits are in the log alone, sealed.
        let logBytes = log.durableImage
        #expect(logBytes.count > 10 * 4096)
        #expect(!Self.contains(logBytes, Self.marker))
        #expect(!Self.contains(main.durableImage, Self.marker))
        let reopened = try Self.crashed(main, log)
        #expect(reopened.shared.replayedCommits == 10)
        #expect(try Self.committedKeys(reopened) == Set(0..<10))
        // Writing goes on after the replay.
        try Self.commitKey(reopened, 10)
        #expect(try Self.committedKeys(reopened) == Set(0...10))
    }

    /// The length (padding excluded) and page count of record `index` of a log image.
    private static func record(_ image: [UInt8], _ index: Int) -> (length: Int, pages: Int) {
        let offset = recordOffset(image, index)
        return image.withUnsafeBytes { bytes in
            let record = UnsafeRawPointer(bytes.baseAddress!) + offset
            return (Int(record.u32(36)), Int(record.u32(32)))
        }
    }

    @Test func recordsLeaveOutTheSealedPagesGapsAndReplayThemWhole() throws {
        let main = FaultInjectingFile(name: "main")
        let log = FaultInjectingFile(name: "log")
        let store = try Store.open(file: main, log: log, options: Self.options)
        // A commit of many pages, then single puts into the tree it made: six records.
        try store.write { txn in
            let tree = try #require(try txn.tree(named: "data", create: .keyed))
            for n in 100..<3_000 { try txn.put(key(n), Self.marker + key(n), in: tree) }
        }
        for n in 0..<5 { try Self.commitKey(store, n) }
        let image = log.durableImage
        for index in 0..<6 {
            let (length, pages) = Self.record(image, index)
            // Each page's gap (about half a leaf after a split, most of a branch) stays out: well under the whole
            // pages plus the whole meta page.
            #expect(pages >= 2)
            #expect(length < (pages + 1) * 4096 - 2048, "record \(index): \(length) bytes for \(pages) pages")
        }
        let reopened = try Self.crashed(main, log)
        #expect(reopened.shared.replayedCommits == 6)
        #expect(try Self.committedKeys(reopened) == Set(0..<5).union(100..<3_000))
        let report = try reopened.verify()
        #expect(report.isValid, "\(report)")
    }

    @Test func recordsOfWholeSealedPagesAsEarlierVersionsWroteThemStillReplay() throws {
        let main = FaultInjectingFile(name: "main")
        let log = FaultInjectingFile(name: "log")
        let store = try Store.open(file: main, log: log, options: Self.options)
        store.shared.logsSealedGaps = false
        for n in 0..<4 { try Self.commitKey(store, n) }
        let (length, pages) = Self.record(log.durableImage, 3)
        #expect(length > (pages + 1) * 4096, "every page whole")
        let reopened = try Self.crashed(main, log)
        #expect(reopened.shared.replayedCommits == 4)
        #expect(try Self.committedKeys(reopened) == Set(0..<4))
        // The reopened store logs with gaps again, and both kinds of record replay from one log.
        try Self.commitKey(reopened, 4)
        #expect(try Self.committedKeys(reopened) == Set(0..<5))
    }

    /// Where record `index`'s meta image lies in a log image (offset and bytes logged), and its meta stamp's
    /// checksum field: 1 marks a compact record.
    private static func metaImage(_ image: [UInt8], _ index: Int) -> (offset: Int, count: Int, mark: UInt64) {
        let start = recordOffset(image, index)
        return image.withUnsafeBytes { bytes in
            let record = UnsafeRawPointer(bytes.baseAddress!) + start
            let pages = Int(record.u32(32))
            var body = 40 + (pages + 1) * 16
            for page in 0..<pages {
                let stamp = record + 40 + page * 16
                body += Int(stamp.u16(12)) + 4096 - Int(stamp.u16(14))
            }
            let stamp = record + 40 + pages * 16
            return (start + body, Int(stamp.u16(12)) + 4096 - Int(stamp.u16(14)), stamp.u64(4))
        }
    }

    @Test(arguments: CipherSuite.allCases)
    func singlePutRecordsLeaveOutTheMetaPagesGapAndReplay(suite: CipherSuite) throws {
        let main = FaultInjectingFile(name: "main")
        let log = FaultInjectingFile(name: "log")
        let store = try Store.open(file: main, log: log, options: Self.options(suite))
        for n in 0..<6 { try Self.commitKey(store, n) }
        let image = log.durableImage
        for index in 0..<6 {
            // Compact: the sealed meta page logged without its gap, so a single put's record fits in one log page
            // as a plain file's does (a whole meta page alone took one).
            let (length, pages) = Self.record(image, index)
            #expect(length < 4096, "record \(index): \(length) bytes for \(pages) pages")
            #expect(Self.metaImage(image, index).mark == 1)
        }
        let reopened = try Self.crashed(main, log)
        #expect(reopened.shared.replayedCommits == 6)
        #expect(try Self.committedKeys(reopened) == Set(0..<6))
        let report = try reopened.verify()
        #expect(report.isValid, "\(report)")
    }

    @Test func recordsSignedWholeAsTheVersionBeforeWroteThemStillReplay() throws {
        let main = FaultInjectingFile(name: "main")
        let log = FaultInjectingFile(name: "log")
        let store = try Store.open(file: main, log: log, options: Self.options)
        store.shared.logsCompactRecords = false
        for n in 0..<3 { try Self.commitKey(store, n) }
        store.shared.logsCompactRecords = true
        for n in 3..<6 { try Self.commitKey(store, n) }
        let image = log.durableImage
        for index in 0..<6 {
            let meta = Self.metaImage(image, index)
            #expect(meta.mark == (index < 3 ? 0 : 1))
            #expect((meta.count == 4096) == (index < 3), "record \(index): meta page whole only in the older form")
        }
        // Both kinds of record replay from one log.
        let reopened = try Self.crashed(main, log)
        #expect(reopened.shared.replayedCommits == 6)
        #expect(try Self.committedKeys(reopened) == Set(0..<6))
    }

    @Test(arguments: CipherSuite.allCases)
    func aSealedMetaImageFromAnotherRecordIsNotReplayed(suite: CipherSuite) throws {
        // Records 1 and 3 write the same meta slot: record 1's sealed meta page authenticates in record 3's place
        // on its own, but a compact record's tag covers each image's nonce and tag, so the swap is caught.
        let main = FaultInjectingFile(name: "main")
        let log = FaultInjectingFile(name: "log")
        let store = try Store.open(file: main, log: log, options: Self.options(suite))
        for n in 0..<4 { try Self.commitKey(store, n) }
        var image = log.durableImage
        let older = Self.metaImage(image, 1)
        let newer = Self.metaImage(image, 3)
        try #require(older.count == newer.count && older.mark == 1 && newer.mark == 1)
        image.replaceSubrange(
            newer.offset..<(newer.offset + newer.count), with: image[older.offset..<(older.offset + older.count)])
        let start = Self.recordOffset(image, 3)
        image.withUnsafeMutableBytes { bytes in
            let record = bytes.baseAddress! + start
            let length = Int(UnsafeRawPointer(record).u32(36))
            let epoch = UnsafeRawPointer(record).u64(16)
            record.setU64(0, Checksum.xxh64(UnsafeRawPointer(record) + 8, count: length - 8, seed: epoch))
        }
        let reopened = try Self.crashed(main, log, log: image)
        #expect(reopened.shared.replayedCommits == 3)
        #expect(try Self.committedKeys(reopened) == Set(0..<3))
        #expect(try Self.committedKeys(try Self.crashed(main, log)) == Set(0..<4))
    }

    /// The offset of record `index` (0-based) in a log image.
    private static func recordOffset(_ image: [UInt8], _ index: Int, pageSize: Int = 4096) -> Int {
        var offset = pageSize
        for _ in 0..<index {
            let length = image.withUnsafeBytes { Int(UnsafeRawPointer($0.baseAddress!).u32(offset + 36)) }
            offset += (length + pageSize - 1) / pageSize * pageSize
        }
        return offset
    }

    /// Flips one byte of record 1 (the second commit) at `within` bytes from its start (from its end, padding
    /// excluded, when negative: the tag, the meta page's nonce and tag); with `rechecksum`, also recomputes the
    /// record's unkeyed checksum, as someone without the key can.
    private static func tampered(_ image: [UInt8], within: Int, rechecksum: Bool) -> [UInt8] {
        var image = image
        let start = recordOffset(image, 1)
        let length = record(image, 1).length
        image[start + (within < 0 ? length + within : within)] ^= 0x20
        if rechecksum {
            image.withUnsafeMutableBytes { bytes in
                let record = bytes.baseAddress! + start
                let length = Int(UnsafeRawPointer(record).u32(36))
                let epoch = UnsafeRawPointer(record).u64(16)
                record.setU64(0, Checksum.xxh64(UnsafeRawPointer(record) + 8, count: length - 8, seed: epoch))
            }
        }
        return image
    }

    @Test(arguments: [false, true], [40, 200, -10, -40, -200, -400])
    func aChangedRecordIsNotReplayed(rechecksum: Bool, within: Int) throws {
        try changedRecordIsNotReplayed(rechecksum: rechecksum, within: within, suite: .newFiles)
    }

    /// The same on a file of the suite files had before AES-256-GCM (its records signed with HMAC-SHA-256).
    @Test(arguments: [false, true], [40, 200, -10, -40, -200, -400])
    func aChangedRecordOfTheOlderSuiteIsNotReplayed(rechecksum: Bool, within: Int) throws {
        try changedRecordIsNotReplayed(rechecksum: rechecksum, within: within, suite: .aes256CTRWithHMACSHA256)
    }

    private func changedRecordIsNotReplayed(rechecksum: Bool, within: Int, suite: CipherSuite) throws {
        let main = FaultInjectingFile(name: "main")
        let log = FaultInjectingFile(name: "log")
        let store = try Store.open(file: main, log: log, options: Self.options(suite))
        for n in 0..<3 { try Self.commitKey(store, n) }
        let image = Self.tampered(log.durableImage, within: within, rechecksum: rechecksum)
        // Replay stops before the changed record: the file opens at the commit before it.
        let reopened = try Self.crashed(main, log, log: image)
        #expect(reopened.shared.replayedCommits == 1)
        #expect(try Self.committedKeys(reopened) == [0])
        // The untouched log replays all three.
        #expect(try Self.committedKeys(try Self.crashed(main, log)) == Set(0..<3))
    }

    @Test func aPlainFilesLogIsNotReadForAnEncryptedFile() throws {
        // A log header says whether its records are signed: a plain log is not taken for an encrypted one's (nor
        // the reverse), so no unsigned record is ever replayed into an encrypted file.
        let plainMain = FaultInjectingFile(name: "plain-main")
        let plainLog = FaultInjectingFile(name: "plain-log")
        let plain = try Store.open(
            file: plainMain, log: plainLog, options: StoreOptions(pageSize: 4096, durability: .full))
        try Self.commitKey(plain, 0)
        let image = plainLog.durableImage
        let main = FaultInjectingFile(name: "main")
        let log = FaultInjectingFile(name: "log")
        let store = try Store.open(file: main, log: log, options: Self.options)
        try Self.commitKey(store, 1)
        let reopened = try Self.crashed(main, log, log: image)
        #expect(reopened.shared.replayedCommits == 0)
        #expect(try Self.committedKeys(reopened).isEmpty)
    }

    @Test func concurrentCommitsShareSyncsAndAreDurable() async throws {
        let main = FaultInjectingFile(name: "main")
        let log = HeldSyncFile(name: "held-log")
        let store = try Store.open(file: main, log: log, options: Self.options)
        // Sealed pages are logged whole: the burst's records outgrow the log's first step, and growing syncs the
        // log, which the held syncs would block. Room for all of them is made up front.
        store.shared.commitLog?.growthStep = 4 << 20
        try await Self.commitKeyAsync(store, 0)  // creates the log: its own syncs
        let count = 16
        let holder = try await store.beginWrite()
        try holder.put(
            key(1000), Self.marker + key(1000), in: try #require(try holder.tree(named: "data", create: .keyed)))
        let syncs = try await commitBurstWithHeldSyncs(store, log: log, holder: holder, count: count) { n in
            try await Self.commitKeyAsync(store, n)
        }
        #expect(syncs < count + 1, "\(count + 1) commits made \(syncs) log syncs")
        let expected = Set([0, 1000]).union(1...count)
        #expect(try Self.committedKeys(store) == expected)
        // The grouped records replay: the main file alone (as last synced) lacks them.
        let reopened = try Store.open(
            file: FaultInjectingFile(name: "main-crashed", image: main.durableImage),
            log: FaultInjectingFile(name: "log-crashed", image: try Self.bytes(of: log)), options: Self.options)
        #expect(try Self.committedKeys(reopened) == expected)
    }

    @Test func threadsCommittingAtOnceAreDurable() throws {
        let main = FaultInjectingFile(name: "main")
        let log = FaultInjectingFile(name: "log")
        let store = try Store.open(file: main, log: log, options: Self.options)
        let failures = Atomic<Int>(0)
        DispatchQueue.concurrentPerform(iterations: 6) { writer in
            for n in 0..<20 {
                do {
                    try Self.commitKey(store, writer * 1000 + n)
                } catch {
                    failures.add(1, ordering: .relaxed)
                }
            }
        }
        #expect(failures.load(ordering: .relaxed) == 0)
        let expected = Set((0..<6).flatMap { writer in (0..<20).map { writer * 1000 + $0 } })
        #expect(try Self.committedKeys(try Self.crashed(main, log)) == expected)
    }

    @Test func aDiskFileGetsALogAndReopens() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("encrypted.strata")
        do {
            let store = try Store.open(path: path, options: Self.options)
            for n in 0..<5 { try Self.commitKey(store, n) }
            let logBytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path + ".log")))
            #expect(logBytes.count > 4096)
            #expect(!Self.contains(logBytes, Self.marker))
        }
        let reopened = try Store.open(path: path, options: Self.options)
        #expect(try Self.committedKeys(reopened) == Set(0..<5))
    }
}

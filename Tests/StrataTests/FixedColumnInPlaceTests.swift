import Foundation
import Strata
import Testing

final class FixedWidthRecord: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var int = 0
    @Persisted var label = ""
    @Persisted var int8: Int8 = 0
    @Persisted var int16: Int16 = 0
    @Persisted var int32: Int32 = 0
    @Persisted var flag = false
    @Persisted var ratio: Float = 0
    @Persisted var score = 0.0
    @Persisted var stamp = Date(timeIntervalSinceReferenceDate: 0)
    @Persisted var note: String?
    @Persisted var maybeInt: Int?
    @Persisted var maybeFlag: Bool?
    @Persisted var maybeRatio: Float?
    @Persisted var maybeScore: Double?
    @Persisted var maybeStamp: Date?
}

/// Setting a fixed-size property writes its 8 bytes and null bit straight into the row when the row is in the leaf
/// the write's last put left dirty (issue 25). Every column of every object must read back what was set, in the
/// write, after it and in a new Realm on the file: a value written into the wrong slot, a null bit not set or not
/// cleared, or a string next to it disturbed shows up as a wrong value; a write that fails rolls it all back.
@Suite("Fixed-size column set in place")
struct FixedColumnInPlaceTests {
    /// The values object `id` holds in round `round` (round 0: as created). Optional columns go nil and come back.
    private struct Values: Equatable {
        var int: Int, label: String, int8: Int8, int16: Int16, int32: Int32, flag: Bool, ratio: Float
        var score: Double, stamp: Date, note: String?, maybeInt: Int?, maybeFlag: Bool?, maybeRatio: Float?
        var maybeScore: Double?, maybeStamp: Date?

        init(id: Int, round: Int) {
            let seed = id &* 31 &+ round &* 1_000_003
            let present = (id + round) % 3 != 0
            int = seed
            label = "record \(id) " + String(repeating: "l", count: id % 17)
            int8 = Int8(truncatingIfNeeded: seed)
            int16 = Int16(truncatingIfNeeded: seed &* 7)
            int32 = Int32(truncatingIfNeeded: seed &* 13)
            flag = (id + round) % 2 == 0
            ratio = Float(seed) / 8
            score = Double(seed) * 0.25 - 3
            stamp = Date(timeIntervalSinceReferenceDate: Double(seed) + 0.5)
            note = present ? "n\(id)" : nil
            maybeInt = present ? -seed : nil
            maybeFlag = present ? (id % 2 == 1) : nil
            maybeRatio = present ? Float(id) + 0.75 : nil
            maybeScore = present ? Double(round) - Double(id) : nil
            maybeStamp = present ? Date(timeIntervalSinceReferenceDate: Double(-seed)) : nil
        }

        init(_ record: FixedWidthRecord) {
            (int, label, int8, int16, int32) = (record.int, record.label, record.int8, record.int16, record.int32)
            (flag, ratio, score, stamp, note) = (record.flag, record.ratio, record.score, record.stamp, record.note)
            (maybeInt, maybeFlag, maybeRatio) = (record.maybeInt, record.maybeFlag, record.maybeRatio)
            (maybeScore, maybeStamp) = (record.maybeScore, record.maybeStamp)
        }

        /// Sets every fixed-size property of `record` (the string columns it keeps: they are what must not move).
        func assignFixed(to record: FixedWidthRecord) {
            (record.int, record.int8, record.int16, record.int32) = (int, int8, int16, int32)
            (record.flag, record.ratio, record.score, record.stamp) = (flag, ratio, score, stamp)
            (record.maybeInt, record.maybeFlag, record.maybeRatio) = (maybeInt, maybeFlag, maybeRatio)
            (record.maybeScore, record.maybeStamp) = (maybeScore, maybeStamp)
        }
    }

    private let count = 2_000

    private func populate(_ realm: Realm) throws {
        try realm.write {
            for id in 0..<count {
                let record = FixedWidthRecord()
                record.id = id
                let values = Values(id: id, round: 0)
                values.assignFixed(to: record)
                (record.label, record.note) = (values.label, values.note)
                realm.add(record)
            }
        }
    }

    /// Every object holds round `round`'s fixed-size values and round 0's strings.
    private func check(_ realm: Realm, round: Int, sourceLocation: SourceLocation = #_sourceLocation) throws {
        var wrong = 0
        for record in realm.objects(FixedWidthRecord.self) {
            var expected = Values(id: record.id, round: round)
            let created = Values(id: record.id, round: 0)
            (expected.label, expected.note) = (created.label, created.note)
            if Values(record) != expected { wrong += 1 }
        }
        #expect(wrong == 0, sourceLocation: sourceLocation)
        #expect(realm.objects(FixedWidthRecord.self).count == count, sourceLocation: sourceLocation)
    }

    /// Key order (rows found in the remembered leaf), then a shuffled order (rows mostly in other leaves: today's
    /// path), then key order again with every optional set to nil and back within the write; then a new Realm. In a
    /// plain and in an encrypted file (whose dirty pages are plaintext until the commit encrypts them).
    @Test(arguments: [false, true])
    func everyFixedSizeTypeAndNilReadBackInEveryOrder(encrypted: Bool) throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("in-place-\(UUID()).strata")
        defer { try? FileManager.default.removeItem(at: url) }
        var configuration = Realm.Configuration(fileURL: url, objectTypes: [FixedWidthRecord.self])
        if encrypted { configuration.encryptionKey = Data((0..<64).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 1) }) }
        let realm = try Realm(configuration: configuration)
        try populate(realm)
        try check(realm, round: 0)
        try realm.write {
            for record in realm.objects(FixedWidthRecord.self) {
                let values = Values(id: record.id, round: 1)
                values.assignFixed(to: record)
                #expect(record.int == values.int && record.maybeStamp == values.maybeStamp)
            }
        }
        try check(realm, round: 1)
        var generator = SystemRandomNumberGenerator()
        let shuffled = Array(0..<count).shuffled(using: &generator)
        try realm.write {
            for id in shuffled {
                let record = try #require(realm.object(ofType: FixedWidthRecord.self, forPrimaryKey: id))
                Values(id: id, round: 2).assignFixed(to: record)
            }
        }
        try check(realm, round: 2)
        try realm.write {
            for record in realm.objects(FixedWidthRecord.self) {
                (record.maybeInt, record.maybeFlag, record.maybeRatio) = (nil, nil, nil)
                (record.maybeScore, record.maybeStamp) = (nil, nil)
                #expect(record.maybeInt == nil && record.maybeFlag == nil && record.maybeStamp == nil)
                Values(id: record.id, round: 3).assignFixed(to: record)
            }
        }
        try check(realm, round: 3)
        try check(try Realm(configuration: configuration), round: 3)
    }

    /// An upsert that changes one fixed-size value (or sets it to nil) patches it in place like the setter; one that
    /// changes two takes the builder. Either way every column reads back what was set.
    @Test func upsertsChangingOneFixedSizeValueReadBack() throws {
        let realm = try Realm(
            configuration: Realm.Configuration(
                inMemoryIdentifier: "in-place-\(UUID())", objectTypes: [FixedWidthRecord.self]))
        try populate(realm)
        let next = { (id: Int) in Values(id: id, round: 1) }
        try realm.write {
            for id in 0..<count {
                let values = next(id)
                realm.create(FixedWidthRecord.self, value: ["id": id, "score": values.score], update: .modified)
                realm.create(
                    FixedWidthRecord.self, value: ["id": id, "maybeStamp": values.maybeStamp as Any],
                    update: .modified)
                realm.create(
                    FixedWidthRecord.self, value: ["id": id, "int16": values.int16, "flag": values.flag],
                    update: .modified)
            }
        }
        var wrong = 0
        for record in realm.objects(FixedWidthRecord.self) {
            var expected = Values(id: record.id, round: 0)
            let values = next(record.id)
            (expected.score, expected.maybeStamp) = (values.score, values.maybeStamp)
            (expected.int16, expected.flag) = (values.int16, values.flag)
            if Values(record) != expected { wrong += 1 }
        }
        #expect(wrong == 0)
    }

    /// A write that sets values in place and then fails leaves every object as it was; so does `cancelWrite`.
    @Test func aFailedOrCancelledWriteRestoresTheOldValues() throws {
        let realm = try Realm(
            configuration: Realm.Configuration(
                inMemoryIdentifier: "in-place-\(UUID())", objectTypes: [FixedWidthRecord.self]))
        try populate(realm)
        #expect(throws: Realm.Error.self) {
            try realm.write {
                for record in realm.objects(FixedWidthRecord.self) {
                    Values(id: record.id, round: 1).assignFixed(to: record)
                }
                realm.create(FixedWidthRecord.self, value: ["id": 0])
            }
        }
        try check(realm, round: 0)
        realm.beginWrite()
        for record in realm.objects(FixedWidthRecord.self) { Values(id: record.id, round: 2).assignFixed(to: record) }
        realm.cancelWrite()
        try check(realm, round: 0)
    }

    /// `x += 1` reads the row and sets it in place without a second search while nothing changed in between. Here
    /// something does: a neighbour in the same leaf rewritten longer, another property of the same object, a
    /// cancelled write between the read and the set. Every value must be the one set.
    @Test func aReadThenASetWithChangesBetweenKeepsEveryValue() throws {
        let realm = try Realm(
            configuration: Realm.Configuration(
                inMemoryIdentifier: "in-place-\(UUID())", objectTypes: [FixedWidthRecord.self]))
        try populate(realm)
        let records = Array(realm.objects(FixedWidthRecord.self))
        try realm.write {
            for (index, record) in records.enumerated() {
                let score = record.score
                if index + 1 < records.count { records[index + 1].label += "longer" }
                record.score = score + 1
                let int = record.int
                record.maybeScore = 0.5
                record.int = int + 2
            }
        }
        let first = try #require(records.first)
        realm.beginWrite()
        let read = first.score
        realm.cancelWrite()
        try realm.write { first.score = read + 10 }
        var wrong = 0
        for record in realm.objects(FixedWidthRecord.self) {
            let created = Values(id: record.id, round: 0)
            let score = created.score + 1 + (record.id == first.id ? 10 : 0)
            let label = created.label + (record.id == first.id ? "" : "longer")
            if record.score != score || record.int != created.int + 2 || record.maybeScore != 0.5
                || record.label != label || record.maybeInt != created.maybeInt
            {
                wrong += 1
            }
        }
        #expect(wrong == 0)
    }

    /// An observer of an object set in place hears of exactly the properties that changed, old and new values.
    @Test func observersSeeExactlyThePropertiesSetInPlace() throws {
        let realm = try Realm(
            configuration: Realm.Configuration(
                inMemoryIdentifier: "in-place-\(UUID())", objectTypes: [FixedWidthRecord.self]))
        try populate(realm)
        let observed = try #require(realm.object(ofType: FixedWidthRecord.self, forPrimaryKey: 11))
        var received: [ObjectChange<FixedWidthRecord>] = []
        let token = observed.observe { received.append($0) }
        defer { token.invalidate() }
        let before = Values(id: 11, round: 0)
        try realm.write {
            // The row before it is put first, leaving the observed row's leaf dirty and remembered.
            try #require(realm.object(ofType: FixedWidthRecord.self, forPrimaryKey: 10)).label = "moved"
            observed.score = 42.5
            observed.maybeInt = nil
        }
        guard case .change(_, let properties)? = received.last else {
            Issue.record("expected a change")
            return
        }
        #expect(properties.map(\.name) == ["score", "maybeInt"])
        #expect(properties.first?.oldValue as? Double == before.score && properties.first?.newValue as? Double == 42.5)
        #expect(properties.last?.oldValue as? Int == before.maybeInt && observed.maybeInt == nil)
    }
}

import Foundation
import StrataTestSupport
import Testing

@testable import Strata

@Suite("ObjectId")
struct ObjectIdTests {
    @Test func defaultIsAllZero() {
        let id = ObjectId()
        #expect(id.bytes == [UInt8](repeating: 0, count: 12))
        #expect(id.stringValue == "000000000000000000000000")
        #expect(id.timestamp == Date(timeIntervalSince1970: 0))
    }

    @Test func byteLayoutIsTimestampProcessUniqueCounter() {
        let id = ObjectId(timestamp: 0x0102_0304, processUnique: 0xFF_0506_0708_090A, counter: 0xFF0B_0C0D)
        // Only the low 40 bits of the process-unique value and the low 24 bits of the counter are used.
        #expect(id.bytes == [0x01, 0x02, 0x03, 0x04, 0x06, 0x07, 0x08, 0x09, 0x0A, 0x0B, 0x0C, 0x0D])
        #expect(id.timestamp == Date(timeIntervalSince1970: 0x0102_0304))
    }

    @Test func knownIdentifierParsesAndPrints() throws {
        let id = try ObjectId(string: "507f1f77bcf86cd799439011")
        #expect(id.bytes == [0x50, 0x7F, 0x1F, 0x77, 0xBC, 0xF8, 0x6C, 0xD7, 0x99, 0x43, 0x90, 0x11])
        #expect(id.stringValue == "507f1f77bcf86cd799439011")
        #expect(id.description == id.stringValue)
        #expect("\(id)" == "507f1f77bcf86cd799439011")
        // 0x507f1f77 seconds: 2012-10-17T21:13:27Z.
        #expect(id.timestamp == Date(timeIntervalSince1970: 1_350_508_407))
    }

    @Test func uppercaseHexIsAcceptedAndPrintedLowercase() throws {
        let upper = try ObjectId(string: "507F1F77BCF86CD799439011")
        let mixed = try ObjectId(string: "507f1F77bCf86cD799439011")
        #expect(upper.stringValue == "507f1f77bcf86cd799439011")
        #expect(upper == mixed)
    }

    @Test(arguments: [
        "",
        "507f1f77bcf86cd79943901",  // 23 characters
        "507f1f77bcf86cd7994390111",  // 25 characters
        "507f1f77bcf86cd79943901g",
        " 507f1f77bcf86cd79943901",
        "507f1f77bcf86cd79943901 ",
        "0x507f1f77bcf86cd7994390",
        "507f1f77bcf86cd7994390\u{E9}",  // 22 hex digits and a two-byte character: 24 UTF-8 bytes
        "507f1f77-bcf86cd799439011",
    ])
    func malformedStringsThrow(input: String) {
        #expect(throws: ObjectIdParseError(input: input)) {
            try ObjectId(string: input)
        }
        #expect(ObjectIdParseError(input: input).description.contains("\"\(input)\""))
    }

    @Test func bytesRoundTrip() throws {
        var generator = SeededGenerator(seed: 7)
        for _ in 0..<200 {
            let bytes = (0..<12).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let id = try #require(ObjectId(bytes: bytes))
            #expect(id.bytes == bytes)
            #expect(try ObjectId(string: id.stringValue) == id)
            #expect(id.stringValue == bytes.map { String(format: "%02x", $0) }.joined())
        }
        #expect(ObjectId(bytes: [UInt8](repeating: 1, count: 11)) == nil)
        #expect(ObjectId(bytes: [UInt8](repeating: 1, count: 13)) == nil)
        #expect(ObjectId(bytes: ArraySlice([UInt8](0..<12))) == ObjectId(bytes: [UInt8](0..<12)))
    }

    @Test func orderingIsLexicographicOnBytes() throws {
        var generator = SeededGenerator(seed: 11)
        var ids: [ObjectId] = []
        for _ in 0..<300 {
            // Few distinct byte values so that long shared prefixes and equal identifiers occur.
            let bytes = (0..<12).map { _ in [0x00, 0x01, 0x7F, 0x80, 0xFF][Int.random(in: 0..<5, using: &generator)] }
            ids.append(try #require(ObjectId(bytes: bytes.map(UInt8.init))))
        }
        for (a, b) in zip(ids, ids.dropFirst()) {
            #expect((a < b) == a.bytes.lexicographicallyPrecedes(b.bytes))
            #expect((a == b) == (a.bytes == b.bytes))
        }
        let sorted = ids.sorted()
        #expect(sorted.map(\.bytes) == ids.map(\.bytes).sorted { $0.lexicographicallyPrecedes($1) })
        #expect(try ObjectId(string: "00000000000000000000000f") < ObjectId(string: "000000000000000000000010"))
        #expect(try ObjectId(string: "0100000000000000000000ff") > ObjectId(string: "00ffffffffffffffffffffff"))
    }

    @Test func generatedIdentifiersCarryTheCurrentTime() {
        let before = Date().timeIntervalSince1970.rounded(.down)
        let id = ObjectId.generate()
        let after = Date().timeIntervalSince1970
        #expect(id.timestamp.timeIntervalSince1970 >= before)
        #expect(id.timestamp.timeIntervalSince1970 <= after)
        #expect(abs(id.timestamp.timeIntervalSinceNow) < 5)
    }

    @Test func generatedCounterIncreasesAndProcessPartIsFixed() {
        let ids = (0..<1000).map { _ in ObjectId.generate() }
        let processPart = Array(ids[0].bytes[4..<9])
        for (a, b) in zip(ids, ids.dropFirst()) {
            #expect(Array(b.bytes[4..<9]) == processPart)
            // Other tests may generate identifiers concurrently, so the step is at least one, not exactly one.
            let step = (counter(of: b) &- counter(of: a)) & 0xFF_FFFF
            #expect(step >= 1 && step < 1 << 23)
            #expect(b.timestamp >= a.timestamp)
        }
    }

    @Test func generatedIdentifiersAreUniqueAcrossTasks() async {
        let ids = await withTaskGroup(of: [ObjectId].self) { group in
            for _ in 0..<8 {
                group.addTask { (0..<2000).map { _ in ObjectId.generate() } }
            }
            var all: [ObjectId] = []
            for await batch in group { all += batch }
            return all
        }
        #expect(ids.count == 16_000)
        #expect(Set(ids).count == 16_000)
        #expect(Set(ids.map(\.stringValue)).count == 16_000)
    }

    @Test func hashingMatchesEquality() throws {
        let a = try ObjectId(string: "507f1f77bcf86cd799439011")
        let b = try #require(ObjectId(bytes: a.bytes))
        #expect(a == b)
        #expect(a.hashValue == b.hashValue)
        #expect(Set([a, b, ObjectId()]).count == 2)
    }

    @Test func codableUsesTheHexString() throws {
        let id = try ObjectId(string: "507f1f77bcf86cd799439011")
        let data = try JSONEncoder().encode([id])
        #expect(String(decoding: data, as: UTF8.self) == #"["507f1f77bcf86cd799439011"]"#)
        #expect(try JSONDecoder().decode([ObjectId].self, from: data) == [id])
        #expect(try JSONDecoder().decode([ObjectId].self, from: Data(#"["507F1F77BCF86CD799439011"]"#.utf8)) == [id])
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode([ObjectId].self, from: Data(#"["507f1f77"]"#.utf8))
        }
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode([ObjectId].self, from: Data("[12]".utf8))
        }
    }

    private func counter(of id: ObjectId) -> UInt32 {
        id.bytes[9...].reduce(0) { $0 << 8 | UInt32($1) }
    }
}

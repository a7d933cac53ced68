import Foundation
import Testing

@testable import StrataSync

@Suite struct ChangeFormatTests {
    @Test func aBatchWithEveryKindOfValueAndOperationRoundTrips() throws {
        let t = HybridTimestamp(wallMilliseconds: 1, counter: 0, replica: "a")
        let values: [SyncValue] = [
            .null, .bool(true), .int(-42), .float(.infinity), .double(.nan), .string("Rex"), .data(Data([0, 255])),
            .date(1_764_000_000.5), .decimal128("12.50"), .objectId("0123456789abcdef01234567"),
            .uuid(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!), .link(.string("Ann")),
            .embedded(["city": .string("Oslo")]),
        ]
        var properties: [String: PropertyUpdate] = [:]
        for (index, value) in values.enumerated() { properties["p\(index)"] = .value(value, at: t) }
        properties["list"] = .list([.clear(at: t), .insert(id: t, after: nil, value: .int(1)), .remove(id: t)])
        properties["map"] = .map([
            .set(key: "k", value: .int(1), at: t), .set(key: "gone", value: nil, at: t), .clear(at: t),
        ])
        properties["set"] = .set([
            .add(value: .string("red"), tag: t), .remove(value: .string("red"), observedTags: [t]),
        ])
        let batch = UploadBatch(
            scope: "main", clientID: "a", clientSequence: 7,
            changes: [
                ObjectChange(objectType: "SyncDog", primaryKey: .int(1), created: t, deleted: t, properties: properties)
            ])
        let decoded = try SyncJSON.decode(UploadBatch.self, from: try SyncJSON.text(batch))
        #expect(decoded.formatVersion == 1)
        // NaN is not equal to itself: compare its encoding.
        #expect(try SyncJSON.text(decoded) == (try SyncJSON.text(batch)))
        #expect(decoded.changes[0].properties["list"] == batch.changes[0].properties["list"])
        #expect(decoded.changes[0].properties["p5"] == .value(.string("Rex"), at: t))
    }

    @Test func aValueIsAOneKeyObjectNamingItsKind() throws {
        #expect(try SyncJSON.text(SyncValue.int(42)) == #"{"int":42}"#)
        #expect(try SyncJSON.text(SyncValue.link(.string("Ann"))) == #"{"link":{"string":"Ann"}}"#)
        #expect(throws: DecodingError.self) { try SyncJSON.decode(SyncValue.self, from: #"{"int":1,"bool":true}"#) }
    }
}

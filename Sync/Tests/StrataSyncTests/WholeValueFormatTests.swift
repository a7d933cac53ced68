import Foundation
@_spi(StrataSync) import Strata
import Testing

@_spi(StrataSync) @testable import StrataSync

/// The value forms of mixed values and embedded objects, without PostgreSQL: the change format's JSON, what a
/// mixed property takes, the plain JSON of the jsonb columns, and the conversions from and to captured values.
@Suite struct WholeValueFormatTests {
    private static let nested: SyncValue = .embedded([
        "street": .string("Main"), "zip": .null, "geo": .embedded(["lat": .double(1.5)]),
        "notes": .list([.string("n1")]), "extra": .typedLink(type: "ClientPerson", key: .string("Ann")),
    ])

    @Test func mixedAndEmbeddedValuesRoundTripThroughTheChangeFormat() throws {
        let values: [SyncValue] = [
            .typedLink(type: "ClientPerson", key: .string("Ann")),
            .list([.int(1), .list([.bool(false)]), .dictionary(["k": .null])]),
            .dictionary(["a": .decimal128("1.5"), "b": .typedLink(type: "WholeThing", key: .int(2))]),
            Self.nested,
        ]
        for value in values {
            #expect(try SyncJSON.decode(SyncValue.self, from: try SyncJSON.text(value)) == value)
        }
        #expect(
            try SyncJSON.text(SyncValue.typedLink(type: "ClientPerson", key: .string("Ann")))
                == #"{"typedLink":{"key":{"string":"Ann"},"type":"ClientPerson"}}"#)
        #expect(try SyncJSON.text(SyncValue.list([.int(1)])) == #"{"list":[{"int":1}]}"#)
        #expect(try SyncJSON.text(SyncValue.dictionary(["k": .int(1)])) == #"{"dictionary":{"k":{"int":1}}}"#)
    }

    @Test func aMixedPropertyTakesPlainValuesTypedLinksAndNestedCollectionsOnly() throws {
        let schema = try ServerSchema(
            namespace: "test", classes: [WholeThing.self, WholeAddress.self, WholeGeo.self, ClientPerson.self])
        let type = try schema.type("WholeThing")
        let mixed = try #require(type.column(named: "value"))
        let home = try #require(type.column(named: "home"))
        let fits: [SyncValue] = [
            .null, .int(1), .string("x"), .typedLink(type: "ClientPerson", key: .string("Ann")),
            .list([.int(1), .dictionary(["k": .typedLink(type: "WholeThing", key: .int(1))])]),
        ]
        for value in fits { #expect(value.fits(mixed) && value.typedLinksResolve(in: schema), "\(value)") }
        let refused: [SyncValue] = [
            .link(.string("Ann")), .embedded([:]), .string("a\u{0}b"), .list([.embedded([:])]),
            .typedLink(type: "ClientPerson", key: .bool(true)),
        ]
        for value in refused { #expect(!value.fits(mixed), "\(value)") }
        // A typed link must name a synced type by a key of its primary key's kind.
        #expect(!SyncValue.typedLink(type: "Nowhere", key: .int(1)).typedLinksResolve(in: schema))
        #expect(!SyncValue.typedLink(type: "ClientPerson", key: .int(1)).typedLinksResolve(in: schema))
        #expect(Self.nested.fits(home) && !Self.nested.fits(mixed))
        #expect(!SyncValue.list([]).fits(home))
    }

    @Test func theServerRefusesAMixedLinkToATypeItDoesNotSync() throws {
        let schema = try ServerSchema(
            namespace: "test",
            classes: [WholeThing.self, WholeAddress.self, WholeGeo.self, ClientPerson.self, WholeBox.self])
        let t = HybridTimestamp(wallMilliseconds: 1, counter: 0, replica: "a")
        var change = ObjectChange(objectType: "WholeThing", primaryKey: .int(1))
        change.properties["value"] = .value(.typedLink(type: "Nowhere", key: .int(1)), at: t)
        #expect(throws: SyncError.self) { try RowMerge.validate(change, of: try schema.type("WholeThing"), in: schema) }
        change.properties["value"] = .value(.typedLink(type: "ClientPerson", key: .string("Ann")), at: t)
        try RowMerge.validate(change, of: try schema.type("WholeThing"), in: schema)
        // A mixed property may hold a list; an element of a collection of mixed values may not.
        change.properties["value"] = .value(.list([.int(1)]), at: t)
        try RowMerge.validate(change, of: try schema.type("WholeThing"), in: schema)
        var box = ObjectChange(objectType: "WholeBox", primaryKey: .int(1))
        box.properties["items"] = .list([.insert(id: t, after: nil, value: .list([.int(1)]))])
        #expect(throws: SyncError.self) { try RowMerge.validate(box, of: try schema.type("WholeBox"), in: schema) }
        box.properties["items"] = .list([.insert(id: t, after: nil, value: .int(1))])
        try RowMerge.validate(box, of: try schema.type("WholeBox"), in: schema)
    }

    @Test func embeddedObjectsAreTheirPlainJSONInTheirColumn() throws {
        let text = try SyncJSON.text(PlainJSON.value(Self.nested))
        #expect(
            text
                == #"{"extra":{"key":"Ann","type":"ClientPerson"},"geo":{"lat":1.5},"notes":["n1"],"street":"Main","zip":null}"#
        )
    }

    @Test func capturedValuesAndChangeFormatValuesConvertBothWays() throws {
        let captured: [CapturedValue] = [
            .typedLink(className: "ClientPerson", key: .string("Ann")),
            .list([.int(1), .list([]), .dictionary(["k": .null])]),
            .dictionary(["a": .uuid(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!)]),
            .embedded(["geo": .embedded(["lat": .double(1.5)]), "notes": .list([.string("n")])]),
        ]
        for value in captured {
            let converted = SyncValue(value)
            #expect(CapturedValue(converted) == value)
        }
        #expect(SyncValue(.typedLink(className: "A", key: .int(1))) == .typedLink(type: "A", key: .int(1)))
        #expect(SyncValue(.embedded(["x": .int(1)])) == .embedded(["x": .int(1)]))
    }
}

import Foundation
import StrataStorage
import Testing

@testable import Strata

/// The table of property codecs (`Values/PropertyCodecs.swift`) states per type what other code relies on: that a
/// migration's zero value is a value of the type, and whether rows keep the type in their variable-size tail
/// (change detection compares row columns with that answer). These tests hold the table to the row encoding and
/// the stored-schema check, so a wrong entry for a new type fails here rather than as a missed change.
@Suite("The table of property codecs")
struct PropertyCodecTests {
    /// The types a row column stores directly (links are stored as keys, mixed values as their own bytes).
    static let scalarTypes: [PropertyType] = [
        .bool, .int, .float, .double, .string, .data, .date, .decimal128, .objectId, .uuid,
    ]

    @Test("A required property's zero value is a value of its type", arguments: scalarTypes)
    func zeroValueIsOfTheType(type: PropertyType) {
        let zero = type.codec.zeroValue()
        #expect(type.codec.holds(zero))
        #expect(zero.fits(_PropertyInfo(type: type)))
        for other in Self.scalarTypes where other != type {
            #expect(!other.codec.holds(zero), "\(type)'s zero value is also held by \(other)")
        }
    }

    @Test("Types without a zero value give null", arguments: [PropertyType.object, .linkingObjects, .any])
    func typesWithoutAZero(type: PropertyType) {
        guard case .null = type.codec.zeroValue() else {
            Issue.record("\(type) has a zero value")
            return
        }
    }

    @Test("Rows keep a type in their tail exactly when its codec says it is variable-size", arguments: scalarTypes)
    func variableSizeMatchesTheRowEncoding(type: PropertyType) throws {
        var builder = RowBuilder(columns: 1)
        try RowCodec.set(type.codec.zeroValue(), column: 0, in: &builder, type: "Item", property: "value")
        let row = builder.finish()
        // Format 2 (Records/Row.swift): 3 header bytes, the null bitmap, then the variable-size bitmap.
        #expect(row[0] == RowFormat.version)
        let inTail = row[4] & 1 != 0
        #expect(inTail == type.isVariableSize)
    }

    @Test("Loose values convert to the property's type, and nothing else does")
    func looseConversions() {
        #expect(PropertyType.double.codec.converted(3).map { $0.fits(_PropertyInfo(type: .double)) } == true)
        #expect(PropertyType.decimal128.codec.converted("1.5").map { PropertyType.decimal128.codec.holds($0) } == true)
        #expect(PropertyType.objectId.codec.converted("not an id") == nil)
        #expect(PropertyType.string.codec.converted(3) == nil)
    }
}

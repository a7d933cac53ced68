import Foundation

/// A ``SyncValue`` as plain JSON, the form of the jsonb columns that SQL readers see: numbers, strings, booleans,
/// null, arrays and objects, without the kind tags of the change format. Data is base64, a date its seconds since
/// 1970, a decimal, object id or UUID its text, a link its target's primary key, an embedded object an object
/// (its lists and sets arrays, its maps objects, a typed link `{"type": …, "key": …}`).
/// (Mixed values keep the tagged form so that their kind survives; see ``ServerColumn``.)
enum PlainJSON: Encodable {
    case value(SyncValue)
    case array([SyncValue])
    case object([String: SyncValue])
    /// A collection of mixed values: an array of tagged values, so that each element's kind survives.
    case taggedArray([SyncValue])
    /// A map of mixed values: an object of tagged values.
    case taggedObject([String: SyncValue])

    /// The materialised contents of a list or set column: tagged elements when they are mixed values.
    static func array(_ values: [SyncValue], of column: ServerColumn?) -> PlainJSON {
        column?.property.type == .any ? .taggedArray(values) : .array(values)
    }

    /// The materialised contents of a map column: tagged values when they are mixed values.
    static func object(_ values: [String: SyncValue], of column: ServerColumn?) -> PlainJSON {
        column?.property.type == .any ? .taggedObject(values) : .object(values)
    }

    func encode(to encoder: any Encoder) throws {
        switch self {
        case .value(let value): try PlainJSON.encode(value, to: encoder)
        case .array(let values):
            var container = encoder.unkeyedContainer()
            for value in values { try container.encode(PlainJSON.value(value)) }
        case .object(let values):
            var container = encoder.container(keyedBy: AnyKey.self)
            for (key, value) in values { try container.encode(PlainJSON.value(value), forKey: AnyKey(key)) }
        case .taggedArray(let values):
            var container = encoder.unkeyedContainer()
            for value in values { try container.encode(value) }
        case .taggedObject(let values):
            var container = encoder.container(keyedBy: AnyKey.self)
            for (key, value) in values { try container.encode(value, forKey: AnyKey(key)) }
        }
    }

    private static func encode(_ value: SyncValue, to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch value {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .int(let value): try container.encode(value)
        case .float(let value): try container.encode(value)
        case .double(let value): try container.encode(value)
        case .string(let value), .decimal128(let value), .objectId(let value): try container.encode(value)
        case .data(let value): try container.encode(value.base64EncodedString())
        case .date(let value): try container.encode(value)
        case .uuid(let value): try container.encode(value.uuidString)
        case .link(let key): try container.encode(PlainJSON.value(key))
        case .embedded(let values), .dictionary(let values): try container.encode(PlainJSON.object(values))
        case .list(let values): try container.encode(PlainJSON.array(values))
        case .typedLink(let type, let key):
            try container.encode(PlainJSON.object(["type": .string(type), "key": key]))
        }
    }

    struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(_ string: String) { stringValue = string }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }
}

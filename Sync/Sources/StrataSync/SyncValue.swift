import Foundation

/// One value in the change format, typed after Strata's property types (``Strata/PropertyType``).
///
/// Encoded (``Codable``) as a one-key object naming the kind: `{"int": 42}`, `{"string": "Rex"}`,
/// `{"null": true}`, `{"data": "<base64>"}`, `{"date": 1764221345.25}` (seconds since 1970),
/// `{"decimal128": "12.50"}`, `{"objectId": "<24 hex digits>"}`, `{"uuid": "<UUID>"}`,
/// `{"link": <primary key value>}`, `{"embedded": {"property": value, …}}`; and in mixed values only,
/// `{"typedLink": {"type": "Dog", "key": <primary key value>}}`, `{"list": [value, …]}` and
/// `{"dictionary": {"key": value, …}}` (a mixed value's nested collection, carried whole). An embedded object's
/// list, set and map properties are `list`, `list` and `dictionary` values too.
public enum SyncValue: Sendable, Hashable, Codable {
    /// No value (a nil optional, or a removed link).
    case null
    /// A `bool` value.
    case bool(Bool)
    /// An `int` value (every integer width, as 64 bits).
    case int(Int64)
    /// A `float` value.
    case float(Float)
    /// A `double` value.
    case double(Double)
    /// A `string` value.
    case string(String)
    /// A `data` value.
    case data(Data)
    /// A `date` value, in seconds since 1970.
    case date(Double)
    /// A `decimal128` value, in its decimal text form.
    case decimal128(String)
    /// An `objectId` value, as 24 hexadecimal digits.
    case objectId(String)
    /// A `uuid` value.
    case uuid(UUID)
    /// A link to another synced object: the target's primary key.
    indirect case link(SyncValue)
    /// An embedded object: its properties by persisted name. It belongs to its parent and syncs as part of it.
    case embedded([String: SyncValue])
    /// A mixed value's link: the target's persisted class name and primary key (a mixed property may link to
    /// any synced type).
    indirect case typedLink(type: String, key: SyncValue)
    /// A mixed value holding a list (or an embedded object's list or set property): the elements in order.
    case list([SyncValue])
    /// A mixed value holding a dictionary (or an embedded object's map property): the entries by key.
    case dictionary([String: SyncValue])

    /// The kind's name, as in the encoded form and in errors.
    public var kind: String {
        switch self {
        case .null: "null"
        case .bool: "bool"
        case .int: "int"
        case .float: "float"
        case .double: "double"
        case .string: "string"
        case .data: "data"
        case .date: "date"
        case .decimal128: "decimal128"
        case .objectId: "objectId"
        case .uuid: "uuid"
        case .link: "link"
        case .embedded: "embedded"
        case .typedLink: "typedLink"
        case .list: "list"
        case .dictionary: "dictionary"
        }
    }

    private enum Key: String, CodingKey {
        case null, bool, int, float, double, string, data, date, decimal128, objectId, uuid, link, embedded, typedLink,
            list, dictionary
    }

    /// The body of the `typedLink` form.
    private struct TypedLink: Codable {
        var type: String
        var key: SyncValue
    }

    /// Decodes the one-key form; any other shape is a `DecodingError`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Key.self)
        guard container.allKeys.count == 1, let key = container.allKeys.first else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: decoder.codingPath, debugDescription: "a sync value is an object with one key"))
        }
        switch key {
        case .null: self = .null
        case .bool: self = .bool(try container.decode(Bool.self, forKey: key))
        case .int: self = .int(try container.decode(Int64.self, forKey: key))
        case .float: self = .float(try container.decode(Float.self, forKey: key))
        case .double: self = .double(try container.decode(Double.self, forKey: key))
        case .string: self = .string(try container.decode(String.self, forKey: key))
        case .data: self = .data(try container.decode(Data.self, forKey: key))
        case .date: self = .date(try container.decode(Double.self, forKey: key))
        case .decimal128: self = .decimal128(try container.decode(String.self, forKey: key))
        case .objectId: self = .objectId(try container.decode(String.self, forKey: key))
        case .uuid: self = .uuid(try container.decode(UUID.self, forKey: key))
        case .link: self = .link(try container.decode(SyncValue.self, forKey: key))
        case .embedded: self = .embedded(try container.decode([String: SyncValue].self, forKey: key))
        case .typedLink:
            let link = try container.decode(TypedLink.self, forKey: key)
            self = .typedLink(type: link.type, key: link.key)
        case .list: self = .list(try container.decode([SyncValue].self, forKey: key))
        case .dictionary: self = .dictionary(try container.decode([String: SyncValue].self, forKey: key))
        }
    }

    /// Encodes the one-key form.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        switch self {
        case .null: try container.encode(true, forKey: .null)
        case .bool(let value): try container.encode(value, forKey: .bool)
        case .int(let value): try container.encode(value, forKey: .int)
        case .float(let value): try container.encode(value, forKey: .float)
        case .double(let value): try container.encode(value, forKey: .double)
        case .string(let value): try container.encode(value, forKey: .string)
        case .data(let value): try container.encode(value, forKey: .data)
        case .date(let value): try container.encode(value, forKey: .date)
        case .decimal128(let value): try container.encode(value, forKey: .decimal128)
        case .objectId(let value): try container.encode(value, forKey: .objectId)
        case .uuid(let value): try container.encode(value, forKey: .uuid)
        case .link(let value): try container.encode(value, forKey: .link)
        case .embedded(let value): try container.encode(value, forKey: .embedded)
        case .typedLink(let type, let key): try container.encode(TypedLink(type: type, key: key), forKey: .typedLink)
        case .list(let value): try container.encode(value, forKey: .list)
        case .dictionary(let value): try container.encode(value, forKey: .dictionary)
        }
    }
}

/// An asymmetric value's JSON form (the gateway's asymmetric uploads): a one-key object naming the case, as
/// ``SyncValue`` does: `{"value": {"int": 7}}`, `{"embedded": {"lat": {"value": {"double": 1.5}}}}`,
/// `{"list": [...]}`, `{"map": {"key": ...}}`.
extension AsymmetricValue: Codable {
    private enum Key: String, CodingKey {
        case value, embedded, list, map
    }

    /// Decodes the one-key form; any other shape is a `DecodingError`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Key.self)
        guard container.allKeys.count == 1, let key = container.allKeys.first else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: decoder.codingPath, debugDescription: "an asymmetric value is an object with one key")
            )
        }
        switch key {
        case .value: self = .value(try container.decode(SyncValue.self, forKey: key))
        case .embedded: self = .embedded(try container.decode([String: AsymmetricValue].self, forKey: key))
        case .list: self = .list(try container.decode([AsymmetricValue].self, forKey: key))
        case .map: self = .map(try container.decode([String: AsymmetricValue].self, forKey: key))
        }
    }

    /// Encodes the one-key form.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        switch self {
        case .value(let value): try container.encode(value, forKey: .value)
        case .embedded(let values): try container.encode(values, forKey: .embedded)
        case .list(let elements): try container.encode(elements, forKey: .list)
        case .map(let entries): try container.encode(entries, forKey: .map)
        }
    }
}

/// Codable models (API §5): declare `class Dog: Object, Codable` and Swift synthesises the conformance from the
/// `@Persisted` properties, which are `Codable` whenever their values are.
///
/// Encoding a managed object encodes the values stored in its Realm. Decoding produces an unmanaged object; a
/// key missing from the input gives the property its type's default (0, "", nil, a new ObjectId...), so older
/// JSON still decodes after a property is added.
extension Persisted: Encodable where Value: Encodable {
    /// Encodes the property's current value (read from the Realm when the object is managed). A linked object is
    /// encoded nested; links that form a cycle throw `EncodingError.invalidValue` (see `EncodingCycles`).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        let value: Value
        if let owner {
            value = owner.takeUnretainedValue().read(column: property, as: Value.self)
        } else if let box, let owner = box.owner, box.column >= 0 {
            value = owner._withUnsafeGuaranteedRef { $0.read(column: box.column, as: Value.self) }
        } else if let box {
            value = box.value(as: Value.self)
        } else {
            return
        }
        try EncodingCycles.nest(value, at: encoder.codingPath) { try container.encode(value) }
    }
}

extension Persisted: Decodable where Value: Decodable {
    /// Decodes the property's value.
    public init(from decoder: any Decoder) throws {
        let value = try decoder.singleValueContainer().decode(Value.self)
        self.init(box: PersistedBox(decoded: value._stored, valueType: Value.self))
    }
}

extension KeyedDecodingContainer {
    /// Decodes a `@Persisted` property; a missing key gives the type's default value.
    public func decode<Value: _Persistable & Decodable>(_ type: Persisted<Value>.Type, forKey key: Key) throws
        -> Persisted<Value>
    {
        guard contains(key) else { return Persisted(box: PersistedBox(decoded: nil, valueType: Value.self)) }
        let value = try decode(Value.self, forKey: key)
        return Persisted(box: PersistedBox(decoded: value._stored, valueType: Value.self))
    }
}

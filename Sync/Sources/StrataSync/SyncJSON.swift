import Foundation

/// The JSON coders of the change format and of the jsonb columns. Non-finite floating-point values, which JSON
/// has no numbers for, are the strings `"NaN"`, `"Infinity"` and `"-Infinity"` (PostgreSQL's spellings).
enum SyncJSON {
    static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        encoder.nonConformingFloatEncodingStrategy = .convertToString(
            positiveInfinity: "Infinity", negativeInfinity: "-Infinity", nan: "NaN")
        return encoder
    }

    static func decoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.nonConformingFloatDecodingStrategy = .convertFromString(
            positiveInfinity: "Infinity", negativeInfinity: "-Infinity", nan: "NaN")
        return decoder
    }

    /// `value` as JSON text.
    static func text<Value: Encodable>(_ value: Value) throws -> String {
        String(decoding: try encoder().encode(value), as: UTF8.self)
    }

    /// The value of type `Value` in JSON `text`.
    static func decode<Value: Decodable>(_ type: Value.Type, from text: String) throws -> Value {
        try decoder().decode(type, from: Data(text.utf8))
    }
}

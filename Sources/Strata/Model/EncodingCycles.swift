import StrataStorage

/// Links nest when a `Codable` model is encoded: a `Dog?` property or a `List<Dog>` encodes each dog as a nested
/// object, the Realm SDK's behaviour. Links that form a cycle (two people who are each other's `friend`, a
/// `List` and the `LinkingObjects` that mirror it) would nest without end and overflow the stack, so the objects
/// being encoded around the current one are kept per thread, and an object that is already one of them throws
/// `EncodingError.invalidValue` naming both places — never a crash.
///
/// Break such a cycle in the model: leave one direction out of the type's `CodingKeys` (typically the
/// `LinkingObjects`), or encode it as the linked objects' primary keys in a custom `encode(to:)`.
enum EncodingCycles {
    /// An object as stored: managed accessors of one row are different Swift objects but the same object.
    private enum Identity: Equatable {
        case managed(realm: ObjectIdentifier, className: String, key: Int64)
        case unmanaged(ObjectIdentifier)

        init(_ object: ObjectBase) {
            if let managed = object.managed {
                self = .managed(
                    realm: ObjectIdentifier(managed.realm), className: managed.table.className, key: managed.key)
            } else {
                self = .unmanaged(ObjectIdentifier(object))
            }
        }
    }

    /// The objects being encoded on a thread, outermost first, with where each one is.
    private final class Nesting {
        var objects: [(identity: Identity, codingPath: [any CodingKey])] = []
    }

    private static let nesting = ThreadLocal { Nesting() }

    /// Runs `encode`, which encodes `value` at `codingPath`. When `value` is an object (or an optional holding
    /// one) it is nested in the objects being encoded meanwhile, and throws if it is already one of them.
    static func nest(_ value: Any?, at codingPath: @autoclosure () -> [any CodingKey], _ encode: () throws -> Void)
        throws
    {
        guard let value, let object = value as? ObjectBase else { return try encode() }
        let identity = Identity(object)
        let codingPath = codingPath()
        try nesting.withValue { nesting in
            if let outer = nesting.objects.first(where: { $0.identity == identity }) {
                throw EncodingError.invalidValue(
                    object,
                    EncodingError.Context(
                        codingPath: codingPath,
                        debugDescription:
                            "\(type(of: object)) at \(describe(codingPath)) is the object being encoded at "
                            + "\(describe(outer.codingPath)): its links form a cycle, which nested encoding cannot "
                            + "end; leave one direction out of CodingKeys or encode it as primary keys"))
            }
            nesting.objects.append((identity, codingPath))
        }
        defer { nesting.withValue { _ = $0.objects.popLast() } }
        try encode()
    }

    /// `friends[0].owner`; the encoded value itself for an empty path.
    static func describe(_ codingPath: [any CodingKey]) -> String {
        guard !codingPath.isEmpty else { return "the top level" }
        var text = ""
        for key in codingPath {
            if let index = key.intValue {
                text += "[\(index)]"
            } else {
                text += text.isEmpty ? key.stringValue : "." + key.stringValue
            }
        }
        return text
    }

    /// A coding key for an element's position in an unkeyed container.
    struct Position: CodingKey {
        let intValue: Int?
        var stringValue: String { "\(intValue ?? 0)" }
        init(_ index: Int) { intValue = index }
        init?(intValue: Int) { self.intValue = intValue }
        init?(stringValue: String) { return nil }
    }
}

/// An object value of a map, encoded through ``EncodingCycles`` (a map's values are encoded by the dictionary
/// that holds them, not one by one).
struct NestedObject<Value: Encodable>: Encodable {
    let value: Value

    func encode(to encoder: any Encoder) throws {
        try EncodingCycles.nest(value, at: encoder.codingPath) { try value.encode(to: encoder) }
    }
}

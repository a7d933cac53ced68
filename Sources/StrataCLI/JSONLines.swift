import Foundation
import Strata

/// A JSON value whose object members keep the order they were given in (schema order for objects).
indirect enum JSONValue {
    case null
    case bool(Bool)
    /// A number, already written as JSON number text.
    case number(String)
    case string(String)
    case array([JSONValue])
    case object([(key: String, value: JSONValue)])

    /// The value as compact JSON text on one line.
    var text: String {
        var output = ""
        write(to: &output)
        return output
    }

    private func write(to output: inout String) {
        switch self {
        case .null: output += "null"
        case .bool(let value): output += value ? "true" : "false"
        case .number(let text): output += text
        case .string(let text): Self.writeString(text, to: &output)
        case .array(let elements):
            output += "["
            for (index, element) in elements.enumerated() {
                if index > 0 { output += "," }
                element.write(to: &output)
            }
            output += "]"
        case .object(let members):
            output += "{"
            for (index, member) in members.enumerated() {
                if index > 0 { output += "," }
                Self.writeString(member.key, to: &output)
                output += ":"
                member.value.write(to: &output)
            }
            output += "}"
        }
    }

    private static func writeString(_ text: String, to output: inout String) {
        output += "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": output += "\\\""
            case "\\": output += "\\\\"
            case "\n": output += "\\n"
            case "\r": output += "\\r"
            case "\t": output += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                let hex = String(scalar.value, radix: 16)
                output += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: output.unicodeScalars.append(scalar)
            }
        }
        output += "\""
    }
}

/// Turns stored objects into JSON, one object per line of `strata dump`:
/// - properties in schema order, by persisted name; objects of classes without a primary key start with
///   `"$key"`, their object key;
/// - a link is the target's primary key, or `{"$key": N}` when the target class has none; a link in a mixed
///   value also names the class: `{"$class": "Dog", "$primaryKey": 1}` or `{"$class": "Dog", "$key": 3}`;
/// - embedded objects are nested objects; lists and sets are arrays; maps and mixed dictionaries are objects;
/// - dates are ISO 8601 (UTC) with the fraction digits the stored value needs (see ``DateText``), data is base64,
///   ObjectId, UUID and Decimal128 are strings, and non-finite numbers are the strings `"NaN"`, `"Infinity"` and
///   `"-Infinity"`;
/// - in mixed values, whose type the JSON must carry, a value JSON has no type for is a one-member object naming
///   it (`{"$date": "2024-01-01T10:00:00Z"}`, `$data`, `$objectId`, `$uuid`, `$decimal128`, `$float`, and
///   `{"$double": "NaN"}` for non-finite doubles); doubles always have a point or an exponent (`1.0`), integers
///   never. Map keys cannot start with `$`, so an object with a `$` key is never a map.
///
/// `strata load` reads these lines back (``ObjectReader``).
enum ObjectJSON {
    /// One line of `strata dump` for a top-level object.
    static func line(for object: DynamicObject) -> String {
        var members: [(key: String, value: JSONValue)] = []
        if object.objectSchema.primaryKeyProperty == nil, let key = object.objectKey {
            members.append(("$key", .number(String(key))))
        }
        return JSONValue.object(members + properties(of: object)).text
    }

    /// The persisted properties of `object`, in schema order (linking objects are computed, not stored: left out).
    static func properties(of object: ObjectBase) -> [(key: String, value: JSONValue)] {
        object.objectSchema.properties.filter { $0.type != .linkingObjects }.map { property in
            (property.name, value(object[property.name], mixed: property.type == .any))
        }
    }

    /// `value` as read through `object[name]`; `mixed` for the values of mixed properties, whose links name
    /// their class.
    static func value(_ value: Any?, mixed isMixed: Bool = false) -> JSONValue {
        guard let value else { return .null }
        // Elements of mixed collections may arrive unwrapped (a `Data`, not `.data`): they still need their tag.
        if isMixed, let scalar = mixedScalar(value) { return mixed(scalar) }
        switch value {
        case let bool as Bool: return .bool(bool)
        case let int as Int: return .number(String(int))
        case let int as Int64: return .number(String(int))
        case let double as Double: return number(double)
        case let float as Float: return float.isFinite ? .number("\(float)") : number(Double(float))
        case let string as String: return .string(string)
        case let data as Data: return .string(data.base64EncodedString())
        case let date as Date: return .string(DateText.format(date))
        case let id as ObjectId: return .string(id.stringValue)
        case let uuid as UUID: return .string(uuid.uuidString)
        case let decimal as Decimal128: return .string(decimal.canonicalString)
        case let mixed as AnyRealmValue: return self.mixed(mixed)
        case let object as ObjectBase:
            if object.objectSchema.isEmbedded { return .object(properties(of: object)) }
            return isMixed ? mixedLink(to: object) : link(to: object)
        case let list as List<AnyRealmValue>: return .array(list.map(mixed))
        case let map as Map<String, AnyRealmValue>:
            return .object(map.map { (key: $0.key, value: mixed($0.value)) })
        case let array as [Any]: return .array(array.map { self.value($0, mixed: isMixed) })
        case let dictionary as [String: Any]:
            return .object(
                dictionary.sorted { $0.key < $1.key }.map { (key: $0.key, value: self.value($0.value, mixed: isMixed)) }
            )
        default:
            // A nil element of a collection of optionals arrives as an `Optional` inside `Any`.
            let mirror = Mirror(reflecting: value)
            if mirror.displayStyle == .optional {
                return mirror.children.first.map { self.value($0.value, mixed: isMixed) } ?? .null
            }
            return .string("\(value)")
        }
    }

    /// `value` as the mixed value it was read from, when it is a plain value.
    private static func mixedScalar(_ value: Any) -> AnyRealmValue? {
        switch value {
        case let bool as Bool: .bool(bool)
        case let int as Int: .int(int)
        case let int as Int64: .int(Int(int))
        case let double as Double: .double(double)
        case let float as Float: .float(float)
        case let string as String: .string(string)
        case let data as Data: .data(data)
        case let date as Date: .date(date)
        case let id as ObjectId: .objectId(id)
        case let uuid as UUID: .uuid(uuid)
        case let decimal as Decimal128: .decimal128(decimal)
        default: nil
        }
    }

    /// A link: the target's primary key, else `{"$key": N}`.
    static func link(to object: ObjectBase) -> JSONValue {
        if let primaryKey = object.objectSchema.primaryKeyProperty { return value(object[primaryKey.name]) }
        return .object([("$key", objectKey(of: object))])
    }

    /// A link held in a mixed value, which may point at any class: `{"$class": "Dog", "$primaryKey": 1}`, or
    /// `{"$class": "Dog", "$key": 3}` when the class has no primary key.
    static func mixedLink(to object: ObjectBase) -> JSONValue {
        let className: JSONValue = .string(object.objectSchema.className)
        if let primaryKey = object.objectSchema.primaryKeyProperty {
            return .object([("$class", className), ("$primaryKey", value(object[primaryKey.name]))])
        }
        return .object([("$class", className), ("$key", objectKey(of: object))])
    }

    private static func objectKey(of object: ObjectBase) -> JSONValue {
        (object as? DynamicObject)?.objectKey.map { .number(String($0)) } ?? .null
    }

    static func mixed(_ value: AnyRealmValue) -> JSONValue {
        func tagged(_ tag: String, _ value: JSONValue) -> JSONValue { .object([(tag, value)]) }
        switch value {
        case .none: return .null
        case .int(let int): return .number(String(int))
        case .bool(let bool): return .bool(bool)
        case .float(let float): return tagged("$float", self.value(float))
        case .double(let double): return double.isFinite ? number(double) : tagged("$double", number(double))
        case .string(let string): return .string(string)
        case .data(let data): return tagged("$data", .string(data.base64EncodedString()))
        case .date(let date): return tagged("$date", .string(DateText.format(date)))
        case .objectId(let id): return tagged("$objectId", .string(id.stringValue))
        case .decimal128(let decimal): return tagged("$decimal128", .string(decimal.canonicalString))
        case .uuid(let uuid): return tagged("$uuid", .string(uuid.uuidString))
        case .object(let object): return mixedLink(to: object)
        case .list(let list): return .array(list.map(mixed))
        case .dictionary(let map): return .object(map.map { (key: $0.key, value: mixed($0.value)) })
        }
    }

    private static func number(_ double: Double) -> JSONValue {
        if double.isNaN { return .string("NaN") }
        if double.isInfinite { return .string(double > 0 ? "Infinity" : "-Infinity") }
        return .number("\(double)")
    }
}

import Foundation
import Strata

/// Why a line cannot be loaded: its input, its line number and what is wrong, naming the property.
struct LoadError: Error {
    let input: String
    let line: Int
    let reason: String
}

/// Turns the JSON lines of `strata dump` (see ``ObjectJSON``) back into objects, inside the caller's write
/// transaction, in two passes: first every object is created with its primary key and plain values (so that a link
/// may point at an object of a later line, or of another input), then its links, embedded objects, collections and
/// mixed values are set, links resolved.
///
/// A link by primary key names an object of the file, loaded now or before; a link `{"$key": N}` names the object
/// whose line had `"$key": N` in this load (keys are not kept: the file hands out its own).
final class ObjectReader {
    private let realm: Realm
    private let filePath: String
    /// Objects of classes without a primary key, by the `$key` their line gave.
    private var byKey: [String: [Int64: DynamicObject]] = [:]
    /// The stored classes, and their stored properties by name (`Realm.schema` builds them anew on every call).
    private var classes: [String: (schema: ObjectSchema, properties: [String: Property])] = [:]

    /// Class `name` of the file and its stored properties (linking objects are computed, not stored).
    private func stored(_ name: String) -> (schema: ObjectSchema, properties: [String: Property])? {
        if let known = classes[name] { return known }
        guard let schema = realm.schema[className: name] else { return nil }
        let properties = Dictionary(
            schema.properties.filter { $0.type != .linkingObjects }.map { ($0.name, $0) },
            uniquingKeysWith: { first, _ in first })
        classes[name] = (schema, properties)
        return (schema, properties)
    }

    init(realm: Realm, path: String) {
        self.realm = realm
        filePath = path
    }

    /// Where the line being read is, for errors.
    private var input = ""
    private var line = 0

    private func failure(_ reason: String) -> LoadError { LoadError(input: input, line: line, reason: reason) }

    func load(_ lines: [LoadLine]) throws(LoadError) {
        var objects: [DynamicObject] = []
        objects.reserveCapacity(lines.count)
        for entry in lines {
            input = entry.input.name
            line = entry.number
            objects.append(try create(entry))
        }
        for (entry, object) in zip(lines, objects) {
            input = entry.input.name
            line = entry.number
            try fill(object, from: entry)
        }
    }

    // MARK: Pass 1: the objects and their identities

    private func create(_ entry: LoadLine) throws(LoadError) -> DynamicObject {
        let className = entry.input.className
        guard let (schema, properties) = stored(className) else { throw failure("no class \(className)") }
        // Linking objects are computed, not stored: the file's schema does not list them, nor does dump.
        for member in entry.members
        where properties[member.key] == nil && (member.key != "$key" || schema.primaryKeyProperty != nil) {
            throw failure(
                member.key == "$key"
                    ? "\(className) has a primary key: its lines have no $key"
                    : "\(className) has no property \(member.key) (its properties: "
                        + schema.properties.filter { $0.type != .linkingObjects }.map(\.name).joined(separator: ", ")
                        + ")")
        }
        var plain: [String: Any] = [:]
        for (name, json) in entry.members where name != "$key" && name != schema.primaryKeyProperty?.name {
            guard let property = properties[name], isPlain(property) else { continue }
            plain[name] = try scalar(json, property, at: "\(className).\(name)")
        }
        guard let primaryKey = schema.primaryKeyProperty else {
            let object = realm.dynamicCreate(className, value: plain)
            if let member = entry.members.first(where: { $0.key == "$key" }) {
                guard case .number(let text) = member.value, let key = Int64(text) else {
                    throw failure("$key must be an integer, not \(member.value.text)")
                }
                guard byKey[className, default: [:]].updateValue(object, forKey: key) == nil else {
                    throw failure("a \(className) with $key \(key) appears twice in this load")
                }
            }
            return object
        }
        let json = entry.members.first { $0.key == primaryKey.name }?.value ?? .null
        guard !json.isNull || primaryKey.isOptional else {
            throw failure("\(className).\(primaryKey.name), the primary key, needs a value")
        }
        let key = try scalar(json, primaryKey, at: "\(className).\(primaryKey.name)")
        if try find(className, primaryKey: primaryKey, key) != nil {
            throw failure(
                "a \(className) with primary key \(json.text) is already in \(filePath) or earlier in this load "
                    + "(load adds objects; it does not update them)")
        }
        plain[primaryKey.name] = key
        return realm.dynamicCreate(className, value: plain)
    }

    /// Whether `property` holds one value that is neither a link, an embedded object nor a mixed value: such values
    /// go into the new object's row at once.
    private func isPlain(_ property: Property) -> Bool {
        property.type != .object && property.type != .any && !property.isArray && !property.isSet && !property.isMap
    }

    /// The object of `className` whose primary key is `key`, in the file or created by this load.
    private func find(_ className: String, primaryKey: Property, _ key: Any) throws(LoadError) -> DynamicObject? {
        let argument: Any = key is NSNull ? AnyRealmValue.none : key
        do {
            return try realm.dynamicObjects(className).checkedFilter("\(primaryKey.name) == $0", argument).first
        } catch {
            throw failure("cannot look \(className) up by its primary key: \(error)")
        }
    }

    // MARK: Pass 2: the values

    private func fill(_ object: DynamicObject, from entry: LoadLine) throws(LoadError) {
        let className = entry.input.className
        guard let (schema, properties) = stored(className) else { return }
        for (name, json) in entry.members where name != "$key" && name != schema.primaryKeyProperty?.name {
            guard let property = properties[name], !isPlain(property) else {
                continue
            }
            object[name] = try value(json, property, at: "\(className).\(name)")
        }
    }

    /// `json` as the value of `property` (collections included), in the form `DynamicObject`'s subscript takes.
    private func value(_ json: JSONValue, _ property: Property, at path: String) throws(LoadError) -> Any {
        if property.isArray || property.isSet {
            guard case .array(let elements) = json else {
                throw failure("\(path) is a \(typeName(of: property)): expected an array, found \(json.text)")
            }
            var values: [Any] = []
            for (index, element) in elements.enumerated() {
                values.append(try self.element(element, property, at: "\(path)[\(index)]"))
            }
            return values
        }
        if property.isMap {
            guard case .object(let members) = json else {
                throw failure("\(path) is a \(typeName(of: property)): expected an object, found \(json.text)")
            }
            var values: [String: Any] = [:]
            for (key, element) in members {
                try checkMapKey(key, at: path)
                values[key] = try self.element(element, property, at: "\(path)[\"\(key)\"]")
            }
            return values
        }
        return try element(json, property, at: path)
    }

    /// One value of `property`'s element type: a scalar, a link, an embedded object or a mixed value.
    private func element(_ json: JSONValue, _ property: Property, at path: String) throws(LoadError) -> Any {
        switch property.type {
        case .any: return try mixed(json, at: path, depth: 0)
        case .object:
            guard let target = property.objectClassName, let targetSchema = stored(target)?.schema else {
                throw failure("\(path) links to a class the file does not have")
            }
            if json.isNull { return NSNull() }
            if targetSchema.isEmbedded { return try embedded(json, targetSchema, at: path) }
            return try link(json, to: targetSchema, at: path)
        default:
            if json.isNull {
                guard property.isOptional else {
                    throw failure("\(path) is a \(typeName(of: property)): null is not allowed")
                }
                return NSNull()
            }
            return try scalar(json, property, at: path)
        }
    }

    /// The values of a new embedded object, as the dictionary the library turns into one.
    private func embedded(_ json: JSONValue, _ schema: ObjectSchema, at path: String) throws(LoadError) -> [String: Any]
    {
        guard case .object(let members) = json else {
            throw failure("\(path) is an embedded \(schema.className): expected an object, found \(json.text)")
        }
        var values: [String: Any] = [:]
        for (name, member) in members {
            guard let property = stored(schema.className)?.properties[name] else {
                throw failure("\(path): the embedded \(schema.className) has no property \(name)")
            }
            values[name] = try value(member, property, at: "\(path).\(name)")
        }
        return values
    }

    /// The object a link names: by primary key, or `{"$key": N}` for a class without one.
    private func link(_ json: JSONValue, to schema: ObjectSchema, at path: String) throws(LoadError) -> DynamicObject {
        let className = schema.className
        if let primaryKey = schema.primaryKeyProperty {
            let key = try scalar(json, primaryKey, at: path)
            guard let target = try find(className, primaryKey: primaryKey, key) else {
                throw failure(
                    "\(path) links to the \(className) with primary key \(json.text), which is neither in \(filePath) nor in this load"
                )
            }
            return target
        }
        guard case .object(let members) = json, members.count == 1, members[0].key == "$key",
            case .number(let text) = members[0].value, let key = Int64(text)
        else {
            throw failure(
                "\(path) links to a \(className), which has no primary key: expected {\"$key\": N}, found \(json.text)")
        }
        guard let target = byKey[className]?[key] else {
            throw failure(
                "\(path) links to the \(className) with $key \(key), which is not in this load (object keys are not "
                    + "kept between files: load the \(className) lines in the same run)")
        }
        return target
    }

    /// A non-link, non-mixed value of `property`'s type.
    private func scalar(_ json: JSONValue, _ property: Property, at path: String) throws(LoadError) -> Any {
        if json.isNull {
            guard property.isOptional else {
                throw failure("\(path) is a \(typeName(of: property)): null is not allowed")
            }
            return NSNull()
        }
        func mismatch(_ expected: String) -> LoadError {
            failure("\(path) is a \(typeName(of: property)): expected \(expected), found \(json.text)")
        }
        switch (property.type, json) {
        case (.bool, .bool(let bool)): return bool
        case (.int, .number(let text)):
            guard let int = Int(text) else { throw mismatch("an integer") }
            return int
        case (.double, _):
            guard let double = double(json) else { throw mismatch("a number") }
            return double
        case (.float, _):
            guard let double = double(json) else { throw mismatch("a number") }
            if case .number(let text) = json, let float = Float(text) { return float }
            return Float(double)
        case (.string, .string(let string)): return string
        case (.data, .string(let base64)):
            guard let data = Data(base64Encoded: base64) else { throw mismatch("base64") }
            return data
        case (.date, .string(let text)):
            guard let date = try isoDate(text, at: path) else {
                throw mismatch("a date like 2024-01-01T10:00:00.250Z")
            }
            return date
        case (.decimal128, .string(let text)), (.decimal128, .number(let text)):
            guard let decimal = try? Decimal128(string: text) else { throw mismatch("a decimal") }
            return decimal
        case (.objectId, .string(let text)):
            guard let id = try? ObjectId(string: text) else { throw mismatch("an ObjectId (24 hexadecimal digits)") }
            return id
        case (.uuid, .string(let text)):
            guard let uuid = UUID(uuidString: text) else { throw mismatch("a UUID") }
            return uuid
        default:
            throw mismatch(expectedForm(property.type))
        }
    }

    private func expectedForm(_ type: PropertyType) -> String {
        switch type {
        case .bool: "true or false"
        case .int: "an integer"
        case .string: "a string"
        case .data: "a base64 string"
        case .date: "a date string"
        case .decimal128: "a decimal string"
        case .objectId: "an ObjectId string"
        case .uuid: "a UUID string"
        default: "a \(type.rawValue)"
        }
    }

    /// A date as `dump` writes it; nil for text of another form.
    private func isoDate(_ text: String, at path: String) throws(LoadError) -> Date? {
        do {
            return try DateText.parseISO(text)
        } catch {
            throw failure("\(path): \(text) is no date: \(error.reason)")
        }
    }

    /// A number, or `"NaN"`, `"Infinity"`, `"-Infinity"`.
    private func double(_ json: JSONValue) -> Double? {
        switch json {
        case .number(let text): Double(text)
        case .string("NaN"): .nan
        case .string("Infinity"): .infinity
        case .string("-Infinity"): -.infinity
        default: nil
        }
    }

    /// A mixed value: JSON's own types, nested lists and dictionaries, and the `$`-tagged forms of the others.
    private func mixed(_ json: JSONValue, at path: String, depth: Int) throws(LoadError) -> AnyRealmValue {
        guard depth <= 100 else { throw failure("\(path): mixed values nest at most 100 levels deep") }
        switch json {
        case .null: return .none
        case .bool(let bool): return .bool(bool)
        case .string(let string): return .string(string)
        case .number(let text):
            if text.contains(where: { $0 == "." || $0 == "e" || $0 == "E" }) {
                guard let double = Double(text) else { throw failure("\(path): \(text) is not a number") }
                return .double(double)
            }
            guard let int = Int(text) else { throw failure("\(path): \(text) does not fit a 64-bit integer") }
            return .int(int)
        case .array(let elements):
            var values: [AnyRealmValue] = []
            for (index, element) in elements.enumerated() {
                values.append(try mixed(element, at: "\(path)[\(index)]", depth: depth + 1))
            }
            return AnyRealmValue.fromArray(values)
        case .object(let members):
            if members.contains(where: { $0.key.hasPrefix("$") }) { return try tagged(members, at: path) }
            var values: [String: AnyRealmValue] = [:]
            for (key, element) in members {
                try checkMapKey(key, at: path)
                values[key] = try mixed(element, at: "\(path)[\"\(key)\"]", depth: depth + 1)
            }
            return AnyRealmValue.fromDictionary(values)
        }
    }

    /// `{"$date": …}`, `{"$data": …}`, …, `{"$class": C, "$primaryKey": K}`, `{"$class": C, "$key": N}`.
    private func tagged(_ members: [(key: String, value: JSONValue)], at path: String) throws(LoadError)
        -> AnyRealmValue
    {
        let found = JSONValue.object(members).text
        func invalid(_ expected: String) -> LoadError { failure("\(path): expected \(expected), found \(found)") }
        if members.count == 2, let className = members.first(where: { $0.key == "$class" })?.value {
            guard case .string(let name) = className, let schema = stored(name)?.schema, !schema.isEmbedded,
                !schema.isAsymmetric
            else { throw invalid("a link naming a class of the file") }
            let target = members.first { $0.key != "$class" }!
            switch target.key {
            case "$primaryKey" where schema.primaryKeyProperty != nil:
                return .object(try link(target.value, to: schema, at: path))
            case "$key" where schema.primaryKeyProperty == nil:
                return .object(try link(.object([target]), to: schema, at: path))
            default:
                throw invalid(
                    schema.primaryKeyProperty == nil
                        ? "{\"$class\": \"\(name)\", \"$key\": N}" : "{\"$class\": \"\(name)\", \"$primaryKey\": …}")
            }
        }
        guard members.count == 1 else { throw invalid("one $-tagged value or a link") }
        let (tag, value) = members[0]
        switch (tag, value) {
        case ("$date", .string(let text)):
            guard let date = try isoDate(text, at: path) else { throw invalid("a date like 2024-01-01T10:00:00Z") }
            return .date(date)
        case ("$data", .string(let text)):
            guard let data = Data(base64Encoded: text) else { throw invalid("base64 data") }
            return .data(data)
        case ("$objectId", .string(let text)):
            guard let id = try? ObjectId(string: text) else { throw invalid("an ObjectId") }
            return .objectId(id)
        case ("$uuid", .string(let text)):
            guard let uuid = UUID(uuidString: text) else { throw invalid("a UUID") }
            return .uuid(uuid)
        case ("$decimal128", .string(let text)):
            guard let decimal = try? Decimal128(string: text) else { throw invalid("a decimal") }
            return .decimal128(decimal)
        case ("$float", _):
            if case .number(let text) = value, let float = Float(text) { return .float(float) }
            guard let double = double(value) else { throw invalid("a number") }
            return .float(Float(double))
        case ("$double", _):
            guard let double = double(value) else { throw invalid("a number, \"NaN\" or \"Infinity\"") }
            return .double(double)
        default:
            throw invalid("$date, $data, $objectId, $uuid, $decimal128, $float, $double or a link ($class)")
        }
    }

    /// The map-key rule of the library: keys are not empty, contain no `.` and do not start with `$`.
    private func checkMapKey(_ key: String, at path: String) throws(LoadError) {
        if key.isEmpty { throw failure("\(path): a map key cannot be empty") }
        if key.contains(".") { throw failure("\(path): the map key \"\(key)\" contains \".\"") }
        if key.hasPrefix("$") { throw failure("\(path): the map key \"\(key)\" starts with \"$\"") }
    }
}

extension JSONValue {
    var isNull: Bool {
        if case .null = self { return true }
        return false
    }
}

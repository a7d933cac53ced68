import Foundation

/// Converts loosely typed values (from dictionaries, arrays and `subscript(key:)`) into stored values.
enum StoredValueConversion {
    /// `value` as a stored value of a property of type `info`, or nil if it does not fit.
    static func stored(from value: Any?, as info: _PropertyInfo) -> _StoredValue? {
        if let exact = exactlyTyped(value, as: info) { return exact }
        guard let value = unwrap(value), !(value is NSNull) else { return info.isOptional ? .null : nil }
        if info.type == .any {
            // A mixed value takes any supported value as it is; arrays and dictionaries become nested collections.
            if let mixed = value as? AnyRealmValue { return mixed._stored }
            if let object = value as? Object { return .object(object) }
            if let int = value as? Int { return .int(Int64(int)) }
            if let persistable = value as? any _Persistable, !(value is ObjectBase) {
                let stored = persistable._stored
                if case .collection = stored { return nil }
                return stored
            }
            if let array = value as? [Any] {
                var elements: [AnyRealmValue] = []
                for element in array {
                    guard let stored = Self.stored(from: element, as: info),
                        let mixed = AnyRealmValue._fromStored(stored)
                    else { return nil }
                    elements.append(mixed)
                }
                return AnyRealmValue.fromArray(elements)._stored
            }
            if let dictionary = value as? [String: Any] {
                var entries: [String: AnyRealmValue] = [:]
                for (key, element) in dictionary {
                    guard let stored = Self.stored(from: element, as: info),
                        let mixed = AnyRealmValue._fromStored(stored)
                    else { return nil }
                    entries[key] = mixed
                }
                return AnyRealmValue.fromDictionary(entries)._stored
            }
            return nil
        }
        if let persistable = value as? any _Persistable {
            let stored = persistable._stored
            if matches(stored, info) { return stored }
        }
        if info.type == .object {
            if let object = value as? ObjectBase { return .object(object) }
            guard let target = info.objectType else { return nil }
            // A dictionary or array describes a new object of the target type.
            if value is [String: Any] || value is [Any] {
                let object = target.init()
                guard let table = try? SchemaRegistry.shared.table(for: target),
                    (try? ObjectValues.apply(value, to: object, schema: table)) != nil
                else { return nil }
                return .object(object)
            }
            return nil
        }
        return info.type.codec.converted(value)
    }

    /// ``stored(from:as:)`` of a value given as an `Any` (a dictionary's value): a value of exactly the property's
    /// type is recognised without wrapping it in an optional first.
    static func stored(given value: Any, as info: _PropertyInfo) -> _StoredValue? {
        if info.collection == nil, let exact = exactlyTypedOpened(value, as: info.type) { return exact }
        return stored(from: value, as: info)
    }

    /// The stored value of a value of exactly the property's Swift type (an `Int` for an `Int` property, a
    /// `String` for a `String` one…), the common case, found by one cast to a concrete type; nil for anything else,
    /// which ``stored(from:as:)`` then converts the general way. The general way looks through optionals and
    /// `NSNull` and asks for protocol conformances, which cost thousands of instructions per value.
    private static func exactlyTyped(_ value: Any?, as info: _PropertyInfo) -> _StoredValue? {
        guard info.collection == nil else { return nil }
        // The value's own type, compared with the property's, answers without the runtime's cast (which looks
        // through the optional and the existential first: ~400 instructions a value); other forms (a nested
        // optional, a bridged number) take the casts below.
        if case .some(let given) = value,
            let stored = exactlyTypedOpened(given, as: info.type)
        {
            return stored
        }
        switch info.type {
        case .int: if let int = value as? Int { return .int(Int64(int)) }
        case .string: if let string = value as? String { return .string(string) }
        case .double: if let double = value as? Double { return .double(double) }
        case .bool: if let bool = value as? Bool { return .bool(bool) }
        case .date: if let date = value as? Date { return .date(date) }
        case .data: if let data = value as? Data { return .data(data) }
        case .objectId: if let id = value as? ObjectId { return .objectId(id) }
        case .uuid: if let uuid = value as? UUID { return .uuid(uuid) }
        default: break
        }
        return nil
    }

    /// ``exactlyTyped(_:as:)`` for a value whose type `T` is its dynamic type: a comparison of metatypes, then a
    /// reinterpretation of a value already known to be of the property's type.
    private static func exactlyTypedOpened<T>(_ value: T, as type: PropertyType) -> _StoredValue? {
        switch type {
        case .int: if T.self == Int.self { return .int(Int64(unsafeBitCast(value, to: Int.self))) }
        case .string: if T.self == String.self { return .string(unsafeBitCast(value, to: String.self)) }
        case .double: if T.self == Double.self { return .double(unsafeBitCast(value, to: Double.self)) }
        case .bool: if T.self == Bool.self { return .bool(unsafeBitCast(value, to: Bool.self)) }
        case .date: if T.self == Date.self { return .date(unsafeBitCast(value, to: Date.self)) }
        default: break
        }
        return nil
    }

    private static func matches(_ stored: _StoredValue, _ info: _PropertyInfo) -> Bool {
        if info.isCollection {
            if case .collection = stored { return true }
            return false
        }
        if case .null = stored { return info.isOptional }
        return info.type != .any && info.type.codec.holds(stored)
    }

    /// Whether `value` is nil: `NSNull`, or an `Optional` wrapped in `Any` holding nothing.
    static func isNil(_ value: Any?) -> Bool {
        guard let value = unwrap(value) else { return true }
        return value is NSNull
    }

    /// Looks through `Optional` wrapped in `Any` (at any depth).
    ///
    /// A cast to a protocol only `Optional` conforms to, not `Mirror`: reflecting built a mirror per value, about
    /// 6,000 instructions, and every value of a dictionary given to `create` or `setValue(_:forKey:)` goes through
    /// here (a fifth of the cost of an upsert).
    static func unwrap(_ value: Any?) -> Any? {
        value.flatMap(flattenedOptional)
    }
}

/// A value given for one property, as ``ObjectValues/entries(of:table:)`` sorts them out of a dictionary, an array
/// or an object.
struct GivenValue {
    /// The property's index in the schema.
    let property: Int
    /// The value as given.
    let entry: Any?
}

/// Copies values given as a dictionary, an array or another object into an object.
enum ObjectValues {
    /// Applies `value` to `object` (unmanaged: into its storage; managed: through the Realm).
    static func apply(_ value: Any, to object: ObjectBase, schema table: TableSchema) throws(Realm.Error) {
        try apply(entries(of: value, table: table), to: object, schema: table)
    }

    /// Applies values already sorted out by ``entries(of:table:)``.
    static func apply(_ entries: [GivenValue], to object: ObjectBase, schema table: TableSchema)
        throws(Realm.Error)
    {
        for given in entries { try set(given.entry, property: given.property, of: object, table: table) }
    }

    /// The properties `value` gives a value for, in declared order, each with the value given: every key of a
    /// dictionary (by Swift or persisted name; an unknown key is an error), the positions of an array (in declared
    /// order, without the computed linking objects), or every persisted property of another object that this
    /// type also has.
    static func entries(of value: Any, table: TableSchema) throws(Realm.Error) -> [GivenValue] {
        let properties = table.schema.properties
        var entries: [GivenValue] = []
        if let dictionary = stringKeyed(value) ?? (value as? [String: Any]) {
            // One pass over the keys (a hash lookup each), then declared order. A property given under both its
            // Swift and its persisted name takes the Swift name's value.
            entries.reserveCapacity(dictionary.count)
            for (key, entry) in dictionary {
                if let index = table.propertyIndex(swiftName: key) {
                    entries.append(GivenValue(property: index, entry: entry))
                    continue
                }
                guard let index = table.propertyIndex(named: key) else {
                    throw .invalidValue(type: table.className, property: key, reason: "no such property")
                }
                if key != properties[index].swiftName, dictionary[properties[index].swiftName] != nil { continue }
                entries.append(GivenValue(property: index, entry: entry))
            }
            entries.sort { $0.property < $1.property }
        } else if let array = value as? [Any] {
            let stored = properties.indices.filter { properties[$0].type != .linkingObjects }
            guard array.count <= stored.count else {
                throw .invalidValue(
                    type: table.className, property: "",
                    reason: "\(array.count) values given for \(stored.count) properties")
            }
            for (position, entry) in array.enumerated() {
                entries.append(GivenValue(property: stored[position], entry: entry))
            }
        } else if let source = value as? ObjectBase {
            guard let sourceTable = try? SchemaRegistry.shared.table(for: type(of: source)) else { return [] }
            for index in properties.indices where properties[index].type != .linkingObjects {
                guard let sourceIndex = sourceTable.propertyIndex(named: properties[index].columnName) else { continue }
                let entry: Any? =
                    source.managed?.readAny(property: sourceIndex)
                    ?? (source.managed == nil ? sourceTable.box(of: source, property: sourceIndex).anyValue : nil)
                entries.append(GivenValue(property: index, entry: entry))
            }
        } else {
            throw .invalidValue(
                type: table.className, property: "",
                reason: "init(value:) takes a [String: Any], an array or an object, not \(type(of: value))")
        }
        return entries
    }

    /// `value` when its own type is `[String: Any]`, the common form of a value given to `create`, found by comparing
    /// types: the runtime's cast from `Any` cost ~260 instructions a call. Nil for anything else, which the cast
    /// then decides (a dictionary of another type, a bridged one).
    static func stringKeyed<T>(_ value: T) -> [String: Any]? {
        T.self == [String: Any].self ? unsafeBitCast(value, to: [String: Any].self) : nil
    }

    /// The error for `value` given to property `index`, whose type it does not fit.
    static func mismatch(_ value: Any?, property index: Int, table: TableSchema) -> Realm.Error {
        let info = table.infos[index]
        return .invalidValue(
            type: table.className, property: table.schema.properties[index].columnName,
            reason:
                "\(value.map { "\(type(of: $0))" } ?? "nil") is not a valid value for a \(info.type)\(info.isOptional ? "?" : "") property"
        )
    }

    /// The entry for property `index` in a dictionary or array `value`.
    static func value(for index: Int, in value: Any, table: TableSchema) -> Any? {
        let property = table.schema.properties[index]
        if let dictionary = value as? [String: Any] {
            return dictionary[property.swiftName] ?? dictionary[property.columnName]
        }
        if let array = value as? [Any] {
            let stored = table.schema.properties.indices.filter { table.schema.properties[$0].type != .linkingObjects }
            guard let position = stored.firstIndex(of: index), position < array.count else { return nil }
            return array[position]
        }
        if let object = value as? ObjectBase { return object[property.columnName] }
        return nil
    }

    /// Sets map property `index` from a `[String: Any]` or another map (copied).
    private static func setMap(_ value: Any?, property index: Int, of object: ObjectBase, table: TableSchema)
        throws(Realm.Error)
    {
        let name = table.schema.properties[index].columnName
        let entries: [String: Any]
        if let map = value as? any AnyRealmMap {
            entries = Dictionary(
                map.storedEntries.map { ($0.key, StoredValueConversion.any(from: $0.value) as Any) },
                uniquingKeysWith: { _, last in last })
        } else if let dictionary = value as? [String: Any] {
            entries = dictionary
        } else {
            throw .invalidValue(type: table.className, property: name, reason: "expected a [String: Any]")
        }
        if let managed = object.managed {
            guard managed.realm.transactionForMutation("setting \(table.className).\(name)") != nil else { return }
            var element = table.infos[index]
            element.collection = nil
            var stored: [(key: String, value: _StoredValue)] = []
            for (key, entry) in entries.sorted(by: { $0.key < $1.key }) {
                guard let converted = StoredValueConversion.stored(from: entry, as: element) else {
                    throw .invalidValue(
                        type: table.className, property: name, reason: "\(type(of: entry)) is not a valid map value")
                }
                stored.append((key, converted))
            }
            try managed.realm.replaceMap(
                binding: managed.binding, property: index, key: managed.key, with: .collection(EntryList(stored)))
            return
        }
        guard case .collection(let current) = table.box(of: object, property: index).stored,
            let map = current as? any AnyRealmMap
        else { return }
        try map.replaceAll(with: entries, type: table.className, property: name)
    }

    /// The elements of `collection`, for a collection property's value.
    private static func anyElements<C: RealmCollection>(of collection: C) -> [Any] { collection.map { $0 as Any } }

    /// Sets property `index` of `object` from a loosely typed value.
    static func set(_ value: Any?, property index: Int, of object: ObjectBase, table: TableSchema) throws(Realm.Error) {
        let info = table.infos[index]
        let name = table.schema.properties[index].columnName
        guard info.type != .linkingObjects else {
            throw .invalidValue(
                type: table.className, property: name,
                reason: "linking objects are computed from the origin property's links and cannot be set")
        }
        if let managed = object.managed, info.type == .object, info.objectType == nil {
            // A class known only from the file: dictionaries describe new embedded objects.
            guard managed.realm.transactionForMutation("setting \(table.className).\(name)") != nil else { return }
            if try managed.realm.setDynamicEmbedded(value, property: index, of: managed) { return }
        }
        if info.collection == .map {
            try setMap(value, property: index, of: object, table: table)
            return
        }
        if info.isCollection {
            // An array of elements or another collection (copied, never shared): replace the contents.
            let elements: [Any]
            if let list = value as? any AnyRealmList {
                elements = list.anyElements
            } else if let array = value as? [Any] {
                elements = array
            } else if let collection = value as? any RealmCollection {
                // `Results`, `LinkingObjects`, `AnyRealmCollection`…: the SDK takes any collection as the value.
                elements = anyElements(of: collection)
            } else {
                throw .invalidValue(type: table.className, property: name, reason: "expected an array of elements")
            }
            let list: any AnyRealmList
            if let managed = object.managed {
                // A managed object's list: replace through the Realm (the list accessor needs the static type).
                let name = table.schema.properties[index].columnName
                guard managed.realm.transactionForMutation("setting \(table.className).\(name)") != nil else { return }
                var element = info
                element.collection = nil
                // Every element converted first, so that one of another type is reported as what it is.
                var stored: [_StoredValue] = []
                stored.reserveCapacity(elements.count)
                for entry in elements {
                    guard let converted = StoredValueConversion.stored(from: entry, as: element) else {
                        let expected =
                            element.objectType.map { "\($0)" }
                            ?? "\(element.type)\(element.isOptional ? "?" : "")"
                        let got = StoredValueConversion.unwrap(entry).map { "\(type(of: $0))" } ?? "nil"
                        throw .invalidValue(
                            type: table.className, property: name,
                            reason: "expected \(expected) elements, got \(got == "NSNull" ? "nil" : got)")
                    }
                    stored.append(converted)
                }
                let source = _StoredValue.collection(ArrayList(stored: stored, elements: elements))
                if info.collection == .set {
                    try managed.realm.replaceSet(
                        binding: managed.binding, property: index, key: managed.key, with: source)
                } else {
                    try managed.realm.replaceList(
                        binding: managed.binding, property: index, key: managed.key, with: source)
                }
                return
            } else {
                guard case .collection(let current) = table.box(of: object, property: index).stored,
                    let current = current as? any AnyRealmList
                else { return }
                list = current
            }
            try list.replaceAll(with: elements, type: table.className, property: name)
            return
        }
        guard let stored = StoredValueConversion.stored(from: value, as: info) else {
            throw mismatch(value, property: index, table: table)
        }
        if let managed = object.managed {
            managed.write(column: index, stored)
        } else if !table.box(of: object, property: index).setStored(stored) {
            if case .int(let int) = stored, info.integerBits > 0 {
                throw .invalidValue(
                    type: table.className, property: name, reason: "\(int) does not fit in Int\(info.integerBits)")
            }
            throw .invalidValue(type: table.className, property: name, reason: "value does not fit \(info.type)")
        }
    }
}

/// A loosely typed array, converted, presented as a list source (setting a managed object's list by name).
final class ArrayList: AnyRealmList {
    let storedElements: [_StoredValue]
    let anyElements: [Any]

    init(stored: [_StoredValue], elements: [Any]) {
        storedElements = stored
        anyElements = elements
    }

    func replaceAll(with elements: [Any], type: String, property: String) throws(Realm.Error) {
        throw .invalidValue(type: type, property: property, reason: "a temporary list cannot be changed")
    }
}

/// Entries presented as a map source (setting a managed object's map by name).
final class EntryList: AnyRealmMap {
    let storedEntries: [(key: String, value: _StoredValue)]

    init(_ entries: [(key: String, value: _StoredValue)]) { storedEntries = entries }

    func replaceAll(with entries: [String: Any], type: String, property: String) throws(Realm.Error) {
        throw .invalidValue(type: type, property: property, reason: "a temporary map cannot be changed")
    }
}

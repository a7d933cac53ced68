/// A type that can be the key of a `Map`: `String`.
public protocol _MapKey: Hashable {
    /// The stored form of the key.
    var _rawKey: String { get }
    /// A key from its stored form.
    init?(_rawKey: String)
}

extension String: _MapKey {
    /// See ``_MapKey``.
    public var _rawKey: String { self }
    /// See ``_MapKey``.
    public init?(_rawKey: String) { self = _rawKey }
}

/// A dictionary from string keys to values or objects, stored with its owning object.
///
/// ```swift
/// class Dog: Object {
///     @Persisted var favoriteParksByCity: Map<String, String>
/// }
/// try realm.write { dog.favoriteParksByCity["New York"] = "Domino Park" }
/// ```
/// Keys must be non-empty, must not contain `.` and must not start with `$`; a bad key fails the write
/// transaction (unmanaged maps trap). Setting a key to nil removes it. A managed map is a live view whose
/// entries come in key order; lookups and updates cost O(log n).
public final class Map<Key: _MapKey, Value: RealmCollectionValue>: RandomAccessCollection {
    /// One entry.
    public typealias Element = (key: Key, value: Value)

    private var backing: CollectionBacking<(key: Key, value: Value)>

    /// The owning object and property while managed; nil while unmanaged.
    var managedSource: (owner: ManagedObject, property: Int)? { backing.managedSource }

    /// An empty, unmanaged map.
    public init() { backing = .unmanaged([]) }

    /// For a list or dictionary nested in a mixed value: its id in the property's nested-collection tree (0
    /// for a property's own collection), and its nesting level.
    var nested: UInt64 = 0
    var level = 0

    init(owner: ManagedObject, property: Int, nested: UInt64 = 0, level: Int = 0) {
        backing = .managed(owner, property: property)
        self.nested = nested
        self.level = level
    }

    /// Whether `other` is a view of the same stored collection.
    func isSameStoredCollection(as other: Map<Key, Value>) -> Bool {
        ManagedObject.sameCollection(managedSource, nested, other.managedSource, other.nested)
    }

    /// 0.
    public var startIndex: Int { 0 }
    /// The number of entries.
    public var endIndex: Int { count }

    /// The number of entries.
    public var count: Int {
        switch backing {
        case .unmanaged(let entries): return entries.count
        case .managed(let owner, let property):
            owner.observeCollectionRead(property: property, nested: nested, isMap: true)
            return owner.realm.collectionCount(owner, property: property, nested: nested)
        }
    }

    /// The entry at `position` (key order when managed, insertion order while unmanaged).
    public subscript(position: Int) -> Element {
        switch backing {
        case .unmanaged(let entries):
            CollectionIndex.check(position, count: entries.count, in: "Map<\(Key.self), \(Value.self)>")
            return entries[position]
        case .managed(let owner, let property):
            owner.observeCollectionRead(property: property, nested: nested, isMap: true)
            CollectionIndex.check(
                position, count: owner.realm.collectionCount(owner, property: property, nested: nested),
                in: owner.realm.collectionName(owner, property))
            let (rawKey, stored) = owner.realm.mapEntry(
                owner, property: property, nested: nested, level: level, at: position)
            return owner.realm.mapElement(rawKey, stored, of: owner, property: property, as: Element.self)
        }
    }

    /// The value for `key`, or nil; setting nil removes the key.
    public subscript(key: Key) -> Value? {
        get {
            switch backing {
            case .unmanaged(let entries): return entries.first { $0.key == key }?.value
            case .managed(let owner, let property):
                owner.observeCollectionRead(property: property, nested: nested, isMap: true)
                guard
                    let stored = owner.realm.mapValue(
                        owner, property: property, nested: nested, level: level, key: key._rawKey)
                else { return nil }
                return Value._fromStored(stored)
            }
        }
        // Inlinable so that the caller's specialisation unwraps the value: unspecialised, the unwrap looked up
        // `Optional<Value>`'s metadata on every set (~400 instructions, a tenth of a managed set).
        @inlinable set {
            if let newValue { updateValue(newValue, forKey: key) } else { removeObject(for: key) }
        }
    }

    /// Iterates over the entries; a managed map reads them all with one cursor when iteration starts.
    public func makeIterator() -> IndexingIterator<[Element]> {
        switch backing {
        case .unmanaged(let entries): return entries.makeIterator()
        case .managed(let owner, let property):
            owner.observeCollectionRead(property: property, nested: nested, isMap: true)
            return owner.realm.collectionEntries(owner, property: property, nested: nested, level: level, keys: true)
                .map { entry in
                    owner.realm.mapElement(
                        String(decoding: entry.key, as: UTF8.self), entry.value, of: owner, property: property,
                        as: Element.self)
                }.makeIterator()
        }
    }

    /// The keys, in the map's order.
    public var keys: [Key] { map(\.key) }
    /// The values, in the map's order.
    public var values: [Value] { map(\.value) }

    /// The Realm of the owning object; nil while unmanaged.
    public var realm: Realm? {
        if case .managed(let owner, _) = backing { return owner.realm }
        return nil
    }

    /// Whether the owning object was deleted.
    public var isInvalidated: Bool {
        if case .managed(let owner, _) = backing { return !owner.exists }
        return false
    }

    /// Sets the value for `key`.
    public func updateValue(_ value: Value, forKey key: Key) {
        switch backing {
        case .unmanaged(var entries):
            if let problem = MapKeys.problem(key._rawKey) { fatalError("Map key \"\(key._rawKey)\": \(problem)") }
            backing = .unmanaged([])
            if let index = entries.firstIndex(where: { $0.key == key }) {
                entries[index].value = value
            } else {
                entries.append((key, value))
            }
            backing = .unmanaged(entries)
        case .managed(let owner, let property):
            owner.realm.mapSet(owner, property: property, nested: nested, level: level, key: key._rawKey, value._stored)
        }
    }

    /// Removes `key` and its value.
    public func removeObject(for key: Key) {
        switch backing {
        case .unmanaged(var entries):
            backing = .unmanaged([])
            entries.removeAll { $0.key == key }
            backing = .unmanaged(entries)
        case .managed(let owner, let property):
            owner.realm.mapRemove(owner, property: property, nested: nested, key: key._rawKey)
        }
    }

    /// Removes every entry.
    public func removeAll() {
        switch backing {
        case .unmanaged: backing = .unmanaged([])
        case .managed(let owner, let property): owner.realm.mapRemoveAll(owner, property: property, nested: nested)
        }
    }

    /// Adds the entries of `other`; for keys present in both, `combine` picks the value.
    public func merge<S: Sequence>(_ other: S, uniquingKeysWith combine: (Value, Value) throws -> Value) rethrows
    where S.Element == (key: Key, value: Value) {
        for (key, value) in other {
            if let current = self[key] {
                updateValue(try combine(current, value), forKey: key)
            } else {
                updateValue(value, forKey: key)
            }
        }
    }

    /// Adds the entries of a dictionary; for keys present in both, `combine` picks the value.
    public func merge(_ other: [Key: Value], uniquingKeysWith combine: (Value, Value) throws -> Value) rethrows {
        try merge(other.map { (key: $0.key, value: $0.value) }, uniquingKeysWith: combine)
    }
}

/// The `.`/`$` rule of map keys.
enum MapKeys {
    static func problem(_ key: String) -> String? {
        var key = key
        return key.withUTF8 { problem(utf8: $0) }
    }

    /// `problem(_:)` of a key's UTF-8 bytes. Byte scans over a buffer, not `contains(_: StringProtocol)` (with
    /// Foundation imported that is NSString's range(of:), thousands of instructions on every map read and write)
    /// nor over `key.utf8` (its generic iteration cost ~350 instructions a short key).
    static func problem(utf8 key: UnsafeBufferPointer<UInt8>) -> String? {
        if key.isEmpty { return "a map key cannot be empty" }
        if key.contains(UInt8(ascii: ".")) { return "a map key cannot contain \".\"" }
        if key.first == UInt8(ascii: "$") { return "a map key cannot start with \"$\"" }
        return nil
    }
}

/// Type-erased entries of a map, for writing a new object's maps and dynamic access.
protocol AnyRealmMap: AnyObject {
    var storedEntries: [(key: String, value: _StoredValue)] { get }
    func replaceAll(with entries: [String: Any], type: String, property: String) throws(Realm.Error)
}

extension Map: AnyRealmMap {
    var storedEntries: [(key: String, value: _StoredValue)] { map { ($0.key._rawKey, $0.value._stored) } }

    func replaceAll(with entries: [String: Any], type: String, property: String) throws(Realm.Error) {
        var converted: [(Key, Value)] = []
        for (rawKey, element) in entries.sorted(by: { $0.key < $1.key }) {
            if let problem = MapKeys.problem(rawKey) {
                throw .invalidValue(type: type, property: property, reason: "\"\(rawKey)\": \(problem)")
            }
            guard let key = Key(_rawKey: rawKey) else {
                throw .invalidValue(type: type, property: property, reason: "\"\(rawKey)\" is not a \(Key.self)")
            }
            let value: Value = try CollectionElements.convert(element, type: type, property: property)
            converted.append((key, value))
        }
        removeAll()
        for (key, value) in converted { updateValue(value, forKey: key) }
    }
}

extension Map: ManagedCollectionFactory, ManagedReferenceCollection, AdoptableCollection {
    static func managedCollection(owner: ManagedObject, property: Int) -> Any {
        Map(owner: owner, property: property)
    }

    static func managedReference(owner: ManagedObject, property: Int) -> AnyObject {
        Map(owner: owner, property: property)
    }

    func adopt(owner: ManagedObject, property: Int) -> Bool {
        guard case .unmanaged = backing else { return false }
        backing = .managed(owner, property: property)
        return true
    }
}

extension Map: _PersistedCollection {
    /// See ``_PersistedCollection``: a map of the value type.
    public static var _collectionKind: _CollectionKind { .map }
    /// See ``_PersistedCollection``.
    public static var _elementPropertyInfo: _PropertyInfo { Value._propertyInfo }
}

extension Map: Encodable where Key == String, Value: Encodable {
    /// Encodes the entries as a keyed object.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        if Value._propertyInfo.type == .object {
            // Objects nest: links that form a cycle throw instead (see `EncodingCycles`).
            var objects: [String: NestedObject<Value>] = [:]
            for (key, value) in self { objects[key] = NestedObject(value: value) }
            try container.encode(objects)
            return
        }
        var dictionary: [String: Value] = [:]
        for (key, value) in self { dictionary[key] = value }
        try container.encode(dictionary)
    }
}

extension Map: Decodable where Key == String, Value: Decodable {
    /// An unmanaged map of the decoded entries.
    public convenience init(from decoder: any Decoder) throws {
        self.init()
        let dictionary = try decoder.singleValueContainer().decode([String: Value].self)
        for (key, value) in dictionary.sorted(by: { $0.key < $1.key }) { updateValue(value, forKey: key) }
    }
}

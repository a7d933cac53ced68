/// How collections and the objects in them print, in the SDK's shape, so that logs and test expectations written
/// against the SDK read the same:
///
/// ```
/// Results<Dog> <0x600003c0c0a0> (
/// 	[0] Dog {
/// 		name = Rex;
/// 		owner = Person {
/// 			name = Ann;
/// 		};
/// 	}
/// )
/// ```
///
/// Each nested level is indented by one more tab; links are followed at most ``maxDepth`` levels deep (so cycles
/// end), and at most ``maxElements`` elements of a collection are listed.
enum RealmDescription {
    /// Levels of objects and collections printed before "<Maximum depth exceeded>".
    static let maxDepth = 5
    /// Elements of one collection printed before "... n objects skipped.".
    static let maxElements = 100

    /// `0x…`: the address of the object that identifies a collection.
    static func address(_ identity: AnyObject) -> String {
        "0x" + String(UInt(bitPattern: ObjectIdentifier(identity)), radix: 16)
    }

    /// The element type as the SDK names it: the class name for objects, the value type otherwise (`int`,
    /// `string`…, with `?` when optional).
    static func typeName<Element: _Persistable>(_ type: Element.Type) -> String {
        if let objectType = type as? ObjectBase.Type { return objectType.className() }
        let info = Element._propertyInfo
        if let objectType = info.objectType { return objectType.className() + (info.isOptional ? "?" : "") }
        return "\(info.type)\(info.isOptional ? "?" : "")"
    }

    /// `Kind<Type> <0x…> (` … `)` over `entries` (already described, one per element).
    static func collection(_ header: String, entries: [String], total: Int, depth: Int) -> String {
        guard depth > 0 else { return "<Maximum depth exceeded>" }
        var text = header + " (\n"
        text += entries.map { "\t" + $0.replacingOccurrences(of: "\n", with: "\n\t") }.joined(separator: ",\n")
        if total > entries.count { text += "\n\t... \(total - entries.count) objects skipped." }
        return text + "\n)"
    }

    /// The positional entries (`[0] …`) of a sequence's first ``maxElements`` elements.
    static func positional<S: Sequence>(_ elements: S, depth: Int) -> [String] {
        elements.prefix(maxElements).enumerated().map { "[\($0.offset)] " + value($0.element, depth: depth - 1) }
    }

    /// An object as the SDK prints it: `Dog {` then one `name = value;` line per property, then `}`.
    static func object(_ object: ObjectBase, depth: Int) -> String {
        guard depth > 0 else { return "<Maximum depth exceeded>" }
        if object.isInvalidated { return "[invalid object]" }
        var text = type(of: object).className() + " {\n"
        for property in object.objectSchema.properties {
            let described = propertyValue(object, property, depth: depth - 1)
            text += "\t\(property.name) = " + described.replacingOccurrences(of: "\n", with: "\n\t") + ";\n"
        }
        return text + "}"
    }

    /// Property `property` of `object`; a collection prints in the collection's shape (linking objects, which
    /// key-value coding reads as an array, named by the property's type).
    private static func propertyValue(_ object: ObjectBase, _ property: Property, depth: Int) -> String {
        let read = object.value(forKey: property.name)
        guard property.isArray || property.isSet || property.isMap || property.type == .linkingObjects else {
            return value(read, depth: depth)
        }
        let elementType =
            property.objectClassName ?? "\(property.type)\(property.isOptional && property.type != .any ? "?" : "")"
        let kind = property.isArray ? "List" : property.isSet ? "MutableSet" : property.isMap ? "Map" : "LinkingObjects"
        let header =
            "\(kind)<\(property.isMap ? "string, " : "")\(elementType)> <\(address(object))>"
        guard depth > 0 else { return "<Maximum depth exceeded>" }
        // Key-value coding reads a collection property as the live collection, which prints itself.
        if let live = read as? any RealmCollection { return live.description(depth: depth) }
        if let live = read as? any DepthDescribable { return live.description(depth: depth) }
        if let entries = read as? [String: Any?] {
            let lines = entries.sorted { $0.key < $1.key }.prefix(maxElements).map {
                "[\($0.key)]: " + value($0.value, depth: depth - 1)
            }
            return collection(header, entries: lines, total: entries.count, depth: depth)
        }
        let elements: [Any?] = (read as? [Any?]) ?? (read as? [Any])?.map { $0 } ?? []
        return collection(header, entries: positional(elements, depth: depth), total: elements.count, depth: depth)
    }

    /// A property value or element: objects and collections as above, nil as `(null)`, others as they print.
    static func value(_ value: Any?, depth: Int) -> String {
        guard let value = StoredValueConversion.unwrap(value as Any) else { return "(null)" }
        if let object = value as? ObjectBase { return self.object(object, depth: depth) }
        if let collection = value as? any RealmCollection { return collection.description(depth: depth) }
        if let map = value as? any DepthDescribable { return map.description(depth: depth) }
        if let mixed = value as? AnyRealmValue {
            return self.value(StoredValueConversion.any(from: mixed._stored), depth: depth)
        }
        return "\(value)"
    }
}

/// A keyed collection that prints itself to a given depth (see ``RealmDescription``): `Map`.
protocol DepthDescribable {
    func description(depth: Int) -> String
}

extension RealmCollection {
    /// The collection in the SDK's shape: `Results<Dog> <0x…> (\n\t[0] Dog {\n\t\tname = Rex;\n\t}\n)`.
    public var description: String { description(depth: RealmDescription.maxDepth) }

    /// ``description`` following links `depth` levels deep.
    func description(depth: Int) -> String {
        if let erased = self as? AnyRealmCollection<Element> { return erased.base.description(depth: depth) }
        // A class is named by its own address; a struct (`Results`, `LinkingObjects`) by its Realm's.
        var identity: AnyObject = RealmDescription.unmanaged
        if type(of: self) is AnyClass {
            identity = self as AnyObject
        } else if let realm {
            identity = realm
        }
        let kind = String(describing: Self.self).prefix { $0 != "<" }
        let header = "\(kind)<\(RealmDescription.typeName(Element.self))> <\(RealmDescription.address(identity))>"
        return RealmDescription.collection(
            header, entries: RealmDescription.positional(self, depth: depth), total: count, depth: depth)
    }
}

extension Map: CustomStringConvertible, DepthDescribable {
    /// The map in the SDK's shape: `Map<string, int> <0x…> (\n\t[agility]: 3,\n\t[speed]: 5\n)`.
    public var description: String { description(depth: RealmDescription.maxDepth) }

    func description(depth: Int) -> String {
        let header =
            "Map<string, \(RealmDescription.typeName(Value.self))> <\(RealmDescription.address(self))>"
        let entries = prefix(RealmDescription.maxElements).map {
            "[\($0.key._rawKey)]: " + RealmDescription.value($0.value, depth: depth - 1)
        }
        return RealmDescription.collection(header, entries: entries, total: count, depth: depth)
    }
}

extension RealmDescription {
    /// What names a collection that has no Realm in its description.
    static let unmanaged = Marker()
    /// An object with an address and nothing else.
    final class Marker: Sendable {}
}

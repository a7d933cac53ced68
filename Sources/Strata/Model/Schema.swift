/// The kind of value a property stores.
public enum PropertyType: String, Sendable, Hashable, Codable, CustomStringConvertible {
    /// `Bool`.
    case bool
    /// Any integer width (`Int`, `Int8` … `Int64`), stored as 64 bits.
    case int
    /// `Float`.
    case float
    /// `Double`.
    case double
    /// `String`, stored as UTF-8.
    case string
    /// `Data`.
    case data
    /// `Date`, stored exactly (its `timeIntervalSinceReferenceDate` as a 64-bit double).
    case date
    /// `Decimal128`.
    case decimal128
    /// `ObjectId`.
    case objectId
    /// `UUID`.
    case uuid
    /// A link to another object (to-one link or embedded object).
    case object
    /// Backlinks computed from another type's links.
    case linkingObjects
    /// A mixed value (`AnyRealmValue`).
    case any

    /// The name used in schemas and error messages.
    public var description: String { rawValue }
}

/// One persisted property of an object type.
public struct Property: Sendable, Hashable, CustomStringConvertible {
    /// The name of the property's column in the file: the persisted name, after
    /// ``ObjectBase/propertiesMapping()``, as the SDK's `columnName`. Queries, migrations and the file use it.
    public var columnName: String
    /// What the property stores.
    public var type: PropertyType
    /// Whether the property may be nil.
    public var isOptional: Bool
    /// Whether the property has a secondary index.
    public var isIndexed: Bool
    /// Whether the property is the type's primary key.
    public var isPrimary: Bool
    /// For links and embedded objects: the persisted class name of the target.
    public var objectClassName: String?
    /// The Swift name of the property, as the SDK's `name` (equal to ``columnName`` unless the type maps names
    /// with ``ObjectBase/propertiesMapping()``; for a class known only from the file, the persisted name).
    public var name: String
    /// The Swift name of the property: ``name`` (Strata's name for it before ``name`` became the Swift name, as
    /// in the SDK).
    public var swiftName: String { name }
    /// Whether the property is a `List` of ``type`` values.
    public var isArray = false
    /// Whether the property is a `MutableSet` of ``type`` values.
    public var isSet = false
    /// Whether the property is a `Map` from strings to ``type`` values.
    public var isMap = false
    /// For `LinkingObjects` properties: the property of ``objectClassName`` whose links they follow back.
    public var linkOriginPropertyName: String?
    /// Whether the property's index is a full-text index (`@Persisted(indexed: .fullText)`), which serves
    /// `TEXT` / `.matches(_:)` queries over its words rather than comparisons of whole values.
    public var isFullTextIndexed = false

    /// A description such as `name: string?` or `owner: object<Person>? [indexed]`.
    public var description: String {
        var text = "\(columnName): \(isArray ? "list<" : isSet ? "set<" : isMap ? "map<string, " : "")\(type)"
        if let objectClassName { text += "<\(objectClassName)>" }
        if isOptional { text += "?" }
        if isArray || isSet || isMap { text += ">" }
        if let linkOriginPropertyName { text += ".\(linkOriginPropertyName)" }
        if isPrimary { text += " [primary key]" }
        if isIndexed && !isPrimary { text += " [indexed]" }
        return text
    }

    /// Whether two properties are stored the same way (the Swift name does not matter to the file).
    func isStoredLike(_ other: Property) -> Bool {
        columnName == other.columnName && type == other.type && isOptional == other.isOptional
            && isIndexed == other.isIndexed
            && isPrimary == other.isPrimary && objectClassName == other.objectClassName && isArray == other.isArray
            && isSet == other.isSet && isMap == other.isMap && linkOriginPropertyName == other.linkOriginPropertyName
    }
}

/// The schema of one object type.
public struct ObjectSchema: Sendable, Hashable, CustomStringConvertible {
    /// The persisted class name (``ObjectBase/className()``).
    public var className: String
    /// The persisted properties, in declaration order; as in the SDK, without the computed ones
    /// (``computedProperties``).
    public var properties: [Property]
    /// The computed properties — `LinkingObjects` — in declaration order, as the SDK lists them apart from
    /// ``properties`` in ``ObjectBase/objectSchema``, ``ObjectBase/sharedSchema()`` and `Realm.schema`.
    public var computedProperties: [Property] = []
    /// Whether the type is an `EmbeddedObject`.
    public var isEmbedded: Bool
    /// Whether the type is an `AsymmetricObject`.
    public var isAsymmetric: Bool

    /// The primary key property, if the type has one.
    public var primaryKeyProperty: Property? { properties.first { $0.isPrimary } }

    /// The property with the persisted or Swift name `name`, computed ones included (as in the SDK).
    public subscript(propertyName name: String) -> Property? {
        let all = properties + computedProperties
        return all.first { $0.columnName == name } ?? all.first { $0.name == name }
    }

    /// A multi-line description listing the properties.
    public var description: String {
        "\(className) {\n" + (properties + computedProperties).map { "    \($0)\n" }.joined() + "}"
    }

    /// This schema as the SDK shows it for one type: linking objects moved from ``properties`` to
    /// ``computedProperties``. (Inside Strata, a schema's ``properties`` are indexed by column, linking objects
    /// included.)
    var withComputedPropertiesApart: ObjectSchema {
        var schema = self
        schema.properties = properties.filter { $0.type != .linkingObjects }
        schema.computedProperties = computedProperties + properties.filter { $0.type == .linkingObjects }
        return schema
    }
}

/// The object types of a Realm.
public struct Schema: Sendable, Hashable {
    /// Every object type, sorted by class name.
    public var objectSchema: [ObjectSchema]

    /// The type with persisted class name `className`.
    public subscript(className className: String) -> ObjectSchema? {
        objectSchema.first { $0.className == className }
    }
}

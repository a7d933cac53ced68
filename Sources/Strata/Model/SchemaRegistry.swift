import StrataStorage

/// What kind of model a type is.
enum ModelKind: Sendable {
    case object, embedded, asymmetric
}

/// Everything the object layer knows about one model class, discovered once per process from a prototype
/// instance: its schema, how each property is stored, and how to find a property from its storage.
final class TableSchema: @unchecked Sendable {
    let type: ObjectBase.Type
    let kind: ModelKind
    let schema: ObjectSchema
    let infos: [_PropertyInfo]
    let primaryKeyIndex: Int?
    /// A discovery instance: its property boxes hold each property's initial value.
    private let prototype: ObjectBase
    /// Position in `ObjectBase.boxes` of each property's box; nil if the prototype could not claim its boxes
    /// (then `Mirror` finds them).
    private let boxSlots: [Int]?
    /// Whether `boxSlots` is the identity: the properties are declared in the order their boxes are created (the
    /// common case), so an object's `boxes` are in property order as they are.
    private let boxesInOrder: Bool
    /// For each `@Persisted` initialiser, in the order an instance runs them, the property it declares; nil if
    /// accessors for stored objects must be built with boxes (see `Realm.object(_:key:)`).
    let accessorProperties: [Int]?
    private let nameIndex: [String: Int]
    /// Each property's Swift name, in declared order (the persisted name for a dynamic schema).
    private let swiftNames: [String]
    /// For each property, its collection type when it is one held by reference (nil otherwise, and for every
    /// property of a dynamic schema): set once at the end of initialisation, read-only afterwards.
    private(set) var referenceCollections: [(any ManagedReferenceCollection.Type)?] = []

    /// The schema of a class known only from its stored definition, read and written through `DynamicObject`.
    init(dynamic stored: StoredClass) {
        type = DynamicObject.self
        kind = stored.embedded ? .embedded : stored.asymmetric ? .asymmetric : .object
        let properties = stored.properties.map {
            Property(
                columnName: $0.name, type: $0.type, isOptional: $0.optional, isIndexed: $0.indexed,
                isPrimary: $0.primary,
                objectClassName: $0.objectClassName, name: $0.name, isArray: $0.isList, isSet: $0.isSet,
                isMap: $0.isMap, isFullTextIndexed: $0.isFullText)
        }
        schema = ObjectSchema(
            className: stored.name, properties: properties, isEmbedded: stored.embedded, isAsymmetric: stored.asymmetric
        )
        infos = stored.properties.map {
            _PropertyInfo(type: $0.type, isOptional: $0.optional, collection: $0.collection)
        }
        primaryKeyIndex = properties.firstIndex(where: \.isPrimary)
        prototype = DynamicObject()
        boxSlots = nil
        boxesInOrder = false
        accessorProperties = nil
        var nameIndex: [String: Int] = [:]
        for (index, property) in properties.enumerated() { nameIndex[property.columnName] = index }
        self.nameIndex = nameIndex
        swiftNames = properties.map(\.columnName)
    }

    init(type: ObjectBase.Type) throws(Realm.Error) {
        self.type = type
        kind =
            type is EmbeddedObject.Type ? .embedded : type is AsymmetricObject.Type ? .asymmetric : .object
        let className = type.className()
        guard !className.isEmpty, className.utf8.count <= 57 else {
            throw .invalidValue(
                type: className, property: "", reason: "class names must have 1 to 57 UTF-8 bytes")
        }
        let createdBefore = BoxStack.local.value.created
        prototype = type.init()
        let created = BoxStack.local.value.created &- createdBefore
        let mapping = type.propertiesMapping()
        var properties: [Property] = []
        var infos: [_PropertyInfo] = []
        for (swiftName, box) in TableSchema.persistedBoxes(of: prototype) {
            let name = mapping[swiftName] ?? swiftName
            let info = box.info
            guard !name.isEmpty, name.utf8.count <= 63 else {
                throw .invalidValue(
                    type: className, property: name, reason: "property names must have 1 to 63 UTF-8 bytes")
            }
            guard !properties.contains(where: { $0.columnName == name }) else {
                throw .invalidValue(type: className, property: name, reason: "two properties have this persisted name")
            }
            let attributes = box.attributes
            if attributes.primaryKey {
                guard kind == .object else {
                    throw .invalidValue(
                        type: className, property: name, reason: "embedded and asymmetric objects have no primary key")
                }
                guard [.int, .string, .uuid, .objectId].contains(info.type) else {
                    throw .invalidValue(
                        type: className, property: name,
                        reason: "a primary key must be Int, String, UUID or ObjectId, not \(info.type)")
                }
                guard !properties.contains(where: \.isPrimary) else {
                    throw .invalidValue(type: className, property: name, reason: "a type has at most one primary key")
                }
            }
            if info.isList && (attributes.index != nil || attributes.primaryKey) {
                throw .invalidValue(
                    type: className, property: name, reason: "a list cannot be a primary key or indexed")
            }
            if let index = attributes.index {
                let indexable: Set<PropertyType> =
                    index == .fullText ? [.string] : [.string, .int, .bool, .date, .uuid, .objectId, .any]
                guard indexable.contains(info.type) else {
                    throw .invalidValue(
                        type: className, property: name, reason: "\(info.type) properties cannot have a \(index) index")
                }
            }
            var targetName: String?
            if info.type == .linkingObjects {
                // The origin property is checked once the origin type is known too (`checkLinkingObjects`).
                guard attributes.originProperty != nil, let target = info.objectType else {
                    throw .invalidValue(
                        type: className, property: name,
                        reason: "LinkingObjects properties are declared with @Persisted(originProperty:)")
                }
                guard attributes.index == nil, !attributes.primaryKey else {
                    throw .invalidValue(
                        type: className, property: name, reason: "linking objects cannot be a primary key or indexed")
                }
                targetName = target.className()
            }
            if info.type == .object, let target = info.objectType {
                targetName = target.className()
                if info.collection == .map {
                    guard info.isOptional else {
                        throw .invalidValue(
                            type: className, property: name,
                            reason: "a map holds optional objects (`\(target)?`)")
                    }
                } else if info.collection == .set && target is EmbeddedObject.Type {
                    throw .invalidValue(
                        type: className, property: name, reason: "a set cannot hold embedded objects")
                } else if info.isCollection {
                    guard !info.isOptional else {
                        throw .invalidValue(
                            type: className, property: name,
                            reason: "lists and sets hold non-optional objects (`\(target)`, not `\(target)?`)")
                    }
                } else if !info.isOptional {
                    throw .invalidValue(
                        type: className, property: name, reason: "links must be optional (`\(target)?`)")
                }
                guard !(target is AsymmetricObject.Type) else {
                    throw .invalidValue(
                        type: className, property: name, reason: "asymmetric objects cannot be linked to")
                }
                guard kind != .asymmetric || target is EmbeddedObject.Type else {
                    throw .invalidValue(
                        type: className, property: name,
                        reason: "asymmetric objects can only link to embedded objects (the outbox delivers "
                            + "self-contained copies)")
                }
            }
            properties.append(
                Property(
                    columnName: name, type: info.type, isOptional: info.isOptional,
                    isIndexed: attributes.index != nil || attributes.primaryKey,
                    isPrimary: attributes.primaryKey, objectClassName: targetName, name: swiftName,
                    isArray: info.isList, isSet: info.collection == .set, isMap: info.collection == .map,
                    linkOriginPropertyName: info.type == .linkingObjects ? attributes.originProperty : nil,
                    isFullTextIndexed: attributes.index == .fullText))
            infos.append(info)
        }
        for swiftName in mapping.keys where !properties.contains(where: { $0.swiftName == swiftName }) {
            throw .invalidValue(
                type: className, property: swiftName,
                reason: "propertiesMapping() names a property that is not @Persisted")
        }
        self.schema = ObjectSchema(
            className: className, properties: properties, isEmbedded: kind == .embedded,
            isAsymmetric: kind == .asymmetric)
        self.infos = infos
        self.primaryKeyIndex = properties.firstIndex(where: \.isPrimary)
        let claimed = prototype.boxes
        let discovered = TableSchema.persistedBoxes(of: prototype).map(\.1)
        let slots = discovered.compactMap { box in claimed.firstIndex { $0 === box } }
        self.boxSlots = claimed.count == discovered.count && slots.count == discovered.count ? slots : nil
        boxesInOrder = self.boxSlots.map { $0.elementsEqual($0.indices) } ?? false
        // Accessors for stored objects can skip boxes when building an instance creates exactly its own boxes
        // (no property initialiser creates another object), in a known order.
        if let boxSlots = self.boxSlots, created == boxSlots.count {
            var properties = [Int](repeating: 0, count: boxSlots.count)
            for (property, slot) in boxSlots.enumerated() { properties[slot] = property }
            accessorProperties = properties
        } else {
            accessorProperties = nil
        }
        var nameIndex: [String: Int] = [:]
        for (index, property) in properties.enumerated() {
            nameIndex[property.swiftName] = index
            nameIndex[property.columnName] = index
        }
        self.nameIndex = nameIndex
        swiftNames = properties.map(\.swiftName)
        referenceCollections = infos.indices.map { index in
            infos[index].collection == nil ? nil : valueType(property: index) as? any ManagedReferenceCollection.Type
        }
    }

    /// The `@Persisted` boxes of `object`, superclass properties first, each with its Swift name.
    static func persistedBoxes(of object: ObjectBase) -> [(String, PersistedBox)] {
        var mirrors: [Mirror] = []
        var mirror: Mirror? = Mirror(reflecting: object)
        while let current = mirror {
            mirrors.append(current)
            mirror = current.superclassMirror
        }
        var result: [(String, PersistedBox)] = []
        for mirror in mirrors.reversed() {
            for child in mirror.children {
                guard let label = child.label, let property = child.value as? any PersistedProperty,
                    let box = property.anyBox
                else { continue }
                let name = label.hasPrefix("_") ? String(label.dropFirst()) : label
                result.append((name, box))
            }
        }
        return result
    }

    /// The boxes of `object` (an instance of this type), in property order.
    func boxes(of object: ObjectBase) -> [PersistedBox] {
        if let boxSlots, object.boxes.count == boxSlots.count { return boxSlots.map { object.boxes[$0] } }
        return TableSchema.persistedBoxes(of: object).map(\.1)
    }

    /// `object`'s boxes, in property order, when its boxes are in that order already (the common case): the
    /// object's own array, not a copy. Nil otherwise (then `boxes(of:)` or `storedValues(of:)`).
    func boxesInPropertyOrder(of object: ObjectBase) -> [PersistedBox]? {
        guard boxesInOrder, let boxSlots, object.boxes.count == boxSlots.count else { return nil }
        return object.boxes
    }

    /// The values of `object`'s boxes, in property order: one array, where `boxes(of:).map(\.stored)` made two.
    func storedValues(of object: ObjectBase) -> [_StoredValue] {
        if let boxSlots, object.boxes.count == boxSlots.count {
            let boxes = object.boxes
            return boxSlots.map { boxes[$0].stored }
        }
        return TableSchema.persistedBoxes(of: object).map(\.1.stored)
    }

    /// Records in each box of `object` which property it holds, so managed reads skip the key-path lookup.
    /// and which managed object reads them (for encoding).
    func attach(_ object: ObjectBase, to managed: ManagedObject) {
        let owner = Unmanaged.passUnretained(managed)
        if let boxSlots, object.boxes.count == boxSlots.count {
            for (property, slot) in boxSlots.enumerated() {
                object.boxes[slot].column = property
                object.boxes[slot].owner = owner
            }
        } else {
            for (property, box) in boxes(of: object).enumerated() {
                box.column = property
                box.owner = owner
            }
        }
    }

    /// The box of property `index` in `object`.
    func box(of object: ObjectBase, property index: Int) -> PersistedBox {
        if let boxSlots, object.boxes.count == boxSlots.count { return object.boxes[boxSlots[index]] }
        return TableSchema.persistedBoxes(of: object)[index].1
    }

    /// Property `index`'s initial value in a new instance, as stored; nil for a class known only from the file.
    func initialStored(property index: Int) -> _StoredValue? {
        guard type != DynamicObject.self, index < schema.properties.count else { return nil }
        return box(of: prototype, property: index).stored
    }

    /// The Swift type of property `index` (`List<String>`, `Dog?` …); nil for a class known only from the file.
    func valueType(property index: Int) -> (any _Persistable.Type)? {
        guard type != DynamicObject.self, index < schema.properties.count else { return nil }
        return box(of: prototype, property: index).valueType
    }

    /// The property with persisted or Swift name `name`.
    func propertyIndex(named name: String) -> Int? { nameIndex[name] }

    /// The property whose Swift name is `name`, found by comparing names when the class has few properties (a
    /// short name compares in a few instructions, hashing it costs hundreds: every key of a dictionary given to
    /// `create` is looked up); nil when no Swift name matches or the class has many properties (then look the name
    /// up with ``propertyIndex(named:)``).
    func propertyIndex(swiftName name: String) -> Int? {
        guard swiftNames.count <= 16 else { return nil }
        return swiftNames.firstIndex(of: name)
    }

    var className: String { schema.className }
}

/// The model classes this process has seen, discovered once each.
final class SchemaRegistry: Sendable {
    static let shared = SchemaRegistry()

    private let tables = Locked<[ObjectIdentifier: TableSchema]>([:])
    private let boxCounts = Locked<[ObjectIdentifier: Int]>([:])

    /// How many `@Persisted` boxes an instance of `object`'s type has (counted with `Mirror` once per type).
    func boxCount(of object: ObjectBase) -> Int {
        let id = ObjectIdentifier(type(of: object))
        if let count = boxCounts.withLock({ $0[id] }) { return count }
        let count = TableSchema.persistedBoxes(of: object).count
        boxCounts.withLock { $0[id] = count }
        return count
    }

    /// The discovered schema of `type`.
    func table(for type: ObjectBase.Type) throws(Realm.Error) -> TableSchema {
        let id = ObjectIdentifier(type)
        if let table = tables.withLock({ $0[id] }) { return table }
        // Discover outside the lock: creating the prototype runs user code (property initialisers).
        let table = try TableSchema(type: type)
        return tables.withLock { tables in
            if let existing = tables[id] { return existing }
            tables[id] = table
            return table
        }
    }

    /// Every model class discovered so far in this process.
    func knownTypes() -> [ObjectBase.Type] {
        tables.withLock { $0.values.map(\.type) }.filter { $0 != DynamicObject.self }
    }

    /// The primary key property of the model class whose stored name is `className`, if this process knows one;
    /// error messages name it.
    func primaryKeyProperty(ofClassNamed className: String) -> String? {
        tables.withLock { tables in
            tables.values.first { $0.className == className && $0.type != DynamicObject.self }
                .flatMap { table in table.primaryKeyIndex.map { table.schema.properties[$0].columnName } }
        }
    }

    /// `types` and every type they link to, transitively, in a stable order.
    func closure(of types: [ObjectBase.Type]) throws(Realm.Error) -> [TableSchema] {
        var result: [TableSchema] = []
        var seen: Set<ObjectIdentifier> = []
        var pending = types
        while let type = pending.popLast() {
            guard seen.insert(ObjectIdentifier(type)).inserted else { continue }
            let table = try table(for: type)
            result.append(table)
            for info in table.infos {
                if let target = info.objectType { pending.append(target) }
            }
        }
        for table in result { try Self.checkLinkingObjects(of: table, among: result) }
        return result.sorted { $0.className < $1.className }
    }

    /// Checks that every `LinkingObjects` property of `table` names an origin property that links to it.
    private static func checkLinkingObjects(of table: TableSchema, among tables: [TableSchema]) throws(Realm.Error) {
        for property in table.schema.properties where property.type == .linkingObjects {
            guard let originName = property.objectClassName,
                let origin = tables.first(where: { $0.className == originName }),
                let originProperty = property.linkOriginPropertyName
            else { continue }
            guard let linked = origin.schema[propertyName: originProperty] else {
                throw .invalidValue(
                    type: table.className, property: property.columnName,
                    reason: "the origin type \(originName) has no property \(originProperty)")
            }
            guard linked.type == .object, linked.objectClassName == table.className else {
                throw .invalidValue(
                    type: table.className, property: property.columnName,
                    reason: "\(originName).\(originProperty) does not link to \(table.className)")
            }
        }
    }
}

import StrataStorage

/// The projected properties of a projection class: the names it gives them, how each reads the root object,
/// and (once resolved against a Realm) the root object's key path each projects.
struct ProjectionSchema {
    struct Property {
        /// The name the projection declares (`homeCity`).
        let name: String
        let access: any AnyProjected
        /// The persisted names along the projected key path on the root (`["address", "city"]`); empty until
        /// resolved.
        var rootPath: [String]
    }

    let properties: [Property]
    private let byName: [String: Int]

    init(properties: [Property]) {
        self.properties = properties
        var byName: [String: Int] = [:]
        for (index, property) in properties.enumerated() { byName[property.name] = index }
        self.byName = byName
    }

    /// The property the projection calls `name`.
    func property(named name: String) -> Property? { byName[name].map { properties[$0] } }

    /// `path` (projected names, or root names) as a path on the root object: a first component that names a
    /// projected property stands for the root path it projects.
    func rootPath(_ path: [String]) -> [String] {
        guard let first = path.first, let property = property(named: first) else { return path }
        return property.rootPath + path.dropFirst()
    }

    private static let declaredCache = Locked<[ObjectIdentifier: ProjectionSchema]>([:])
    private static let resolvedCache = Locked<[ObjectIdentifier: ProjectionSchema]>([:])

    /// The `@Projected` properties of `projection`'s class, in declaration order (base classes first), found with
    /// `Mirror` once per class.
    static func declared(in projection: AnyObject) -> [Property] {
        let key = ObjectIdentifier(type(of: projection))
        if let cached = declaredCache.withLock({ $0[key] }) { return cached.properties }
        var mirrors: [Mirror] = []
        var mirror: Mirror? = Mirror(reflecting: projection)
        while let current = mirror {
            mirrors.append(current)
            mirror = current.superclassMirror
        }
        var properties: [Property] = []
        for mirror in mirrors.reversed() {
            for child in mirror.children {
                guard let label = child.label, let access = child.value as? any AnyProjected else { continue }
                let name = label.hasPrefix("_") ? String(label.dropFirst()) : label
                properties.append(Property(name: name, access: access, rootPath: []))
            }
        }
        let schema = ProjectionSchema(properties: properties)
        declaredCache.withLock { $0[key] = schema }
        return properties
    }

    /// The schema of `type` with each property's root path, recorded once per class by reading the projected
    /// key paths on a projection of a recording accessor.
    static func resolved<P: ProjectionObservable>(_ type: P.Type, realm: Realm) -> ProjectionSchema {
        let key = ObjectIdentifier(type)
        if let cached = resolvedCache.withLock({ $0[key] }) { return cached }
        do {
            let binding = try realm.binding(for: P.Root.self)
            let recorder = KeyPathRecorder()
            guard let root = realm.recordingAccessor(binding, recorder: recorder) as? P.Root else {
                fatalError("\(binding.className) accessor is not a \(P.Root.self)")
            }
            var properties = declared(in: P(projecting: root))
            for index in properties.indices {
                let keyPath = properties[index].access.anyKeyPath
                properties[index].rootPath = try realm.propertyPath(
                    of: keyPath, query: "\(P.self).\(properties[index].name)")
            }
            let schema = ProjectionSchema(properties: properties)
            resolvedCache.withLock { $0[key] = schema }
            return schema
        } catch {
            fatalError("\(P.self): \(error)")
        }
    }
}

extension Realm {
    /// `paths` (projected or root names) as paths on the root objects of projection type `P`; nil means every
    /// projected property.
    func projectionPaths<P: ProjectionObservable>(_ type: P.Type, _ paths: [[String]]?) -> [[String]] {
        let schema = ProjectionSchema.resolved(type, realm: self)
        guard let paths else { return schema.properties.map(\.rootPath) }
        return paths.map(schema.rootPath)
    }

    /// The query aliases of projection type `P`: each projected name and the root path it stands for.
    func projectionAliases<P: ProjectionObservable>(_ type: P.Type) -> [String: [String]] {
        var aliases: [String: [String]] = [:]
        for property in ProjectionSchema.resolved(type, realm: self).properties {
            aliases[property.name] = property.rootPath
        }
        return aliases
    }
}

/// A projected value as observation compares it: collections as their elements, optionals unwrapped.
func projectedSnapshot(_ value: Any) -> Any? {
    guard let value = flattenedOptional(value) else { return nil }
    if let collection = value as? any RealmCollection { return projectedElements(collection).map(projectedSnapshot) }
    return value
}

/// Whether two projected snapshots hold the same value (objects by identity, collections element by element).
/// Values of types that are not `Equatable` count as different.
func projectedSnapshotsEqual(_ a: Any?, _ b: Any?) -> Bool {
    switch (a, b) {
    case (nil, nil): return true
    case (nil, _), (_, nil): return false
    case (let a?, let b?):
        if let object = a as? ObjectBase { return object.isSameObject(as: b as? ObjectBase) }
        if let elements = a as? [Any?] {
            guard let others = b as? [Any?], elements.count == others.count else { return false }
            return zip(elements, others).allSatisfy(projectedSnapshotsEqual)
        }
        if let equatable = a as? any Equatable { return equatable.isEqual(to: b) }
        return false
    }
}

extension Equatable {
    /// Whether `other` is a `Self` equal to this value.
    fileprivate func isEqual(to other: Any) -> Bool { (other as? Self) == self }
}

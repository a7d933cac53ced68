import StrataStorage

/// Follows one projection: after a version that touches a projected key path of its root object, the projected
/// values that differ from the ones last delivered (old and new value, by the projection's names), or the root's
/// deletion.
final class ProjectionObserver<P: ProjectionObservable>: RootObjectObserver<P> {
    let projection: P
    /// The observed properties and the root paths that can change them.
    private let properties: [ProjectionSchema.Property]
    private let paths: [[String]]
    /// The values as last delivered (or when observation started), by property.
    private var last: [Any?]
    private var dirty = false

    init(projection: P, keyPaths: [String]?) {
        let root = projection._projectionRoot
        guard let managed = root.managed else {
            fatalError("observe: \(P.self) projects an unmanaged \(P.Root.self); only managed objects can be observed")
        }
        self.projection = projection
        let schema = ProjectionSchema.resolved(P.self, realm: managed.realm)
        if let keyPaths {
            var properties: [ProjectionSchema.Property] = []
            var paths: [[String]] = []
            for keyPath in splitKeyPaths(keyPaths) {
                guard let first = keyPath.first, let property = schema.property(named: first) else {
                    fatalError(
                        "observe: \(keyPaths) names no projected property of \(P.self) (projected: \(schema.properties.map(\.name)))"
                    )
                }
                if !properties.contains(where: { $0.name == property.name }) { properties.append(property) }
                paths.append(property.rootPath + keyPath.dropFirst())
            }
            // In the order the projection declares them.
            self.properties = schema.properties.filter { declared in properties.contains { $0.name == declared.name } }
            self.paths = paths
        } else {
            properties = schema.properties
            paths = schema.properties.map(\.rootPath)
        }
        last = properties.map { projectedSnapshot($0.access.value(in: root)) }
        super.init(managed: managed)
        ModificationChecker.validate(paths, from: managed.binding, realm: managed.realm)
    }

    override func record(_ step: VersionStep) {
        if dirty { return }
        let binding = managed.binding
        let checker = ModificationChecker(
            realm: managed.realm, changes: step.changes, paths: paths, root: binding.className)
        if checker.isModified(binding, managed.key) { dirty = true }
    }

    override func pendingChange() -> ObjectChange<P>? {
        guard dirty else { return nil }
        dirty = false
        let root = projection._projectionRoot
        var changes: [PropertyChange] = []
        for (index, property) in properties.enumerated() {
            let now = projectedSnapshot(property.access.value(in: root))
            guard !projectedSnapshotsEqual(last[index], now) else { continue }
            changes.append(PropertyChange(name: property.name, oldValue: last[index], newValue: now))
            last[index] = now
        }
        return changes.isEmpty ? nil : .change(projection, changes)
    }
}

extension ProjectionObservable {
    /// The observer of this projection, registered with its Realm.
    private func registeredObserver(keyPaths: [String]?) -> ProjectionObserver<Self> {
        let observer = ProjectionObserver(projection: self, keyPaths: keyPaths)
        observer.managed.realm.addObserver(observer)
        return observer
    }

    /// Calls `block` after each change to the projected properties (with `keyPaths`, only those, by the names the
    /// projection declares), and once with `.deleted` when the root object is deleted. Each ``PropertyChange``
    /// carries the projection's name for the property and its old and new projected values (collections as
    /// arrays). Changes to properties of the root that are not projected do not call `block`.
    ///
    /// ```swift
    /// let token = projection.observe(keyPaths: ["homeCity"]) { change in
    ///     if case .change(_, let properties) = change { print(properties.map(\.name)) }   // ["homeCity"]
    /// }
    /// ```
    ///
    /// Delivered where the Realm lives, like object notifications; there is no initial call.
    public func observe(keyPaths: [String]? = nil, _ block: @escaping (ObjectChange<Self>) -> Void)
        -> NotificationToken
    {
        let observer = registeredObserver(keyPaths: keyPaths)
        observer.handler = block
        return observer.token()
    }

    /// ``observe(keyPaths:_:)-([String]?,(ObjectChange<Self>)->Void)`` with key paths of the projection
    /// (`\PersonProjection.homeCity`).
    public func observe(keyPaths: [PartialKeyPath<Self>], _ block: @escaping (ObjectChange<Self>) -> Void)
        -> NotificationToken
    {
        observe(keyPaths: projectedNames(keyPaths), block)
    }

    /// The projection's changes as an `AsyncSequence` (no initial element; ends after `.deleted`), limited to the
    /// projected properties. Iterate it where the Realm lives.
    ///
    /// ```swift
    /// for await change in projection.changes {
    ///     if case .change(let person, let properties) = change { render(person, properties) }
    /// }
    /// ```
    public var changes: ObjectChanges<Self> { ObjectChanges(observer: registeredObserver(keyPaths: nil)) }

    /// ``changes`` limited to the projected properties named in `keyPaths`.
    public func changes(keyPaths: [String]) -> ObjectChanges<Self> {
        ObjectChanges(observer: registeredObserver(keyPaths: keyPaths))
    }

    /// ``changes(keyPaths:)-([String])`` with key paths of the projection (`\PersonProjection.homeCity`).
    public func changes(keyPaths: [PartialKeyPath<Self>]) -> ObjectChanges<Self> {
        changes(keyPaths: projectedNames(keyPaths))
    }

    private func projectedNames(_ keyPaths: [PartialKeyPath<Self>]) -> [String] {
        guard let realm = _projectionRoot.realm else {
            fatalError("observe: \(Self.self) projects an unmanaged object")
        }
        return realm.projectedNames(keyPaths, of: Self.self)
    }
}

extension RealmCollection where Element: ProjectionObservable {
    /// ``changes(keyPaths:)-([String])`` with key paths of the projection (`\PersonProjection.homeCity`).
    public func changes(keyPaths: [PartialKeyPath<Element>]) -> RealmCollectionChanges<Self> {
        changes(keyPaths: projectedNames(keyPaths))
    }

    /// ``observe(keyPaths:_:)`` with key paths of the projection (`\PersonProjection.homeCity`).
    public func observe(
        keyPaths: [PartialKeyPath<Element>], _ block: @escaping (RealmCollectionChange<Self>) -> Void
    ) -> NotificationToken {
        observe(keyPaths: projectedNames(keyPaths), block)
    }

    private func projectedNames(_ keyPaths: [PartialKeyPath<Element>]) -> [String] {
        guard let realm else { fatalError("observe: unmanaged collections cannot be observed") }
        return realm.projectedNames(keyPaths, of: Element.self)
    }
}

extension Realm {
    /// The names projection type `P` gives the properties `keyPaths` (`\PersonProjection.homeCity`) read; traps
    /// for a key path that reads no projected property.
    func projectedNames<P: ProjectionObservable>(_ keyPaths: [AnyKeyPath], of type: P.Type) -> [String] {
        let schema = ProjectionSchema.resolved(type, realm: self)
        return keyPaths.map { keyPath in
            do {
                let path = try propertyPath(of: keyPath, query: "observe(keyPaths: \(keyPath))")
                guard let property = schema.properties.first(where: { $0.rootPath == path }) else {
                    fatalError("observe: \(keyPath) is not a projected property of \(P.self)")
                }
                return property.name
            } catch {
                fatalError("\(error)")
            }
        }
    }
}

import StrataStorage

/// Follows one stored object until it is deleted: subclasses record what a version changed (`record`) and say
/// what to deliver (`pendingChange`); this class delivers `.deleted` once when the object goes, then nothing.
class RootObjectObserver<Value>: ChangeObserver<ObjectChange<Value>> {
    let managed: ManagedObject
    private var deleted = false
    private var finished = false

    init(managed: ManagedObject) {
        self.managed = managed
        super.init()
    }

    final override func advanced(_ step: VersionStep) {
        guard !deleted, !finished else { return }
        if managed.wasDeleted(in: step.changes) {
            deleted = true
            return
        }
        record(step)
    }

    /// Notes what `step` changed in the (still existing) object.
    func record(_ step: VersionStep) {}

    /// The change recorded since the last delivery, or nil.
    func pendingChange() -> ObjectChange<Value>? { nil }

    final override func nextChange() -> ObjectChange<Value>? {
        guard !finished else { return nil }
        if deleted {
            finished = true
            return .deleted
        }
        return pendingChange()
    }

    /// Whether `.deleted` was delivered.
    final override var isFinished: Bool { finished }
}

/// Follows one object: the properties that changed since the last delivery (first old value, latest new
/// value), or its deletion.
final class ObjectObserver<T: ObjectBase>: RootObjectObserver<T> {
    let object: T
    let paths: [[String]]?
    private var pending: [String: (old: Any?, new: Any?)] = [:]

    init(object: T, managed: ManagedObject, paths: [[String]]?) {
        self.object = object
        self.paths = paths
        super.init(managed: managed)
        if let paths { ModificationChecker.validate(paths, from: managed.binding, realm: managed.realm) }
    }

    override func record(_ step: VersionStep) {
        let changes = step.changes
        let binding = managed.binding
        let checker = ModificationChecker(realm: managed.realm, changes: changes, paths: paths, root: binding.className)
        let names = checker.changedProperties(binding, managed.key)
        guard !names.isEmpty else { return }
        for name in names {
            guard let index = binding.table.propertyIndex(named: name) else { continue }
            let newValue = managed.readAny(property: index)
            if pending[name] != nil {
                pending[name]!.new = newValue
            } else {
                pending[name] = (oldValue(of: index, in: step.old), newValue)
            }
        }
    }

    /// The plain value of property `index` in `old` (nil for links, collections and mixed values).
    private func oldValue(of index: Int, in old: ReadTransaction) -> Any? {
        let binding = managed.binding
        let info = binding.table.infos[index]
        guard !info.isCollection, info.type != .object, info.type != .any, info.type != .linkingObjects else {
            return nil
        }
        let stored = try? old.tree(named: binding.rowsTree)?.withValue(forKey: KeyEncoding.objectKey(managed.key)) {
            RowCodec.get(try RowView($0), column: binding.columns[index], info: info)
        }
        return stored.flatMap { $0 }.flatMap { StoredValueConversion.any(from: $0) }
    }

    override func pendingChange() -> ObjectChange<T>? {
        guard !pending.isEmpty else { return nil }
        let properties = managed.binding.table.schema.properties
        // Tracked by column; reported by Swift name, as the SDK's `PropertyChange.name` (they differ for classes
        // with `propertiesMapping()`).
        let changes = properties.compactMap { property in
            pending[property.columnName].map {
                PropertyChange(name: property.name, oldValue: $0.old, newValue: $0.new)
            }
        }
        pending = [:]
        return .change(object, changes)
    }
}

extension ManagedObject {
    /// Whether `changes` (up to the Realm's current version) deleted this object.
    func wasDeleted(in changes: VersionChanges) -> Bool {
        changes.classes[binding.className]?.insertedOrDeleted.contains(key) == true && !exists
    }
}

extension ObjectBase {
    /// The observer of this managed object, registered with its Realm.
    func registeredObserver<T: ObjectBase>(as object: T, paths: [[String]]?) -> ObjectObserver<T> {
        guard let managed else {
            fatalError("observe: \(type(of: self)) is unmanaged; only managed objects can be observed")
        }
        let observer = ObjectObserver(object: object, managed: managed, paths: paths)
        managed.realm.addObserver(observer)
        return observer
    }
}

// `observe` and `changes` for every object type, on `ThreadConfined` so that `Self` is the model class.
extension ThreadConfined where Self: ObjectBase {
    /// Calls `block` after each change to the object's properties (with `keyPaths`, only those properties, or
    /// paths through links such as `"owner.name"`, which report the link property), and once with `.deleted` when
    /// it is deleted. Delivered where the Realm lives, like collection notifications; there is no initial call.
    ///
    /// ```swift
    /// let token = dog.observe(keyPaths: ["name"]) { change in
    ///     if case .change(_, let properties) = change { print(properties.map(\.name)) }
    /// }
    /// ```
    public func observe(keyPaths: [String]? = nil, _ block: @escaping (ObjectChange<Self>) -> Void)
        -> NotificationToken
    {
        let observer = registeredObserver(as: self, paths: keyPaths.map(splitKeyPaths))
        observer.handler = block
        return observer.token()
    }

    /// ``observe(keyPaths:_:)-([String]?,(ObjectChange<Self>)->Void)`` with Swift key paths (`\Dog.name`).
    public func observe(keyPaths: [PartialKeyPath<Self>], _ block: @escaping (ObjectChange<Self>) -> Void)
        -> NotificationToken
    {
        observe(keyPaths: propertyNames(keyPaths), block)
    }

    /// The persisted names of `keyPaths`.
    func propertyNames(_ keyPaths: [PartialKeyPath<Self>]) -> [String] {
        guard let realm else { fatalError("observe: \(Self.self) is unmanaged") }
        return realm.propertyNames(keyPaths, in: "observe")
    }
}

import StrataStorage

/// Reading objects: every object of a type (or of a stored class, dynamically) as live ``Results``, and one
/// object by primary key.
extension Realm {
    /// A `Results` over the binding `resolve` returns; traps (these calls cannot throw) when it fails or names an
    /// embedded or asymmetric type.
    private func queryable<Element>(_ resolve: () throws(Realm.Error) -> TableBinding) -> Results<Element> {
        do {
            let binding = try resolve()
            guard binding.table.kind == .object else {
                fatalError(
                    "\(binding.className) is \(binding.table.kind == .embedded ? "embedded" : "asymmetric") and cannot be queried"
                )
            }
            return Results(realm: self, binding: binding)
        } catch {
            fatalError("\(error)")
        }
    }

    /// Every object of `type`, as a live collection.
    public func objects<Element: ObjectBase>(_ type: Element.Type) -> Results<Element> {
        checkThread()
        return queryable { () throws(Realm.Error) in try binding(for: type) }
    }

    /// Every object of `type`'s root class, each seen through a projection of `type`, as a live collection that
    /// can be filtered and sorted by projected names (`"homeCity == 'Lisbon'"`) or the root's key paths, and
    /// observed (only projected properties count as modifications).
    ///
    /// ```swift
    /// let people = realm.objects(PersonProjection.self).sorted(byKeyPath: "firstName")
    /// ```
    public func objects<Element: ProjectionObservable>(_ type: Element.Type) -> Results<Element> {
        checkThread()
        return queryable { () throws(Realm.Error) in try binding(for: Element.Root.self) }
    }

    /// The object of `type` with primary key `key`, or nil (also when the file's primary-key index is damaged:
    /// see ``damage``).
    public func object<Element: Object, Key>(ofType type: Element.Type, forPrimaryKey key: Key) -> Element? {
        checkThread()
        do {
            let binding = try binding(for: type)
            guard let index = binding.table.primaryKeyIndex else {
                fatalError("\(binding.className) has no primary key")
            }
            let info = binding.table.infos[index]
            guard let stored = StoredValueConversion.stored(from: key, as: info),
                let encoded = KeyEncoding.primaryKey(stored)
            else {
                fatalError(
                    "\(Realm.Error.invalidValue(type: binding.className, property: binding.table.schema.properties[index].columnName, reason: "\(Key.self) is not a valid primary key value"))"
                )
            }
            guard let objectKey = try lookupPrimaryKey(binding, encoded) else { return nil }
            // Looked up in a write, the object is often deleted next: its delete then need not read the row.
            tables.notePrimaryKeyLookup(binding, key: objectKey, encoded: encoded)
            return object(binding, key: objectKey) as? Element
        } catch {
            return survive(error, "\(error)", returning: nil)
        }
    }

    /// Every object of the stored class `className`, accessed by property name. Traps if the file has no such
    /// class, or if it is embedded or asymmetric.
    public func dynamicObjects(_ className: String) -> Results<DynamicObject> {
        checkThread()
        return queryable { () throws(Realm.Error) in try dynamicBinding(className) }
    }
}

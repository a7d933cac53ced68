import StrataStorage

/// Storage of `Map` properties: for each map property a keyed tree `m:<class>.<property>` maps the owning
/// object's key to a nested keyed tree from the UTF-8 map key to the value, encoded as a one-column row (links as
/// object keys).
extension Realm {
    /// The stored key of `key`, checked against the map-key rules and the engine's key size.
    private func mapKey(_ key: String, binding: TableBinding, property: Int) throws(Realm.Error) -> [UInt8] {
        let name = binding.table.schema.properties[property].columnName
        if let problem = MapKeys.problem(key) {
            throw .invalidValue(type: binding.className, property: name, reason: "\"\(key)\": \(problem)")
        }
        let bytes = Array(key.utf8)
        guard bytes.count <= store.maxKeySize else {
            throw .invalidValue(
                type: binding.className, property: name, reason: "map keys are limited to \(store.maxKeySize) bytes")
        }
        return bytes
    }

    // MARK: Operations behind Map

    func mapEntry(_ owner: ManagedObject, property: Int, nested: UInt64 = 0, level: Int = 0, at index: Int)
        -> (String, _StoredValue)
    {
        checkThread()
        do {
            let entry = try collectionEntry(owner, property: property, nested: nested, at: index)
            let value = try entry.value.withUnsafeBytes { (raw) throws(Realm.Error) in
                try decodeElement(raw, binding: owner.binding, property: property, owner: owner, level: level)
            }
            return (String(decoding: entry.key, as: UTF8.self), value)
        } catch {
            return survive(error, "\(collectionName(owner, property))[\(index)]: \(error)", returning: ("", .null))
        }
    }

    func mapValue(_ owner: ManagedObject, property: Int, nested: UInt64 = 0, level: Int = 0, key: String)
        -> _StoredValue?
    {
        checkThread()
        guard MapKeys.problem(key) == nil else { return nil }
        do {
            guard
                let bytes = try collectionValue(owner, property: property, nested: nested, key: Array(key.utf8))
            else { return nil }
            return try bytes.withUnsafeBytes { (raw) throws(Realm.Error) in
                try decodeElement(raw, binding: owner.binding, property: property, owner: owner, level: level)
            }
        } catch {
            return survive(error, "\(collectionName(owner, property))[\"\(key)\"]: \(error)", returning: nil)
        }
    }

    func mapSet(
        _ owner: ManagedObject, property: Int, nested: UInt64 = 0, level: Int = 0, key: String, _ value: _StoredValue
    ) {
        mutateCollection(owner, property: property, nested: nested, "setting a key of") {
            (transaction, map) throws(Realm.Error) in
            let keyBytes = try mapKey(key, binding: owner.binding, property: property)
            let bytes = try encodeElement(
                value, binding: owner.binding, property: property, owner: owner.key, level: level)
            try putEntry(keyBytes, bytes, in: map, binding: owner.binding, property: property, owner: owner.key)
        }
    }

    func mapRemove(_ owner: ManagedObject, property: Int, nested: UInt64 = 0, key: String) {
        mutateCollection(owner, property: property, nested: nested, "removing a key of") {
            (transaction, map) throws(Realm.Error) in
            try deleteEntry(Array(key.utf8), in: map, binding: owner.binding, property: property, owner: owner.key)
        }
    }

    func mapRemoveAll(_ owner: ManagedObject, property: Int, nested: UInt64 = 0) {
        mutateCollection(owner, property: property, nested: nested, "removing all of") {
            (transaction, map) throws(Realm.Error) in
            try uncountLinks(in: map, binding: owner.binding, property: property, owner: owner.key)
            try mutate { try transaction.removeAll(in: map) }
        }
    }

    // MARK: Maps of a whole object

    /// Replaces the stored entries of one map property with those of `value` (a `Map` or an entry source).
    func replaceMap(binding: TableBinding, property: Int, key: Int64, with value: _StoredValue) throws(Realm.Error) {
        try refillCollection(
            binding: binding, property: property, key: key, from: value, expected: "Map",
            entries: { ($0 as? any AnyRealmMap)?.storedEntries },
            add: { (transaction, map, entry) throws(Realm.Error) in
                let keyBytes = try mapKey(entry.key, binding: binding, property: property)
                let bytes = try encodeElement(entry.value, binding: binding, property: property, owner: key)
                try putEntry(keyBytes, bytes, in: map, binding: binding, property: property, owner: key)
            })
    }
}

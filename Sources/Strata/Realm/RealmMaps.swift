import StrataStorage

/// The accessor half of `Map` properties: the operations behind `Map` (confinement, the write transaction's
/// failure, adding unmanaged values, releasing dropped ones). The map trees themselves are written by
/// `Tables/MapTrees.swift` and `Tables/SetTrees.swift`.
extension Realm {
    /// The stored key of map key `key` (see `TableStore.mapKey`).
    private func mapKey(_ key: String, binding: TableBinding, property: Int) throws(Realm.Error) -> [UInt8] {
        try tables.mapKey(key, binding: binding, property: property, maxKeySize: store.maxKeySize)
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
            (_, map) throws(Realm.Error) in
            let keyBytes = try mapKey(key, binding: owner.binding, property: property)
            let bytes = try encodeElement(
                value, binding: owner.binding, property: property, owner: owner.key, level: level)
            try putEntry(keyBytes, bytes, in: map, binding: owner.binding, property: property, owner: owner.key)
        }
    }

    func mapRemove(_ owner: ManagedObject, property: Int, nested: UInt64 = 0, key: String) {
        mutateCollection(owner, property: property, nested: nested, "removing a key of") {
            (_, map) throws(Realm.Error) in
            try deleteEntry(Array(key.utf8), in: map, binding: owner.binding, property: property, owner: owner.key)
        }
    }

    func mapRemoveAll(_ owner: ManagedObject, property: Int, nested: UInt64 = 0) {
        mutateCollection(owner, property: property, nested: nested, "removing all of") {
            (_, map) throws(Realm.Error) in
            try removeAllElements(of: map, owner: owner, property: property)
        }
    }

    // MARK: Maps of a whole object

    /// Replaces the stored entries of one map property with those of `value` (a `Map` or an entry source).
    func replaceMap(binding: TableBinding, property: Int, key: Int64, with value: _StoredValue) throws(Realm.Error) {
        try refillCollection(
            binding: binding, property: property, key: key, from: value, expected: "Map",
            entries: { ($0 as? any AnyRealmMap)?.storedEntries },
            add: { (_, map, entry) throws(Realm.Error) in
                let keyBytes = try mapKey(entry.key, binding: binding, property: property)
                let bytes = try encodeElement(entry.value, binding: binding, property: property, owner: key)
                try putEntry(keyBytes, bytes, in: map, binding: binding, property: property, owner: key)
            })
    }
}

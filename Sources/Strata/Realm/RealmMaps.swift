import StrataStorage

/// Storage of `Map` properties: for each map property a keyed tree `m:<class>.<property>` maps the owning
/// object's key to a nested keyed tree from the UTF-8 map key to the value, encoded as a one-column row (links as
/// object keys).
extension Realm {
    private func mapName(_ owner: ManagedObject, _ property: Int) -> String {
        "\(owner.table.className).\(owner.table.schema.properties[property].name)"
    }

    /// The stored key of `key`, checked against the map-key rules and the engine's key size.
    private func mapKey(_ key: String, binding: TableBinding, property: Int) throws(Realm.Error) -> [UInt8] {
        let name = binding.table.schema.properties[property].name
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

    private func mapHandle(_ binding: TableBinding, property: Int, key: Int64, create: Bool) throws(Realm.Error)
        -> TreeHandle?
    {
        let name = TableNames.map(binding.className, binding.table.schema.properties[property].name)
        guard let maps = try handle(name, create: create), let transaction = writeTransactionIfAny else { return nil }
        let objectKey = KeyEncoding.objectKey(key)
        if create { return try mutate { try transaction.subtree(forKey: objectKey, in: maps, create: .keyed) } }
        return try storage { try transaction.subtree(forKey: objectKey, in: maps) }
    }

    private func mapView(_ binding: TableBinding, property: Int, key: Int64) throws(Realm.Error) -> TreeView? {
        let name = TableNames.map(binding.className, binding.table.schema.properties[property].name)
        guard let maps = treeView(name) else { return nil }
        return try storage { try maps.subtree(forKey: KeyEncoding.objectKey(key)) }
    }

    // MARK: Operations behind Map

    func mapCount(_ owner: ManagedObject, property: Int) -> Int {
        checkThread()
        do {
            if let transaction = writeTransactionIfAny {
                guard let map = try mapHandle(owner.binding, property: property, key: owner.key, create: false) else {
                    return 0
                }
                return try storage { try transaction.count(in: map) }
            }
            return try mapView(owner.binding, property: property, key: owner.key)?.count ?? 0
        } catch {
            fatalError("\(mapName(owner, property)): \(error)")
        }
    }

    func mapEntry(_ owner: ManagedObject, property: Int, at index: Int) -> (String, _StoredValue) {
        checkThread()
        do {
            let entry: (key: [UInt8], value: [UInt8])
            if let transaction = writeTransactionIfAny {
                guard let map = try mapHandle(owner.binding, property: property, key: owner.key, create: false) else {
                    fatalError("\(mapName(owner, property)): index \(index) out of range for an empty map")
                }
                entry = try storage { try transaction.element(at: index, in: map) }
            } else {
                guard let map = try mapView(owner.binding, property: property, key: owner.key) else {
                    fatalError("\(mapName(owner, property)): index \(index) out of range for an empty map")
                }
                entry = try storage { try map.element(at: index) }
            }
            let value = try entry.value.withUnsafeBytes { (raw) throws(Realm.Error) in
                try decodeElement(raw, binding: owner.binding, property: property)
            }
            return (String(decoding: entry.key, as: UTF8.self), value)
        } catch {
            fatalError("\(mapName(owner, property))[\(index)]: \(error)")
        }
    }

    func mapValue(_ owner: ManagedObject, property: Int, key: String) -> _StoredValue? {
        checkThread()
        guard MapKeys.problem(key) == nil else { return nil }
        let keyBytes = Array(key.utf8)
        do {
            let bytes: [UInt8]?
            if let transaction = writeTransactionIfAny {
                guard let map = try mapHandle(owner.binding, property: property, key: owner.key, create: false) else {
                    return nil
                }
                bytes = try storage { try transaction.get(keyBytes, in: map) }
            } else {
                guard let map = try mapView(owner.binding, property: property, key: owner.key) else { return nil }
                bytes = try storage { try map.get(keyBytes) }
            }
            guard let bytes else { return nil }
            return try bytes.withUnsafeBytes { (raw) throws(Realm.Error) in
                try decodeElement(raw, binding: owner.binding, property: property)
            }
        } catch {
            fatalError("\(mapName(owner, property))[\"\(key)\"]: \(error)")
        }
    }

    /// Runs a map mutation in the write transaction; errors fail the transaction.
    private func mutateMap(
        _ owner: ManagedObject, property: Int, _ what: String,
        _ body: (WriteTransaction, TreeHandle) throws(Realm.Error) -> Void
    ) {
        guard let transaction = transactionForMutation("\(what) \(mapName(owner, property))") else { return }
        do {
            guard let map = try mapHandle(owner.binding, property: property, key: owner.key, create: true) else {
                throw Realm.Error.invalidatedObject
            }
            try body(transaction, map)
        } catch {
            fail(error)
        }
    }

    func mapSet(_ owner: ManagedObject, property: Int, key: String, _ value: _StoredValue) {
        mutateMap(owner, property: property, "setting a key of") { (transaction, map) throws(Realm.Error) in
            let keyBytes = try mapKey(key, binding: owner.binding, property: property)
            let bytes = try encodeElement(value, binding: owner.binding, property: property)
            try mutate { try transaction.put(keyBytes, bytes, in: map) }
        }
    }

    func mapRemove(_ owner: ManagedObject, property: Int, key: String) {
        mutateMap(owner, property: property, "removing a key of") { (transaction, map) throws(Realm.Error) in
            _ = try mutate { try transaction.delete(Array(key.utf8), in: map) }
        }
    }

    func mapRemoveAll(_ owner: ManagedObject, property: Int) {
        mutateMap(owner, property: property, "removing all of") { (transaction, map) throws(Realm.Error) in
            try mutate { try transaction.removeAll(in: map) }
        }
    }

    // MARK: Maps of a whole object

    /// Writes the entries of the maps in `values` (a new or replaced object's values) into its map trees.
    func writeMaps(binding: TableBinding, key: Int64, values: [_StoredValue]) throws(Realm.Error) {
        for (property, info) in binding.table.infos.enumerated() where info.collection == .map {
            try replaceMap(binding: binding, property: property, key: key, with: values[property])
        }
    }

    /// Replaces the stored entries of one map property with those of `value` (a `Map` or an entry source).
    func replaceMap(binding: TableBinding, property: Int, key: Int64, with value: _StoredValue) throws(Realm.Error) {
        guard case .collection(let container) = value, let source = container as? any AnyRealmMap else {
            if case .null = value { return }
            throw .invalidValue(
                type: binding.className, property: binding.table.schema.properties[property].name,
                reason: "expected a Map")
        }
        let entries = source.storedEntries
        guard let transaction = writeTransactionIfAny,
            let map = try mapHandle(binding, property: property, key: key, create: true)
        else { throw .notInWriteTransaction }
        try mutate { try transaction.removeAll(in: map) }
        for (entryKey, entryValue) in entries {
            let keyBytes = try mapKey(entryKey, binding: binding, property: property)
            let bytes = try encodeElement(entryValue, binding: binding, property: property)
            try mutate { try transaction.put(keyBytes, bytes, in: map) }
        }
    }

    /// Deletes the map trees of object `key`.
    func deleteMaps(binding: TableBinding, key: Int64) throws(Realm.Error) {
        guard let transaction = writeTransactionIfAny else { throw .notInWriteTransaction }
        for (property, info) in binding.table.infos.enumerated() where info.collection == .map {
            let name = TableNames.map(binding.className, binding.table.schema.properties[property].name)
            guard let maps = try handle(name, create: false) else { continue }
            _ = try mutate { try transaction.delete(KeyEncoding.objectKey(key), in: maps) }
        }
    }

    /// Sets to nil every map value that links to object `key` of class `target` (every object of it when nil),
    /// keeping the keys, as the seeds' maps do.
    func nullifyInMaps(target: String, key: Int64?) throws(Realm.Error) {
        guard let transaction = writeTransactionIfAny else { throw .notInWriteTransaction }
        var null = RowBuilder(columns: 1)
        null.setNull(0)
        let nullBytes = null.finish()
        for (name, stored) in schemaClasses() {
            for property in stored.properties where property.isMap && property.objectClassName == target {
                guard let maps = try handle(TableNames.map(name, property.name), create: false) else { continue }
                let owners: [[UInt8]] = try storage {
                    var keys: [[UInt8]] = []
                    var cursor = try transaction.makeCursor(for: maps)
                    var more = try cursor.first()
                    while more {
                        keys.append(try cursor.key())
                        more = try cursor.next()
                    }
                    return keys
                }
                for owner in owners {
                    guard let map = try storage({ try transaction.subtree(forKey: owner, in: maps) }) else { continue }
                    let matching: [[UInt8]] = try storage {
                        var keys: [[UInt8]] = []
                        var cursor = try transaction.makeCursor(for: map)
                        var more = try cursor.first()
                        while more {
                            let value = try cursor.value()
                            let matches = value.withUnsafeBytes { raw in
                                guard let row = try? RowView(raw), !row.isNull(0) else { return false }
                                return key == nil || row.int(0) == key
                            }
                            if matches { keys.append(try cursor.key()) }
                            more = try cursor.next()
                        }
                        return keys
                    }
                    for entry in matching { try mutate { try transaction.put(entry, nullBytes, in: map) } }
                }
            }
        }
    }
}

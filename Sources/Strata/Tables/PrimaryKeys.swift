import StrataStorage

/// The primary-key trees `p:<class>`: encoded primary key → object key (8 bytes), for types with a primary key.
extension TableStore {
    /// The primary-key tree of `binding` in the write transaction, created if missing, cached in the binding.
    func writablePrimaryKeys(_ binding: TableBinding) throws(Realm.Error) -> TreeHandle {
        if binding.primaryKeysEpoch == writeEpoch, let handle = binding.primaryKeysHandle { return handle }
        let handle = try handle(binding.primaryKeyTree, create: true)!
        binding.primaryKeysHandle = handle
        binding.primaryKeysEpoch = writeEpoch
        return handle
    }

    /// The primary-key tree of `binding` in the write transaction, nil if there is none yet. Cached like
    /// `writablePrimaryKeys`' handle: an upsert looks a key up per object and a delete removes one, and the handle
    /// by name is a string hash and a dictionary probe each time.
    func primaryKeys(_ binding: TableBinding) throws(Realm.Error) -> TreeHandle? {
        if binding.primaryKeysEpoch == writeEpoch, let handle = binding.primaryKeysHandle { return handle }
        guard let found = try handle(binding.primaryKeyTree, create: false) else { return nil }
        binding.primaryKeysHandle = found
        binding.primaryKeysEpoch = writeEpoch
        return found
    }

    /// The key of the object of `binding`'s type whose primary key encodes to `encoded`, if there is one.
    func lookupPrimaryKey<Key: StorageBytes>(_ binding: TableBinding, _ encoded: Key) throws(Realm.Error) -> Int64? {
        try storage {
            if let transaction {
                guard let handle = try primaryKeys(binding) else { return nil }
                // Read in place: copying the 8-byte value out costs an array allocation per lookup.
                return try transaction.withValue(forKey: encoded, in: handle, KeyEncoding.decodeObjectKey)
            }
            return try view(binding.primaryKeyTree)?.withValue(forKey: encoded, KeyEncoding.decodeObjectKey)
        }
    }
}

/// An object found by its primary key: the primary-key tree mapped `encoded` to `key` in `binding`'s class while
/// the tables' generation was `generation` (see ``TableStore/lastPrimaryKeyLookup``).
struct PrimaryKeyLookup {
    let binding: TableBinding
    let key: Int64
    let encoded: [UInt8]
    let generation: UInt64
}

extension TableStore {
    /// Notes, in a write transaction, that the primary-key tree maps `encoded` to object `key`: a delete of that
    /// object before anything changes removes the entry without reading the row. Outside one nothing is noted (no
    /// delete can follow at the same generation), so a read pays one comparison.
    func notePrimaryKeyLookup(_ binding: TableBinding, key: Int64, encoded: [UInt8]) {
        guard transaction != nil else { return }
        lastPrimaryKeyLookup = PrimaryKeyLookup(binding: binding, key: key, encoded: encoded, generation: generation)
    }

    /// The encoded primary key of object `key` when it is known without reading its row: found by the last lookup
    /// at the current generation (nothing changed since, so the primary-key tree still maps it to `key`).
    func lookedUpPrimaryKey(_ binding: TableBinding, key: Int64) -> [UInt8]? {
        guard let last = lastPrimaryKeyLookup, last.generation == generation, last.key == key,
            last.binding === binding, migration == nil
        else { return nil }
        return last.encoded
    }
}

/// Encoding and claiming primary keys.
extension TableStore {
    /// `value`, property `property`'s primary key, encoded as the primary-key tree keys it; refused when longer
    /// than the engine's keys may be (`maxKeySize`, the store's).
    func encodedPrimaryKey(_ value: _StoredValue, binding: TableBinding, property: Int, maxKeySize: Int)
        throws(Realm.Error) -> [UInt8]
    {
        guard let encoded = KeyEncoding.primaryKey(value), encoded.count <= maxKeySize else {
            throw .invalidValue(
                type: binding.className, property: binding.table.schema.properties[property].columnName,
                reason: "primary key values must be at most \(maxKeySize - 1) bytes")
        }
        return encoded
    }

    /// Records `encoded` as the primary key of object `key` of `binding`'s class when no object holds it yet; false,
    /// recording nothing, when one does. One descent of the primary-key tree: a lookup then `claimPrimaryKey` took
    /// two. A caller given false fails its write transaction (the descent copied the path's pages).
    func claimAbsentPrimaryKey(_ encoded: some StorageBytes, for key: Int64, binding: TableBinding) throws(Realm.Error)
        -> Bool
    {
        let transaction = try transactionForWrite()
        let primaryKeys = try writablePrimaryKeys(binding)
        return try mutate {
            try KeyEncoding.withObjectKey(key) { try transaction.insertIfAbsent(encoded, $0, in: primaryKeys) }
        }
    }

    /// Records `encoded` as the primary key of object `key` of `binding`'s class.
    func claimPrimaryKey(_ encoded: [UInt8], for key: Int64, binding: TableBinding) throws(Realm.Error) {
        let transaction = try transactionForWrite()
        let primaryKeys = try writablePrimaryKeys(binding)
        try mutate { try KeyEncoding.withObjectKey(key) { try transaction.put(encoded, $0, in: primaryKeys) } }
    }
}

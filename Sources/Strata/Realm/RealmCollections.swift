import StrataStorage

/// What `List`, `MutableSet` and `Map` storage share: each collection property has a keyed tree (see
/// `TableNames.collection`) mapping the owner's object key to a nested tree of its elements.
extension Realm {
    /// "Class.property", for messages.
    func collectionName(_ owner: ManagedObject, _ property: Int) -> String {
        "\(owner.table.className).\(owner.table.schema.properties[property].columnName)"
    }
    /// `collectionHandle` for a managed object's own collection, cached in the object for the write transaction
    /// (a collection mutated in a loop would otherwise look its trees up by name on every call).
    func collectionHandle(_ owner: ManagedObject, property: Int, nested: UInt64 = 0, create: Bool) throws(Realm.Error)
        -> TreeHandle?
    {
        if nested != 0 { return try tables.nestedHandle(owner.binding, property: property, id: nested) }
        if let cached = owner.collections.handles[property], cached.epoch == writeTransactionEpoch {
            return cached.handle
        }
        let handle = try tables.collectionHandle(owner.binding, property: property, key: owner.key, create: create)
        if let handle { owner.collections.handles[property] = (writeTransactionEpoch, handle) }
        return handle
    }

    /// The tree of `owner`'s collection property `property` (or of its nested mixed collection `nested`) in the
    /// current snapshot.
    func collectionView(_ owner: ManagedObject, property: Int, nested: UInt64) throws(Realm.Error) -> TreeView? {
        if nested != 0 { return try tables.nestedView(owner.binding, property: property, id: nested) }
        return try tables.collectionView(owner.binding, property: property, key: owner.key)
    }

    /// The number of elements of `owner`'s collection property `property`.
    func collectionCount(_ owner: ManagedObject, property: Int, nested: UInt64 = 0) -> Int {
        checkThread()
        do {
            if let transaction = writeTransactionIfAny {
                guard let tree = try collectionHandle(owner, property: property, nested: nested, create: false)
                else { return 0 }
                return try storage { try transaction.count(in: tree) }
            }
            guard let view = try collectionView(owner, property: property, nested: nested) else { return 0 }
            return try plausibleCount(view.count, of: collectionName(owner, property))
        } catch {
            return survive(error, "\(collectionName(owner, property)): \(error)", returning: 0)
        }
    }

    /// The stored bytes at `index` of `owner`'s collection property `property`: the entry's key and value.
    func collectionEntry(_ owner: ManagedObject, property: Int, nested: UInt64 = 0, at index: Int) throws(Realm.Error)
        -> (key: [UInt8], value: [UInt8])
    {
        if let transaction = writeTransactionIfAny {
            guard let tree = try collectionHandle(owner, property: property, nested: nested, create: false)
            else {
                fatalError("\(collectionName(owner, property)): index \(index) out of range for an empty collection")
            }
            return try storage { try transaction.element(at: index, in: tree) }
        }
        guard let tree = try collectionView(owner, property: property, nested: nested) else {
            fatalError("\(collectionName(owner, property)): index \(index) out of range for an empty collection")
        }
        return try storage { try tree.element(at: index) }
    }

    /// The element at `index` of `owner`'s list or set property `property`, with links materialised.
    func collectionElement(_ owner: ManagedObject, property: Int, nested: UInt64 = 0, level: Int = 0, at index: Int)
        -> _StoredValue
    {
        checkThread()
        do {
            let bytes = try collectionEntry(owner, property: property, nested: nested, at: index).value
            return try bytes.withUnsafeBytes { (raw) throws(Realm.Error) in
                try decodeElement(raw, binding: owner.binding, property: property, owner: owner, level: level)
            }
        } catch {
            // `.null` is no element of a required type: the caller shows its placeholder.
            return survive(error, "\(collectionName(owner, property))[\(index)]: \(error)", returning: .null)
        }
    }

    /// The stored value under `key` in `owner`'s set or map property `property`, or nil.
    func collectionValue(_ owner: ManagedObject, property: Int, nested: UInt64 = 0, key: [UInt8]) throws(Realm.Error)
        -> [UInt8]?
    {
        if let transaction = writeTransactionIfAny {
            guard let tree = try collectionHandle(owner, property: property, nested: nested, create: false) else {
                return nil
            }
            return try storage { try transaction.get(key, in: tree) }
        }
        guard let tree = try collectionView(owner, property: property, nested: nested) else { return nil }
        return try storage { try tree.get(key) }
    }

    /// `forEachCollectionEntry` over `owner`'s collection property `property` (or its nested mixed collection).
    private func forEachEntry(
        of owner: ManagedObject, property: Int, nested: UInt64, keys: Bool,
        _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws(Realm.Error) -> Void
    ) throws(Realm.Error) {
        try tables.forEachCollectionEntry(
            keys: keys,
            handle: { () throws(Realm.Error) in
                try collectionHandle(owner, property: property, nested: nested, create: false)
            },
            view: { () throws(Realm.Error) in try collectionView(owner, property: property, nested: nested) }, body)
    }

    /// Every entry of `owner`'s collection property `property`, in order, read in one pass (iteration reads them
    /// all at once instead of walking down the tree for each position).
    func collectionEntries(
        _ owner: ManagedObject, property: Int, nested: UInt64 = 0, level: Int = 0, keys: Bool = false
    ) -> [(key: [UInt8], value: _StoredValue)] {
        checkThread()
        var entries: [(key: [UInt8], value: _StoredValue)] = []
        do {
            try forEachEntry(of: owner, property: property, nested: nested, keys: keys) {
                key, bytes throws(Realm.Error) in
                let value = try decodeElement(
                    bytes, binding: owner.binding, property: property, owner: owner, level: level)
                entries.append((Array(key), value))
            }
            return entries
        } catch {
            survive(error, "\(collectionName(owner, property)): \(error)", returning: ())
            return matchingCount(entries, owner: owner, property: property, nested: nested) { ([], .null) }
        }
    }

    /// Every element of `owner`'s list or set property `property` as `Element`, read in one pass; scalars are
    /// read straight from their rows (`_Persistable._read`), links through the general path.
    func collectionElements<Element: _Persistable>(
        _ owner: ManagedObject, property: Int, nested: UInt64 = 0, level: Int = 0, as type: Element.Type
    ) -> [Element] {
        checkThread()
        var elements: [Element] = []
        do {
            try forEachEntry(of: owner, property: property, nested: nested, keys: false) {
                _, bytes throws(Realm.Error) in
                if let row = try? RowView(bytes), let element = Element._read(from: row, column: 0) {
                    elements.append(element)
                    return
                }
                let stored = try decodeElement(
                    bytes, binding: owner.binding, property: property, owner: owner, level: level)
                guard let element = Element._fromStored(stored) else {
                    var info = owner.table.infos[property]
                    info.collection = nil
                    guard !stored.fits(info) else {
                        throw .invalidValue(
                            type: owner.table.className, property: owner.table.schema.properties[property].columnName,
                            reason: "stored element \(stored) is not a \(Element.self)")
                    }
                    throw corruptData(
                        "\(collectionName(owner, property)) of object \(owner.key) holds \(stored), not a \(Element.self)"
                    )
                }
                elements.append(element)
            }
            return elements
        } catch {
            survive(error, "\(collectionName(owner, property)): \(error)", returning: ())
            return matchingCount(elements, owner: owner, property: property, nested: nested) {
                placeholder(Element.self)
            }
        }
    }

    /// Runs a mutation of `owner`'s collection property `property` in the write transaction; errors fail the
    /// transaction, and outside a write transaction it traps.
    func mutateCollection(
        _ owner: ManagedObject, property: Int, nested: UInt64 = 0, _ what: String,
        _ body: (WriteTransaction, TreeHandle) throws(Realm.Error) -> Void
    ) {
        guard let transaction = transactionForMutation("\(what) \(collectionName(owner, property))") else { return }
        do {
            guard let tree = try collectionHandle(owner, property: property, nested: nested, create: true)
            else { throw Realm.Error.invalidatedObject }
            syncCapture?.touch(owner.binding, owner.key, collection: property)
            try body(transaction, tree)
        } catch {
            fail(error)
        }
    }

    /// Empties `owner`'s collection tree `tree` and releases what its elements held.
    func removeAllElements(of tree: TreeHandle, owner: ManagedObject, property: Int) throws(Realm.Error) {
        for row in try tables.removeAllEntries(in: tree, binding: owner.binding, property: property) {
            try tables.releaseElementRow(row, binding: owner.binding, property: property, owner: owner.key)
        }
    }

    /// Writes the collections in `values` (a new or replaced object's values) into their trees.
    func writeCollections(binding: TableBinding, key: Int64, values: [_StoredValue]) throws(Realm.Error) {
        for property in binding.table.infos.indices where binding.table.infos[property].isCollection {
            try replaceCollection(binding: binding, property: property, key: key, with: values[property])
        }
    }

    /// Replaces the elements of one collection property with those of `value`.
    func replaceCollection(binding: TableBinding, property: Int, key: Int64, with value: _StoredValue)
        throws(Realm.Error)
    {
        switch binding.table.infos[property].collection {
        case .list?: try replaceList(binding: binding, property: property, key: key, with: value)
        case .set?: try replaceSet(binding: binding, property: property, key: key, with: value)
        case .map?: try replaceMap(binding: binding, property: property, key: key, with: value)
        case nil: break
        }
    }

    /// Empties the nested tree of `key`'s collection property `property` and adds the entries of `value` (a
    /// collection container whose entries `entries` lists; read before anything changes, since it may be this
    /// very collection). A nil value leaves the collection alone.
    func refillCollection<Entry>(
        binding: TableBinding, property: Int, key: Int64, from value: _StoredValue, expected: String,
        entries: (AnyObject) -> [Entry]?, add: (WriteTransaction, TreeHandle, Entry) throws(Realm.Error) -> Void
    ) throws(Realm.Error) {
        guard case .collection(let container) = value, let source = entries(container) else {
            if case .null = value { return }
            throw .invalidValue(
                type: binding.className, property: binding.table.schema.properties[property].columnName,
                reason: "expected a \(expected)")
        }
        guard let transaction = writeTransactionIfAny,
            let tree = try tables.collectionHandle(binding, property: property, key: key, create: true)
        else { throw .notInWriteTransaction }
        syncCapture?.touch(binding, key, collection: property)
        syncCapture?.untrackList(binding, key, property)
        try tables.uncountLinks(in: tree, binding: binding, property: property, owner: key)
        try mutate { try transaction.removeAll(in: tree) }
        for entry in source { try add(transaction, tree, entry) }
    }
}

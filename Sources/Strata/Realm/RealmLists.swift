import StrataStorage

/// Storage of `List` properties: for each list property a keyed tree `l:<class>.<property>` maps the owning
/// object's key to a nested list tree (order-statistic, so positional operations are O(log n)) whose entries
/// are the elements, each encoded as a one-column row (links as object keys).
extension Realm {
    // MARK: Element encoding

    /// The element type of list property `property`.
    func elementInfo(_ binding: TableBinding, _ property: Int) -> _PropertyInfo {
        var info = binding.table.infos[property]
        info.collection = nil
        return info
    }

    /// `value` as stored in a list: links become the key of their target (added first when unmanaged).
    func encodeElement(_ value: _StoredValue, binding: TableBinding, property: Int) throws(Realm.Error)
        -> [UInt8]
    {
        let info = elementInfo(binding, property)
        let name = binding.table.schema.properties[property].name
        var resolved = value
        if case .object(let target) = value {
            guard let targetType = info.objectType, ObjectIdentifier(type(of: target)) == ObjectIdentifier(targetType)
            else {
                throw .invalidValue(
                    type: binding.className, property: name,
                    reason:
                        "a list of \(info.objectType.map { "\($0)" } ?? "objects") cannot hold a \(type(of: target))")
            }
            resolved = .int(try insert(target, update: .error))
        } else if case .null = value, !info.isOptional {
            throw .invalidValue(type: binding.className, property: name, reason: "this list holds no nil elements")
        }
        var row = RowBuilder(columns: 1)
        try RowCodec.set(resolved, column: 0, in: &row, type: binding.className, property: name)
        return row.finish()
    }

    /// A stored list element, with links materialised as objects.
    func decodeElement(_ bytes: UnsafeRawBufferPointer, binding: TableBinding, property: Int)
        throws(Realm.Error) -> _StoredValue
    {
        let info = elementInfo(binding, property)
        let value: _StoredValue
        do {
            value = RowCodec.get(try RowView(bytes), column: 0, info: info)
        } catch {
            throw .storage(error, path: path)
        }
        if info.type == .object, case .int(let key) = value, let target = info.objectType {
            return .object(object(try self.binding(for: target), key: key))
        }
        return value
    }

    // MARK: Trees

    /// The nested list tree of `key`'s list property `property` in the write transaction.
    private func listHandle(_ binding: TableBinding, property: Int, key: Int64, create: Bool) throws(Realm.Error)
        -> TreeHandle?
    {
        let name = TableNames.list(binding.className, binding.table.schema.properties[property].name)
        guard let lists = try handle(name, create: create), let transaction = writeTransactionIfAny else { return nil }
        let objectKey = KeyEncoding.objectKey(key)
        if create {
            return try mutate { try transaction.subtree(forKey: objectKey, in: lists, create: .list) }
        }
        return try storage { try transaction.subtree(forKey: objectKey, in: lists) }
    }

    /// The nested list tree of `key`'s list property `property` in the current snapshot.
    private func listView(_ binding: TableBinding, property: Int, key: Int64) throws(Realm.Error) -> TreeView? {
        let name = TableNames.list(binding.className, binding.table.schema.properties[property].name)
        guard let lists = treeView(name) else { return nil }
        return try storage { try lists.subtree(forKey: KeyEncoding.objectKey(key)) }
    }

    // MARK: Operations behind List

    func listCount(_ owner: ManagedObject, property: Int) -> Int {
        checkThread()
        do {
            if writeTransactionIfAny != nil {
                guard let list = try listHandle(owner.binding, property: property, key: owner.key, create: false)
                else { return 0 }
                return try storage { try writeTransactionIfAny!.count(in: list) }
            }
            return try listView(owner.binding, property: property, key: owner.key)?.count ?? 0
        } catch {
            fatalError("\(owner.table.className).\(owner.table.schema.properties[property].name): \(error)")
        }
    }

    func listElement(_ owner: ManagedObject, property: Int, at index: Int) -> _StoredValue {
        checkThread()
        let name = "\(owner.table.className).\(owner.table.schema.properties[property].name)"
        do {
            let bytes: [UInt8]
            if let transaction = writeTransactionIfAny {
                guard let list = try listHandle(owner.binding, property: property, key: owner.key, create: false) else {
                    fatalError("\(name): index \(index) out of range for an empty list")
                }
                bytes = try storage { try transaction.value(at: index, in: list) }
            } else {
                guard let list = try listView(owner.binding, property: property, key: owner.key) else {
                    fatalError("\(name): index \(index) out of range for an empty list")
                }
                bytes = try storage { try list.value(at: index) }
            }
            return try bytes.withUnsafeBytes { (raw) throws(Realm.Error) in
                try decodeElement(raw, binding: owner.binding, property: property)
            }
        } catch {
            fatalError("\(name)[\(index)]: \(error)")
        }
    }

    /// Runs a list mutation in the write transaction; errors fail the transaction.
    private func mutateList(
        _ owner: ManagedObject, property: Int, _ what: String,
        _ body: (WriteTransaction, TreeHandle) throws(Realm.Error) -> Void
    ) {
        let name = "\(owner.table.className).\(owner.table.schema.properties[property].name)"
        guard let transaction = transactionForMutation("\(what) \(name)") else { return }
        do {
            guard let list = try listHandle(owner.binding, property: property, key: owner.key, create: true) else {
                throw Realm.Error.invalidatedObject
            }
            try body(transaction, list)
        } catch {
            fail(error)
        }
    }

    func listInsert(_ owner: ManagedObject, property: Int, _ value: _StoredValue, at index: Int) {
        mutateList(owner, property: property, "inserting into") { (transaction, list) throws(Realm.Error) in
            let bytes = try encodeElement(value, binding: owner.binding, property: property)
            try mutate { try transaction.insert(bytes, at: index, in: list) }
        }
    }

    func listReplace(_ owner: ManagedObject, property: Int, at index: Int, with value: _StoredValue) {
        mutateList(owner, property: property, "replacing in") { (transaction, list) throws(Realm.Error) in
            let bytes = try encodeElement(value, binding: owner.binding, property: property)
            try mutate { try transaction.replace(at: index, with: bytes, in: list) }
        }
    }

    func listRemove(_ owner: ManagedObject, property: Int, at index: Int) {
        mutateList(owner, property: property, "removing from") { (transaction, list) throws(Realm.Error) in
            try mutate { try transaction.remove(at: index, from: list) }
        }
    }

    func listRemoveAll(_ owner: ManagedObject, property: Int) {
        mutateList(owner, property: property, "removing all of") { (transaction, list) throws(Realm.Error) in
            try mutate { try transaction.removeAll(in: list) }
        }
    }

    // MARK: Lists of a whole object

    /// Writes the elements of the lists in `values` (a new or replaced object's values) into its list trees.
    func writeLists(binding: TableBinding, key: Int64, values: [_StoredValue]) throws(Realm.Error) {
        for (property, info) in binding.table.infos.enumerated() where info.isList {
            try replaceList(binding: binding, property: property, key: key, with: values[property])
        }
    }

    /// Replaces the stored elements of one list property with those of `value` (a `List`, managed or not).
    func replaceList(binding: TableBinding, property: Int, key: Int64, with value: _StoredValue)
        throws(Realm.Error)
    {
        guard case .collection(let container) = value, let source = container as? any AnyRealmList else {
            if case .null = value { return }
            throw .invalidValue(
                type: binding.className, property: binding.table.schema.properties[property].name,
                reason: "expected a List")
        }
        // Read the source first: it may be this very list.
        let elements = source.storedElements
        guard let transaction = writeTransactionIfAny,
            let list = try listHandle(binding, property: property, key: key, create: true)
        else { throw .notInWriteTransaction }
        try mutate { try transaction.removeAll(in: list) }
        for element in elements {
            let bytes = try encodeElement(element, binding: binding, property: property)
            try mutate { try transaction.append(bytes, to: list) }
        }
    }

    /// Deletes the list trees of object `key`.
    func deleteLists(binding: TableBinding, key: Int64) throws(Realm.Error) {
        guard let transaction = writeTransactionIfAny else { throw .notInWriteTransaction }
        for (property, info) in binding.table.infos.enumerated() where info.isList {
            let name = TableNames.list(binding.className, binding.table.schema.properties[property].name)
            guard let lists = try handle(name, create: false) else { continue }
            _ = try mutate { try transaction.delete(KeyEncoding.objectKey(key), in: lists) }
        }
    }

    /// Removes object `key` of class `target` from every list that holds links to that class (every object
    /// of it when `key` is nil).
    func removeFromLists(target: String, key: Int64?) throws(Realm.Error) {
        guard let transaction = writeTransactionIfAny else { throw .notInWriteTransaction }
        for (name, stored) in schemaClasses() {
            for property in stored.properties where property.isList && property.objectClassName == target {
                guard let lists = try handle(TableNames.list(name, property.name), create: false) else { continue }
                let owners: [[UInt8]] = try storage {
                    var keys: [[UInt8]] = []
                    var cursor = try transaction.makeCursor(for: lists)
                    var more = try cursor.first()
                    while more {
                        keys.append(try cursor.key())
                        more = try cursor.next()
                    }
                    return keys
                }
                for owner in owners {
                    guard let list = try storage({ try transaction.subtree(forKey: owner, in: lists) }) else {
                        continue
                    }
                    let count = try storage { try transaction.count(in: list) }
                    for index in stride(from: count - 1, through: 0, by: -1) {
                        let bytes = try storage { try transaction.value(at: index, in: list) }
                        let matches = bytes.withUnsafeBytes { raw in
                            guard let row = try? RowView(raw) else { return false }
                            return key == nil || (!row.isNull(0) && row.int(0) == key)
                        }
                        if matches { try mutate { try transaction.remove(at: index, from: list) } }
                    }
                }
            }
        }
    }
}

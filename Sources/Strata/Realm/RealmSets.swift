import Foundation
import StrataStorage

/// Storage of `MutableSet` properties: for each set property a keyed tree `s:<class>.<property>` maps the owning
/// object's key to a nested keyed tree whose keys are the elements' order-preserving encodings (so membership
/// is one lookup and duplicates cannot exist) and whose values are the elements as one-column rows.
extension Realm {
    /// The key of a set element: a type tag and an order-preserving encoding (links: the target's object key).
    private func setKey(_ resolved: _StoredValue, binding: TableBinding, property: Int) throws(Realm.Error) -> [UInt8] {
        var key: [UInt8]
        switch resolved {
        case .null: key = [0]
        case .int(let int):
            key = [1] + withUnsafeBytes(of: (UInt64(bitPattern: int) ^ (1 << 63)).bigEndian) { Array($0) }
        case .string(let string): key = [2] + Array(string.utf8)
        case .uuid(let uuid): key = [3] + withUnsafeBytes(of: uuid.uuid) { Array($0) }
        case .objectId(let id): key = [4] + id.bytes
        case .bool(let bool): key = [5, bool ? 1 : 0]
        case .date(let date): key = [6] + Self.orderedBits(date.timeIntervalSinceReferenceDate)
        case .double(let double): key = [7] + Self.orderedBits(double)
        case .float(let float): key = [8] + Self.orderedBits(Double(float))
        case .data(let data): key = [9] + Array(data)
        case .decimal128(let decimal):
            let (high, low) = decimal.bid
            key =
                [10] + withUnsafeBytes(of: high.bigEndian) { Array($0) }
                + withUnsafeBytes(of: low.bigEndian) { Array($0) }
        case .object, .collection:
            throw .invalidValue(
                type: binding.className, property: binding.table.schema.properties[property].name,
                reason: "a set element must be stored before it is keyed")
        }
        guard key.count <= store.maxKeySize else {
            throw .invalidValue(
                type: binding.className, property: binding.table.schema.properties[property].name,
                reason: "set elements are limited to \(store.maxKeySize - 1) bytes")
        }
        return key
    }

    /// Big-endian bits of `value` that sort like the numbers (zero's sign dropped).
    private static func orderedBits(_ value: Double) -> [UInt8] {
        let bits = (value == 0 ? 0.0 : value).bitPattern
        let ordered = bits & (1 << 63) != 0 ? ~bits : bits | (1 << 63)
        return withUnsafeBytes(of: ordered.bigEndian) { Array($0) }
    }

    /// The stored entry of `value` in set property `property`: its key and its row (links resolved).
    private func setEntry(_ value: _StoredValue, binding: TableBinding, property: Int) throws(Realm.Error)
        -> (key: [UInt8], row: [UInt8])
    {
        let row = try encodeElement(value, binding: binding, property: property)
        let info = elementInfo(binding, property)
        let resolved: _StoredValue
        do {
            resolved = try row.withUnsafeBytes { RowCodec.get(try RowView($0), column: 0, info: info) }
        } catch {
            throw .storage(error as? StorageError ?? .invalidArgument("\(error)"), path: path)
        }
        return (try setKey(resolved, binding: binding, property: property), row)
    }

    private func setHandle(_ binding: TableBinding, property: Int, key: Int64, create: Bool) throws(Realm.Error)
        -> TreeHandle?
    {
        let name = TableNames.set(binding.className, binding.table.schema.properties[property].name)
        guard let sets = try handle(name, create: create), let transaction = writeTransactionIfAny else { return nil }
        let objectKey = KeyEncoding.objectKey(key)
        if create { return try mutate { try transaction.subtree(forKey: objectKey, in: sets, create: .keyed) } }
        return try storage { try transaction.subtree(forKey: objectKey, in: sets) }
    }

    private func setView(_ binding: TableBinding, property: Int, key: Int64) throws(Realm.Error) -> TreeView? {
        let name = TableNames.set(binding.className, binding.table.schema.properties[property].name)
        guard let sets = treeView(name) else { return nil }
        return try storage { try sets.subtree(forKey: KeyEncoding.objectKey(key)) }
    }

    private func setName(_ owner: ManagedObject, _ property: Int) -> String {
        "\(owner.table.className).\(owner.table.schema.properties[property].name)"
    }

    // MARK: Operations behind MutableSet

    func setCount(_ owner: ManagedObject, property: Int) -> Int {
        checkThread()
        do {
            if let transaction = writeTransactionIfAny {
                guard let set = try setHandle(owner.binding, property: property, key: owner.key, create: false) else {
                    return 0
                }
                return try storage { try transaction.count(in: set) }
            }
            return try setView(owner.binding, property: property, key: owner.key)?.count ?? 0
        } catch {
            fatalError("\(setName(owner, property)): \(error)")
        }
    }

    func setElement(_ owner: ManagedObject, property: Int, at index: Int) -> _StoredValue {
        checkThread()
        do {
            let bytes: [UInt8]
            if let transaction = writeTransactionIfAny {
                guard let set = try setHandle(owner.binding, property: property, key: owner.key, create: false) else {
                    fatalError("\(setName(owner, property)): index \(index) out of range for an empty set")
                }
                bytes = try storage { try transaction.element(at: index, in: set).value }
            } else {
                guard let set = try setView(owner.binding, property: property, key: owner.key) else {
                    fatalError("\(setName(owner, property)): index \(index) out of range for an empty set")
                }
                bytes = try storage { try set.element(at: index).value }
            }
            return try bytes.withUnsafeBytes { (raw) throws(Realm.Error) in
                try decodeElement(raw, binding: owner.binding, property: property)
            }
        } catch {
            fatalError("\(setName(owner, property))[\(index)]: \(error)")
        }
    }

    func setContains(_ owner: ManagedObject, property: Int, _ value: _StoredValue) -> Bool {
        checkThread()
        // An unmanaged object or one of another Realm cannot be in this set.
        if case .object(let target) = value, target.managed?.realm !== self { return false }
        do {
            let key: [UInt8]
            if case .object(let target) = value, let managed = target.managed {
                key = try setKey(.int(managed.key), binding: owner.binding, property: property)
            } else {
                key = try setKey(value, binding: owner.binding, property: property)
            }
            if let transaction = writeTransactionIfAny {
                guard let set = try setHandle(owner.binding, property: property, key: owner.key, create: false) else {
                    return false
                }
                return try storage { try transaction.contains(key, in: set) }
            }
            return try setView(owner.binding, property: property, key: owner.key).map { view in
                try storage { try view.contains(key) }
            } ?? false
        } catch {
            return false
        }
    }

    /// Runs a set mutation in the write transaction; errors fail the transaction.
    private func mutateSet(
        _ owner: ManagedObject, property: Int, _ what: String,
        _ body: (WriteTransaction, TreeHandle) throws(Realm.Error) -> Void
    ) {
        guard let transaction = transactionForMutation("\(what) \(setName(owner, property))") else { return }
        do {
            guard let set = try setHandle(owner.binding, property: property, key: owner.key, create: true) else {
                throw Realm.Error.invalidatedObject
            }
            try body(transaction, set)
        } catch {
            fail(error)
        }
    }

    func setInsert(_ owner: ManagedObject, property: Int, _ value: _StoredValue) {
        mutateSet(owner, property: property, "inserting into") { (transaction, set) throws(Realm.Error) in
            let entry = try setEntry(value, binding: owner.binding, property: property)
            try mutate { try transaction.put(entry.key, entry.row, in: set) }
        }
    }

    func setRemove(_ owner: ManagedObject, property: Int, _ value: _StoredValue) {
        if case .object(let target) = value, target.managed?.realm !== self { return }
        mutateSet(owner, property: property, "removing from") { (transaction, set) throws(Realm.Error) in
            let key: [UInt8]
            if case .object(let target) = value, let managed = target.managed {
                key = try setKey(.int(managed.key), binding: owner.binding, property: property)
            } else {
                key = try setKey(value, binding: owner.binding, property: property)
            }
            _ = try mutate { try transaction.delete(key, in: set) }
        }
    }

    func setRemoveAll(_ owner: ManagedObject, property: Int) {
        mutateSet(owner, property: property, "removing all of") { (transaction, set) throws(Realm.Error) in
            try mutate { try transaction.removeAll(in: set) }
        }
    }

    // MARK: Sets of a whole object

    /// Writes the elements of the sets in `values` (a new or replaced object's values) into its set trees.
    func writeSets(binding: TableBinding, key: Int64, values: [_StoredValue]) throws(Realm.Error) {
        for (property, info) in binding.table.infos.enumerated() where info.collection == .set {
            try replaceSet(binding: binding, property: property, key: key, with: values[property])
        }
    }

    /// Replaces the stored elements of one set property with those of `value` (a `MutableSet` or array source).
    func replaceSet(binding: TableBinding, property: Int, key: Int64, with value: _StoredValue) throws(Realm.Error) {
        guard case .collection(let container) = value, let source = container as? any AnyRealmList else {
            if case .null = value { return }
            throw .invalidValue(
                type: binding.className, property: binding.table.schema.properties[property].name,
                reason: "expected a MutableSet")
        }
        let elements = source.storedElements
        guard let transaction = writeTransactionIfAny,
            let set = try setHandle(binding, property: property, key: key, create: true)
        else { throw .notInWriteTransaction }
        try mutate { try transaction.removeAll(in: set) }
        for element in elements {
            let entry = try setEntry(element, binding: binding, property: property)
            try mutate { try transaction.put(entry.key, entry.row, in: set) }
        }
    }

    /// Deletes the set trees of object `key`.
    func deleteSets(binding: TableBinding, key: Int64) throws(Realm.Error) {
        guard let transaction = writeTransactionIfAny else { throw .notInWriteTransaction }
        for (property, info) in binding.table.infos.enumerated() where info.collection == .set {
            let name = TableNames.set(binding.className, binding.table.schema.properties[property].name)
            guard let sets = try handle(name, create: false) else { continue }
            _ = try mutate { try transaction.delete(KeyEncoding.objectKey(key), in: sets) }
        }
    }

    /// Removes object `key` of class `target` (every object of it when nil) from every set of links to it.
    func removeFromSets(target: String, key: Int64?) throws(Realm.Error) {
        guard let transaction = writeTransactionIfAny else { throw .notInWriteTransaction }
        for (name, stored) in schemaClasses() {
            for property in stored.properties where property.isSet && property.objectClassName == target {
                guard let sets = try handle(TableNames.set(name, property.name), create: false) else { continue }
                let owners: [[UInt8]] = try storage {
                    var keys: [[UInt8]] = []
                    var cursor = try transaction.makeCursor(for: sets)
                    var more = try cursor.first()
                    while more {
                        keys.append(try cursor.key())
                        more = try cursor.next()
                    }
                    return keys
                }
                for owner in owners {
                    guard let set = try storage({ try transaction.subtree(forKey: owner, in: sets) }) else { continue }
                    if let key {
                        let elementKey =
                            [1]
                            + withUnsafeBytes(of: (UInt64(bitPattern: key) ^ (1 << 63)).bigEndian) {
                                Array($0)
                            }
                        _ = try mutate { try transaction.delete(elementKey, in: set) }
                    } else {
                        try mutate { try transaction.removeAll(in: set) }
                    }
                }
            }
        }
    }
}

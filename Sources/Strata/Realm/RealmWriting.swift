import Foundation
import StrataStorage

/// Row-level writes: inserting objects with their links and embedded objects, updating one property, deleting
/// with cascade and nullification.
extension Realm {
    /// Makes `object` managed: writes its row (and those of unmanaged objects it links to) and returns its key.
    func insert(_ object: ObjectBase, update: UpdatePolicy) throws(Realm.Error) -> Int64 {
        if let managed = object.managed {
            guard managed.realm === self else {
                throw .invalidValue(
                    type: type(of: object).className(), property: "", reason: "the object is managed by another Realm")
            }
            return managed.key
        }
        guard !(object is DynamicObject) else {
            throw .invalidValue(
                type: "DynamicObject", property: "", reason: "dynamic objects are read from a Realm, not added to one")
        }
        let binding = try binding(for: type(of: object))
        guard binding.table.kind != .embedded else {
            throw .invalidValue(
                type: binding.className, property: "", reason: "embedded objects are added through their parent")
        }
        let transaction = try activeTransactionForWrite()
        try registerIfNeeded(binding)
        let values = binding.table.boxes(of: object).map(\.stored)
        var key: Int64
        var existing = false
        if let index = binding.table.primaryKeyIndex {
            let encoded = try encodedPrimaryKey(values[index], binding: binding, property: index)
            if let found = try lookupPrimaryKey(binding, encoded) {
                guard update != .error else {
                    throw .primaryKeyExists(type: binding.className, value: KeyEncoding.describe(values[index]))
                }
                key = found
                existing = true
            } else {
                key = try newKey(binding, transaction)
                let primaryKeys = try writablePrimaryKeys(binding)
                try mutate { try transaction.put(encoded, KeyEncoding.objectKey(key), in: primaryKeys) }
            }
        } else {
            key = try newKey(binding, transaction)
        }
        // Managed before its links are resolved, so that a cycle back to it finds its key.
        let managed = ManagedObject(realm: self, binding: binding, key: key)
        binding.table.attach(object, to: managed)
        object.managed = managed
        let old = existing ? try rowValues(binding: binding, key: key) : nil
        if existing { try deleteEmbedded(binding: binding, key: key) }
        try writeRow(binding: binding, key: key, values: values, update: update, old: old)
        try writeCollections(binding: binding, key: key, values: values)
        adoptCollections(of: values, binding: binding, managed: managed)
        return key
    }

    /// Turns the added object's own `List`, `MutableSet` and `Map` instances into its managed collections, now
    /// that their elements are written: as in the SDK, `let tags = dog.tags; realm.add(dog); tags.append("x")`
    /// appends to the stored list, and `dog.tags` is still that instance.
    private func adoptCollections(of values: [_StoredValue], binding: TableBinding, managed: ManagedObject) {
        for property in binding.table.infos.indices where binding.table.infos[property].isCollection {
            guard case .collection(let container) = values[property],
                let collection = container as? any AdoptableCollection,
                collection.adopt(owner: managed, property: property)
            else { continue }
            managed.collections.accessors[property] = ManagedObject.WeakAccessor(object: collection)
        }
    }

    private func activeTransactionForWrite() throws(Realm.Error) -> WriteTransaction {
        guard let transaction = transactionForMutation("write") else { throw .notInWriteTransaction }
        return transaction
    }

    /// Writes a new row of `values` (no links to resolve) and returns its key.
    func insertRow(binding: TableBinding, values: [_StoredValue]) throws(Realm.Error) -> Int64 {
        let key = try newKey(binding, try activeTransactionForWrite())
        try writeRow(binding: binding, key: key, values: values, update: .error, old: nil)
        return key
    }

    private func newKey(_ binding: TableBinding, _ transaction: WriteTransaction) throws(Realm.Error) -> Int64 {
        let rows = try writableRows(binding)
        return try mutate { Int64(bitPattern: try transaction.nextSequence(in: rows)) }
    }

    func encodedPrimaryKey(_ value: _StoredValue, binding: TableBinding, property: Int) throws(Realm.Error) -> [UInt8] {
        guard let encoded = KeyEncoding.primaryKey(value), encoded.count <= store.maxKeySize else {
            throw .invalidValue(
                type: binding.className, property: binding.table.schema.properties[property].columnName,
                reason: "primary key values must be at most \(store.maxKeySize - 1) bytes")
        }
        return encoded
    }

    /// Resolves links and embedded objects in `values` to object keys and writes the row.
    /// `old` holds the row's previous values (links as keys) when the row exists, for index maintenance.
    private func writeRow(
        binding: TableBinding, key: Int64, values: [_StoredValue], update: UpdatePolicy, old: [_StoredValue]?
    ) throws(Realm.Error) {
        var row = binding.spareRowBuilder ?? RowBuilder(columns: binding.columnCount)
        binding.spareRowBuilder = nil
        var resolvedValues: [_StoredValue] = []
        resolvedValues.reserveCapacity(values.count)
        for (index, value) in values.enumerated() {
            guard binding.columns[index] >= 0 else {
                // Computed (linking objects): nothing stored.
                resolvedValues.append(.null)
                continue
            }
            var resolved: _StoredValue
            if tables.isMixed(binding, index) && !binding.table.infos[index].isCollection {
                resolved =
                    try encodeMixed(value, binding: binding, property: index, owner: key, level: 0)
                    .map { .mixed($0) } ?? .null
            } else {
                resolved = try resolveLinks(value, binding: binding, property: index, update: update)
            }
            try RowCodec.set(
                resolved, column: binding.columns[index], in: &row, type: binding.className,
                property: binding.table.schema.properties[index].columnName)
            resolvedValues.append(resolved)
        }
        let transaction = try activeTransactionForWrite()
        let rows = try writableRows(binding)
        try mutate { try transaction.put(KeyEncoding.objectKey(key), row.finish(), in: rows) }
        syncCapture?.touch(binding, key)
        row.reset()
        binding.spareRowBuilder = row
        try updateIndexes(binding: binding, key: key, old: old, new: resolvedValues)
        try updateToOneBacklinks(binding: binding, key: key, old: old, new: resolvedValues)
        try releaseReplacedMixed(binding: binding, key: key, old: old, new: resolvedValues)
    }

    /// Releases the mixed values of `old` that `new` no longer holds (their links and nested collections).
    private func releaseReplacedMixed(binding: TableBinding, key: Int64, old: [_StoredValue]?, new: [_StoredValue]?)
        throws(Realm.Error)
    {
        guard let old else { return }
        for (index, info) in binding.table.infos.enumerated() where info.type == .any && !info.isCollection {
            guard case .mixed(let before) = old[index] else { continue }
            if let new, case .mixed(let after) = new[index], after == before { continue }
            try tables.releaseMixed(before, binding: binding, property: index, owner: key)
        }
    }

    /// Moves the object's entries in the secondary indexes from its `old` values to its `new` ones.
    private func updateIndexes(binding: TableBinding, key: Int64, old: [_StoredValue]?, new: [_StoredValue]?)
        throws(Realm.Error)
    {
        if let migration = migrationState {
            // Rebuilt when the migration ends (see `MigrationState`).
            migration.touched.insert(binding.className)
            return
        }
        guard !binding.secondaryIndexes.isEmpty else { return }
        let transaction = try activeTransactionForWrite()
        for index in binding.secondaryIndexes {
            if binding.table.schema.properties[index].isFullTextIndexed {
                let before = old.map { FullText.entries($0[index], key: key) } ?? []
                let after = new.map { FullText.entries($0[index], key: key) } ?? []
                guard before != after else { continue }
                let tree = try handle(binding.indexTrees[index], create: true)!
                try mutate {
                    for entry in before.subtracting(after) { _ = try transaction.delete(entry, in: tree) }
                    for entry in after.subtracting(before) { try transaction.put(entry, [UInt8](), in: tree) }
                }
                continue
            }
            let before = old.flatMap { KeyEncoding.indexEntry($0[index], key: key) }
            let after = new.flatMap { KeyEncoding.indexEntry($0[index], key: key) }
            guard before != after else { continue }
            let tree = try handle(binding.indexTrees[index], create: true)!
            try mutate {
                if let before { _ = try transaction.delete(before, in: tree) }
                if let after { try transaction.put(after, [UInt8](), in: tree) }
            }
        }
    }

    /// A link becomes the key of its target (added first if unmanaged); an embedded object gets a new row.
    private func resolveLinks(_ value: _StoredValue, binding: TableBinding, property: Int, update: UpdatePolicy)
        throws(Realm.Error) -> _StoredValue
    {
        guard case .object(let target) = value else {
            try checkType(value, binding: binding, property: property)
            return value
        }
        let info = binding.table.infos[property]
        if info.objectType == nil {
            // A dynamic schema: the target must be a stored object of the property's class.
            let expected = binding.table.schema.properties[property].objectClassName
            guard let managed = target.managed, managed.realm === self, managed.table.className == expected,
                managed.table.kind == .object
            else {
                throw .invalidValue(
                    type: binding.className, property: binding.table.schema.properties[property].columnName,
                    reason: "expected a stored \(expected ?? "object") of this Realm")
            }
            return .int(managed.key)
        }
        guard let targetType = info.objectType, ObjectIdentifier(type(of: target)) == ObjectIdentifier(targetType)
        else {
            throw .invalidValue(
                type: binding.className, property: binding.table.schema.properties[property].columnName,
                reason: "expected \(info.objectType.map { "\($0)" } ?? "an object"), got \(type(of: target))")
        }
        if targetType is EmbeddedObject.Type {
            return .int(try insertEmbedded(target))
        }
        return .int(try insert(target, update: update))
    }

    private func checkType(_ value: _StoredValue, binding: TableBinding, property: Int) throws(Realm.Error) {
        let info = binding.table.infos[property]
        // A list's elements live outside the row and are checked as they are written.
        guard !info.isCollection else { return }
        let name = binding.table.schema.properties[property].columnName
        if case .null = value {
            guard info.isOptional else {
                throw .invalidValue(
                    type: binding.className, property: name, reason: "nil is not allowed (the property is not optional)"
                )
            }
            return
        }
        if case .int(let int) = value, info.integerBits > 0 {
            let limit = Int64(1) << (info.integerBits - 1)
            guard int >= -limit && int < limit else {
                throw .invalidValue(
                    type: binding.className, property: name, reason: "\(int) does not fit in Int\(info.integerBits)")
            }
        }
    }

    func insertEmbedded(_ object: ObjectBase) throws(Realm.Error) -> Int64 {
        guard object.managed == nil else {
            throw .invalidValue(
                type: type(of: object).className(), property: "",
                reason: "a managed embedded object cannot be assigned to another parent; assign an unmanaged copy")
        }
        let binding = try binding(for: type(of: object))
        let transaction = try activeTransactionForWrite()
        try registerIfNeeded(binding)
        let values = binding.table.boxes(of: object).map(\.stored)
        let key = try newKey(binding, transaction)
        let managed = ManagedObject(realm: self, binding: binding, key: key)
        binding.table.attach(object, to: managed)
        object.managed = managed
        try writeRow(binding: binding, key: key, values: values, update: .error, old: nil)
        try writeCollections(binding: binding, key: key, values: values)
        return key
    }

    /// The stored values of every property of a row (links as keys).
    func rowValues(binding: TableBinding, key: Int64) throws(Realm.Error) -> [_StoredValue]? {
        try withRow(tree: binding.rowsTree, key: key) { row in
            binding.table.infos.indices.map {
                RowCodec.get(row, column: binding.columns[$0], info: binding.table.infos[$0])
            }
        }
    }

    /// Updates the stored object `key` (whose accessor is `object`) with the values `entries` give, as
    /// `create(_:value:update:)` does for a primary key that exists: the plain properties given are converted,
    /// checked and written in one row write (with `.modified`, only those whose value differs, and nothing when
    /// none does); links, embedded objects, collections and mixed values go through their setters afterwards.
    /// Setting them one by one read and wrote the whole row once per property.
    func update(
        _ object: ObjectBase, binding: TableBinding, key: Int64, from entries: [GivenValue],
        policy: UpdatePolicy
    ) throws(Realm.Error) {
        let table = binding.table
        guard let old = try rowValues(binding: binding, key: key) else { throw .invalidatedObject }
        var values = old
        var changed = false
        var others: [GivenValue] = []
        for given in entries {
            let (index, entry) = (given.property, given.entry)
            let info = table.infos[index]
            guard !info.isCollection, info.type != .object, info.type != .linkingObjects, info.type != .any else {
                others.append(given)
                continue
            }
            guard let stored = StoredValueConversion.stored(from: entry, as: info) else {
                throw ObjectValues.mismatch(entry, property: index, table: table)
            }
            try checkType(stored, binding: binding, property: index)
            if index == table.primaryKeyIndex && migrationState == nil {
                guard let new = KeyEncoding.primaryKey(stored), new == KeyEncoding.primaryKey(old[index]) else {
                    throw .primaryKeyChange(
                        type: binding.className, property: table.schema.properties[index].columnName)
                }
                continue
            }
            if policy == .modified && ListElements.equal(stored, old[index]) { continue }
            values[index] = stored
            changed = true
        }
        if changed { try writeRow(binding: binding, key: key, values: values, update: .error, old: old) }
        for given in others { try ObjectValues.set(given.entry, property: given.property, of: object, table: table) }
    }

    /// Sets one property of a managed object.
    func setProperty(_ value: _StoredValue, property: Int, binding: TableBinding, key: Int64) throws(Realm.Error) {
        guard let old = try rowValues(binding: binding, key: key) else { throw .invalidatedObject }
        var values = old
        if binding.table.infos[property].isCollection {
            try replaceCollection(binding: binding, property: property, key: key, with: value)
            return
        }
        if property == binding.table.primaryKeyIndex && migrationState == nil {
            guard let new = KeyEncoding.primaryKey(value), new == KeyEncoding.primaryKey(values[property]) else {
                throw .primaryKeyChange(
                    type: binding.className, property: binding.table.schema.properties[property].columnName)
            }
            return
        }
        if let embedded = try embeddedBinding(binding, property: property), case .int(let old) = values[property] {
            try remove(binding: embedded, key: old)
        }
        // Mixed values are encoded (links and nested collections included) by `writeRow`.
        values[property] =
            tables.isMixed(binding, property)
            ? value : try resolveLinks(value, binding: binding, property: property, update: .error)
        try writeRow(binding: binding, key: key, values: values, update: .error, old: old)
    }

    private func deleteEmbedded(binding: TableBinding, key: Int64) throws(Realm.Error) {
        guard let values = try rowValues(binding: binding, key: key) else { return }
        for index in binding.table.infos.indices {
            guard let embedded = try embeddedBinding(binding, property: index), case .int(let child) = values[index]
            else { continue }
            try remove(binding: embedded, key: child)
        }
    }

    /// The binding of the embedded type that property `property` holds, or nil if it holds no embedded object.
    func embeddedBinding(_ binding: TableBinding, property: Int) throws(Realm.Error) -> TableBinding? {
        let info = binding.table.infos[property]
        guard info.type == .object else { return nil }
        if let target = info.objectType {
            return target is EmbeddedObject.Type ? try self.binding(for: target) : nil
        }
        guard let name = binding.table.schema.properties[property].objectClassName,
            schemaClasses()[name]?.embedded == true
        else { return nil }
        return try dynamicBinding(name)
    }

    /// Deletes a row: its embedded objects, its primary key entry, and links to it in every table. An embedded
    /// object is only unlinked from its parent when deleted on its own (`direct`); otherwise the parent is
    /// replacing or deleting it and drops the link itself.
    /// Returns false, changing nothing, when there is no such row.
    @discardableResult
    func remove(binding: TableBinding, key: Int64, direct: Bool = false) throws(Realm.Error) -> Bool {
        let transaction = try activeTransactionForWrite()
        guard let values = try rowValues(binding: binding, key: key) else { return false }
        syncCapture?.touch(binding, key)
        try deleteEmbedded(binding: binding, key: key)
        if let index = binding.table.primaryKeyIndex, let encoded = KeyEncoding.primaryKey(values[index]),
            let primaryKeys = try handle(binding.primaryKeyTree, create: false)
        {
            _ = try mutate { try transaction.delete(encoded, in: primaryKeys) }
        }
        if let rows = try handle(binding.rowsTree, create: false) {
            _ = try mutate { try transaction.delete(KeyEncoding.objectKey(key), in: rows) }
        }
        try updateIndexes(binding: binding, key: key, old: values, new: nil)
        try updateToOneBacklinks(binding: binding, key: key, old: values, new: nil)
        try releaseReplacedMixed(binding: binding, key: key, old: values, new: nil)
        try deleteCollections(binding: binding, key: key)
        if binding.table.kind == .object || direct { try tables.unlinkIncoming(target: binding.className, key: key) }
        return true
    }

    /// Deletes every object of `binding`'s type: embedded objects they own, links to them, their rows, primary
    /// keys and index entries.
    func removeAll(binding: TableBinding) throws(Realm.Error) {
        let transaction = try activeTransactionForWrite()
        var ownsEmbedded = false
        for index in binding.table.infos.indices where try embeddedBinding(binding, property: index) != nil {
            ownsEmbedded = true
        }
        if ownsEmbedded {
            for key in try objectKeys(tree: binding.rowsTree) {
                try deleteEmbedded(binding: binding, key: key)
                // Embedded objects held in lists and maps go with their collections.
                try deleteCollections(binding: binding, key: key)
            }
        }
        if binding.table.kind == .object {
            if schemaClasses().values.contains(where: { $0.properties.contains { $0.type == .any } }) {
                for key in try objectKeys(tree: binding.rowsTree) {
                    try tables.unlinkIncomingMixed(target: binding.className, key: key)
                }
            }
            try nullifyLinks(to: binding.className)
            try tables.removeFromLists(target: binding.className)
            try tables.removeFromSets(target: binding.className)
            try tables.nullifyInMaps(target: binding.className)
        }
        let properties = binding.table.schema.properties
        let backlinks =
            (schemaClasses()[binding.className].map {
                tables.backlinkTrees(ofOrigin: binding.className, $0) + tables.mixedTrees(of: binding.className, $0)
            } ?? []) + tables.backlinkTrees(linkingTo: binding.className)
        let trees =
            backlinks + [binding.rowsTree, binding.primaryKeyTree]
            + properties.filter { $0.isIndexed && !$0.isPrimary }.map {
                TableNames.index(binding.className, $0.columnName)
            }
            + binding.table.infos.indices.compactMap { property in
                binding.table.infos[property].collection.map {
                    TableNames.collection($0, binding.className, properties[property].columnName)
                }
            }
        for tree in trees {
            guard let handle = try handle(tree, create: false) else { continue }
            try mutate { try transaction.removeAll(in: handle) }
        }
    }

    /// Sets every to-one link to an object of class `target` to nil (deleting every object of it).
    private func nullifyLinks(to target: String) throws(Realm.Error) {
        for (name, stored) in schemaClasses() {
            let columns = stored.properties.indices.filter {
                stored.properties[$0].type == .object && stored.properties[$0].objectClassName == target
            }
            guard !columns.isEmpty, let rows = try handle(TableNames.rows(name), create: false) else { continue }
            try rewriteRows(in: rows) { _, row in
                let matching = columns.filter { !row.isNull($0) }
                guard !matching.isEmpty else { return nil }
                return RowRewriter.nullify(row, columns: matching, properties: stored.properties)
            }
        }
    }

    /// Replaces each row of `rows` for which `transform` returns new bytes (see `TableStore.rewriteRows`).
    func rewriteRows(in rows: TreeHandle, _ transform: (_ key: [UInt8], _ row: RowView) throws -> [UInt8]?)
        throws(Realm.Error)
    {
        _ = try activeTransactionForWrite()
        try tables.rewriteRows(in: rows, transform)
    }
}

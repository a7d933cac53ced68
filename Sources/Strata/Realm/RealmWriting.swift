import Foundation
import StrataStorage

/// The accessor half of writing objects: making unmanaged objects managed (with the unmanaged objects they link
/// to and their embedded objects), turning links into keys and mixed values into bytes, updating properties. The
/// rows, primary keys, indexes and deletions are the table layer's (`Tables/RowWrites.swift`,
/// `Tables/PrimaryKeys.swift`, `Tables/Indexes.swift`, `Tables/RowDeletes.swift`).
extension Realm {
    /// Makes `object` managed: writes its row (and those of unmanaged objects it links to) and returns its key.
    /// `transactionChecked`: the caller has just checked this thread's write transaction
    /// (`transactionForMutation`), which need not be checked twice an object.
    func insert(_ object: ObjectBase, update: UpdatePolicy, transactionChecked: Bool = false) throws(Realm.Error)
        -> Int64
    {
        if let managed = object.managed {
            guard managed.realm === self else {
                throw .invalidValue(
                    type: type(of: object).className(), property: "", reason: "the object is managed by another Realm")
            }
            return managed.key
        }
        let binding = try insertableBinding(of: object)
        if !transactionChecked { _ = try activeTransactionForWrite() }
        try registerIfNeeded(binding)
        if update == .error, binding.plainRows, let boxes = binding.table.boxesInPropertyOrder(of: object) {
            return try insertPlain(object, boxes: boxes, binding: binding)
        }
        let values = binding.table.storedValues(of: object)
        var key: Int64
        var existing = false
        if let index = binding.table.primaryKeyIndex {
            let encoded = try encodedPrimaryKey(values[index], binding: binding, property: index)
            if update == .error {
                // One descent claims the key or finds it taken; taken fails the write, which rolls back the new
                // object key and the copied pages with everything else.
                key = try tables.newKey(binding)
                guard try tables.claimAbsentPrimaryKey(encoded, for: key, binding: binding) else {
                    throw .primaryKeyExists(type: binding.className, value: KeyEncoding.describe(values[index]))
                }
            } else if let found = try lookupPrimaryKey(binding, encoded) {
                key = found
                existing = true
            } else {
                key = try tables.newKey(binding)
                try tables.claimPrimaryKey(encoded, for: key, binding: binding)
            }
        } else {
            key = try tables.newKey(binding)
        }
        // Managed before its links are resolved, so that a cycle back to it finds its key.
        let managed = ManagedObject(realm: self, binding: binding, key: key)
        binding.table.attach(object, to: managed)
        object.managed = managed
        let old = existing ? try tables.rowValues(binding: binding, key: key) : nil
        if existing { try tables.deleteEmbedded(binding: binding, key: key) }
        try writeRow(binding: binding, key: key, values: values, update: update, old: old)
        try writeCollections(binding: binding, key: key, values: values)
        adoptCollections(of: values, binding: binding, managed: managed)
        return key
    }

    /// The binding of `object`'s class, which must be neither `DynamicObject` nor embedded; the class `insert`
    /// accepted last is remembered (`TableStore.lastAdded`), so adding many objects of one class checks it once.
    private func insertableBinding(of object: ObjectBase) throws(Realm.Error) -> TableBinding {
        let type = ObjectIdentifier(Swift.type(of: object))
        if let last = tables.lastAdded, last.type == type { return last.binding }
        guard !(object is DynamicObject) else {
            throw .invalidValue(
                type: "DynamicObject", property: "", reason: "dynamic objects are read from a Realm, not added to one")
        }
        let binding = try binding(for: Swift.type(of: object))
        guard binding.table.kind != .embedded else {
            throw .invalidValue(
                type: binding.className, property: "", reason: "embedded objects are added through their parent")
        }
        tables.lastAdded = (type, binding)
        return binding
    }

    /// `insert` of an object whose class stores plain values only (`TableBinding.plainRows`), its boxes in property
    /// order: each box's value is checked and encoded straight into the row. The general path first copies the
    /// values into an array (its allocation, five copies and the generic destruction of its elements cost ~800
    /// instructions an object of five properties) for passes over links, mixed values and collections such a
    /// class does not have.
    private func insertPlain(_ object: ObjectBase, boxes: [PersistedBox], binding: TableBinding) throws(Realm.Error)
        -> Int64
    {
        let key: Int64
        if let index = binding.table.primaryKeyIndex {
            let value = boxes[index].stored
            // As in `insert`: one descent claims the key or finds it taken, which fails the write. An integer
            // key is encoded on the stack (its array's allocation and freeing cost ~400 instructions).
            let claimed: Bool
            if case .int(let int) = value {
                key = try tables.newKey(binding)
                claimed = try tables.claimAbsentPrimaryKey(KeyEncoding.IntPrimaryKey(int), for: key, binding: binding)
            } else {
                let encoded = try encodedPrimaryKey(value, binding: binding, property: index)
                key = try tables.newKey(binding)
                claimed = try tables.claimAbsentPrimaryKey(encoded, for: key, binding: binding)
            }
            guard claimed else { throw .primaryKeyExists(type: binding.className, value: KeyEncoding.describe(value)) }
        } else {
            key = try tables.newKey(binding)
        }
        let managed = ManagedObject(realm: self, binding: binding, key: key)
        binding.table.attach(object, to: managed)
        object.managed = managed
        var row = tables.takeRowBuilder(binding)
        for index in boxes.indices {
            let value = boxes[index].stored
            try tables.checkType(value, binding: binding, property: index)
            try tables.encode(value, property: index, of: binding, into: &row)
        }
        // No index, backlink count or mixed value reads a plain row's values: the row write needs none of them.
        try tables.writeRow(binding: binding, key: key, row: &row, values: [], old: nil)
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

    /// `value`, property `property`'s primary key, encoded for the primary-key tree (see
    /// `TableStore.encodedPrimaryKey`).
    func encodedPrimaryKey(_ value: _StoredValue, binding: TableBinding, property: Int) throws(Realm.Error) -> [UInt8] {
        try tables.encodedPrimaryKey(value, binding: binding, property: property, maxKeySize: store.maxKeySize)
    }

    /// Resolves links and embedded objects in `values` to object keys (adding unmanaged ones) and mixed values
    /// to their bytes, then writes the row (see `TableStore.writeRow`). `old` holds the row's previous values (links
    /// as keys) when the row exists.
    private func writeRow(
        binding: TableBinding, key: Int64, values: [_StoredValue], update: UpdatePolicy, old: [_StoredValue]?
    ) throws(Realm.Error) {
        var row = tables.takeRowBuilder(binding)
        // A copy of the values is made only once one of them changes as it is resolved (a link becomes a key, a
        // mixed value its bytes, a computed property nothing): most rows hold plain values only, and an array
        // allocation per row costs about as much as encoding it.
        var resolvedValues: [_StoredValue]?
        for (index, value) in values.enumerated() {
            var resolved = value
            var changed = false
            if binding.columns[index] < 0 {
                // Computed (linking objects): nothing stored.
                resolved = .null
                changed = true
            } else if tables.isMixed(binding, index) && !binding.table.infos[index].isCollection {
                resolved =
                    try encodeMixed(value, binding: binding, property: index, owner: key, level: 0)
                    .map { .mixed($0) } ?? .null
                changed = true
            } else if case .object = value {
                resolved = try resolveLinks(value, binding: binding, property: index, update: update)
                changed = true
            } else {
                try tables.checkType(value, binding: binding, property: index)
            }
            if changed && resolvedValues == nil { resolvedValues = values }
            resolvedValues?[index] = resolved
            // Encoded as it is resolved: one pass over the values on the insert path.
            try tables.encode(resolved, property: index, of: binding, into: &row)
        }
        try tables.writeRow(binding: binding, key: key, row: &row, values: resolvedValues ?? values, old: old)
    }

    /// A link becomes the key of its target (added first if unmanaged); an embedded object gets a new row.
    private func resolveLinks(_ value: _StoredValue, binding: TableBinding, property: Int, update: UpdatePolicy)
        throws(Realm.Error) -> _StoredValue
    {
        guard case .object(let target) = value else {
            try tables.checkType(value, binding: binding, property: property)
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

    func insertEmbedded(_ object: ObjectBase) throws(Realm.Error) -> Int64 {
        guard object.managed == nil else {
            throw .invalidValue(
                type: type(of: object).className(), property: "",
                reason: "a managed embedded object cannot be assigned to another parent; assign an unmanaged copy")
        }
        let binding = try binding(for: type(of: object))
        _ = try activeTransactionForWrite()
        try registerIfNeeded(binding)
        let values = binding.table.storedValues(of: object)
        let key = try tables.newKey(binding)
        let managed = ManagedObject(realm: self, binding: binding, key: key)
        binding.table.attach(object, to: managed)
        object.managed = managed
        try writeRow(binding: binding, key: key, values: values, update: .error, old: nil)
        try writeCollections(binding: binding, key: key, values: values)
        return key
    }

    /// The stored values of every property of a row (see `TableStore.rowValues`).
    func rowValues(binding: TableBinding, key: Int64) throws(Realm.Error) -> [_StoredValue]? {
        try tables.rowValues(binding: binding, key: key)
    }

    /// Updates the stored object `key` (whose accessor is `object`) with the values `entries` give, as
    /// `create(_:value:update:)` does for a primary key that exists: the plain properties given are converted,
    /// checked and written in one row write (with `.modified`, only those whose value differs, and nothing when
    /// none does); links, embedded objects, collections and mixed values go through their setters afterwards.
    /// Setting them one by one read and wrote the whole row once per property. The stored row is read one column
    /// at a time, and when every changed property is one nothing else depends on (`binding.rewritableAlone`),
    /// only their columns are rewritten: an upsert that changes one value costs about what setting it does.
    /// `foundByPrimaryKey` says the object was just looked up by the primary key `entries` give, so that entry
    /// equals the stored key and is skipped (converting, checking and comparing it again was ~1,500 instructions).
    func update(
        _ object: ObjectBase, binding: TableBinding, key: Int64, from entries: [GivenValue],
        policy: UpdatePolicy, foundByPrimaryKey: Bool = false
    ) throws(Realm.Error) {
        let table = binding.table
        guard let stored = try tables.stableRow(binding, key: key) else { throw .invalidatedObject }
        var changes: [(property: Int, value: _StoredValue)] = []
        var others: [GivenValue] = []
        try withExtendedLifetime(stored) { () throws(Realm.Error) in
            // Valid until the transaction changes: read (one column at a time) before anything is written.
            let row = try tables.rowView(stored)
            for given in entries {
                let (index, entry) = (given.property, given.entry)
                if foundByPrimaryKey && index == table.primaryKeyIndex { continue }
                let info = table.infos[index]
                guard !info.isCollection, info.type != .object, info.type != .linkingObjects, info.type != .any else {
                    others.append(given)
                    continue
                }
                guard let new = StoredValueConversion.stored(from: entry, as: info) else {
                    throw ObjectValues.mismatch(entry, property: index, table: table)
                }
                if try givenValueChanges(new, property: index, row: row, binding: binding, policy: policy) {
                    changes.append((index, new))
                }
            }
            try writeChanges(changes[...], binding: binding, key: key, row: row)
        }
        for given in others { try ObjectValues.set(given.entry, property: given.property, of: object, table: table) }
    }

    /// Whether `new`, given for property `index` of the object whose stored row is `row`, goes into the write:
    /// checked for the property's type first; a primary key must equal the stored one and is never written; with
    /// `.modified`, a value the column holds already is left alone (it is not rewritten, and no observer sees it
    /// change).
    func givenValueChanges(
        _ new: _StoredValue, property index: Int, row: RowView, binding: TableBinding, policy: UpdatePolicy
    ) throws(Realm.Error) -> Bool {
        try tables.checkType(new, binding: binding, property: index)
        let (column, info) = (binding.columns[index], binding.table.infos[index])
        if index == binding.table.primaryKeyIndex && migrationState == nil {
            let old = RowCodec.get(row, column: column, info: info)
            guard let newKey = KeyEncoding.primaryKey(new), newKey == KeyEncoding.primaryKey(old) else {
                throw .primaryKeyChange(
                    type: binding.className, property: binding.table.schema.properties[index].columnName)
            }
            return false
        }
        return policy != .modified || !RowCodec.column(row, column, info: info, holds: new)
    }

    /// Writes `changes` (checked plain values, in declared order) into object `key`, whose stored row `row` is:
    /// nothing when there are none, one fixed-size value in place, values nothing else depends on by rewriting
    /// their columns alone, anything else (an indexed value) by a whole row write that keeps indexes in step.
    func writeChanges(
        _ changes: ArraySlice<(property: Int, value: _StoredValue)>, binding: TableBinding, key: Int64, row: RowView
    ) throws(Realm.Error) {
        guard !changes.isEmpty else { return }
        // One fixed-size value changed (the common upsert) over a row in the write's dirty leaf: in place. More
        // than one would leave the row half patched if a later column could not be.
        if changes.count == 1, let only = changes.first, binding.rewritableAlone[only.property],
            try tables.setFixedColumnInPlace(only.value, property: only.property, binding: binding, key: key)
        {
            return
        }
        if changes.allSatisfy({ binding.rewritableAlone[$0.property] }),
            try tables.rewriteColumns(binding: binding, key: key, changes, in: row)
        {
            return
        }
        let infos = binding.table.infos
        let old = infos.indices.map { RowCodec.get(row, column: binding.columns[$0], info: infos[$0]) }
        var values = old
        for (index, value) in changes { values[index] = value }
        try writeRow(binding: binding, key: key, values: values, update: .error, old: old)
    }

    /// Sets one property of a managed object. `current` is the object's row as stored, when the accessor holds it
    /// from a read since the transaction last changed (`item.score += 1` reads it just before).
    func setProperty(
        _ value: _StoredValue, property: Int, binding: TableBinding, key: Int64, current: RowView? = nil
    ) throws(Realm.Error) {
        if binding.rewritableAlone[property] {
            // A fixed-size value over a row in the leaf the write last changed: its 8 bytes, in place.
            if try tables.setFixedColumnInPlace(value, property: property, binding: binding, key: key) { return }
            if try rewriteColumn(value, property: property, binding: binding, key: key, current: current) { return }
        }
        guard let old = try tables.rowValues(binding: binding, key: key) else { throw .invalidatedObject }
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
        if let embedded = try tables.embeddedBinding(binding, property: property),
            case .int(let old) = values[property]
        {
            try tables.remove(binding: embedded, key: old)
        }
        // Mixed values are encoded (links and nested collections included) by `writeRow`.
        values[property] =
            tables.isMixed(binding, property)
            ? value : try resolveLinks(value, binding: binding, property: property, update: .error)
        try writeRow(binding: binding, key: key, values: values, update: .error, old: old)
    }

    /// Sets a property that `binding.rewritableAlone` names by rewriting its column alone in the stored row (see
    /// `TableStore.rewriteColumns`): no other value of the row is decoded. False when the row needs a whole write.
    private func rewriteColumn(
        _ value: _StoredValue, property: Int, binding: TableBinding, key: Int64, current: RowView?
    ) throws(Realm.Error) -> Bool {
        let change = CollectionOfOne((property: property, value: value))
        if let current { return try tables.rewriteColumns(binding: binding, key: key, change, in: current) }
        guard let stored = try tables.stableRow(binding, key: key) else { throw .invalidatedObject }
        return try withExtendedLifetime(stored) { () throws(Realm.Error) -> Bool in
            // A row that does not decode is left to the whole-row write, which reports the damage.
            guard let row = try? RowView(stored.bytes) else { return false }
            return try tables.rewriteColumns(binding: binding, key: key, change, in: row)
        }
    }

    /// The object of `binding`'s type whose primary key is `value`, if there is one; an integer key is encoded on
    /// the stack.
    func lookupPrimaryKey(_ binding: TableBinding, _ value: _StoredValue) throws(Realm.Error) -> Int64? {
        if case .int(let int) = value { return try lookupPrimaryKey(binding, KeyEncoding.IntPrimaryKey(int)) }
        guard let encoded = KeyEncoding.primaryKey(value) else { return nil }
        return try lookupPrimaryKey(binding, encoded)
    }

    // MARK: Entry points

    /// Adds an unmanaged object (and the unmanaged objects it links to) to the Realm. With a primary key,
    /// `update` decides what happens when an object with that key exists. Errors fail the write transaction.
    public func add(_ object: Object, update: UpdatePolicy = .error) {
        guard transactionForMutation("add(\(type(of: object)))") != nil else { return }
        do {
            _ = try insert(object, update: update, transactionChecked: true)
        } catch {
            fail(error)
        }
    }

    /// Adds every object of `objects`.
    public func add<S: Sequence>(_ objects: S, update: UpdatePolicy = .error) where S.Element: Object {
        for object in objects { add(object, update: update) }
    }

    /// Creates a managed object of `type` from `value` (a dictionary, an array in declared order, or an object).
    /// With a primary key and an update policy other than `.error`, an existing object is updated with the
    /// values given (a dictionary updates only its keys).
    @discardableResult
    public func create<Element: Object>(
        _ type: Element.Type, value: Any = [String: Any](), update: UpdatePolicy = .error
    )
        -> Element
    {
        guard transactionForMutation("create(\(type))") != nil else { return Element() }
        do {
            let binding = try binding(for: type)
            var entries: [GivenValue]?
            if update != .error, let index = binding.table.primaryKeyIndex {
                // A dictionary of plain values first (the common upsert).
                if let dictionary = ObjectValues.stringKeyed(value) {
                    switch try upsertPlainDictionary(dictionary, binding: binding, policy: update, make: { Element() })
                    {
                    case .updated(let object), .inserted(let object): return object as? Element ?? Element()
                    case .notPlain: break
                    }
                }
                let given = try ObjectValues.entries(of: value, table: binding.table)
                entries = given
                if let keyValue = given.first(where: { $0.property == index })?.entry,
                    let stored = StoredValueConversion.stored(from: keyValue, as: binding.table.infos[index]),
                    let existing = try lookupPrimaryKey(binding, stored)
                {
                    // No unmanaged object is made for an object that exists: only its accessor.
                    let managed = self.object(binding, key: existing)
                    try self.update(
                        managed, binding: binding, key: existing, from: given, policy: update,
                        foundByPrimaryKey: true)
                    return managed as? Element ?? Element()
                }
            }
            let object = Element()
            if let entries {
                try ObjectValues.apply(entries, to: object, schema: binding.table)
            } else {
                try ObjectValues.apply(value, to: object, schema: binding.table)
            }
            _ = try insert(object, update: update)
            return object
        } catch {
            fail(error)
            return Element()
        }
    }

    /// Deletes a managed object. Links to it become nil; its embedded objects are deleted with it.
    ///
    /// Deleting an object that is already deleted (by an earlier write, another Realm, or earlier in this one) is
    /// an error, as in the Realm SDK: the write transaction fails, and `write` (or `commitWrite()`) rolls it back
    /// whole and throws ``RealmError/invalidatedObject``. Check ``ObjectBase/isInvalidated`` first to delete an object
    /// only if it still exists.
    public func delete(_ object: ObjectBase) {
        guard transactionForMutation("delete(\(type(of: object)))") != nil else { return }
        do {
            let managed = try managedForDeletion(object)
            // The row the accessor read since the transaction last changed, if any: the delete need not read it.
            let current = managed.cachedGeneration == generation ? managed.cachedView : nil
            guard try tables.remove(binding: managed.binding, key: managed.key, direct: true, current: current) else {
                throw Realm.Error.invalidatedObject
            }
        } catch {
            fail(error)
        }
    }

    /// The stored object `object` is, when this Realm can delete it.
    private func managedForDeletion(_ object: ObjectBase) throws(Realm.Error) -> ManagedObject {
        guard let managed = object.managed, managed.realm === self else {
            let reason =
                object.managed?.realm.frozen == true
                ? "a frozen object cannot be deleted: delete its live version (object.thaw())"
                : "only objects managed by this Realm can be deleted"
            throw Realm.Error.invalidValue(type: type(of: object).className(), property: "", reason: reason)
        }
        // Read before `invalidate()`: invalidated, as in the SDK, even though its row may still be stored.
        guard !managed.isInvalidatedByRealm else { throw Realm.Error.invalidatedObject }
        guard managed.binding.table.kind != .asymmetric else {
            throw Realm.Error.invalidValue(
                type: managed.binding.className, property: "",
                reason: "asymmetric objects are removed by acknowledging their outbox delivery")
        }
        return managed
    }

    /// Deletes every object of `objects`. Deleting every object of a type (`realm.objects(T.self)`) clears the
    /// type's trees at once instead of deleting row by row.
    ///
    /// An object that was already deleted when the call began fails the write transaction, as
    /// `delete(_:)` does for one object; one that appears twice (a list holding it twice), or that an earlier
    /// deletion of the same call removed (an embedded object with its parent), is deleted once.
    public func delete<S: Sequence>(_ objects: S) where S.Element: ObjectBase {
        if let whole = objects as? any WholeTable, whole.realmForDeletion === self,
            let binding = whole.bindingForDeletion
        {
            guard transactionForMutation("delete(\(S.self))") != nil else { return }
            do {
                try tables.removeAll(binding: binding)
            } catch {
                fail(error)
            }
            return
        }
        guard transactionForMutation("delete(\(S.self))") != nil else { return }
        do {
            var targets: [ManagedObject] = []
            for object in objects {
                let managed = try managedForDeletion(object)
                guard try withRow(managed.binding, key: managed.key, { _ in true }) != nil else {
                    throw Realm.Error.invalidatedObject
                }
                targets.append(managed)
            }
            for managed in targets { try tables.remove(binding: managed.binding, key: managed.key, direct: true) }
        } catch {
            fail(error)
        }
    }

    /// Deletes every object of every type.
    public func deleteAll() {
        guard transactionForMutation("deleteAll()") != nil else { return }
        do {
            try tables.removeEverything()
        } catch {
            fail(error)
        }
    }
}

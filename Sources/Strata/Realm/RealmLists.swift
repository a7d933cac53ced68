import StrataStorage

/// The accessor half of `List` properties: the operations behind `List` (confinement, the write transaction's
/// failure) and the element encoding every collection uses, which turns values into element rows (adding
/// unmanaged linked objects first). The list trees themselves are written by `Tables/ListTrees.swift`.
extension Realm {
    // MARK: Element encoding

    /// `value` as stored in a list: links become the key of their target (added first when unmanaged).
    func encodeElement(_ value: _StoredValue, binding: TableBinding, property: Int, owner: Int64, level: Int = 0)
        throws(Realm.Error) -> [UInt8]
    {
        let info = tables.elementInfo(binding, property)
        let name = binding.table.schema.properties[property].columnName
        if info.type == .any {
            return MixedCodec.elementRow(
                try encodeMixed(value, binding: binding, property: property, owner: owner, level: level))
        }
        var resolved = value
        if case .object(let target) = value, info.objectType == nil {
            // A class known only from the file (`DynamicObject`): the element must be a stored object of it.
            let expected = binding.table.schema.properties[property].objectClassName
            guard let managed = target.managed, managed.realm === self, managed.table.className == expected,
                managed.table.kind == .object
            else {
                throw .invalidValue(
                    type: binding.className, property: name,
                    reason:
                        "a collection of \(expected ?? "objects") holds stored \(expected ?? "objects") of this Realm")
            }
            resolved = .int(managed.key)
        } else if case .object(let target) = value {
            guard let targetType = info.objectType, ObjectIdentifier(type(of: target)) == ObjectIdentifier(targetType)
            else {
                throw .invalidValue(
                    type: binding.className, property: name,
                    reason:
                        "a list of \(info.objectType.map { "\($0)" } ?? "objects") cannot hold a \(type(of: target))")
            }
            resolved = .int(
                targetType is EmbeddedObject.Type ? try insertEmbedded(target) : try insert(target, update: .error))
        } else if case .null = value, !info.isOptional {
            throw .invalidValue(type: binding.className, property: name, reason: "this list holds no nil elements")
        }
        if let bytes = RowFormat.singleFixedColumn(resolved) { return bytes }
        var row = RowBuilder(columns: 1)
        try RowCodec.set(resolved, column: 0, in: &row, type: binding.className, property: name)
        return row.finish()
    }

    /// A stored list element, with links materialised as objects.
    func decodeElement(
        _ bytes: UnsafeRawBufferPointer, binding: TableBinding, property: Int, owner: ManagedObject? = nil,
        level: Int = 0
    ) throws(Realm.Error) -> _StoredValue {
        let info = tables.elementInfo(binding, property)
        let value: _StoredValue
        do {
            value = RowCodec.get(try RowView(bytes), column: 0, info: info)
        } catch {
            throw damage(in: error) ?? .storage(error, path: path)
        }
        if case .mixed(let mixed) = value {
            return try decodeMixed(mixed, owner: owner, property: property, level: level)
        }
        if info.type == .object, case .int(let key) = value {
            if let target = info.objectType { return .object(object(try self.binding(for: target), key: key)) }
            // A class known only from the file (`DynamicObject`): the element is an object of the target class.
            if let className = binding.table.schema.properties[property].objectClassName {
                return .object(object(try dynamicBinding(className), key: key))
            }
        }
        return value
    }

    // MARK: Operations behind List (the tree writes are in `Tables/ListTrees.swift`)

    /// Checks `positions` against `owner`'s list (before an element is encoded, so that an unmanaged object
    /// given for a bad position stays unmanaged).
    private func checkPositions(
        _ positions: [Int], in list: TreeHandle, owner: ManagedObject, property: Int, inserting: Bool = false
    ) throws(Realm.Error) {
        try tables.checkPositions(positions, in: list, binding: owner.binding, property: property, inserting: inserting)
    }

    /// Inserts `value` at `position` of `owner`'s list, or at its end when `position` is nil (an append, which needs no
    /// position check).
    func listInsert(
        _ owner: ManagedObject, property: Int, nested: UInt64 = 0, level: Int = 0, _ value: _StoredValue,
        at position: Int?
    ) {
        mutateCollection(owner, property: property, nested: nested, "inserting into") {
            (transaction, list) throws(Realm.Error) in
            let index: Int
            if let position {
                try checkPositions([position], in: list, owner: owner, property: property, inserting: true)
                index = position
            } else {
                index = try storage { try transaction.count(in: list) }
            }
            let bytes = try encodeElement(
                value, binding: owner.binding, property: property, owner: owner.key, level: level)
            try tables.insertElement(
                bytes, at: index, in: list, binding: owner.binding, property: property, owner: owner.key)
            recordListEdit(.insert(at: index, element: bytes), owner, property: property, nested: nested)
        }
    }

    func listReplace(
        _ owner: ManagedObject, property: Int, nested: UInt64 = 0, level: Int = 0, at index: Int,
        with value: _StoredValue
    ) {
        mutateCollection(owner, property: property, nested: nested, "replacing in") {
            (_, list) throws(Realm.Error) in
            try checkPositions([index], in: list, owner: owner, property: property)
            let bytes = try encodeElement(
                value, binding: owner.binding, property: property, owner: owner.key, level: level)
            let old = try tables.replaceElement(
                at: index, with: bytes, in: list, binding: owner.binding, property: property, owner: owner.key)
            if let old {
                try tables.releaseElementRow(old, binding: owner.binding, property: property, owner: owner.key)
            }
            recordListEdit(.replace(at: index, element: bytes), owner, property: property, nested: nested)
        }
    }

    func listRemove(_ owner: ManagedObject, property: Int, nested: UInt64 = 0, at index: Int) {
        mutateCollection(owner, property: property, nested: nested, "removing from") {
            (_, list) throws(Realm.Error) in
            try checkPositions([index], in: list, owner: owner, property: property)
            let old = try tables.removeElement(at: index, from: list, binding: owner.binding, property: property)
            if let old {
                try tables.releaseElementRow(old, binding: owner.binding, property: property, owner: owner.key)
            }
            recordListEdit(.remove(at: index), owner, property: property, nested: nested)
        }
    }

    /// Moves the element at `from` to `to` as stored bytes.
    func listMove(_ owner: ManagedObject, property: Int, nested: UInt64 = 0, from: Int, to: Int) {
        mutateCollection(owner, property: property, nested: nested, "moving in") {
            (_, list) throws(Realm.Error) in
            try checkPositions([from, to], in: list, owner: owner, property: property)
            if from != to, let element = try capturedElement(at: from, in: list, owner, nested: nested) {
                recordListEdit(.move(from: from, to: to, element: element), owner, property: property, nested: nested)
            }
            try tables.moveElement(from: from, to: to, in: list)
        }
    }

    /// Exchanges two elements as stored bytes.
    func listSwap(_ owner: ManagedObject, property: Int, nested: UInt64 = 0, _ i: Int, _ j: Int) {
        mutateCollection(owner, property: property, nested: nested, "swapping in") {
            (_, list) throws(Realm.Error) in
            try checkPositions([i, j], in: list, owner: owner, property: property)
            if i != j, let first = try capturedElement(at: i, in: list, owner, nested: nested),
                let second = try capturedElement(at: j, in: list, owner, nested: nested)
            {
                recordListEdit(.replace(at: i, element: second), owner, property: property, nested: nested)
                recordListEdit(.replace(at: j, element: first), owner, property: property, nested: nested)
            }
            try tables.swapElements(i, j, in: list)
        }
    }

    func listRemoveAll(_ owner: ManagedObject, property: Int, nested: UInt64 = 0) {
        mutateCollection(owner, property: property, nested: nested, "removing all of") {
            (_, list) throws(Realm.Error) in
            try removeAllElements(of: list, owner: owner, property: property)
            recordListEdit(.removeAll, owner, property: property, nested: nested)
        }
    }

    /// Notes a positional edit of a top-level list for the sync capture (nested lists, in mixed values, do not
    /// sync).
    private func recordListEdit(_ edit: SyncListEdit, _ owner: ManagedObject, property: Int, nested: UInt64) {
        guard nested == 0, let syncCapture else { return }
        syncCapture.record(edit, owner.binding, owner.key, list: property)
    }

    /// The element row at `index` when the sync capture records this list's edits (a move or swap records the
    /// elements it moves); nil otherwise.
    private func capturedElement(at index: Int, in list: TreeHandle, _ owner: ManagedObject, nested: UInt64)
        throws(Realm.Error) -> [UInt8]?
    {
        guard nested == 0, syncCapture != nil else { return nil }
        let transaction = try activeTransaction()
        return try storage { try transaction.value(at: index, in: list) }
    }

    /// Replaces the stored elements of one list property with those of `value` (a `List`, managed or not).
    func replaceList(binding: TableBinding, property: Int, key: Int64, with value: _StoredValue)
        throws(Realm.Error)
    {
        try refillCollection(
            binding: binding, property: property, key: key, from: value, expected: "List",
            entries: { ($0 as? any AnyRealmList)?.storedElements },
            add: { (_, list, element) throws(Realm.Error) in
                let bytes = try encodeElement(element, binding: binding, property: property, owner: key)
                try tables.appendElement(bytes, to: list, binding: binding, property: property, owner: key)
            })
    }
}

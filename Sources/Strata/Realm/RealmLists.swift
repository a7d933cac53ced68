import StrataStorage

/// Storage of `List` properties (`l:<class>.<property>`): each owner's nested tree is a list tree
/// (order-statistic, so positional operations are O(log n)) whose entries are the elements, each encoded as a
/// one-column row (links as object keys). Also the element encoding every collection uses.
extension Realm {
    // MARK: Element encoding

    /// The element type of list property `property`.
    func elementInfo(_ binding: TableBinding, _ property: Int) -> _PropertyInfo {
        var info = binding.table.infos[property]
        info.collection = nil
        return info
    }

    /// `value` as stored in a list: links become the key of their target (added first when unmanaged).
    func encodeElement(_ value: _StoredValue, binding: TableBinding, property: Int, owner: Int64, level: Int = 0)
        throws(Realm.Error) -> [UInt8]
    {
        let info = elementInfo(binding, property)
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
        let info = elementInfo(binding, property)
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

    // MARK: Operations behind List

    func listInsert(
        _ owner: ManagedObject, property: Int, nested: UInt64 = 0, level: Int = 0, _ value: _StoredValue, at index: Int
    ) {
        mutateCollection(owner, property: property, nested: nested, "inserting into") {
            (transaction, list) throws(Realm.Error) in
            try checkPositions([index], in: list, owner: owner, property: property, inserting: true)
            let bytes = try encodeElement(
                value, binding: owner.binding, property: property, owner: owner.key, level: level)
            try mutate { try transaction.insert(bytes, at: index, in: list) }
            try countElementLink(bytes, binding: owner.binding, property: property, owner: owner.key, by: 1)
        }
    }

    func listReplace(
        _ owner: ManagedObject, property: Int, nested: UInt64 = 0, level: Int = 0, at index: Int,
        with value: _StoredValue
    ) {
        mutateCollection(owner, property: property, nested: nested, "replacing in") {
            (transaction, list) throws(Realm.Error) in
            try checkPositions([index], in: list, owner: owner, property: property)
            let bytes = try encodeElement(
                value, binding: owner.binding, property: property, owner: owner.key, level: level)
            let old = try trackedElement(at: index, in: list, owner: owner, property: property)
            try mutate { try transaction.replace(at: index, with: bytes, in: list) }
            if let old { try releaseElementRow(old, binding: owner.binding, property: property, owner: owner.key) }
            try countElementLink(bytes, binding: owner.binding, property: property, owner: owner.key, by: 1)
        }
    }

    func listRemove(_ owner: ManagedObject, property: Int, nested: UInt64 = 0, at index: Int) {
        mutateCollection(owner, property: property, nested: nested, "removing from") {
            (transaction, list) throws(Realm.Error) in
            try checkPositions([index], in: list, owner: owner, property: property)
            let old = try trackedElement(at: index, in: list, owner: owner, property: property)
            try mutate { try transaction.remove(at: index, from: list) }
            if let old { try releaseElementRow(old, binding: owner.binding, property: property, owner: owner.key) }
        }
    }

    /// Throws the SDK's range error (see ``CollectionIndex``) for the first of `positions` outside the list:
    /// `0..<count`, or `0...count` when `inserting`.
    private func checkPositions(
        _ positions: [Int], in list: TreeHandle, owner: ManagedObject, property: Int, inserting: Bool = false
    ) throws(Realm.Error) {
        guard let transaction = writeTransactionIfAny else { throw .notInWriteTransaction }
        let count = try storage { try transaction.count(in: list) }
        for index in positions where index < 0 || index > count || (index == count && !inserting) {
            throw .invalidValue(
                type: owner.table.className, property: owner.table.schema.properties[property].columnName,
                reason: CollectionIndex.outOfBounds(index, count: count, inserting: inserting))
        }
    }

    /// The element row at `index` when the list's elements hold something to release (links, mixed values).
    private func trackedElement(at index: Int, in list: TreeHandle, owner: ManagedObject, property: Int)
        throws(Realm.Error) -> [UInt8]?
    {
        guard holdsLinks(owner.binding, property) || tables.isMixed(owner.binding, property),
            let transaction = writeTransactionIfAny
        else { return nil }
        return try storage { try transaction.value(at: index, in: list) }
    }

    /// Moves the element at `from` to `to` as stored bytes: nothing is released or re-added (an embedded
    /// element stays the same object).
    func listMove(_ owner: ManagedObject, property: Int, nested: UInt64 = 0, from: Int, to: Int) {
        mutateCollection(owner, property: property, nested: nested, "moving in") {
            (transaction, list) throws(Realm.Error) in
            try checkPositions([from, to], in: list, owner: owner, property: property)
            guard from != to else { return }
            try mutate {
                let bytes = try transaction.value(at: from, in: list)
                try transaction.remove(at: from, from: list)
                try transaction.insert(bytes, at: to, in: list)
            }
        }
    }

    /// Exchanges two elements as stored bytes.
    func listSwap(_ owner: ManagedObject, property: Int, nested: UInt64 = 0, _ i: Int, _ j: Int) {
        mutateCollection(owner, property: property, nested: nested, "swapping in") {
            (transaction, list) throws(Realm.Error) in
            try checkPositions([i, j], in: list, owner: owner, property: property)
            guard i != j else { return }
            try mutate {
                let first = try transaction.value(at: i, in: list)
                let second = try transaction.value(at: j, in: list)
                try transaction.replace(at: i, with: second, in: list)
                try transaction.replace(at: j, with: first, in: list)
            }
        }
    }

    func listRemoveAll(_ owner: ManagedObject, property: Int, nested: UInt64 = 0) {
        mutateCollection(owner, property: property, nested: nested, "removing all of") {
            (transaction, list) throws(Realm.Error) in
            try uncountLinks(in: list, binding: owner.binding, property: property, owner: owner.key)
            try mutate { try transaction.removeAll(in: list) }
        }
    }

    /// Replaces the stored elements of one list property with those of `value` (a `List`, managed or not).
    func replaceList(binding: TableBinding, property: Int, key: Int64, with value: _StoredValue)
        throws(Realm.Error)
    {
        try refillCollection(
            binding: binding, property: property, key: key, from: value, expected: "List",
            entries: { ($0 as? any AnyRealmList)?.storedElements },
            add: { (transaction, list, element) throws(Realm.Error) in
                let bytes = try encodeElement(element, binding: binding, property: property, owner: key)
                try mutate { try transaction.append(bytes, to: list) }
                try countElementLink(bytes, binding: binding, property: property, owner: key, by: 1)
            })
    }
}

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
        if let bytes = RowFormat.singleFixedColumn(resolved) { return bytes }
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

    // MARK: Operations behind List

    func listInsert(_ owner: ManagedObject, property: Int, _ value: _StoredValue, at index: Int) {
        mutateCollection(owner, property: property, "inserting into") { (transaction, list) throws(Realm.Error) in
            let bytes = try encodeElement(value, binding: owner.binding, property: property)
            try mutate { try transaction.insert(bytes, at: index, in: list) }
            try countElementLink(bytes, binding: owner.binding, property: property, owner: owner.key, by: 1)
        }
    }

    func listReplace(_ owner: ManagedObject, property: Int, at index: Int, with value: _StoredValue) {
        mutateCollection(owner, property: property, "replacing in") { (transaction, list) throws(Realm.Error) in
            let bytes = try encodeElement(value, binding: owner.binding, property: property)
            if holdsLinks(owner.binding, property) {
                let old = try storage { try transaction.value(at: index, in: list) }
                try countElementLink(old, binding: owner.binding, property: property, owner: owner.key, by: -1)
            }
            try mutate { try transaction.replace(at: index, with: bytes, in: list) }
            try countElementLink(bytes, binding: owner.binding, property: property, owner: owner.key, by: 1)
        }
    }

    func listRemove(_ owner: ManagedObject, property: Int, at index: Int) {
        mutateCollection(owner, property: property, "removing from") { (transaction, list) throws(Realm.Error) in
            if holdsLinks(owner.binding, property) {
                let old = try storage { try transaction.value(at: index, in: list) }
                try countElementLink(old, binding: owner.binding, property: property, owner: owner.key, by: -1)
            }
            try mutate { try transaction.remove(at: index, from: list) }
        }
    }

    func listRemoveAll(_ owner: ManagedObject, property: Int) {
        mutateCollection(owner, property: property, "removing all of") { (transaction, list) throws(Realm.Error) in
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
                let bytes = try encodeElement(element, binding: binding, property: property)
                try mutate { try transaction.append(bytes, to: list) }
                try countElementLink(bytes, binding: binding, property: property, owner: key, by: 1)
            })
    }

    /// Empties every list that holds links to class `target` (deleting every object of it; the backlink trees
    /// are cleared by the caller).
    func removeFromLists(target: String) throws(Realm.Error) {
        try forEachCollection(.list, linkingTo: target) { (transaction, list) throws(Realm.Error) in
            try mutate { try transaction.removeAll(in: list) }
        }
    }
}

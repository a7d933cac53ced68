import StrataStorage

/// The trees behind `MutableSet` properties (`s:<class>.<property>`): each owner's nested keyed tree maps the
/// elements' order-preserving keys (see `SetElementKeys.swift`) to the elements as one-column rows, so
/// membership is one lookup and duplicates cannot exist. Map trees (`MapTrees.swift`) are keyed trees too and
/// share `putEntry` and `deleteEntry`.
///
/// An operation that drops an entry returns its row when the row holds something to release (a link, a mixed
/// value), and the caller releases it (an embedded element is a row to delete).
extension TableStore {
    /// The key of set element `resolved` (links as their target's key), checked against the engine's key size.
    func setKey(_ resolved: _StoredValue, binding: TableBinding, property: Int, maxKeySize: Int)
        throws(Realm.Error) -> [UInt8]
    {
        let name = binding.table.schema.properties[property].columnName
        guard let key = Self.setElementKey(resolved) else {
            throw .invalidValue(
                type: binding.className, property: name, reason: "a set element must be stored before it is keyed")
        }
        guard key.count <= maxKeySize else {
            throw .invalidValue(
                type: binding.className, property: name, reason: "set elements are limited to \(maxKeySize - 1) bytes")
        }
        return key
    }

    /// The set key of element row `row`.
    func setKey(ofElementRow row: [UInt8], binding: TableBinding, property: Int, maxKeySize: Int)
        throws(Realm.Error) -> [UInt8]
    {
        let info = elementInfo(binding, property)
        let resolved: _StoredValue
        do {
            resolved = try row.withUnsafeBytes { RowCodec.get(try RowView($0), column: 0, info: info) }
        } catch {
            throw .storage(error as? StorageError ?? .invalidArgument("\(error)"), path: path)
        }
        return try setKey(resolved, binding: binding, property: property, maxKeySize: maxKeySize)
    }

    /// Puts an entry into a set or map tree and counts the link its row holds; returns the row it replaced for
    /// the caller to release, if that holds something to release.
    func putEntry(
        _ key: [UInt8], _ row: [UInt8], in tree: TreeHandle, binding: TableBinding, property: Int, owner: Int64
    ) throws(Realm.Error) -> [UInt8]? {
        let transaction = try activeTransaction()
        let old =
            holdsLinks(binding, property) || isMixed(binding, property)
            ? try storage({ try transaction.get(key, in: tree) }) : nil
        try mutate { try transaction.put(key, row, in: tree) }
        try countElementLink(row, binding: binding, property: property, owner: owner, by: 1)
        return old
    }

    /// Deletes an entry from a set or map tree; returns its row for the caller to release, if it holds something
    /// to release.
    func deleteEntry(_ key: [UInt8], in tree: TreeHandle, binding: TableBinding, property: Int)
        throws(Realm.Error) -> [UInt8]?
    {
        let transaction = try activeTransaction()
        let old =
            holdsLinks(binding, property) || isMixed(binding, property)
            ? try storage({ try transaction.get(key, in: tree) }) : nil
        _ = try mutate { try transaction.delete(key, in: tree) }
        return old
    }
}

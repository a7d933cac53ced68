import StrataStorage

/// The trees behind `List` properties (`l:<class>.<property>`): each owner's nested tree is a list tree
/// (order-statistic, so positional operations are O(log n)) whose entries are the elements, each encoded as a
/// one-column row (links as object keys).
///
/// These functions write one owner's list tree, given the tree, the owner's binding and key and stored element
/// rows; turning values into rows (adding unmanaged linked objects first) is the caller's. An operation that
/// drops an element returns its row when the row holds something to release (a link, a mixed value), and the
/// caller releases it (an embedded element is a row to delete).
extension TableStore {
    /// The element type of collection property `property`.
    func elementInfo(_ binding: TableBinding, _ property: Int) -> _PropertyInfo {
        var info = binding.table.infos[property]
        info.collection = nil
        return info
    }

    /// Throws the SDK's range error (see ``CollectionIndex``) for the first of `positions` outside the list:
    /// `0..<count`, or `0...count` when `inserting`.
    func checkPositions(
        _ positions: [Int], in list: TreeHandle, binding: TableBinding, property: Int, inserting: Bool = false
    ) throws(Realm.Error) {
        let transaction = try activeTransaction()
        let count = try storage { try transaction.count(in: list) }
        for index in positions where index < 0 || index > count || (index == count && !inserting) {
            throw .invalidValue(
                type: binding.className, property: binding.table.schema.properties[property].columnName,
                reason: CollectionIndex.outOfBounds(index, count: count, inserting: inserting))
        }
    }

    /// Inserts element row `bytes` at `index` (checked by `checkPositions`) and counts the link it holds.
    func insertElement(
        _ bytes: [UInt8], at index: Int, in list: TreeHandle, binding: TableBinding, property: Int, owner: Int64
    ) throws(Realm.Error) {
        let transaction = try activeTransaction()
        try mutate { try transaction.insert(bytes, at: index, in: list) }
        try countElementLink(bytes, binding: binding, property: property, owner: owner, by: 1)
    }

    /// Appends element row `bytes` and counts the link it holds.
    func appendElement(_ bytes: [UInt8], to list: TreeHandle, binding: TableBinding, property: Int, owner: Int64)
        throws(Realm.Error)
    {
        let transaction = try activeTransaction()
        try mutate { try transaction.append(bytes, to: list) }
        try countElementLink(bytes, binding: binding, property: property, owner: owner, by: 1)
    }

    /// Replaces the element at `index` (checked by `checkPositions`) with row `bytes` and counts the link it
    /// holds; returns the replaced row for the caller to release, if it holds something to release.
    func replaceElement(
        at index: Int, with bytes: [UInt8], in list: TreeHandle, binding: TableBinding, property: Int, owner: Int64
    ) throws(Realm.Error) -> [UInt8]? {
        let transaction = try activeTransaction()
        let old = try trackedElement(at: index, in: list, binding: binding, property: property)
        try mutate { try transaction.replace(at: index, with: bytes, in: list) }
        try countElementLink(bytes, binding: binding, property: property, owner: owner, by: 1)
        return old
    }

    /// Removes the element at `index` (checked by `checkPositions`); returns its row for the caller to release,
    /// if it holds something to release.
    func removeElement(at index: Int, from list: TreeHandle, binding: TableBinding, property: Int)
        throws(Realm.Error) -> [UInt8]?
    {
        let transaction = try activeTransaction()
        let old = try trackedElement(at: index, in: list, binding: binding, property: property)
        try mutate { try transaction.remove(at: index, from: list) }
        return old
    }

    /// Moves the element at `from` to `to` (both checked by `checkPositions`) as stored bytes: nothing is
    /// released or re-added (an embedded element stays the same object).
    func moveElement(from: Int, to: Int, in list: TreeHandle) throws(Realm.Error) {
        guard from != to else { return }
        let transaction = try activeTransaction()
        try mutate {
            let bytes = try transaction.value(at: from, in: list)
            try transaction.remove(at: from, from: list)
            try transaction.insert(bytes, at: to, in: list)
        }
    }

    /// Exchanges two elements (both checked by `checkPositions`) as stored bytes.
    func swapElements(_ i: Int, _ j: Int, in list: TreeHandle) throws(Realm.Error) {
        guard i != j else { return }
        let transaction = try activeTransaction()
        try mutate {
            let first = try transaction.value(at: i, in: list)
            let second = try transaction.value(at: j, in: list)
            try transaction.replace(at: i, with: second, in: list)
            try transaction.replace(at: j, with: first, in: list)
        }
    }

    /// The element row at `index` when the list's elements hold something to release (links, mixed values).
    private func trackedElement(at index: Int, in list: TreeHandle, binding: TableBinding, property: Int)
        throws(Realm.Error) -> [UInt8]?
    {
        guard holdsLinks(binding, property) || isMixed(binding, property) else { return nil }
        let transaction = try activeTransaction()
        return try storage { try transaction.value(at: index, in: list) }
    }
}

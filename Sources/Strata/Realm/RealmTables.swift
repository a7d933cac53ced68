import StrataStorage

/// The table layer's operations as the Realm's accessors and collections call them: each forwards to
/// ``Realm``'s `tables` (see `Tables/`), so that code written against the Realm reads rows and trees without
/// naming the layer under it.
extension Realm {
    /// The write transaction, or ``RealmError/notInWriteTransaction`` outside one.
    func activeTransaction() throws(Realm.Error) -> WriteTransaction { try tables.activeTransaction() }

    /// Runs a storage operation that modifies the write transaction (see `TableStore.mutate`).
    func mutate<R>(_ body: () throws -> R) throws(Realm.Error) -> R { try tables.mutate(body) }

    /// Runs a storage operation, mapping engine errors (see `TableStore.storage`).
    func storage<R>(_ body: () throws -> R) throws(Realm.Error) -> R { try tables.storage(body) }

    /// The tree `name` of the write transaction (see `TableStore.handle`).
    func handle(_ name: String, create: Bool) throws(Realm.Error) -> TreeHandle? {
        try tables.handle(name, create: create)
    }

    // MARK: Reading rows

    /// Calls `body` with the row of object `key` of `binding`'s class; nil if there is no such row.
    func withRow<R>(_ binding: TableBinding, key: Int64, _ body: (RowView) throws -> R) throws(Realm.Error) -> R? {
        try tables.withRow(binding, key: key, body)
    }

    /// Calls `body` with the row of object `key` in the rows tree named `tree`; nil if there is no such row.
    func withRow<R>(tree: String, key: Int64, _ body: (RowView) throws -> R) throws(Realm.Error) -> R? {
        try tables.withRow(tree: tree, key: key, body)
    }

    /// The row of object `key` in `tree`, held for repeated reads until ``generation`` moves; nil if absent.
    func stableRow(_ binding: TableBinding, key: Int64) throws(Realm.Error) -> StableValue? {
        try tables.stableRow(binding, key: key)
    }

    /// The rows tree of `binding` in the write transaction, created if missing, cached in the binding.
    func writableRows(_ binding: TableBinding) throws(Realm.Error) -> TreeHandle { try tables.writableRows(binding) }

    /// The primary-key tree of `binding` in the write transaction, created if missing, cached in the binding.
    func writablePrimaryKeys(_ binding: TableBinding) throws(Realm.Error) -> TreeHandle {
        try tables.writablePrimaryKeys(binding)
    }

    /// Writes `binding`'s class definition into the file unless this write transaction already found it there.
    func registerIfNeeded(_ binding: TableBinding) throws(Realm.Error) {
        if binding.storedEpoch == tables.writeEpoch { return }
        if !isStored(binding.className) { try registerTable(binding.table) }
        binding.storedEpoch = tables.writeEpoch
    }

    /// The number of entries of `tree` (see `TableStore.rowCount`).
    func rowCount(tree: String) -> Int { tables.rowCount(tree: tree) }

    /// The key of the object at `position` in key order.
    func objectKey(tree: String, at position: Int) throws(Realm.Error) -> Int64 {
        try tables.objectKey(tree: tree, at: position)
    }

    /// Every object key of `tree`, in order.
    func objectKeys(tree: String) throws(Realm.Error) -> [Int64] { try tables.objectKeys(tree: tree) }

    /// The key of the object of `binding`'s type whose primary key encodes to `encoded`, if there is one.
    func lookupPrimaryKey<Key: StorageBytes>(_ binding: TableBinding, _ encoded: Key) throws(Realm.Error) -> Int64? {
        try tables.lookupPrimaryKey(binding, encoded)
    }

    /// A cursor over the rows of `binding`'s type in the current snapshot (see `TableStore.rowCursor`).
    func rowCursor(_ binding: TableBinding) -> TreeCursor? { tables.rowCursor(binding) }

    /// The binding of a stored class for `DynamicObject` access.
    func dynamicBinding(_ className: String) throws(Realm.Error) -> TableBinding {
        try tables.dynamicBinding(className)
    }
}

import StrataStorage

/// Reading the rows trees `o:<class>`: object key (8 bytes, big-endian) → the object's row, in key order.
extension TableStore {
    /// Calls `body` with the row of object `key` of `binding`'s class; nil if there is no such row. The rows tree
    /// is the one cached in the binding, and the key is encoded on the stack: by name, each call hashed the tree's
    /// name to find it (~500 instructions, three times in a delete).
    func withRow<R>(_ binding: TableBinding, key: Int64, _ body: (RowView) throws -> R) throws(Realm.Error) -> R? {
        try storage {
            try KeyEncoding.withObjectKey(key) { keyBytes in
                if let transaction {
                    guard let handle = try rowsHandle(binding) else { return nil }
                    return try transaction.withValue(forKey: keyBytes, in: handle) { try body(try RowView($0)) }
                }
                guard let view = rowsView(binding) else { return nil }
                return try view.withValue(forKey: keyBytes) { try body(try RowView($0)) }
            }
        }
    }

    /// Calls `body` with the row of object `key` in the rows tree named `tree` (a class no binding of this Realm
    /// describes, as during a migration); nil if there is no such row.
    func withRow<R>(tree: String, key: Int64, _ body: (RowView) throws -> R) throws(Realm.Error) -> R? {
        let keyBytes = KeyEncoding.objectKey(key)
        return try storage {
            if let transaction {
                guard let handle = try handle(tree, create: false) else { return nil }
                return try transaction.withValue(forKey: keyBytes, in: handle) { try body(try RowView($0)) }
            }
            guard let view = view(tree) else { return nil }
            return try view.withValue(forKey: keyBytes) { try body(try RowView($0)) }
        }
    }

    /// The row of object `key` in `tree`, held for repeated reads until ``generation`` moves; nil if absent.
    func stableRow(_ binding: TableBinding, key: Int64) throws(Realm.Error) -> StableValue? {
        try storage {
            try withUnsafeBytes(of: UInt64(bitPattern: key).bigEndian) { keyBytes in
                if let transaction {
                    guard let handle = try rowsHandle(binding) else { return nil }
                    return try transaction.stableValue(forKey: keyBytes, in: handle)
                }
                guard let view = rowsView(binding) else { return nil }
                return try view.stableValue(forKey: keyBytes)
            }
        }
    }

    /// The rows tree of `binding` in the current snapshot, cached in the binding for the snapshot's lifetime.
    private func rowsView(_ binding: TableBinding) -> TreeView? {
        if binding.viewEpoch == readEpoch { return binding.view }
        let view = self.view(binding.rowsTree)
        binding.view = view
        binding.viewEpoch = readEpoch
        return view
    }

    /// The rows tree of `binding` in the write transaction (created if missing with `create`), cached in the
    /// binding once it exists.
    func rowsHandle(_ binding: TableBinding, create: Bool = false) throws(Realm.Error) -> TreeHandle? {
        if binding.handleEpoch == writeEpoch, let handle = binding.handle { return handle }
        let handle = try handle(binding.rowsTree, create: create)
        binding.handle = handle
        binding.handleEpoch = writeEpoch
        return handle
    }

    /// The rows tree of `binding` in the write transaction, created if missing, cached in the binding.
    func writableRows(_ binding: TableBinding) throws(Realm.Error) -> TreeHandle {
        try rowsHandle(binding, create: true)!
    }

    /// The number of entries of `tree` (0 if it does not exist, or, after reporting the damage, if it cannot
    /// be counted).
    func rowCount(tree: String) -> Int {
        if let transaction {
            do {
                guard let handle = try handle(tree, create: false) else { return 0 }
                return try storage { try transaction.count(in: handle) }
            } catch {
                noteDamage(error)
                return 0
            }
        }
        guard let view = view(tree) else { return 0 }
        do {
            return try plausibleCount(view.count, of: tree)
        } catch {
            noteDamage(error)
            return 0
        }
    }

    /// The key of the object at `position` in key order.
    func objectKey(tree: String, at position: Int) throws(Realm.Error) -> Int64 {
        try storage {
            if let transaction {
                guard let handle = try handle(tree, create: false) else {
                    throw StorageError.indexOutOfRange(index: position, count: 0)
                }
                return KeyEncoding.decodeObjectKey(try transaction.element(at: position, in: handle).key)
            }
            guard let view = view(tree) else { throw StorageError.indexOutOfRange(index: position, count: 0) }
            return KeyEncoding.decodeObjectKey(try view.element(at: position).key)
        }
    }

    /// Every object key of `tree`, in order.
    func objectKeys(tree: String) throws(Realm.Error) -> [Int64] {
        try storage {
            var keys: [Int64] = []
            if let transaction {
                guard let handle = try handle(tree, create: false) else { return [] }
                keys.reserveCapacity(try transaction.count(in: handle))
                try transaction.forEachKey(in: handle) { key in
                    keys.append(KeyEncoding.decodeObjectKey(key))
                    return true
                }
                return keys
            }
            guard let view = view(tree) else { return [] }
            var cursor = view.makeCursor()
            var more = try cursor.first()
            while more {
                keys.append(try cursor.withKey { KeyEncoding.decodeObjectKey($0) })
                more = try cursor.next()
            }
            return keys
        }
    }

    /// A cursor over the rows of `binding`'s type in the current snapshot; nil inside a write transaction or
    /// when the type has no rows tree.
    func rowCursor(_ binding: TableBinding) -> TreeCursor? {
        guard transaction == nil, let view = rowsView(binding) else { return nil }
        return view.makeCursor()
    }
}

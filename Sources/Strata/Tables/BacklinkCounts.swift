import StrataStorage

/// Backlink counts: for every link property a keyed tree `b:<origin class>.<property>` maps target key (8 bytes,
/// big-endian) + origin key (8 bytes) to the number of links the origin holds to the target through that
/// property (u32, little-endian). Every write that adds or drops a link adjusts the count in the same write
/// transaction, so the trees are always exact. Deleting a target through them is in
/// `Unlinking.swift`, rebuilding them in `BacklinkRebuild.swift`.
extension TableStore {
    /// Adds `delta` to the number of links from `originKey` to `target` through `originClass.property`.
    func adjustBacklink(originClass: String, property: String, origin originKey: Int64, target: Int64, by delta: Int)
        throws(Realm.Error)
    {
        try adjustBacklink(
            originClass: originClass, property: property,
            key: KeyEncoding.objectKey(target) + KeyEncoding.objectKey(originKey), by: delta)
    }

    /// Adds `delta` to the count under `key` (target + origin) in the backlink tree of `originClass.property`.
    func adjustBacklink(originClass: String, property: String, key: [UInt8], by delta: Int) throws(Realm.Error) {
        guard delta != 0, let transaction = transaction else { return }
        let tree = try handle(TableNames.backlinks(originClass, property), create: true)!
        try mutate {
            let current = try transaction.get(key, in: tree).map(Self.decodeLinkCount) ?? 0
            let next = current + delta
            if next > 0 {
                try transaction.put(key, withUnsafeBytes(of: UInt32(next).littleEndian) { Array($0) }, in: tree)
            } else {
                _ = try transaction.delete(key, in: tree)
            }
        }
    }

    private static func decodeLinkCount(_ bytes: [UInt8]) -> Int {
        guard bytes.count == 4 else { return 1 }
        return Int(bytes.withUnsafeBytes { $0.loadUnaligned(as: UInt32.self).littleEndian })
    }

    /// Whether the elements of property `property` are links (their backlinks are counted).
    func holdsLinks(_ binding: TableBinding, _ property: Int) -> Bool { binding.table.infos[property].type == .object }

    /// Counts (or uncounts, with a negative `delta`) the link a stored collection element holds, if it holds one.
    func countElementLink(
        _ elementRow: [UInt8], binding: TableBinding, property: Int, owner ownerKey: Int64, by delta: Int
    ) throws(Realm.Error) {
        guard holdsLinks(binding, property), let target = Self.linkedKey(inElementRow: elementRow) else { return }
        try adjustBacklink(
            originClass: binding.className, property: binding.table.schema.properties[property].columnName,
            origin: ownerKey, target: target, by: delta)
    }

    /// The object key a one-column element row holds (nil for a null element or a damaged row).
    static func linkedKey(inElementRow bytes: [UInt8]) -> Int64? {
        bytes.withUnsafeBytes { raw in
            guard let row = try? RowView(raw), !row.isNull(0) else { return nil }
            return row.int(0)
        }
    }

    /// Moves the backlinks of object `key`'s to-one links from the targets in `old` to those in `new` (either
    /// nil: the row is new, or being deleted). Values are as stored: links as `.int` keys.
    func updateToOneBacklinks(binding: TableBinding, key: Int64, old: [_StoredValue]?, new: [_StoredValue]?)
        throws(Realm.Error)
    {
        for index in binding.toOneLinks {
            var before: Int64?
            var after: Int64?
            if let old, case .int(let target) = old[index] { before = target }
            if let new, case .int(let target) = new[index] { after = target }
            guard before != after else { continue }
            let name = binding.table.schema.properties[index].columnName
            if let before {
                try setToOneBacklink(
                    originClass: binding.className, property: name, origin: key, target: before, linked: false)
            }
            if let after {
                try setToOneBacklink(
                    originClass: binding.className, property: name, origin: key, target: after, linked: true)
            }
        }
    }

    /// Records (`linked`) or drops the backlink of a to-one link from `origin` to `target`. A to-one property holds
    /// one link, so its count is 1 while the origin links the target and the entry is absent otherwise: it is put
    /// or deleted without reading the current count (``adjustBacklink(originClass:property:origin:target:by:)``
    /// reads it, a second descent of the tree for every link a new object holds).
    private func setToOneBacklink(
        originClass: String, property: String, origin: Int64, target: Int64, linked: Bool
    ) throws(Realm.Error) {
        guard let transaction = transaction else { return }
        let tree = try handle(TableNames.backlinks(originClass, property), create: true)!
        try withUnsafeTemporaryAllocation(byteCount: 16, alignment: 8) { (buffer) throws(Realm.Error) in
            buffer.storeBytes(of: UInt64(bitPattern: target).bigEndian, toByteOffset: 0, as: UInt64.self)
            buffer.storeBytes(of: UInt64(bitPattern: origin).bigEndian, toByteOffset: 8, as: UInt64.self)
            let key = UnsafeRawBufferPointer(buffer)
            try mutate {
                if linked {
                    try withUnsafeBytes(of: UInt32(1).littleEndian) { try transaction.put(key, $0, in: tree) }
                } else {
                    _ = try transaction.delete(key, in: tree)
                }
            }
        }
    }

    /// The (origin key, link count) entries of the backlink tree of `originClass.originProperty` for `target`.
    func backlinks(originClass: String, originProperty: String, target: Int64) throws(Realm.Error)
        -> [(origin: Int64, count: Int)]
    {
        try backlinkEntries(
            tree: TableNames.backlinks(originClass, originProperty), prefix: KeyEncoding.objectKey(target))
    }

    /// The (origin key, link count) entries of backlink tree `name` whose keys are `prefix` + an origin key.
    func backlinkEntries(tree name: String, prefix: [UInt8]) throws(Realm.Error) -> [(origin: Int64, count: Int)] {
        var result: [(origin: Int64, count: Int)] = []
        func take(_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) -> Bool {
            guard key.count == prefix.count + 8, key.starts(with: prefix) else { return false }
            let count = value.count == 4 ? Int(value.loadUnaligned(as: UInt32.self).littleEndian) : 1
            result.append((KeyEncoding.decodeObjectKey(UnsafeRawBufferPointer(rebasing: key[prefix.count...])), count))
            return true
        }
        try storage {
            if let transaction = transaction {
                guard let tree = try handle(name, create: false) else { return }
                var cursor = try transaction.makeCursor(for: tree)
                var more = try cursor.seek(atOrAfter: prefix)
                while more {
                    let key = try cursor.key()
                    let value = try cursor.value()
                    let taken = key.withUnsafeBytes { k in value.withUnsafeBytes { v in take(k, v) } }
                    guard taken else { break }
                    more = try cursor.next()
                }
            } else if let tree = treeView(name) {
                var cursor = tree.makeCursor()
                var more = try cursor.seek(atOrAfter: prefix)
                while more, try cursor.withEntry({ take($0, $1) }) { more = try cursor.next() }
            }
        }
        return result
    }
}

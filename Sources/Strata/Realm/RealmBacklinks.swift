import StrataStorage

/// Backlinks: for every link property (a to-one link, or a `List`, `MutableSet` or `Map` of links) a keyed tree
/// `b:<origin class>.<property>` maps target key (8 bytes, big-endian) + origin key (8 bytes) to the number of
/// links the origin holds to the target through that property (u32, little-endian).
///
/// They serve `LinkingObjects` (a prefix scan lists an object's origins in origin-key order) and deletion: the
/// links to a deleted object are found without scanning every table that could hold one. Every write that adds
/// or drops a link adjusts the count in the same write transaction, so the trees are always exact.
extension Realm {
    // MARK: Counting links (see `Tables/BacklinkCounts.swift`)

    /// Adds `delta` to the number of links from `originKey` to `target` through `originClass.property`.
    func adjustBacklink(originClass: String, property: String, origin originKey: Int64, target: Int64, by delta: Int)
        throws(Realm.Error)
    {
        try tables.adjustBacklink(
            originClass: originClass, property: property, origin: originKey, target: target, by: delta)
    }

    /// Adds `delta` to the count under `key` (target + origin) in the backlink tree of `originClass.property`.
    func adjustBacklink(originClass: String, property: String, key: [UInt8], by delta: Int) throws(Realm.Error) {
        try tables.adjustBacklink(originClass: originClass, property: property, key: key, by: delta)
    }

    /// Whether the elements of property `property` are links (their backlinks are counted).
    func holdsLinks(_ binding: TableBinding, _ property: Int) -> Bool { tables.holdsLinks(binding, property) }

    /// Counts (or uncounts, with a negative `delta`) the link a stored collection element holds, if it holds one.
    func countElementLink(
        _ elementRow: [UInt8], binding: TableBinding, property: Int, owner ownerKey: Int64, by delta: Int
    ) throws(Realm.Error) {
        try tables.countElementLink(elementRow, binding: binding, property: property, owner: ownerKey, by: delta)
    }

    /// The object key a one-column element row holds (nil for a null element or a damaged row).
    static func linkedKey(inElementRow bytes: [UInt8]) -> Int64? { TableStore.linkedKey(inElementRow: bytes) }

    /// Moves the backlinks of object `key`'s to-one links from the targets in `old` to those in `new`.
    func updateToOneBacklinks(binding: TableBinding, key: Int64, old: [_StoredValue]?, new: [_StoredValue]?)
        throws(Realm.Error)
    {
        try tables.updateToOneBacklinks(binding: binding, key: key, old: old, new: new)
    }

    /// Releases what the elements of a collection tree about to be emptied or deleted hold: link counts, and
    /// the nested collections of mixed values.
    func uncountLinks(in tree: TreeHandle, binding: TableBinding, property: Int, owner ownerKey: Int64)
        throws(Realm.Error)
    {
        guard holdsLinks(binding, property) || isMixed(binding, property) else { return }
        for row in try elementRows(of: tree) {
            try releaseElementRow(row, binding: binding, property: property, owner: ownerKey)
        }
    }

    // MARK: Reading backlinks

    /// The origin type of `LinkingObjects` property `property`.
    func linkingOrigin(_ binding: TableBinding, property: Int) throws(Realm.Error) -> TableBinding {
        if let type = binding.table.infos[property].objectType { return try self.binding(for: type) }
        guard let name = binding.table.schema.properties[property].objectClassName else {
            throw .invalidValue(type: binding.className, property: "", reason: "linking objects without an origin")
        }
        return try dynamicBinding(name)
    }

    /// The (origin key, link count) entries of the backlink tree of `originClass.originProperty` for `target`.
    func backlinks(originClass: String, originProperty: String, target: Int64) throws(Realm.Error)
        -> [(origin: Int64, count: Int)]
    {
        try tables.backlinks(originClass: originClass, originProperty: originProperty, target: target)
    }

    /// The (origin key, link count) entries of backlink tree `name` whose keys are `prefix` + an origin key.
    func backlinkEntries(tree name: String, prefix: [UInt8]) throws(Realm.Error) -> [(origin: Int64, count: Int)] {
        try tables.backlinkEntries(tree: name, prefix: prefix)
    }

    /// The origin names (class, property) behind `LinkingObjects` property `property` of `owner`.
    private func linkingNames(_ owner: ManagedObject, _ property: Int) -> (String, String)? {
        let schema = owner.table.schema.properties[property]
        guard let originClass = schema.objectClassName, let originProperty = schema.linkOriginPropertyName else {
            return nil
        }
        return (originClass, originProperty)
    }

    /// The keys of the objects linking to `owner` through its `LinkingObjects` property `property`, one per link.
    func backlinkKeys(_ owner: ManagedObject, property: Int) -> [Int64] {
        checkThread()
        guard let (originClass, originProperty) = linkingNames(owner, property) else { return [] }
        do {
            return try backlinks(originClass: originClass, originProperty: originProperty, target: owner.key)
                .flatMap { repeatElement($0.origin, count: $0.count) }
        } catch {
            return survive(error, "\(collectionName(owner, property)): \(error)", returning: [])
        }
    }

    /// The number of links to `owner` through its `LinkingObjects` property `property`.
    func backlinkCount(_ owner: ManagedObject, property: Int) -> Int {
        checkThread()
        guard let (originClass, originProperty) = linkingNames(owner, property) else { return 0 }
        do {
            return try backlinks(originClass: originClass, originProperty: originProperty, target: owner.key)
                .reduce(0) { $0 + $1.count }
        } catch {
            return survive(error, "\(collectionName(owner, property)): \(error)", returning: 0)
        }
    }

    // MARK: Deleting a target

    /// Removes every link to object `key` of class `target`, found through the backlink trees: to-one links
    /// become nil, list and set elements are removed, map values become nil (keeping their keys).
    func unlinkIncoming(target: String, key: Int64) throws(Realm.Error) {
        guard let transaction = writeTransactionIfAny else { throw .notInWriteTransaction }
        try unlinkIncomingMixed(target: target, key: key)
        for (originClass, stored) in schemaClasses() {
            for (column, property) in stored.properties.enumerated()
            where property.type == .object && property.objectClassName == target {
                let origins = try backlinks(originClass: originClass, originProperty: property.name, target: key)
                guard !origins.isEmpty else { continue }
                for (origin, _) in origins {
                    try unlink(
                        origin: origin, of: originClass, property: property, column: column, stored: stored,
                        target: key, transaction: transaction)
                }
                let tree = try handle(TableNames.backlinks(originClass, property.name), create: false)!
                try mutate {
                    for (origin, _) in origins {
                        _ = try transaction.delete(
                            KeyEncoding.objectKey(key) + KeyEncoding.objectKey(origin), in: tree)
                    }
                }
            }
        }
    }

    /// Drops the links of `origin`'s property to `target` (the backlink entry is removed by the caller).
    private func unlink(
        origin: Int64, of originClass: String, property: StoredClass.StoredProperty, column: Int, stored: StoredClass,
        target: Int64, transaction: WriteTransaction
    ) throws(Realm.Error) {
        let originKey = KeyEncoding.objectKey(origin)
        guard let kind = property.collection else {
            guard let rows = try handle(TableNames.rows(originClass), create: false) else { return }
            try mutate {
                guard let bytes = try transaction.get(originKey, in: rows) else { return }
                let rewritten = try bytes.withUnsafeBytes { raw in
                    RowRewriter.nullify(try RowView(raw), columns: [column], properties: stored.properties)
                }
                try transaction.put(originKey, rewritten, in: rows)
            }
            return
        }
        guard let owners = try handle(TableNames.collection(kind, originClass, property.name), create: false),
            let tree = try storage({ try transaction.subtree(forKey: originKey, in: owners) })
        else { return }
        switch kind {
        case .set:
            if let element = TableStore.setElementKey(.int(target)) {
                _ = try mutate { try transaction.delete(element, in: tree) }
            }
        case .list:
            try mutate {
                for index in stride(from: try transaction.count(in: tree) - 1, through: 0, by: -1)
                where Self.linkedKey(inElementRow: try transaction.value(at: index, in: tree)) == target {
                    try transaction.remove(at: index, from: tree)
                }
            }
        case .map:
            let nullRow = MixedCodec.elementRow(nil)
            try mutate {
                var matching: [[UInt8]] = []
                var cursor = try transaction.makeCursor(for: tree)
                var more = try cursor.first()
                while more {
                    if Self.linkedKey(inElementRow: try cursor.value()) == target { matching.append(try cursor.key()) }
                    more = try cursor.next()
                }
                for entry in matching { try transaction.put(entry, nullRow, in: tree) }
            }
        }
    }

    /// The backlink trees of every link property of class `name` (as origin).
    func backlinkTrees(ofOrigin name: String, _ stored: StoredClass) -> [String] {
        stored.properties.filter { $0.type == .object || $0.type == .any }.map { TableNames.backlinks(name, $0.name) }
    }

    /// The nested-collection trees of every mixed property of class `name`.
    func mixedTrees(of name: String, _ stored: StoredClass) -> [String] {
        stored.properties.filter { $0.type == .any }.map { TableNames.mixed(name, $0.name) }
    }

    /// The backlink trees of every link property, in any class, that links to class `target`.
    func backlinkTrees(linkingTo target: String) -> [String] {
        schemaClasses().flatMap { name, stored in
            stored.properties.filter { $0.type == .object && $0.objectClassName == target }.map {
                TableNames.backlinks(name, $0.name)
            }
        }
    }

    // MARK: Rebuilding

    /// Recomputes every backlink tree from the stored links (files written before backlinks existed, and after
    /// a migration rewrote links) and marks the file as having them.
    func rebuildBacklinks() throws(Realm.Error) {
        guard let transaction = writeTransactionIfAny else { throw .notInWriteTransaction }
        for (name, stored) in schemaClasses() {
            let mixedBinding = stored.properties.contains { $0.type == .any } ? try bindingForStoredClass(name) : nil
            for (column, property) in stored.properties.enumerated()
            where property.type == .object || property.type == .any {
                let mixedProperty =
                    property.type == .any ? mixedBinding?.table.propertyIndex(named: property.name) : nil
                let backlinkTree = try handle(TableNames.backlinks(name, property.name), create: true)!
                try mutate { try transaction.removeAll(in: backlinkTree) }
                var counts: [[UInt8]: Int] = [:]
                func count(origin: [UInt8], row: [UInt8], column: Int) throws(Realm.Error) {
                    let bytes: [UInt8]? = row.withUnsafeBytes { raw in
                        guard let view = try? RowView(raw), !view.isNull(column) else { return nil }
                        return mixedProperty == nil
                            ? KeyEncoding.objectKey(view.int(column)) : view.withBytes(column) { Array($0) }
                    }
                    guard let bytes else { return }
                    if let mixedProperty, let mixedBinding {
                        try countMixedLinks(
                            bytes, binding: mixedBinding, property: mixedProperty,
                            origin: KeyEncoding.decodeObjectKey(origin), into: &counts)
                    } else {
                        counts[bytes + origin, default: 0] += 1
                    }
                }
                if let kind = property.collection {
                    guard let owners = try handle(TableNames.collection(kind, name, property.name), create: false)
                    else { continue }
                    try storage {
                        var cursor = try transaction.makeCursor(for: owners)
                        var more = try cursor.first()
                        var origins: [[UInt8]] = []
                        while more {
                            origins.append(try cursor.key())
                            more = try cursor.next()
                        }
                        for origin in origins {
                            guard let tree = try transaction.subtree(forKey: origin, in: owners) else { continue }
                            var elements = try transaction.makeCursor(for: tree)
                            var more = try elements.first()
                            while more {
                                try count(origin: origin, row: try elements.value(), column: 0)
                                more = try elements.next()
                            }
                        }
                    }
                } else if let rows = try handle(TableNames.rows(name), create: false) {
                    try storage {
                        var cursor = try transaction.makeCursor(for: rows)
                        var more = try cursor.first()
                        while more {
                            try count(origin: try cursor.key(), row: try cursor.value(), column: column)
                            more = try cursor.next()
                        }
                    }
                }
                try mutate {
                    for (key, links) in counts {
                        try transaction.put(
                            key, withUnsafeBytes(of: UInt32(links).littleEndian) { Array($0) }, in: backlinkTree)
                    }
                }
            }
        }
        try mutate {
            let schema = try transaction.tree(named: TableNames.schema, create: .keyed)!
            try transaction.put(TableNames.backlinksKey, [1], in: schema)
        }
    }
}

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
}

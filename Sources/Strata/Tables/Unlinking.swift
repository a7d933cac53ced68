import StrataStorage

/// Deleting an object that others link to: every link to it, found through the backlink trees (see
/// `BacklinkCounts.swift`) rather than by scanning every table that could hold one, is dropped — a to-one link
/// becomes nil, a list or set element is removed, a map value becomes nil (its key stays), a mixed value becomes
/// `.none` (see `MixedTrees.swift`).
extension TableStore {
    /// Removes every link to object `key` of class `target`, found through the backlink trees: to-one links
    /// become nil, list and set elements are removed, map values become nil (keeping their keys).
    func unlinkIncoming(target: String, key: Int64) throws(Realm.Error) {
        guard let transaction else { throw .notInWriteTransaction }
        try unlinkIncomingMixed(target: target, key: key)
        for source in linkProperties(to: target) {
            let (originClass, property) = (source.originClass, source.property)
            let origins = try backlinks(originClass: originClass, originProperty: property.name, target: key)
            guard !origins.isEmpty else { continue }
            for (origin, _) in origins {
                try unlink(
                    origin: origin, of: originClass, property: property, column: source.column,
                    stored: source.stored, target: key, transaction: transaction)
            }
            let tree = try handle(TableNames.backlinks(originClass, property.name), create: false)!
            try mutate {
                for (origin, _) in origins {
                    _ = try transaction.delete(KeyEncoding.objectKey(key) + KeyEncoding.objectKey(origin), in: tree)
                }
            }
        }
    }

    /// The stored link properties (to-one or collections of links) whose target class is `target`.
    func linkProperties(to target: String) -> [LinkSource] {
        if let known = linkSources.links[target] { return known }
        var found: [LinkSource] = []
        for (originClass, stored) in storedClasses {
            for (column, property) in stored.properties.enumerated()
            where property.type == .object && property.objectClassName == target {
                found.append(LinkSource(originClass: originClass, column: column, property: property, stored: stored))
            }
        }
        linkSources.links[target] = found
        return found
    }

    /// The stored mixed properties: each may hold a link to an object of any class.
    func mixedProperties() -> [LinkSource] {
        if let known = linkSources.mixed { return known }
        var found: [LinkSource] = []
        for (originClass, stored) in storedClasses {
            for (column, property) in stored.properties.enumerated() where property.type == .any {
                found.append(LinkSource(originClass: originClass, column: column, property: property, stored: stored))
            }
        }
        linkSources.mixed = found
        return found
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
        storedClasses.flatMap { name, stored in
            stored.properties.filter { $0.type == .object && $0.objectClassName == target }.map {
                TableNames.backlinks(name, $0.name)
            }
        }
    }

    // MARK: Deleting every object of a class

    /// Empties every list that holds links to class `target` (deleting every object of it; the backlink trees
    /// are cleared by the caller).
    func removeFromLists(target: String) throws(Realm.Error) {
        try forEachCollection(.list, linkingTo: target) { (transaction, list) throws(Realm.Error) in
            try mutate { try transaction.removeAll(in: list) }
        }
    }

    /// Empties every set of links to class `target` (deleting every object of it; the backlink trees are
    /// cleared by the caller).
    func removeFromSets(target: String) throws(Realm.Error) {
        try forEachCollection(.set, linkingTo: target) { (transaction, set) throws(Realm.Error) in
            try mutate { try transaction.removeAll(in: set) }
        }
    }

    /// Sets to nil every map value that links to an object of class `target`, keeping the keys, as the Realm Swift
    /// SDK's maps do (deleting every object of it; the backlink trees are cleared by the caller).
    func nullifyInMaps(target: String) throws(Realm.Error) {
        let nullBytes = MixedCodec.elementRow(nil)
        try forEachCollection(.map, linkingTo: target) { (transaction, map) throws(Realm.Error) in
            let matching: [[UInt8]] = try storage {
                var keys: [[UInt8]] = []
                var cursor = try transaction.makeCursor(for: map)
                var more = try cursor.first()
                while more {
                    let value = try cursor.value()
                    let matches = value.withUnsafeBytes { raw in
                        guard let row = try? RowView(raw) else { return false }
                        return !row.isNull(0)
                    }
                    if matches { keys.append(try cursor.key()) }
                    more = try cursor.next()
                }
                return keys
            }
            for entry in matching { try mutate { try transaction.put(entry, nullBytes, in: map) } }
        }
    }
}

/// A stored property that can hold links to objects of some class, and where it is stored.
struct LinkSource {
    let originClass: String
    /// Its column in the origin class's stored rows.
    let column: Int
    let property: StoredClass.StoredProperty
    let stored: StoredClass
}

/// The stored properties that can link to each class, worked out from the stored class definitions when first
/// needed and forgotten whenever they change (``TableStore/storedClasses``): deleting an object asks which
/// properties could link to it, and walking every property of every class per delete cost more than the delete's
/// own tree work in a schema of a few classes.
struct LinkSources {
    /// Per target class: the link properties naming it.
    var links: [String: [LinkSource]] = [:]
    /// The mixed properties, nil until first asked.
    var mixed: [LinkSource]?
}

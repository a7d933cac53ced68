import StrataStorage

/// Which objects differ between two versions of a file, per class: found by comparing the versions' trees
/// (see `TreeView.differences(from:)`), so commits of any Realm or process are covered without the writer
/// recording anything, at a cost proportional to the pages the commits rewrote.
struct VersionChanges: Sendable {
    /// The changes to one class's objects.
    struct ClassChanges: Sendable {
        /// Objects present in only one of the versions.
        var insertedOrDeleted: Set<Int64> = []
        /// Objects present in both whose stored properties differ, with those properties' persisted names.
        var modified: [Int64: Set<String>] = [:]

        /// Whether object `key` was inserted, deleted or modified.
        func touches(_ key: Int64) -> Bool { insertedOrDeleted.contains(key) || modified[key] != nil }

        mutating func merge(_ other: ClassChanges) {
            insertedOrDeleted.formUnion(other.insertedOrDeleted)
            for (key, names) in other.modified { modified[key, default: []].formUnion(names) }
        }
    }

    var classes: [String: ClassChanges] = [:]
    /// Set when the versions could not be compared (a damaged page): anything may have changed.
    var unknown = false

    var isEmpty: Bool { classes.isEmpty && !unknown }

    /// The changes of `self` followed by those of `other`.
    mutating func merge(_ other: VersionChanges) {
        unknown = unknown || other.unknown
        for (name, changes) in other.classes { classes[name, default: ClassChanges()].merge(changes) }
    }

    /// The changes between `old` and `new` (a newer version of the same file), for the classes of `schema`
    /// (the newer version's definitions).
    static func between(_ old: ReadTransaction, _ new: ReadTransaction, schema: [String: StoredClass]) throws
        -> VersionChanges
    {
        var result = VersionChanges()
        for name in try new.changedTreeNames(since: old) {
            guard name.count > 2, name.utf8.dropFirst().first == UInt8(ascii: ":") else { continue }
            let kind = name.utf8.first!
            let rest = String(name.dropFirst(2))
            switch kind {
            case UInt8(ascii: "o"):
                guard let stored = schema[rest] else { continue }
                result.classes[rest, default: ClassChanges()].merge(
                    try rowChanges(old.tree(named: name), new.tree(named: name), stored))
            case UInt8(ascii: "l"), UInt8(ascii: "s"), UInt8(ascii: "m"):
                guard let dot = rest.firstIndex(of: "."), schema[String(rest[..<dot])] != nil else { continue }
                let className = String(rest[..<dot])
                let property = String(rest[rest.index(after: dot)...])
                let differences = try keyDifferences(old.tree(named: name), new.tree(named: name))
                var changes = ClassChanges()
                for key in differences.inserted + differences.deleted + differences.changed {
                    changes.modified[KeyEncoding.decodeObjectKey(key), default: []].insert(property)
                }
                result.classes[className, default: ClassChanges()].merge(changes)
            default:
                continue
            }
        }
        // An object inserted or deleted is not also "modified" through its collections.
        for (name, changes) in result.classes where !changes.insertedOrDeleted.isEmpty {
            for key in changes.insertedOrDeleted { result.classes[name]?.modified[key] = nil }
        }
        return result
    }

    private static func keyDifferences(_ old: TreeView?, _ new: TreeView?) throws -> TreeDifferences {
        switch (old, new) {
        case (let old?, let new?): return try new.differences(from: old)
        case (nil, let new?): return TreeDifferences(inserted: try new.entries().map(\.key))
        case (let old?, nil): return TreeDifferences(deleted: try old.entries().map(\.key))
        case (nil, nil): return TreeDifferences()
        }
    }

    /// The objects whose rows differ, with the properties whose stored values differ.
    private static func rowChanges(_ old: TreeView?, _ new: TreeView?, _ stored: StoredClass) throws
        -> ClassChanges
    {
        let differences = try keyDifferences(old, new)
        var changes = ClassChanges()
        for key in differences.inserted + differences.deleted {
            changes.insertedOrDeleted.insert(KeyEncoding.decodeObjectKey(key))
        }
        guard let old, let new else { return changes }
        for key in differences.changed {
            var names: Set<String> = []
            _ = try old.withValue(forKey: key) { oldBytes in
                try new.withValue(forKey: key) { newBytes in
                    let before = try RowView(oldBytes)
                    let after = try RowView(newBytes)
                    for (column, property) in stored.properties.enumerated()
                    where property.collection == nil && property.type != .linkingObjects {
                        if !before.column(column, equals: after, variableSize: property.type.isVariableSize) {
                            names.insert(property.name)
                        }
                    }
                }
            }
            changes.modified[KeyEncoding.decodeObjectKey(key)] = names
        }
        return changes
    }
}

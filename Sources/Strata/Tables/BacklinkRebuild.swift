import StrataStorage

/// Recomputing the backlink trees (see `BacklinkCounts.swift`) from the stored links, for files written before
/// backlinks existed and after a migration rewrote links.
extension TableStore {
    /// Recomputes every backlink tree from the stored links (files written before backlinks existed, and after
    /// a migration rewrote links) and marks the file as having them.
    func rebuildBacklinks() throws(Realm.Error) {
        guard let transaction else { throw .notInWriteTransaction }
        for (name, stored) in storedClasses {
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

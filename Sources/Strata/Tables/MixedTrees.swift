import StrataStorage

/// The trees behind mixed values (`AnyRealmValue`): each mixed property `p` of class `C` has a keyed tree
/// `x:C.p` from a sequence id to a nested list or keyed tree (a nested list or dictionary), and a link held by a
/// mixed value is counted in `b:C.p` under class name + 0 + target key + origin key. This file creates, finds,
/// releases and unlinks them; what a mixed value encodes to is in `MixedCodec.swift`, and materialising one as
/// objects and live collections stays with `Realm` (`Realm/RealmMixed.swift`).
extension TableStore {
    /// Whether property `property` holds mixed values (itself, or as a collection's elements).
    func isMixed(_ binding: TableBinding, _ property: Int) -> Bool { binding.table.infos[property].type == .any }

    /// The backlink key of a mixed link from `origin` to object `key` of class `className`.
    static func mixedBacklinkKey(className: String, target: Int64, origin: Int64) -> [UInt8] {
        Array(className.utf8) + [0] + KeyEncoding.objectKey(target) + KeyEncoding.objectKey(origin)
    }

    /// A new, empty nested collection of mixed property `property`, with its id.
    func newNestedCollection(_ binding: TableBinding, property: Int, kind: TreeKind) throws(Realm.Error)
        -> (UInt64, TreeHandle)
    {
        guard let transaction else { throw .notInWriteTransaction }
        let trees = try handle(
            TableNames.mixed(binding.className, binding.table.schema.properties[property].columnName), create: true)!
        return try mutate {
            let id = try transaction.nextSequence(in: trees)
            return (
                id,
                try transaction.subtree(forKey: KeyEncoding.objectKey(Int64(bitPattern: id)), in: trees, create: kind)!
            )
        }
    }

    /// The nested collection `id` of mixed property `property` in the write transaction.
    func nestedHandle(_ binding: TableBinding, property: Int, id: UInt64) throws(Realm.Error) -> TreeHandle? {
        guard let transaction,
            let trees = try handle(
                TableNames.mixed(binding.className, binding.table.schema.properties[property].columnName), create: false
            )
        else { return nil }
        return try storage { try transaction.subtree(forKey: KeyEncoding.objectKey(Int64(bitPattern: id)), in: trees) }
    }

    /// The nested collection `id` of mixed property `property` in the current snapshot.
    func nestedView(_ binding: TableBinding, property: Int, id: UInt64) throws(Realm.Error) -> TreeView? {
        guard
            let trees = treeView(
                TableNames.mixed(binding.className, binding.table.schema.properties[property].columnName))
        else { return nil }
        return try storage { try trees.subtree(forKey: KeyEncoding.objectKey(Int64(bitPattern: id))) }
    }

    /// Uncounts the links in stored mixed `bytes` and drops the nested collections they own, recursively.
    func releaseMixed(_ bytes: [UInt8], binding: TableBinding, property: Int, owner: Int64) throws(Realm.Error) {
        guard let decoded = MixedCodec.decode(bytes), let transaction else { return }
        switch decoded {
        case .value: return
        case .link(let className, let key):
            try adjustBacklink(
                originClass: binding.className, property: binding.table.schema.properties[property].columnName,
                key: Self.mixedBacklinkKey(className: className, target: key, origin: owner), by: -1)
        case .list(let id), .dictionary(let id):
            guard let tree = try nestedHandle(binding, property: property, id: id) else { return }
            for row in try elementRows(of: tree) {
                if let element = MixedCodec.bytes(inElementRow: row) {
                    try releaseMixed(element, binding: binding, property: property, owner: owner)
                }
            }
            let trees = try handle(
                TableNames.mixed(binding.className, binding.table.schema.properties[property].columnName), create: false
            )!
            _ = try mutate { try transaction.delete(KeyEncoding.objectKey(Int64(bitPattern: id)), in: trees) }
        }
    }

    /// Every element row of a collection tree, in order.
    func elementRows(of tree: TreeHandle) throws(Realm.Error) -> [[UInt8]] {
        guard let transaction else { throw .notInWriteTransaction }
        return try storage {
            var rows: [[UInt8]] = []
            var cursor = try transaction.makeCursor(for: tree)
            var more = try cursor.first()
            while more {
                rows.append(try cursor.value())
                more = try cursor.next()
            }
            return rows
        }
    }

    /// A binding for objects of stored class `className`: the model type's when this Realm has bound it, a
    /// dynamic one otherwise.
    func bindingForStoredClass(_ className: String) throws(Realm.Error) -> TableBinding {
        if let bound = boundBinding(named: className) { return bound }
        return try dynamicBinding(className)
    }

    // MARK: Deleting a linked object

    /// Sets every mixed value linking to object `key` of class `target` to `.none` (in columns, collections and
    /// nested collections), found through the mixed properties' backlink trees.
    func unlinkIncomingMixed(target: String, key: Int64) throws(Realm.Error) {
        guard let transaction else { throw .notInWriteTransaction }
        // Built once a class with mixed properties is met: most schemas have none, and a delete asks every time.
        var builtPrefix: [UInt8]?
        for source in mixedProperties() {
            let (originClass, property) = (source.originClass, source.property)
            let prefix = builtPrefix ?? Array(target.utf8) + [0] + KeyEncoding.objectKey(key)
            builtPrefix = prefix
            let origins = try backlinkEntries(tree: TableNames.backlinks(originClass, property.name), prefix: prefix)
            guard !origins.isEmpty else { continue }
            let binding = try bindingForStoredClass(originClass)
            guard let index = binding.table.propertyIndex(named: property.name) else { continue }
            for (origin, _) in origins {
                try nullifyMixedLinks(
                    origin: origin, binding: binding, property: index, column: source.column, stored: source.stored,
                    target: (target, key))
            }
            let tree = try handle(TableNames.backlinks(originClass, property.name), create: false)!
            try mutate {
                for (origin, _) in origins {
                    _ = try transaction.delete(prefix + KeyEncoding.objectKey(origin), in: tree)
                }
            }
        }
    }

    private func nullifyMixedLinks(
        origin: Int64, binding: TableBinding, property: Int, column: Int, stored: StoredClass,
        target: (String, Int64)
    ) throws(Realm.Error) {
        guard let transaction else { throw .notInWriteTransaction }
        let originKey = KeyEncoding.objectKey(origin)
        if let kind = binding.table.infos[property].collection {
            guard
                let owners = try handle(
                    TableNames.collection(kind, binding.className, stored.properties[column].name), create: false),
                let tree = try storage({ try transaction.subtree(forKey: originKey, in: owners) })
            else { return }
            try nullifyMixedLinks(
                in: tree, isList: kind == .list, isSet: kind == .set, binding: binding, property: property,
                target: target)
            return
        }
        guard let rows = try handle(binding.rowsTree, create: false),
            let row = try storage({ try transaction.get(originKey, in: rows) })
        else { return }
        let bytes: [UInt8]? = row.withUnsafeBytes { raw in
            guard let view = try? RowView(raw), !view.isNull(column) else { return nil }
            return view.withBytes(column) { Array($0) }
        }
        guard let bytes, let decoded = MixedCodec.decode(bytes) else { return }
        switch decoded {
        case .link(let className, let key) where className == target.0 && key == target.1:
            let rewritten = try storage {
                try row.withUnsafeBytes { raw in
                    RowRewriter.nullify(try RowView(raw), columns: [column], properties: stored.properties)
                }
            }
            try mutate { try transaction.put(originKey, rewritten, in: rows) }
        case .list(let id), .dictionary(let id):
            guard let tree = try nestedHandle(binding, property: property, id: id) else { return }
            if case .list = decoded {
                try nullifyMixedLinks(
                    in: tree, isList: true, isSet: false, binding: binding, property: property, target: target)
            } else {
                try nullifyMixedLinks(
                    in: tree, isList: false, isSet: false, binding: binding, property: property, target: target)
            }
        default:
            return
        }
    }

    /// Replaces links to `target` in a collection tree of mixed elements (and its nested collections) by null;
    /// in a set the element is removed instead.
    private func nullifyMixedLinks(
        in tree: TreeHandle, isList: Bool, isSet: Bool, binding: TableBinding, property: Int, target: (String, Int64)
    ) throws(Realm.Error) {
        guard let transaction else { throw .notInWriteTransaction }
        let entries: [(key: [UInt8], row: [UInt8])] = try storage {
            var entries: [(key: [UInt8], row: [UInt8])] = []
            var cursor = try transaction.makeCursor(for: tree)
            var more = try cursor.first()
            while more {
                entries.append((isList ? [] : try cursor.key(), try cursor.value()))
                more = try cursor.next()
            }
            return entries
        }
        let nullRow = MixedCodec.elementRow(nil)
        for (position, entry) in entries.enumerated() {
            guard let bytes = MixedCodec.bytes(inElementRow: entry.row), let decoded = MixedCodec.decode(bytes) else {
                continue
            }
            switch decoded {
            case .link(let className, let key) where className == target.0 && key == target.1:
                try mutate {
                    if isList {
                        try transaction.replace(at: position, with: nullRow, in: tree)
                    } else if isSet {
                        _ = try transaction.delete(entry.key, in: tree)
                    } else {
                        try transaction.put(entry.key, nullRow, in: tree)
                    }
                }
            case .list(let id):
                if let nested = try nestedHandle(binding, property: property, id: id) {
                    try nullifyMixedLinks(
                        in: nested, isList: true, isSet: false, binding: binding, property: property, target: target)
                }
            case .dictionary(let id):
                if let nested = try nestedHandle(binding, property: property, id: id) {
                    try nullifyMixedLinks(
                        in: nested, isList: false, isSet: false, binding: binding, property: property, target: target)
                }
            default:
                continue
            }
        }
    }

    // MARK: Rebuilding

    /// Counts the links held by stored mixed `bytes` (and their nested collections) into `counts`.
    func countMixedLinks(
        _ bytes: [UInt8], binding: TableBinding, property: Int, origin: Int64, into counts: inout [[UInt8]: Int]
    ) throws(Realm.Error) {
        guard let decoded = MixedCodec.decode(bytes) else { return }
        switch decoded {
        case .value: return
        case .link(let className, let key):
            counts[Self.mixedBacklinkKey(className: className, target: key, origin: origin), default: 0] += 1
        case .list(let id), .dictionary(let id):
            guard let tree = try nestedHandle(binding, property: property, id: id) else { return }
            for row in try elementRows(of: tree) {
                if let element = MixedCodec.bytes(inElementRow: row) {
                    try countMixedLinks(element, binding: binding, property: property, origin: origin, into: &counts)
                }
            }
        }
    }
}

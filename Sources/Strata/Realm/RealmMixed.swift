import Foundation
import StrataStorage

/// Mixed values (`AnyRealmValue`) in the object layer's writes and reads; their stored form and the trees of
/// their nested collections are described in `Tables/MixedCodec.swift`.
extension Realm {
    /// Whether property `property` holds mixed values (itself, or as a collection's elements).
    func isMixed(_ binding: TableBinding, _ property: Int) -> Bool { binding.table.infos[property].type == .any }

    private func mixedFailure(_ binding: TableBinding, _ property: Int, _ reason: String) -> Realm.Error {
        .invalidValue(
            type: binding.className, property: binding.table.schema.properties[property].columnName, reason: reason)
    }

    /// The backlink key of a mixed link from `origin` to object `key` of class `className`.
    static func mixedBacklinkKey(className: String, target: Int64, origin: Int64) -> [UInt8] {
        Array(className.utf8) + [0] + KeyEncoding.objectKey(target) + KeyEncoding.objectKey(origin)
    }

    /// Encodes `value` for a mixed property (a column, or a collection element at nesting `level`: 0 for a
    /// property or its collection's elements). Adds unmanaged linked objects, creates nested collections and
    /// counts links. nil for `.none`.
    func encodeMixed(_ value: _StoredValue, binding: TableBinding, property: Int, owner: Int64, level: Int)
        throws(Realm.Error) -> [UInt8]?
    {
        switch value {
        case .null: return nil
        case .mixed(let bytes): return bytes
        case .object(let target):
            guard binding.table.kind != .asymmetric else {
                throw mixedFailure(
                    binding, property,
                    "an asymmetric object's mixed values cannot link to objects (its outbox copies "
                        + "are self-contained)")
            }
            let targetBinding: TableBinding
            let key: Int64
            if let managed = target.managed {
                guard managed.realm === self else {
                    throw mixedFailure(binding, property, "the linked object belongs to another Realm")
                }
                targetBinding = managed.binding
                key = managed.key
            } else {
                targetBinding = try self.binding(for: type(of: target))
                guard targetBinding.table.kind == .object else {
                    throw mixedFailure(binding, property, "a mixed value cannot hold an embedded or asymmetric object")
                }
                key = try insert(target, update: .error)
            }
            guard targetBinding.table.kind == .object else {
                throw mixedFailure(binding, property, "a mixed value cannot hold an embedded or asymmetric object")
            }
            try adjustBacklink(
                originClass: binding.className, property: binding.table.schema.properties[property].columnName,
                key: Self.mixedBacklinkKey(className: targetBinding.className, target: key, origin: owner), by: 1)
            return MixedCodec.link(className: targetBinding.className, key: key)
        case .collection(let container):
            if binding.table.infos[property].collection == .set {
                throw mixedFailure(binding, property, "a set of mixed values cannot hold a list or dictionary")
            }
            guard level < MixedCodec.maximumDepth else {
                throw mixedFailure(
                    binding, property, "mixed collections nest at most \(MixedCodec.maximumDepth) levels deep")
            }
            if let list = container as? List<AnyRealmValue> {
                let elements = list.storedElements
                let (id, tree) = try newNestedCollection(binding, property: property, kind: .list)
                guard let transaction = writeTransactionIfAny else { throw .notInWriteTransaction }
                for element in elements {
                    let bytes = try encodeMixed(
                        element, binding: binding, property: property, owner: owner, level: level + 1)
                    try mutate { try transaction.append(MixedCodec.elementRow(bytes), to: tree) }
                }
                return MixedCodec.collection(.list, id: id)
            }
            if let map = container as? Map<String, AnyRealmValue> {
                let entries = map.storedEntries
                let (id, tree) = try newNestedCollection(binding, property: property, kind: .keyed)
                guard let transaction = writeTransactionIfAny else { throw .notInWriteTransaction }
                for (key, element) in entries {
                    if let problem = MapKeys.problem(key) {
                        throw mixedFailure(binding, property, "\"\(key)\": \(problem)")
                    }
                    let bytes = try encodeMixed(
                        element, binding: binding, property: property, owner: owner, level: level + 1)
                    try mutate { try transaction.put(Array(key.utf8), MixedCodec.elementRow(bytes), in: tree) }
                }
                return MixedCodec.collection(.dictionary, id: id)
            }
            throw mixedFailure(
                binding, property, "a mixed value holds lists and dictionaries of AnyRealmValue, not sets")
        default:
            guard let bytes = MixedCodec.primitive(value) else {
                throw mixedFailure(binding, property, "\(value) cannot be stored in a mixed value")
            }
            if case .string(let string) = value, string.utf8.count > maximumValueSize {
                throw .valueTooLarge(
                    type: binding.className, property: binding.table.schema.properties[property].columnName,
                    size: string.utf8.count)
            }
            if case .data(let data) = value, data.count > maximumValueSize {
                throw .valueTooLarge(
                    type: binding.className, property: binding.table.schema.properties[property].columnName,
                    size: data.count)
            }
            return bytes
        }
    }

    /// A new, empty nested collection of mixed property `property`, with its id.
    private func newNestedCollection(_ binding: TableBinding, property: Int, kind: TreeKind) throws(Realm.Error)
        -> (UInt64, TreeHandle)
    {
        guard let transaction = writeTransactionIfAny else { throw .notInWriteTransaction }
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
        guard let transaction = writeTransactionIfAny,
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

    /// Materialises stored mixed bytes: links as objects, nested collections as live `List`/`Map` accessors.
    func decodeMixed(_ bytes: [UInt8], owner: ManagedObject?, property: Int, level: Int) throws(Realm.Error)
        -> _StoredValue
    {
        guard let decoded = MixedCodec.decode(bytes) else {
            throw .incompatibleFile(path: path, reason: "unreadable mixed value")
        }
        switch decoded {
        case .value(let value): return value
        case .link(let className, let key):
            let binding = try bindingForStoredClass(className)
            return .object(object(binding, key: key))
        case .list(let id):
            guard let owner else { return .null }
            return .collection(List<AnyRealmValue>(owner: owner, property: property, nested: id, level: level + 1))
        case .dictionary(let id):
            guard let owner else { return .null }
            return .collection(
                Map<String, AnyRealmValue>(owner: owner, property: property, nested: id, level: level + 1))
        }
    }

    /// Uncounts the links in stored mixed `bytes` and drops the nested collections they own, recursively.
    func releaseMixed(_ bytes: [UInt8], binding: TableBinding, property: Int, owner: Int64) throws(Realm.Error) {
        guard let decoded = MixedCodec.decode(bytes), let transaction = writeTransactionIfAny else { return }
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
        guard let transaction = writeTransactionIfAny else { throw .notInWriteTransaction }
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

    /// Releases what a stored collection element row held: its link's backlink count, or its mixed value.
    func releaseElementRow(_ row: [UInt8], binding: TableBinding, property: Int, owner: Int64) throws(Realm.Error) {
        if holdsLinks(binding, property) {
            try countElementLink(row, binding: binding, property: property, owner: owner, by: -1)
            // An embedded element belongs to its collection: it goes with it.
            if let embedded = try embeddedBinding(binding, property: property),
                let child = Self.linkedKey(inElementRow: row)
            {
                try remove(binding: embedded, key: child)
            }
        } else if isMixed(binding, property), let bytes = MixedCodec.bytes(inElementRow: row) {
            try releaseMixed(bytes, binding: binding, property: property, owner: owner)
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
        guard let transaction = writeTransactionIfAny else { throw .notInWriteTransaction }
        let prefix = Array(target.utf8) + [0] + KeyEncoding.objectKey(key)
        for (originClass, stored) in schemaClasses() {
            for (column, property) in stored.properties.enumerated() where property.type == .any {
                let origins = try backlinkEntries(
                    tree: TableNames.backlinks(originClass, property.name), prefix: prefix)
                guard !origins.isEmpty else { continue }
                let binding = try bindingForStoredClass(originClass)
                guard let index = binding.table.propertyIndex(named: property.name) else { continue }
                for (origin, _) in origins {
                    try nullifyMixedLinks(
                        origin: origin, binding: binding, property: index, column: column, stored: stored,
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
    }

    private func nullifyMixedLinks(
        origin: Int64, binding: TableBinding, property: Int, column: Int, stored: StoredClass,
        target: (String, Int64)
    ) throws(Realm.Error) {
        guard let transaction = writeTransactionIfAny else { throw .notInWriteTransaction }
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
        guard let transaction = writeTransactionIfAny else { throw .notInWriteTransaction }
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

import StrataStorage

/// Capture of `Map`, `MutableSet` and `List` properties: at the commit, a touched object's synced collections
/// are compared with the version the transaction started from (see `Realm.appendCapturedTransaction`).
extension Realm {
    /// The collection kind property `index` of `binding` syncs as; nil when it is no collection or its elements
    /// do not sync (links to objects without a primary key).
    func syncedCollection(_ binding: TableBinding, _ index: Int) -> _CollectionKind? {
        let info = binding.table.infos[index]
        guard let kind = info.collection else { return nil }
        if info.type == .object {
            guard let target = binding.table.schema.properties[index].objectClassName,
                let stored = schemaClasses()[target]
            else { return nil }
            return stored.embedded || stored.properties.contains(where: \.primary) ? kind : nil
        }
        return kind
    }

    /// The entries (stored key, decoded element) of object `key`'s collection `property`: in the version the
    /// write transaction started from when `inBase`, else in the transaction. Links are object keys.
    func collectionContents(_ binding: TableBinding, property: Int, key: Int64, inBase: Bool) throws(Realm.Error)
        -> [(key: [UInt8], value: _StoredValue)]
    {
        let info = tables.elementInfo(binding, property)
        let keyed = binding.table.infos[property].collection != .list  // list trees have no keys
        var entries: [(key: [UInt8], value: _StoredValue)] = []
        if inBase {
            // `collectionView` reads nothing during a write transaction: the base snapshot is read directly.
            guard let owners = tables.view(tables.collectionTreeName(binding, property)),
                let tree = try storage({ try owners.subtree(forKey: KeyEncoding.objectKey(key)) })
            else { return [] }
            try storage {
                try tree.forEachEntry { key, value in
                    entries.append((keyed ? Array(key) : [], RowCodec.get(try RowView(value), column: 0, info: info)))
                    return true
                }
            }
        } else {
            let transaction = try activeTransaction()
            guard let tree = try tables.collectionHandle(binding, property: property, key: key, create: false) else {
                return []
            }
            try storage {
                var cursor = try transaction.makeCursor(for: tree)
                var more = try cursor.first()
                while more {
                    let row = try cursor.value()
                    let value = try row.withUnsafeBytes { RowCodec.get(try RowView($0), column: 0, info: info) }
                    entries.append((keyed ? try cursor.key() : [], value))
                    more = try cursor.next()
                }
            }
        }
        return entries
    }

    /// What the transaction did to object `key`'s synced collection `property` (`isCreated`: the object is new, so
    /// everything in it is added; `listEdits`: a list's recorded positional edits, see `capturedListChange`); nil
    /// when nothing changed.
    func capturedCollectionChange(
        _ binding: TableBinding, property: Int, key: Int64, isCreated: Bool, listEdits: [SyncListEdit]?,
        rewritten: Set<Int64> = [], stamp: CaptureStamp, targets: inout [String: TableBinding]
    ) throws(Realm.Error) -> CapturedCollectionChange? {
        let kind = syncedCollection(binding, property)
        if kind == .list {
            return try capturedListChange(
                binding, property: property, key: key, isCreated: isCreated, edits: listEdits, stamp: stamp,
                targets: &targets)
        }
        let before = isCreated ? [] : try collectionContents(binding, property: property, key: key, inBase: true)
        let after = try collectionContents(binding, property: property, key: key, inBase: false)
        switch kind {
        case .map?:
            var old: [[UInt8]: _StoredValue] = [:]
            for entry in before { old[entry.key] = entry.value }
            var set: [String: CapturedValue] = [:]
            for entry in after {
                let previous = old.removeValue(forKey: entry.key)
                if let previous, Self.sameStored(previous, entry.value) {
                    // The same embedded row, unless the transaction wrote one of its fields.
                    guard case .int(let element) = entry.value, rewritten.contains(element) else { continue }
                }
                set[String(decoding: entry.key, as: UTF8.self)] = try portable(
                    entry.value, binding: binding, property: property, targets: &targets)
            }
            let removed = old.keys.map { String(decoding: $0, as: UTF8.self) }.sorted()
            // A created object's map is reported even when empty: its upload clears what a previous life left.
            return set.isEmpty && removed.isEmpty && !isCreated ? nil : .map(set: set, removed: removed)
        case .set?:
            let kept = Set(after.map(\.key))
            var old: Set<[UInt8]> = []
            var removed: [CapturedSetElement] = []
            for entry in before {
                old.insert(entry.key)
                guard !kept.contains(entry.key) else { continue }
                let value = try portable(entry.value, binding: binding, property: property, targets: &targets)
                let tags = try setTags(binding, property: property, key: key, element: entry.key)
                removed.append(CapturedSetElement(value: value, tags: tags))
                try setSetTags([], binding, property: property, key: key, element: entry.key)
            }
            var added: [CapturedSetElement] = []
            for entry in after where !old.contains(entry.key) {
                let value = try portable(entry.value, binding: binding, property: property, targets: &targets)
                let tag = stamp.elementID()
                added.append(CapturedSetElement(value: value, tags: [tag]))
                try setSetTags([tag], binding, property: property, key: key, element: entry.key)
            }
            return added.isEmpty && removed.isEmpty ? nil : .set(added: added, removed: removed)
        default:
            return nil
        }
    }
}

/// The timestamp of a captured transaction, taken from the recorder when first needed (under the write lock, so
/// timestamps follow commit order), and the ids of the elements the transaction adds to synced sets and lists:
/// the timestamp followed by `#` and a number, unique and later than every id this replica has seen. The numbers
/// sort as text in the order they are handed out (`1`…`9`, then `~10`…`~99`, `~~100`…): two elements one
/// transaction inserts at the same place are ordered by their ids, the later first.
final class CaptureStamp {
    private let recorder: any SyncCaptureRecorder
    private var stamp: String?
    private var elements = 0

    init(_ recorder: any SyncCaptureRecorder) { self.recorder = recorder }

    var value: String {
        if let stamp { return stamp }
        let new = recorder.stamp()
        stamp = new
        return new
    }

    func elementID() -> String {
        elements += 1
        let digits = String(elements)
        return "\(value)#" + String(repeating: "~", count: digits.count - 1) + digits
    }
}

import Foundation
import StrataStorage

/// The hidden trees of Strata Sync in a file. Their names carry no `<kind>:` prefix, so migrations and the object
/// layer leave them alone.
enum SyncTreeNames {
    /// Queue sequence (8 bytes, big-endian) → a ``CapturedTransaction`` (see `CapturedTransactionCodec`).
    static let queue = "$syncQueue"
    /// Scope name (UTF-8) → the scope's checkpoint, the last applied log sequence (8 bytes, big-endian).
    static let checkpoints = "$syncCheckpoints"
    /// Owner (class, 0, property, 0, object key) → the merge state of a synced collection (see
    /// `SyncCollectionState.swift`).
    static let collections = "$syncCollections"
}

extension Realm {
    /// At the commit of a captured write transaction: compares each touched object's row in the transaction with
    /// the base version and appends one queue entry holding what changed, in the same storage transaction, so the
    /// write and its entry are committed (or lost) together. A transaction that changed no synced object (or
    /// applies downloaded changes) appends nothing.
    func appendCapturedTransaction(_ capture: SyncCaptureWrite) throws(Realm.Error) {
        guard !capture.isApplyingSync else { return }
        try traceTouchedEmbedded(capture)
        guard !capture.touched.isEmpty else { return }
        var changes: [CapturedObjectChange] = []
        var mapClocks: [(binding: TableBinding, key: Int64, property: Int, keys: [String], isCreated: Bool)] = []
        var targets: [String: TableBinding] = [:]
        let stamp = CaptureStamp(capture.capture.recorder)
        for (binding, key) in capture.touched {
            guard let primaryKeyIndex = binding.table.primaryKeyIndex else { continue }
            let before = try baseRowValues(binding, key)
            let after = try rowValues(binding: binding, key: key)
            switch (before, after) {
            case (nil, nil):
                continue  // created and deleted in this transaction
            case (let before?, nil):
                try deleteCollectionStates(binding, key: key)
                changes.append(
                    CapturedObjectChange(
                        className: binding.className, primaryKey: try portable(before[primaryKeyIndex]),
                        isCreated: false, isDeleted: true, values: [:]))
            case (let before, let after?):
                var values: [String: CapturedValue] = [:]
                var collections: [String: CapturedCollectionChange] = [:]
                for index in binding.table.infos.indices where index != primaryKeyIndex {
                    let name = binding.table.schema.properties[index].columnName
                    if syncedCollection(binding, index) != nil {
                        // A new object's collections all count (an empty one too: its upload clears the server's).
                        guard before == nil || capture.wroteCollection(binding, key, index) else { continue }
                        guard
                            let change = try capturedCollectionChange(
                                binding, property: index, key: key, isCreated: before == nil,
                                listEdits: capture.listEdits(binding, key, index),
                                rewritten: capture.rewrittenElements(binding, key, index), stamp: stamp,
                                targets: &targets)
                        else { continue }
                        collections[name] = change
                        if case .map(let set, let removed) = change {
                            mapClocks.append((binding, key, index, Array(set.keys) + removed, before == nil))
                        }
                        continue
                    }
                    guard isCaptured(binding, index) else { continue }
                    if syncsAsWholeValue(binding, index) {
                        // Equal stored bytes (or the same embedded row) can still hide a change: of a nested
                        // collection of the mixed value, or of a property of the embedded object.
                        if let before, Self.sameStored(before[index], after[index]),
                            !capture.wroteCollection(binding, key, index), !capture.wroteEmbedded(binding, key, index)
                        {
                            continue
                        }
                        values[name] = try capturedWholeValue(
                            binding, key: key, property: index, synced: capture.capture.classes)
                        continue
                    }
                    if let before, ListElements.equal(before[index], after[index]) { continue }
                    values[name] = try portable(after[index], binding: binding, property: index, targets: &targets)
                }
                if before != nil && values.isEmpty && collections.isEmpty { continue }
                changes.append(
                    CapturedObjectChange(
                        className: binding.className, primaryKey: try portable(after[primaryKeyIndex]),
                        isCreated: before == nil, isDeleted: false, values: values, collections: collections))
            }
        }
        guard !changes.isEmpty else { return }
        let transaction = try activeTransaction()
        let queue = try handle(SyncTreeNames.queue, create: true)!
        let sequence = Int64(bitPattern: try mutate { try transaction.nextSequence(in: queue) })
        let entry = CapturedTransaction(
            sequence: sequence, timestamp: stamp.value, changes: changes)
        for clocks in mapClocks {
            try recordMapClocks(
                clocks.binding, property: clocks.property, key: clocks.key, keys: clocks.keys,
                cleared: clocks.isCreated,
                stamp: entry.timestamp)
        }
        let bytes = CapturedTransactionCodec.encode(entry)
        try mutate { try transaction.put(KeyEncoding.objectKey(sequence), bytes, in: queue) }
    }

    /// Whether property `index` of `binding` syncs as one value: plain values, mixed values, embedded objects
    /// (whole) and links to objects with a primary key. Collections are captured apart.
    private func isCaptured(_ binding: TableBinding, _ index: Int) -> Bool {
        let info = binding.table.infos[index]
        guard binding.columns[index] >= 0, !info.isCollection, info.type != .linkingObjects else {
            return false
        }
        if info.type == .object {
            guard let target = binding.table.schema.properties[index].objectClassName,
                let stored = schemaClasses()[target]
            else { return false }
            return stored.embedded || stored.properties.contains(where: \.primary)
        }
        return true
    }

    /// Whether two stored values of one property are the same: mixed values by their bytes (a nested
    /// collection's contents are not in them: the caller checks whether the transaction wrote it).
    static func sameStored(_ lhs: _StoredValue, _ rhs: _StoredValue) -> Bool {
        if case .mixed(let before) = lhs, case .mixed(let after) = rhs { return before == after }
        return ListElements.equal(lhs, rhs)
    }

    /// The values of object `key` in the version the write transaction started from; nil if it had none.
    func baseRowValues(_ binding: TableBinding, _ key: Int64) throws(Realm.Error) -> [_StoredValue]? {
        guard let rows = tables.view(binding.rowsTree) else { return nil }
        return try storage {
            try rows.withValue(forKey: KeyEncoding.objectKey(key)) { bytes in
                let row = try RowView(bytes)
                return binding.table.infos.indices.map {
                    RowCodec.get(row, column: binding.columns[$0], info: binding.table.infos[$0])
                }
            }
        }
    }

    /// `value` of property `property` in portable form: a link becomes the target's primary key, a mixed
    /// element its value (see `portableMixedElement`).
    func portable(
        _ value: _StoredValue, binding: TableBinding, property: Int, targets: inout [String: TableBinding]
    ) throws(Realm.Error) -> CapturedValue {
        if case .mixed(let bytes) = value {
            return try portableMixedElement(bytes, binding: binding, property: property)
        }
        guard binding.table.infos[property].type == .object else { return try portable(value) }
        guard case .int(let targetKey) = value, let name = binding.table.schema.properties[property].objectClassName
        else { return .null }
        let target: TableBinding
        if let known = targets[name] {
            target = known
        } else {
            target = try dynamicBinding(name)
            targets[name] = target
        }
        if target.table.kind == .embedded {
            // An element of a collection of embedded objects: the embedded object, whole.
            let synced = SyncCaptureRegistry.write(path: path)?.capture.classes ?? []
            return try capturedWholeObject(target, key: targetKey, synced: synced)
        }
        guard let index = target.table.primaryKeyIndex, let values = try rowValues(binding: target, key: targetKey)
        else { return .null }
        return .link(try portable(values[index]))
    }

    /// A plain stored value in portable form.
    func portable(_ value: _StoredValue) throws(Realm.Error) -> CapturedValue {
        switch value {
        case .null: return .null
        case .int(let value): return .int(value)
        case .bool(let value): return .bool(value)
        case .float(let value): return .float(value)
        case .double(let value): return .double(value)
        case .string(let value): return .string(value)
        case .data(let value): return .data(value)
        case .date(let value): return .date(value.timeIntervalSince1970)
        case .objectId(let value): return .objectId(value.stringValue)
        case .uuid(let value): return .uuid(value)
        case .decimal128(let value): return .decimal128(value.stringValue)
        case .object, .collection, .mixed:
            throw .invalidValue(type: "", property: "", reason: "sync capture has no portable form for \(value)")
        }
    }
}

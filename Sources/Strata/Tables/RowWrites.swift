import StrataStorage

/// Writing an object's row in `o:<class>` from its stored values (links as object keys, mixed values as their
/// bytes), and what a row write keeps in step with it: the secondary indexes, the to-one backlink counts, the
/// mixed values it replaces and the write's sync capture. Turning objects into those values (adding unmanaged
/// linked objects, encoding mixed values) is the accessor half's, in `Realm/RealmWriting.swift`.
extension TableStore {
    /// A new object key of `binding`'s class (the rows tree's next sequence number).
    func newKey(_ binding: TableBinding) throws(Realm.Error) -> Int64 {
        let transaction = try transactionForWrite()
        let rows = try writableRows(binding)
        return try mutate { Int64(bitPattern: try transaction.nextSequence(in: rows)) }
    }

    /// Writes a new row of `values` and returns its key. The values hold no objects (links are keys) and no
    /// collections; they are checked against the class as any row write's are.
    func insertRow(binding: TableBinding, values: [_StoredValue]) throws(Realm.Error) -> Int64 {
        let key = try newKey(binding)
        var checked = values
        for index in values.indices {
            checked[index] = try checkedStoredValue(values[index], binding: binding, property: index)
        }
        try writeRow(binding: binding, key: key, values: checked, old: nil)
        return key
    }

    /// `value` as row `binding`'s property `property` stores it, checked: nil where nothing is stored (a computed
    /// property), a mixed value's bytes; an object (not yet a key) is refused.
    private func checkedStoredValue(_ value: _StoredValue, binding: TableBinding, property: Int) throws(Realm.Error)
        -> _StoredValue
    {
        guard binding.columns[property] >= 0 else { return .null }
        if isMixed(binding, property) && !binding.table.infos[property].isCollection {
            switch value {
            case .null, .mixed: return value
            case .object, .collection:
                throw mixedFailure(binding, property, "a new row's mixed values hold no objects or collections")
            default: return .mixed(try mixedPrimitive(value, binding: binding, property: property))
            }
        }
        if case .object = value {
            throw .invalidValue(
                type: binding.className, property: binding.table.schema.properties[property].columnName,
                reason: "a new row's links are object keys")
        }
        try checkType(value, binding: binding, property: property)
        return value
    }

    /// Encodes `values` (one per property of `binding`'s class, `.null` for computed ones; links as keys, mixed
    /// values as bytes) into row `key` and writes it. `old` holds the row's previous values when the row exists:
    /// index entries, backlink counts and mixed values move from them to the new ones.
    func writeRow(binding: TableBinding, key: Int64, values: [_StoredValue], old: [_StoredValue]?)
        throws(Realm.Error)
    {
        var row = takeRowBuilder(binding)
        for index in values.indices { try encode(values[index], property: index, of: binding, into: &row) }
        try writeRow(binding: binding, key: key, row: &row, values: values, old: old)
    }

    /// The row builder to encode a row of `binding`'s class into: the one the class's last row write kept
    /// (a row write reuses its buffers), or a new one. Give it back through `writeRow(binding:key:row:values:old:)`.
    func takeRowBuilder(_ binding: TableBinding) -> RowBuilder {
        defer { binding.spareRowBuilder = nil }
        return binding.spareRowBuilder ?? RowBuilder(columns: binding.columnCount)
    }

    /// Encodes `value` into `row` as property `property` of `binding`'s class stores it (nothing for a computed
    /// property). The accessor half calls it as it resolves each value, so an insert walks its values once.
    @inline(__always)
    func encode(_ value: _StoredValue, property: Int, of binding: TableBinding, into row: inout RowBuilder)
        throws(Realm.Error)
    {
        guard binding.columns[property] >= 0 else { return }
        try RowCodec.set(
            value, column: binding.columns[property], in: &row, type: binding.className,
            property: binding.table.schema.properties[property].columnName)
    }

    /// Writes row `key` of `binding`'s class, `row` holding `values` encoded (see `encode`), and keeps the
    /// indexes, backlink counts and mixed values in step with `old`, the row's previous values if it exists.
    func writeRow(
        binding: TableBinding, key: Int64, row: inout RowBuilder, values: [_StoredValue], old: [_StoredValue]?
    ) throws(Realm.Error) {
        try putRow(binding: binding, key: key, row: &row)
        try updateIndexes(binding: binding, key: key, old: old, new: values)
        try updateToOneBacklinks(binding: binding, key: key, old: old, new: values)
        try releaseReplacedMixed(binding: binding, key: key, old: old, new: values)
    }

    /// Releases the mixed values of `old` that `new` no longer holds (their links and nested collections).
    func releaseReplacedMixed(binding: TableBinding, key: Int64, old: [_StoredValue]?, new: [_StoredValue]?)
        throws(Realm.Error)
    {
        guard let old else { return }
        for (index, info) in binding.table.infos.enumerated() where info.type == .any && !info.isCollection {
            guard case .mixed(let before) = old[index] else { continue }
            if let new, case .mixed(let after) = new[index], after == before { continue }
            try releaseMixed(before, binding: binding, property: index, owner: key)
        }
    }

    /// Checks a plain value for property `property` of `binding`'s class: nil only where the property is
    /// optional, integers within the property's width.
    func checkType(_ value: _StoredValue, binding: TableBinding, property: Int) throws(Realm.Error) {
        let info = binding.table.infos[property]
        // A list's elements live outside the row and are checked as they are written.
        guard !info.isCollection else { return }
        // Looked up for an error only: a name read per checked value is a retain and a release each.
        func name() -> String { binding.table.schema.properties[property].columnName }
        if case .null = value {
            guard info.isOptional else {
                throw .invalidValue(
                    type: binding.className, property: name(),
                    reason: "nil is not allowed (the property is not optional)")
            }
            return
        }
        if case .int(let int) = value, info.integerBits > 0 {
            let limit = Int64(1) << (info.integerBits - 1)
            guard int >= -limit && int < limit else {
                throw .invalidValue(
                    type: binding.className, property: name(), reason: "\(int) does not fit in Int\(info.integerBits)")
            }
        }
    }

    /// The stored values of every property of a row (links as keys, mixed values as bytes); nil if there is no
    /// such row.
    func rowValues(binding: TableBinding, key: Int64) throws(Realm.Error) -> [_StoredValue]? {
        try withRow(binding, key: key) { row in
            binding.table.infos.indices.map {
                RowCodec.get(row, column: binding.columns[$0], info: binding.table.infos[$0])
            }
        }
    }
}

extension TableStore {
    /// Sets properties of row `key` by rewriting their columns alone in `current`, the row as stored (valid until
    /// the next change of the transaction): the other columns' bytes are copied, not decoded and encoded again.
    /// Only for properties `binding.rewritableAlone` names, whose values nothing else in the file depends on.
    /// Returns false, writing nothing, when the row cannot be patched (a row of an older format or column count,
    /// or a migration under way); write the whole row then.
    func rewriteColumns<Changes: Sequence<(property: Int, value: _StoredValue)>>(
        binding: TableBinding, key: Int64, _ changes: Changes, in current: RowView
    ) throws(Realm.Error) -> Bool {
        guard migration == nil else { return false }
        var row = takeRowBuilder(binding)
        guard row.load(current) else {
            binding.spareRowBuilder = row
            return false
        }
        for (property, value) in changes {
            try checkType(value, binding: binding, property: property)
            try encode(value, property: property, of: binding, into: &row)
        }
        try putRow(binding: binding, key: key, row: &row)
        return true
    }

    /// Stores the row `row` holds as row `key`, notes it for the write's sync capture, and gives the builder back
    /// (reset) for the class's next row write.
    private func putRow(binding: TableBinding, key: Int64, row: inout RowBuilder) throws(Realm.Error) {
        let transaction = try transactionForWrite()
        let rows = try writableRows(binding)
        try mutate { try KeyEncoding.withObjectKey(key) { try transaction.put($0, row.finish(), in: rows) } }
        syncCapture?.touch(binding, key)
        row.reset()
        binding.spareRowBuilder = row
    }

    /// Opens `bytes` as a row of object `key`, a damaged row reported as the table layer reports damage.
    func rowView(_ bytes: StableValue) throws(Realm.Error) -> RowView {
        try storage { try RowView(bytes.bytes) }
    }
}

extension TableStore {
    /// Sets fixed-size property `property` of row `key` by writing its 8 bytes (and null bit) straight into the
    /// stored row, when the row is in the leaf the write's last put left dirty (see
    /// `WriteTransaction.setFixedColumn`): no row builder, no row put. `item.score += 1` over a class in key order
    /// finds nearly every row there, since the put of the first row of a leaf copied that leaf into the write.
    /// Only for properties `binding.rewritableAlone` names. Returns false, writing nothing, when the value is not a
    /// fixed-size value of the property's type (or nil), when the row is elsewhere, of an older format or column
    /// count, or when a migration is under way; rewrite the column through the row builder then.
    func setFixedColumnInPlace(_ value: _StoredValue, property: Int, binding: TableBinding, key: Int64)
        throws(Realm.Error) -> Bool
    {
        guard migration == nil, let slot = RowFormat.fixedSlot(value, type: binding.table.infos[property].type) else {
            return false
        }
        try checkType(value, binding: binding, property: property)
        let transaction = try transactionForWrite()
        let rows = try writableRows(binding)
        let (column, columns) = (binding.columns[property], binding.columnCount)
        let written = try storage {
            try KeyEncoding.withObjectKey(key) {
                try transaction.setFixedColumn(column, columns: columns, to: slot, inRow: $0, in: rows)
            }
        }
        guard written else { return false }
        // What a row put does besides the put: stale row views expire, the sync capture notes the object.
        generation &+= 1
        syncCapture?.touch(binding, key)
        return true
    }
}

import StrataStorage

/// Writing mixed values (`AnyRealmValue`) at the table level: the stored bytes of a primitive, of a link (with
/// its count in the `b:` tree) and of a nested list or dictionary (a tree in `x:`), given stored values and
/// object keys. Turning an object into a key (adding it when unmanaged) and encoding a nested collection's
/// elements is the caller's (`Realm/RealmMixed.swift`); the bytes are `MixedCodec.swift`'s and the nested trees
/// `MixedTrees.swift`'s.
extension TableStore {
    /// The error for a value mixed property `property` cannot hold.
    func mixedFailure(_ binding: TableBinding, _ property: Int, _ reason: String) -> Realm.Error {
        .invalidValue(
            type: binding.className, property: binding.table.schema.properties[property].columnName, reason: reason)
    }

    /// The stored bytes of primitive `value` in mixed property `property`, checked against the value size limit.
    func mixedPrimitive(_ value: _StoredValue, binding: TableBinding, property: Int) throws(Realm.Error) -> [UInt8] {
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

    /// The stored bytes of a link from `owner`'s mixed property `property` to object `key` of `target`, whose
    /// backlink it counts.
    func mixedLink(to key: Int64, of target: TableBinding, binding: TableBinding, property: Int, owner: Int64)
        throws(Realm.Error) -> [UInt8]
    {
        guard target.table.kind == .object else {
            throw mixedFailure(binding, property, "a mixed value cannot hold an embedded or asymmetric object")
        }
        try adjustBacklink(
            originClass: binding.className, property: binding.table.schema.properties[property].columnName,
            key: Self.mixedBacklinkKey(className: target.className, target: key, origin: owner), by: 1)
        return MixedCodec.link(className: target.className, key: key)
    }

    /// Throws unless mixed property `property` can hold a nested collection at nesting `level` (sets of mixed
    /// values hold none; nesting is bounded).
    func checkNestable(_ binding: TableBinding, property: Int, level: Int) throws(Realm.Error) {
        if binding.table.infos[property].collection == .set {
            throw mixedFailure(binding, property, "a set of mixed values cannot hold a list or dictionary")
        }
        guard level < MixedCodec.maximumDepth else {
            throw mixedFailure(
                binding, property, "mixed collections nest at most \(MixedCodec.maximumDepth) levels deep")
        }
    }

    /// Appends the element row of mixed bytes `bytes` (nil: `.none`) to nested list `tree`.
    func appendMixedElement(_ bytes: [UInt8]?, to tree: TreeHandle) throws(Realm.Error) {
        let transaction = try activeTransaction()
        try mutate { try transaction.append(MixedCodec.elementRow(bytes), to: tree) }
    }

    /// Puts the element row of mixed bytes `bytes` (nil: `.none`) under `key` in nested dictionary `tree`.
    func putMixedEntry(_ key: String, _ bytes: [UInt8]?, in tree: TreeHandle) throws(Realm.Error) {
        let transaction = try activeTransaction()
        try mutate { try transaction.put(Array(key.utf8), MixedCodec.elementRow(bytes), in: tree) }
    }
}

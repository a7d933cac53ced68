import StrataStorage

/// What Strata Sync keeps beside each synced collection to merge it (see `Documentation/Sync.md`, "Collections"):
/// the hidden tree `$syncCollections` maps each owner's collection (class, property, object key) to a keyed
/// subtree. For a `Map`: each key's clock (the timestamp of its last write or removal, as the recorder's text,
/// whose byte order is time order) and, under `$cleared`, the time of the latest clear (map keys never start with
/// `$`). For a `MutableSet`: each element's set key → the tags of the adds that put it there (a varint count
/// and the tags as length-prefixed strings). For a `List`: the layout of ``SyncListStateTrees``. Written by the
/// capture at the commit of local writes and, through the SPI below, by the client applying downloaded ones;
/// deleted with the object.
extension Realm {
    static let clearedMapKey = Array("$cleared".utf8)

    /// The key of `key`'s collection `property` in `$syncCollections`.
    private func collectionStateKey(_ binding: TableBinding, property: Int, key: Int64) -> [UInt8] {
        Array(binding.className.utf8) + [0] + Array(binding.table.schema.properties[property].columnName.utf8) + [0]
            + KeyEncoding.objectKey(key)
    }

    /// The subtree of `key`'s collection `property` in the write transaction; created when `create` is set.
    func collectionState(_ binding: TableBinding, property: Int, key: Int64, create: Bool) throws(Realm.Error)
        -> TreeHandle?
    {
        let transaction = try activeTransaction()
        guard let states = try handle(SyncTreeNames.collections, create: create) else { return nil }
        let stateKey = collectionStateKey(binding, property: property, key: key)
        if create { return try mutate { try transaction.subtree(forKey: stateKey, in: states, create: .keyed) } }
        return try storage { try transaction.subtree(forKey: stateKey, in: states) }
    }

    /// Stamps the keys `keys` of `key`'s map `property` with `stamp` (their last write); `cleared` (a created
    /// object, whose upload clears the map on the server first) stamps the clear too.
    func recordMapClocks(
        _ binding: TableBinding, property: Int, key: Int64, keys: [String], cleared: Bool, stamp: String
    ) throws(Realm.Error) {
        guard let tree = try collectionState(binding, property: property, key: key, create: true) else { return }
        let transaction = try activeTransaction()
        let clock = Array(stamp.utf8)
        if cleared { try mutate { try transaction.put(Self.clearedMapKey, clock, in: tree) } }
        for mapKey in keys { try mutate { try transaction.put(Array(mapKey.utf8), clock, in: tree) } }
    }

    /// The tags of the set element stored under `element` in `key`'s set `property`.
    func setTags(_ binding: TableBinding, property: Int, key: Int64, element: [UInt8]) throws(Realm.Error) -> [String] {
        guard let tree = try collectionState(binding, property: property, key: key, create: false),
            let bytes = try storage({ try activeTransaction().get(element, in: tree) })
        else { return [] }
        guard let tags = Self.decodeTags(bytes) else {
            throw tables.corruptData("the sync tags of a set element of \(binding.className) cannot be read")
        }
        return tags
    }

    /// Stores `tags` as the tags of the set element `element` (none: forgets it).
    func setSetTags(_ tags: [String], _ binding: TableBinding, property: Int, key: Int64, element: [UInt8])
        throws(Realm.Error)
    {
        let transaction = try activeTransaction()
        if tags.isEmpty {
            guard let tree = try collectionState(binding, property: property, key: key, create: false) else { return }
            _ = try mutate { try transaction.delete(element, in: tree) }
            return
        }
        let tree = try collectionState(binding, property: property, key: key, create: true)!
        try mutate { try transaction.put(element, Self.encodeStrings(tags), in: tree) }
    }

    private static func appendVarint(_ value: Int, to bytes: inout [UInt8]) {
        var rest = UInt64(value)
        while rest >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        bytes.append(UInt8(rest))
    }

    static func decodeTags(_ bytes: [UInt8]) -> [String]? {
        var offset = 0
        func varint() -> Int? {
            var value = 0
            var shift = 0
            while offset < bytes.count, shift < 63 {
                let byte = bytes[offset]
                offset += 1
                value |= Int(byte & 0x7f) << shift
                if byte & 0x80 == 0 { return value }
                shift += 7
            }
            return nil
        }
        guard let count = varint() else { return nil }
        var tags: [String] = []
        for _ in 0..<count {
            guard let length = varint(), bytes.count - offset >= length else { return nil }
            tags.append(String(decoding: bytes[offset..<offset + length], as: UTF8.self))
            offset += length
        }
        return offset == bytes.count ? tags : nil
    }

    static func encodeStrings(_ strings: [String]) -> [UInt8] {
        var bytes: [UInt8] = []
        appendVarint(strings.count, to: &bytes)
        for string in strings {
            appendVarint(string.utf8.count, to: &bytes)
            bytes += string.utf8
        }
        return bytes
    }

    /// Forgets the merge state of a deleted object's collections.
    func deleteCollectionStates(_ binding: TableBinding, key: Int64) throws(Realm.Error) {
        let transaction = try activeTransaction()
        guard let states = try handle(SyncTreeNames.collections, create: false) else { return }
        for property in binding.table.infos.indices where syncedCollection(binding, property) != nil {
            _ = try mutate {
                try transaction.delete(collectionStateKey(binding, property: property, key: key), in: states)
            }
        }
    }

    /// The managed object behind `object` and its collection property named `property` (persisted name).
    private func syncedCollectionOwner(_ object: ObjectBase, _ property: String) throws(Realm.Error)
        -> (managed: ManagedObject, index: Int)
    {
        guard isInWriteTransaction else { throw .notInWriteTransaction }
        guard let managed = object.managed, managed.realm === self else { throw .invalidatedObject }
        guard let index = managed.binding.table.schema.properties.firstIndex(where: { $0.columnName == property }),
            syncedCollection(managed.binding, index) != nil
        else {
            throw .invalidValue(
                type: managed.binding.className, property: property, reason: "not a collection that syncs")
        }
        return (managed, index)
    }
}

/// The merge state of one synced `Map` on this replica: when each key was last written (or removed), and when
/// the map was last cleared, as hybrid timestamps in their text form.
@_spi(StrataSync) public struct SyncMapClocks: Sendable, Hashable {
    /// The time of the latest clear (a downloaded create of the object), if any.
    public var cleared: String?
    /// The time of each key's last write or removal.
    public var keys: [String: String]

    /// Clocks for a map.
    public init(cleared: String? = nil, keys: [String: String] = [:]) {
        self.cleared = cleared
        self.keys = keys
    }
}

@_spi(StrataSync) extension Realm {
    /// The merge state of `object`'s map property `property` (persisted name), in the write transaction.
    public func syncMapClocks(of object: ObjectBase, property: String) throws(Realm.Error) -> SyncMapClocks {
        let (managed, index) = try syncedCollectionOwner(object, property)
        var clocks = SyncMapClocks()
        guard let tree = try collectionState(managed.binding, property: index, key: managed.key, create: false) else {
            return clocks
        }
        let transaction = try activeTransaction()
        try storage {
            var cursor = try transaction.makeCursor(for: tree)
            var more = try cursor.first()
            while more {
                let key = try cursor.key()
                let clock = String(decoding: try cursor.value(), as: UTF8.self)
                if key == Self.clearedMapKey {
                    clocks.cleared = clock
                } else {
                    clocks.keys[String(decoding: key, as: UTF8.self)] = clock
                }
                more = try cursor.next()
            }
        }
        return clocks
    }

    /// Stores the merge state of `object`'s map property `property` (persisted name), in the write transaction that
    /// applies the downloaded changes it reflects.
    public func setSyncMapClocks(_ clocks: SyncMapClocks, of object: ObjectBase, property: String) throws(Realm.Error) {
        let (managed, index) = try syncedCollectionOwner(object, property)
        guard let tree = try collectionState(managed.binding, property: index, key: managed.key, create: true) else {
            return
        }
        let transaction = try activeTransaction()
        try mutate { try transaction.removeAll(in: tree) }
        if let cleared = clocks.cleared {
            try mutate { try transaction.put(Self.clearedMapKey, Array(cleared.utf8), in: tree) }
        }
        for (key, clock) in clocks.keys {
            try mutate { try transaction.put(Array(key.utf8), Array(clock.utf8), in: tree) }
        }
    }

    /// The elements of `object`'s set property `property` (persisted name) in portable form, each with the tags
    /// of the adds this replica knows of (none for an element added while capture was off), in the write
    /// transaction.
    public func syncSetElements(of object: ObjectBase, property: String) throws(Realm.Error) -> [CapturedSetElement] {
        let (managed, index) = try syncedCollectionOwner(object, property)
        var targets: [String: TableBinding] = [:]
        return try collectionContents(managed.binding, property: index, key: managed.key, inBase: false).map {
            entry throws(Realm.Error) in
            CapturedSetElement(
                value: try portable(entry.value, binding: managed.binding, property: index, targets: &targets),
                tags: try setTags(managed.binding, property: index, key: managed.key, element: entry.key))
        }
    }

    /// Stores the tags of the elements of `object`'s set property `property` (persisted name), in the write
    /// transaction that applies the downloaded changes they reflect: each element of the set takes the tags given
    /// for its value (none: forgotten); values not in the set are ignored.
    public func setSyncSetTags(_ tags: [CapturedValue: [String]], of object: ObjectBase, property: String)
        throws(Realm.Error)
    {
        let (managed, index) = try syncedCollectionOwner(object, property)
        var targets: [String: TableBinding] = [:]
        for entry in try collectionContents(managed.binding, property: index, key: managed.key, inBase: false) {
            let value = try portable(entry.value, binding: managed.binding, property: index, targets: &targets)
            try setSetTags(tags[value] ?? [], managed.binding, property: index, key: managed.key, element: entry.key)
        }
    }

    /// The state of `object`'s list property `property` (persisted name), in the write transaction; nil when it
    /// has none (filled while capture was off).
    public func syncListState(of object: ObjectBase, property: String) throws(Realm.Error) -> SyncListState? {
        let (managed, index) = try syncedCollectionOwner(object, property)
        guard let trees = try listStateTrees(managed.binding, property: index, key: managed.key) else { return nil }
        return try wholeListState(trees)
    }

    /// Stores the state of `object`'s list property `property` (persisted name), in the write transaction that
    /// applies the downloaded changes it reflects.
    public func setSyncListState(_ state: SyncListState, of object: ObjectBase, property: String) throws(Realm.Error) {
        let (managed, index) = try syncedCollectionOwner(object, property)
        try resetListState(state, managed.binding, property: index, key: managed.key)
    }

    /// The elements of `object`'s list property `property` (persisted name) in portable form, in the write
    /// transaction.
    public func syncListValues(of object: ObjectBase, property: String) throws(Realm.Error) -> [CapturedValue] {
        let (managed, index) = try syncedCollectionOwner(object, property)
        var targets: [String: TableBinding] = [:]
        return try collectionContents(managed.binding, property: index, key: managed.key, inBase: false).map {
            entry throws(Realm.Error) in
            try portable(entry.value, binding: managed.binding, property: index, targets: &targets)
        }
    }

    /// The contents of `object`'s map property `property` (persisted name) in portable form (links as their
    /// targets' primary keys), in the write transaction.
    public func syncMapValues(of object: ObjectBase, property: String) throws(Realm.Error) -> [String: CapturedValue] {
        let (managed, index) = try syncedCollectionOwner(object, property)
        var targets: [String: TableBinding] = [:]
        var values: [String: CapturedValue] = [:]
        for entry in try collectionContents(managed.binding, property: index, key: managed.key, inBase: false) {
            values[String(decoding: entry.key, as: UTF8.self)] = try portable(
                entry.value, binding: managed.binding, property: index, targets: &targets)
        }
        return values
    }
}

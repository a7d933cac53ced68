import StrataStorage

/// The merge state of one synced `List` as kept in `$syncCollections` (format 2), laid out so that one edit reads
/// and writes O(log n) of it: in the list's keyed subtree, `$ids` is a list tree of the shown elements' ids in
/// list order (position i holds the id of the list's element i), `e` + id is each element's record (a removed
/// flag byte, then the id it follows; none: the start), removed elements too, and `$cleared` holds the time of
/// the latest clear. Format 1 kept the whole ``SyncListState`` as one value under `$list`; such a state is
/// rewritten in this layout the first time a write transaction reads it.
struct SyncListStateTrees {
    /// The list's keyed subtree in `$syncCollections`.
    let state: TreeHandle
    /// The shown elements' ids, in list order.
    let ids: TreeHandle
}

extension Realm {
    private static let legacyListStateKey = Array("$list".utf8)
    private static let listIDsKey = Array("$ids".utf8)
    private static let listClearedKey = Array("$cleared".utf8)
    private static let listElementPrefix = UInt8(ascii: "e")

    private static func elementKey(_ id: String) -> [UInt8] { [listElementPrefix] + Array(id.utf8) }

    private static func elementRecord(after: String?, isRemoved: Bool) -> [UInt8] {
        [isRemoved ? 1 : 0] + Array((after ?? "").utf8)
    }

    /// The state trees of `key`'s list `property` in the write transaction; nil when it has no state (a new
    /// object's list, or one filled while capture was off). A format-1 state is converted first (O(n), once).
    func listStateTrees(_ binding: TableBinding, property: Int, key: Int64) throws(Realm.Error) -> SyncListStateTrees? {
        guard let state = try collectionState(binding, property: property, key: key, create: false) else {
            return nil
        }
        let transaction = try activeTransaction()
        if let legacy = try storage({ try transaction.get(Self.legacyListStateKey, in: state) }) {
            guard let decoded = Self.decodeLegacyListState(legacy) else {
                throw tables.corruptData("the sync state of a list of \(binding.className) cannot be read")
            }
            return try resetListState(decoded, binding, property: property, key: key)
        }
        guard let ids = try storage({ try transaction.subtree(forKey: Self.listIDsKey, in: state) }) else {
            return nil
        }
        return SyncListStateTrees(state: state, ids: ids)
    }

    /// Replaces the state of `key`'s list `property` with `state` (its shown elements in list order): O(n).
    @discardableResult
    func resetListState(_ state: SyncListState, _ binding: TableBinding, property: Int, key: Int64)
        throws(Realm.Error) -> SyncListStateTrees
    {
        let transaction = try activeTransaction()
        if let old = try collectionState(binding, property: property, key: key, create: false) {
            // Emptied in place: the owner's subtree stays, its entries (the nested id tree too) go.
            var keys: [[UInt8]] = []
            try storage {
                try transaction.forEachKey(in: old) { key in
                    keys.append(Array(key))
                    return true
                }
            }
            for stale in keys { _ = try mutate { try transaction.delete(stale, in: old) } }
        }
        let tree = try collectionState(binding, property: property, key: key, create: true)!
        let ids = try mutate { try transaction.subtree(forKey: Self.listIDsKey, in: tree, create: .list) }!
        if let cleared = state.cleared {
            try mutate { try transaction.put(Self.listClearedKey, Array(cleared.utf8), in: tree) }
        }
        for element in state.elements {
            try mutate {
                try transaction.put(
                    Self.elementKey(element.id), Self.elementRecord(after: element.after, isRemoved: element.isRemoved),
                    in: tree)
                if state.isVisible(element) { try transaction.append(Array(element.id.utf8), to: ids) }
            }
        }
        return SyncListStateTrees(state: tree, ids: ids)
    }

    /// The number of shown elements of a list state.
    func shownCount(_ trees: SyncListStateTrees) throws(Realm.Error) -> Int {
        let transaction = try activeTransaction()
        return try storage { try transaction.count(in: trees.ids) }
    }

    /// The id of the shown element at `index`.
    func shownID(at index: Int, _ trees: SyncListStateTrees) throws(Realm.Error) -> String {
        let transaction = try activeTransaction()
        return String(decoding: try storage { try transaction.value(at: index, in: trees.ids) }, as: UTF8.self)
    }

    /// Inserts the new element `id` at position `index` of the shown elements, after the element shown before it;
    /// returns that element's id (nil: the start). O(log n).
    func insertShown(_ id: String, at index: Int, _ trees: SyncListStateTrees) throws(Realm.Error) -> String? {
        let after = index == 0 ? nil : try shownID(at: index - 1, trees)
        let transaction = try activeTransaction()
        try mutate {
            try transaction.insert(Array(id.utf8), at: index, in: trees.ids)
            try transaction.put(
                Self.elementKey(id), Self.elementRecord(after: after, isRemoved: false), in: trees.state)
        }
        return after
    }

    /// Removes the shown element at `index` (it stays as a tombstone); returns its id. O(log n).
    func removeShown(at index: Int, _ trees: SyncListStateTrees) throws(Realm.Error) -> String {
        let id = try shownID(at: index, trees)
        let transaction = try activeTransaction()
        let key = Self.elementKey(id)
        try mutate {
            try transaction.remove(at: index, from: trees.ids)
            var record = try transaction.get(key, in: trees.state) ?? [0]
            record[0] = 1
            try transaction.put(key, record, in: trees.state)
        }
        return id
    }

    /// The shown elements' ids in list order. O(n).
    func shownIDs(_ trees: SyncListStateTrees) throws(Realm.Error) -> [String] {
        let transaction = try activeTransaction()
        var ids: [String] = []
        try storage {
            var cursor = try transaction.makeCursor(for: trees.ids)
            var more = try cursor.first()
            while more {
                ids.append(String(decoding: try cursor.value(), as: UTF8.self))
                more = try cursor.next()
            }
        }
        return ids
    }

    /// The whole state: the shown elements in list order, then the others (removed, or older than the latest
    /// clear) in id order. O(n).
    func wholeListState(_ trees: SyncListStateTrees) throws(Realm.Error) -> SyncListState {
        let transaction = try activeTransaction()
        var state = SyncListState()
        var records: [String: (after: String?, isRemoved: Bool)] = [:]
        var order: [String] = []
        try storage {
            var cursor = try transaction.makeCursor(for: trees.state)
            var more = try cursor.seek(atOrAfter: [Self.listElementPrefix])
            while more {
                let key = try cursor.key()
                guard key.first == Self.listElementPrefix else { break }
                let value = try cursor.value()
                let id = String(decoding: key.dropFirst(), as: UTF8.self)
                records[id] = (
                    value.count > 1 ? String(decoding: value.dropFirst(), as: UTF8.self) : nil, value.first == 1
                )
                order.append(id)
                more = try cursor.next()
            }
        }
        if let cleared = try storage({ try transaction.get(Self.listClearedKey, in: trees.state) }) {
            state.cleared = String(decoding: cleared, as: UTF8.self)
        }
        var shown: Set<String> = []
        for id in try shownIDs(trees) {
            guard let record = records[id] else {
                throw tables.corruptData("a shown element of a synced list has no record")
            }
            shown.insert(id)
            state.elements.append(.init(id: id, after: record.after, isRemoved: record.isRemoved))
        }
        for id in order where !shown.contains(id) {
            let record = records[id]!
            state.elements.append(.init(id: id, after: record.after, isRemoved: record.isRemoved))
        }
        return state
    }

    /// A format-1 state: strings (varint count, then length-prefixed), the clear, then id, after, removed per
    /// element.
    private static func decodeLegacyListState(_ bytes: [UInt8]) -> SyncListState? {
        guard let strings = decodeTags(bytes), strings.count % 3 == 1 else { return nil }
        var state = SyncListState(cleared: strings[0].isEmpty ? nil : strings[0])
        for start in stride(from: 1, to: strings.count, by: 3) {
            state.elements.append(
                .init(
                    id: strings[start], after: strings[start + 1].isEmpty ? nil : strings[start + 1],
                    isRemoved: strings[start + 2] == "1"))
        }
        return state
    }
}

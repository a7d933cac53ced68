import StrataStorage

/// Capture of `List` properties at the commit: the positional edits the transaction recorded are replayed on the
/// list's state (``SyncListStateTrees``) as removals of element ids and inserts after the element shown before,
/// in O(edit · log n); a list written otherwise (assigned whole), or whose edits do not account for its contents
/// (a link element removed because its target was deleted), is compared with its base instead, in O(n).
extension Realm {
    /// One step of a list's edits, on the positions of the list at that moment.
    private enum ListStep {
        case insert(at: Int, value: _StoredValue)
        case remove(at: Int)
    }

    /// What the transaction did to object `key`'s synced list `property` (`isCreated`: the object is new), given
    /// its recorded positional edits (nil: it was written otherwise too); nil when nothing changed. A list with
    /// no state (a new object's, or one filled while capture was off) or whose state does not match its base is
    /// sent as a clear and inserts of everything.
    func capturedListChange(
        _ binding: TableBinding, property: Int, key: Int64, isCreated: Bool, edits: [SyncListEdit]?,
        stamp: CaptureStamp, targets: inout [String: TableBinding]
    ) throws(Realm.Error) -> CapturedCollectionChange? {
        let trees = isCreated ? nil : try listStateTrees(binding, property: property, key: key)
        if let trees, let edits, try shownCount(trees) == (try baseListCount(binding, property: property, key: key)),
            let steps = try listSteps(edits, binding: binding, property: property, key: key, from: shownCount(trees))
        {
            return try replay(steps, on: trees, binding: binding, property: property, stamp: stamp, targets: &targets)
        }
        let before =
            isCreated ? [] : try collectionContents(binding, property: property, key: key, inBase: true).map(\.value)
        let after = try collectionContents(binding, property: property, key: key, inBase: false).map(\.value)
        if let trees, try shownCount(trees) == before.count {
            // A difference applies as its removals from the last offset down, then its inserts upwards.
            var removed: [Int] = []
            var inserted: [Int] = []
            for change in after.difference(from: before, by: ListElements.equal) {
                switch change {
                case .remove(let offset, _, _): removed.append(offset)
                case .insert(let offset, _, _): inserted.append(offset)
                }
            }
            let removals = removed.sorted(by: >).map { ListStep.remove(at: $0) }
            let inserts = inserted.sorted().map { ListStep.insert(at: $0, value: after[$0]) }
            return try replay(
                removals + inserts, on: trees, binding: binding, property: property, stamp: stamp, targets: &targets)
        }
        if !isCreated && trees == nil && before.isEmpty && after.isEmpty { return nil }
        let fresh = try resetListState(SyncListState(cleared: stamp.value), binding, property: property, key: key)
        let inserts = after.enumerated().map { ListStep.insert(at: $0.offset, value: $0.element) }
        let operations = try replay(
            inserts, on: fresh, binding: binding, property: property, stamp: stamp, targets: &targets)
        guard case .list(let edits)? = operations else { return .list([.clear(at: stamp.value)]) }
        return .list([.clear(at: stamp.value)] + edits)
    }

    /// The steps of `edits` made on a list of `count` elements; nil when they do not account for the list's
    /// contents in the transaction (its count differs, or a position is outside the list).
    private func listSteps(
        _ edits: [SyncListEdit], binding: TableBinding, property: Int, key: Int64, from count: Int
    ) throws(Realm.Error) -> [ListStep]? {
        let info = tables.elementInfo(binding, property)
        func decoded(_ element: [UInt8]) throws(Realm.Error) -> _StoredValue {
            try storage { try element.withUnsafeBytes { RowCodec.get(try RowView($0), column: 0, info: info) } }
        }
        var count = count
        var steps: [ListStep] = []
        for edit in edits {
            switch edit {
            case .insert(let index, let element):
                guard index >= 0, index <= count else { return nil }
                steps.append(.insert(at: index, value: try decoded(element)))
                count += 1
            case .replace(let index, let element):
                guard index >= 0, index < count else { return nil }
                steps += [.remove(at: index), .insert(at: index, value: try decoded(element))]
            case .remove(let index):
                guard index >= 0, index < count else { return nil }
                steps.append(.remove(at: index))
                count -= 1
            case .move(let from, let to, let element):
                guard from >= 0, from < count, to >= 0, to < count else { return nil }
                steps += [.remove(at: from), .insert(at: to, value: try decoded(element))]
            case .removeAll:
                steps += (0..<count).reversed().map { ListStep.remove(at: $0) }
                count = 0
            }
        }
        let transaction = try activeTransaction()
        guard let list = try tables.collectionHandle(binding, property: property, key: key, create: false) else {
            return count == 0 ? steps : nil
        }
        return try storage { try transaction.count(in: list) } == count ? steps : nil
    }

    /// Applies `steps` to the list state `trees`: a removal names the id shown at its position, an insert takes
    /// a new id and follows the element shown before it. Returns the operations; nil when there are none.
    private func replay(
        _ steps: [ListStep], on trees: SyncListStateTrees, binding: TableBinding, property: Int,
        stamp: CaptureStamp, targets: inout [String: TableBinding]
    ) throws(Realm.Error) -> CapturedCollectionChange? {
        var operations: [CapturedListOperation] = []
        for step in steps {
            switch step {
            case .insert(let index, let value):
                let id = stamp.elementID()
                let after = try insertShown(id, at: index, trees)
                operations.append(
                    .insert(
                        id: id, after: after,
                        value: try portable(value, binding: binding, property: property, targets: &targets)))
            case .remove(let index):
                operations.append(.remove(id: try removeShown(at: index, trees)))
            }
        }
        return operations.isEmpty ? nil : .list(operations)
    }

    /// The number of elements of object `key`'s list `property` in the version the write transaction started
    /// from.
    private func baseListCount(_ binding: TableBinding, property: Int, key: Int64) throws(Realm.Error) -> Int {
        guard let owners = tables.view(tables.collectionTreeName(binding, property)),
            let tree = try storage({ try owners.subtree(forKey: KeyEncoding.objectKey(key)) })
        else { return 0 }
        return tree.count
    }
}

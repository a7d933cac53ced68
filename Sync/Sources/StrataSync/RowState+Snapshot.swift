extension RowState {
    /// The change that brings a replica to this state when merged by the usual rules: the latest create and
    /// delete, each single value with its clock (`values`, read from the typed columns), and every collection
    /// element with its id, tag or clock, removals and clears included. Merging it is idempotent and
    /// commutes with the log's changes, so a replica may apply it over any older state of the object. Snapshots
    /// and the log's entries of revived objects (``MergedRows``) carry it.
    func snapshotChange(type: String, key: SyncValue, values: [String: SyncValue]) -> ObjectChange {
        var properties: [String: PropertyUpdate] = [:]
        for (name, at) in clocks {
            if let value = values[name] { properties[name] = .value(value, at: at) }
        }
        for (name, list) in lists {
            var operations = list.clearedAt.map { [ListOperation.clear(at: $0)] } ?? []
            for element in list.elements {
                operations.append(.insert(id: element.id, after: element.after, value: element.value))
                if element.removed { operations.append(.remove(id: element.id)) }
            }
            properties[name] = .list(operations)
        }
        for (name, map) in maps {
            var operations = map.clearedAt.map { [MapOperation.clear(at: $0)] } ?? []
            for (entryKey, entry) in map.entries.sorted(by: { $0.key < $1.key }) {
                operations.append(.set(key: entryKey, value: entry.value, at: entry.at))
            }
            properties[name] = .map(operations)
        }
        for (name, set) in sets {
            var operations: [SetOperation] = []
            for element in set.elements {
                for tag in element.tags { operations.append(.add(value: element.value, tag: tag)) }
                // Tags removed on the server that a replica may still hold for this value.
                if !set.removedTags.isEmpty {
                    operations.append(.remove(value: element.value, observedTags: set.removedTags))
                }
            }
            properties[name] = .set(operations)
        }
        return ObjectChange(
            objectType: type, primaryKey: key, created: created, deleted: deleted, properties: properties,
            isWholeState: true)
    }
}

extension ObjectChange {
    /// Whether the object exists after this change alone (a snapshot change carries the whole state): created,
    /// and later than its latest delete.
    var isLiveAlone: Bool {
        guard let created else { return false }
        return deleted.map { created > $0 } ?? true
    }
}

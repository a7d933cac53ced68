/// Merges one ``ObjectChange`` into a row's ``RowState`` by the conflict rules, and says what it changed: the
/// accepted part of the change (for the change log) and the columns to write.
struct RowMerge {
    /// The part of the change that won its conflicts (what other replicas must apply).
    var accepted: ObjectChange
    /// The new contents of the columns that changed, by column name (nil: SQL NULL).
    var columnValues: [String: SyncValue?] = [:]
    /// The new JSON of the collection columns that changed, by column name.
    var collectionValues: [String: PlainJSON] = [:]

    /// Checks `change` against `type` without merging it: every property known, every value of the right kind
    /// (a mixed value's links naming a synced type of `schema` by a key of its primary key's kind), a create giving
    /// every property.
    static func validate(_ change: ObjectChange, of type: SyncedType, in schema: ServerSchema) throws(SyncError) {
        guard change.primaryKey.isPrimaryKey(of: type.primaryKey.property.type) else {
            throw .valueTypeMismatch(
                type: type.className, property: type.primaryKey.name, expected: type.primaryKey.property.type.rawValue,
                found: change.primaryKey.kind)
        }
        if change.created != nil {
            let missing = type.columns.map(\.name).filter { change.properties[$0] == nil }
            if !missing.isEmpty {
                throw .invalidChange(
                    type: type.className, property: nil,
                    reason: "a create gives every property; missing: \(missing.joined(separator: ", "))")
            }
        }
        for (name, update) in change.properties {
            guard let column = type.column(named: name) else {
                throw .unknownProperty(type: type.className, property: name)
            }
            func check(_ value: SyncValue) throws(SyncError) {
                guard value.fits(column), value.typedLinksResolve(in: schema) else {
                    throw .valueTypeMismatch(
                        type: type.className, property: name, expected: column.property.type.rawValue, found: value.kind
                    )
                }
                // Clients cannot capture a collection element holding a collection (Documentation/Sync.md).
                if column.shape != .value, column.property.type == .any {
                    switch value {
                    case .list, .dictionary:
                        throw .invalidChange(
                            type: type.className, property: name,
                            reason: "an element of a collection of mixed values cannot hold a list or dictionary")
                    default: break
                    }
                }
            }
            switch (column.shape, update) {
            case (.value, .value(let value, _)): try check(value)
            case (.list, .list(let operations)):
                for case .insert(_, _, let value) in operations { try check(value) }
            case (.map, .map(let operations)):
                for case .set(_, let value?, _) in operations { try check(value) }
            case (.set, .set(let operations)):
                for operation in operations {
                    switch operation {
                    case .add(let value, _), .remove(let value, _): try check(value)
                    }
                }
            default:
                throw .invalidChange(
                    type: type.className, property: name, reason: "the update does not fit a \(column.shape) property")
            }
        }
    }

    /// Merges `change` (already validated) into `state`.
    init(_ change: ObjectChange, into state: inout RowState, type: SyncedType) {
        accepted = ObjectChange(objectType: change.objectType, primaryKey: change.primaryKey)
        var createWon = false
        if let created = change.created, state.created.map({ created > $0 }) ?? true {
            state.created = created
            createWon = true
            // A (re-)created object's sets start empty at its create, as its lists and maps do (their creates
            // carry a clear): adds made before it, in a previous life of the object, are gone.
            for name in state.sets.keys.sorted() {
                guard var set = state.sets[name], set.clear(before: created) else { continue }
                state.sets[name] = set
                collectionValues[name] = .array(set.values)
            }
        }
        if let deleted = change.deleted, state.deleted.map({ deleted > $0 }) ?? true {
            state.deleted = deleted
            // Replicas keep no create and delete times: they are told only what changes whether the object
            // exists. A delete older than the object's latest create (made concurrently with a later create),
            // or a create older than its latest delete, is kept here but not sent, or a replica applying it
            // would delete (or create) an object that the server holds live (or deleted).
            if !state.isLive { accepted.deleted = deleted }
        }
        if createWon, state.isLive { accepted.created = state.created }
        for name in change.properties.keys.sorted() {
            guard let update = change.properties[name] else { continue }
            switch update {
            case .value(let value, let at):
                if let clock = state.clocks[name], clock >= at { continue }
                state.clocks[name] = at
                accepted.properties[name] = update
                columnValues[name] = value
            case .list(let operations):
                var list = state.lists[name] ?? ListState()
                let won = operations.filter { list.apply($0) }
                guard !won.isEmpty else { continue }
                state.lists[name] = list
                accepted.properties[name] = .list(won)
                collectionValues[name] = .array(list.values, of: type.column(named: name))
            case .map(let operations):
                var map = state.maps[name] ?? MapState()
                let won = operations.filter { map.apply($0) }
                guard !won.isEmpty else { continue }
                state.maps[name] = map
                accepted.properties[name] = .map(won)
                collectionValues[name] = .object(map.values, of: type.column(named: name))
            case .set(let operations):
                var set = state.sets[name] ?? SetState()
                let won = operations.compactMap { set.apply($0) }
                guard !won.isEmpty else { continue }
                state.sets[name] = set
                accepted.properties[name] = .set(won)
                collectionValues[name] = .array(set.values, of: type.column(named: name))
            }
        }
    }
}

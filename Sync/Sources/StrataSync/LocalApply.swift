import Foundation
@_spi(StrataSync) import Strata

/// Applies a downloaded change-log entry to a local Strata file, inside the write transaction that also stores
/// the entry's sequence as the scope's checkpoint (see ``SyncClient``).
///
/// The replica's own changes that are still in its upload queue take part in the merge with the server's
/// conflict rules, so a local write that is later than the downloaded one keeps its value (the server will
/// decide the same when the upload arrives): a property keeps a pending local value written later; a local
/// create later than a downloaded delete keeps the object; a local delete later than a downloaded create keeps
/// it deleted.
struct LocalApply {
    /// The replica's not yet uploaded changes: per object (type and primary key), when it was created, deleted,
    /// and when each property was last written.
    private struct Pending {
        var created: HybridTimestamp?
        var deleted: HybridTimestamp?
        var properties: [String: HybridTimestamp] = [:]
        /// Per set property, the tags of the adds that pending local removes took away (as text).
        var removedTags: [String: Set<String>] = [:]
    }

    private struct ObjectID: Hashable {
        var type: String
        var key: SyncValue
    }

    let realm: Realm
    let schema: ServerSchema
    private var pending: [ObjectID: Pending] = [:]
    /// The upload queue as read, in order: the pending writes a re-created object gets back (see
    /// ``replayPending(of:change:type:)``).
    private let queue: [CapturedTransaction]

    /// Ready to apply entries to `realm` (in a write transaction): reads the upload queue as that transaction
    /// sees it, so no local write can slip in between.
    init(realm: Realm, schema: ServerSchema) throws {
        self.realm = realm
        self.schema = schema
        queue = try realm.syncQueue()
        for entry in queue {
            guard let at = HybridTimestamp(entry.timestamp) else { continue }
            for change in entry.changes {
                let id = ObjectID(type: change.className, key: SyncValue(change.primaryKey))
                var state = pending[id] ?? Pending()
                if change.isDeleted { state.deleted = at }
                if change.isCreated { state.created = at }
                for name in change.values.keys { state.properties[name] = at }
                for (name, collection) in change.collections {
                    guard case .set(_, let removed) = collection else { continue }
                    for element in removed { state.removedTags[name, default: []].formUnion(element.tags) }
                }
                pending[id] = state
            }
        }
    }

    /// Applies `change`, one object's accepted change from another replica.
    func apply(_ change: ObjectChange) throws {
        let type = try schema.type(change.objectType)
        let local = pending[ObjectID(type: change.objectType, key: change.primaryKey)] ?? Pending()
        let key = try Self.primaryKey(change.primaryKey)
        var object = realm.dynamicObject(ofType: change.objectType, forPrimaryKey: key)
        // Of a delete and a create in one change, the later decides.
        let deleteWins = change.deleted.map { deleted in change.created.map { deleted > $0 } ?? true } ?? false
        if let deleted = change.deleted, deleteWins {
            if let created = local.created, created > deleted { return }
            if let object { realm.delete(object) }
            return
        }
        var recreated = false
        if let created = change.created {
            if let deleted = local.deleted, deleted > created { return }
            if object == nil {
                recreated = true
                let created = realm.dynamicCreate(change.objectType, value: [type.primaryKey.name: key])
                try forgetCollectionStates(of: created, type: type)
                object = created
            }
        }
        guard let object else { return }  // an update of an object deleted here: the delete wins
        if let created = change.created {
            // The create won on the server: its sets start empty at its time there (see `RowMerge`), here too.
            for column in type.columns where column.shape == .set && column.property.type != .any {
                try clearSet(before: created, of: object, column: column)
            }
        }
        for (name, update) in change.properties {
            if case .map(let operations) = update, let column = type.column(named: name), column.shape == .map {
                try applyMap(operations, to: object, column: column)
                continue
            }
            if case .list(let operations) = update, let column = type.column(named: name), column.shape == .list {
                try applyList(operations, to: object, column: column)
                continue
            }
            if case .set(let operations) = update, let column = type.column(named: name), column.shape == .set {
                try applySet(operations, to: object, column: column, removedLocally: local.removedTags[name] ?? [])
                continue
            }
            guard case .value(let value, let at) = update, let column = type.column(named: name),
                column.shape == .value
            else { continue }
            if let written = local.properties[name], written > at { continue }
            if let created = local.created, created > at { continue }
            try set(value, property: column.property, of: object)
        }
        if recreated && change.isWholeState { try replayPending(of: object, change: change, type: type) }
    }

    /// Writes the queued, not yet uploaded, writes of an object back after a downloaded whole state created it
    /// again here (`change`): a downloaded delete removed the object with the pending writes made to it, which the
    /// server will still merge when they arrive (and show, the object being live again), while this replica's own
    /// log entries are not applied to it. Values go back where they are later than the server's, collection edits
    /// merge as on the server (a set's adds made before the object's latest create are gone there). Pending writes
    /// before a pending delete of the object are not replayed: that delete had removed them here already.
    private func replayPending(of object: DynamicObject, change: ObjectChange, type: SyncedType) throws {
        guard pending[ObjectID(type: change.objectType, key: change.primaryKey)] != nil else { return }
        var writes: [ObjectChange] = []
        for entry in queue {
            for queued in try entry.objectChanges(schema: schema)
            where queued.objectType == change.objectType && queued.primaryKey == change.primaryKey {
                if queued.deleted != nil { writes.removeAll() } else { writes.append(queued) }
            }
        }
        for write in writes {
            for (name, update) in write.properties.sorted(by: { $0.key < $1.key }) {
                guard let column = type.column(named: name) else { continue }
                switch update {
                case .value(let value, let at):
                    if case .value(_, let server)? = change.properties[name], server >= at { continue }
                    try set(value, property: column.property, of: object)
                case .map(let operations): try applyMap(operations, to: object, column: column)
                case .list(let operations): try applyList(operations, to: object, column: column)
                case .set(let operations):
                    let kept = operations.filter { operation in
                        guard case .add(_, let tag) = operation, let created = change.created else { return true }
                        return tag >= created
                    }
                    try applySet(kept, to: object, column: column)
                }
            }
        }
    }

    /// Starts the merge state of a new object's maps and lists empty. A downloaded delete does not remove the state
    /// of the deleted object's collections from the file (the capture does so only for local deletes), so an
    /// object deleted and created again here would otherwise inherit its previous life's map clocks and list
    /// element ids, and a downloaded write with such a clock or id would be taken as seen. (A set's stale tags are
    /// harmless: only the elements in the set are read.)
    private func forgetCollectionStates(of object: DynamicObject, type: SyncedType) throws {
        for column in type.columns {
            switch column.shape {
            case .map: try realm.setSyncMapClocks(SyncMapClocks(), of: object, property: column.name)
            case .list: try realm.setSyncListState(SyncListState(), of: object, property: column.name)
            case .set, .value: break
            }
        }
    }

    /// Applies downloaded edits of a `Map` property, key by key, with the map's clocks kept in the file (the
    /// replica's own writes, pending or not, are in them too): a key takes a downloaded value written later than
    /// its clock; a clear removes the keys written before it; a write older than the latest clear is not shown.
    private func applyMap(_ operations: [MapOperation], to object: DynamicObject, column: ServerColumn) throws {
        let name = column.name
        var clocks = try realm.syncMapClocks(of: object, property: name)
        var values = try realm.syncMapValues(of: object, property: name).mapValues(SyncValue.init)
        let before = values
        for operation in operations {
            let cleared = clocks.cleared.flatMap(HybridTimestamp.init)
            switch operation {
            case .set(let key, let value, let at):
                if let clock = clocks.keys[key].flatMap(HybridTimestamp.init), clock >= at { continue }
                clocks.keys[key] = at.description
                if let cleared, at < cleared { continue }
                values[key] = value
            case .clear(let at):
                if let cleared, cleared >= at { continue }
                clocks.cleared = at.description
                for key in Array(values.keys) {
                    let clock = clocks.keys[key].flatMap(HybridTimestamp.init)
                    if clock.map({ $0 < at }) ?? true { values[key] = nil }
                }
            }
        }
        if values != before {
            var entries: [String: Any] = [:]
            for (key, value) in values { entries[key] = try localValue(value, property: column.property) as Any }
            object[name] = entries
        }
        try realm.setSyncMapClocks(clocks, of: object, property: name)
    }

    /// Applies downloaded edits of a `MutableSet` property with the tags kept in the file (observed-remove, add
    /// wins): an add puts the value in with its tag; a remove takes away the tags it names, and the value only
    /// when no tag is left, so a local add the remover had not seen (pending or not) keeps it. An add whose tag a
    /// pending local remove took away (`removedLocally`) stays out: a snapshot sends every add the server still
    /// holds, those this replica removed and has not uploaded yet included.
    private func applySet(
        _ operations: [SetOperation], to object: DynamicObject, column: ServerColumn, removedLocally: Set<String> = []
    ) throws {
        let name = column.name
        let elements = try realm.syncSetElements(of: object, property: name)
        var order = elements.map { SyncValue($0.value) }
        var tags: [SyncValue: [String]] = [:]
        for element in elements { tags[SyncValue(element.value)] = element.tags }
        let before = order
        for operation in operations {
            switch operation {
            case .add(let value, let tag):
                // An add this replica has seen and removed, not uploaded yet (a snapshot sends every live add).
                if removedLocally.contains(tag.description) { continue }
                if tags[value] == nil { order.append(value) }
                if !(tags[value] ?? []).contains(tag.description) { tags[value, default: []].append(tag.description) }
            case .remove(let value, let observedTags):
                guard var live = tags[value] else { continue }
                let removed = Set(observedTags.map(\.description))
                live.removeAll { removed.contains($0) }
                // An element known without tags (added while capture was off) goes with any remove.
                if live.isEmpty {
                    tags[value] = nil
                    order.removeAll { $0 == value }
                } else {
                    tags[value] = live
                }
            }
        }
        if order != before { object[name] = try order.map { try localValue($0, property: column.property) as Any } }
        var stored: [CapturedValue: [String]] = [:]
        for (value, live) in tags {
            if let captured = CapturedValue(value) { stored[captured] = live }
        }
        try realm.setSyncSetTags(stored, of: object, property: name)
    }

    /// Drops the tags of `column`'s set added before `created` (a downloaded create that won: the object's sets
    /// start again), pending local adds too, as the server drops them.
    private func clearSet(before created: HybridTimestamp, of object: DynamicObject, column: ServerColumn) throws {
        let name = column.name
        let elements = try realm.syncSetElements(of: object, property: name)
        var stored: [CapturedValue: [String]] = [:]
        var kept: [SyncValue] = []
        var changed = false
        for element in elements {
            let live = element.tags.filter { tag in HybridTimestamp(tag).map { $0 >= created } ?? false }
            changed = changed || live.count != element.tags.count
            guard !live.isEmpty else { continue }
            stored[element.value] = live
            kept.append(SyncValue(element.value))
        }
        guard changed else { return }
        if kept.count != elements.count {
            object[name] = try kept.map { try localValue($0, property: column.property) as Any }
        }
        try realm.setSyncSetTags(stored, of: object, property: name)
    }

    /// Applies downloaded edits of a `List` property with the list's state kept in the file (every element's
    /// id, the id it follows, removed ones too): the edits merge into that state as on the server, and the list
    /// is rewritten in the state's order. Local edits are in the state already (the capture adds them at the
    /// commit), so a pending local insert keeps its place.
    private func applyList(_ operations: [ListOperation], to object: DynamicObject, column: ServerColumn) throws {
        let name = column.name
        let current = try realm.syncListValues(of: object, property: name).map(SyncValue.init)
        var list = ListState()
        if let state = try realm.syncListState(of: object, property: name) {
            list.clearedAt = try state.cleared.map(Self.timestamp)
            var values = current.makeIterator()
            // A state that does not match the list (filled while capture was off) keeps no values: the
            // server's edits decide.
            let matches = state.visibleIDs.count == current.count
            for element in state.elements {
                let value = matches && state.isVisible(element) ? values.next() ?? .null : .null
                list.elements.append(
                    ListState.Element(
                        id: try Self.timestamp(element.id), after: try element.after.map(Self.timestamp), value: value,
                        removed: element.isRemoved || !matches))
            }
        }
        for operation in operations { _ = list.apply(operation) }
        let values = list.values
        if values != current { object[name] = try values.map { try localValue($0, property: column.property) as Any } }
        let state = SyncListState(
            cleared: list.clearedAt?.description,
            elements: list.walk.map {
                .init(id: $0.id.description, after: $0.after?.description, isRemoved: $0.removed)
            })
        try realm.setSyncListState(state, of: object, property: name)
    }

    /// An element id of the list state.
    private static func timestamp(_ text: String) throws(SyncError) -> HybridTimestamp {
        guard let time = HybridTimestamp(text) else {
            throw .invalidChange(type: "", property: nil, reason: "\"\(text)\" is not a list element id")
        }
        return time
    }

    /// A primary key in the form Strata's dynamic API takes.
    static func primaryKey(_ value: SyncValue) throws(SyncError) -> Any {
        switch value {
        case .int(let value): return Int(value)
        case .string(let value): return value
        case .objectId(let hex):
            guard let id = try? ObjectId(string: hex) else { break }
            return id
        case .uuid(let value): return value
        default: break
        }
        throw .invalidChange(type: "", property: nil, reason: "\(value.kind) is not a primary key value")
    }
}

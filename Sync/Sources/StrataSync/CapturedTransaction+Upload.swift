@_spi(StrataSync) import Strata

extension CapturedTransaction {
    /// The captured changes in the change format, every part stamped with the transaction's timestamp.
    ///
    /// A create gives every property, as the server requires: capture carries every property a synced type may
    /// have (``SyncClient`` refuses types with collections of mixed values or embedded objects); a property the
    /// entry does not name (a create queued by an earlier version) is sent empty, a clear or a null value.
    ///
    /// - Throws: ``SyncError/invalidChange(type:property:reason:)`` for an entry this library cannot read (a bad
    ///   timestamp), ``SyncError/unknownType(_:)`` for a class the server schema does not sync.
    @_spi(StrataSync) public func objectChanges(schema: ServerSchema) throws(SyncError) -> [ObjectChange] {
        guard let at = HybridTimestamp(timestamp) else {
            throw .invalidChange(type: "", property: nil, reason: "queue entry \(sequence) has no valid timestamp")
        }
        return try changes.map { (change) throws(SyncError) in
            let type = try schema.type(change.className)
            var result = ObjectChange(objectType: change.className, primaryKey: SyncValue(change.primaryKey))
            if change.isDeleted {
                result.deleted = at
                return result
            }
            for (name, value) in change.values { result.properties[name] = .value(SyncValue(value), at: at) }
            for (name, collection) in change.collections {
                result.properties[name] = try collection.update(
                    at: at, isCreated: change.isCreated, type: change.className, property: name)
            }
            if change.isCreated {
                result.created = at
                for column in type.columns where result.properties[column.name] == nil {
                    switch column.shape {
                    case .value: result.properties[column.name] = .value(.null, at: at)
                    case .list: result.properties[column.name] = .list([.clear(at: at)])
                    case .map: result.properties[column.name] = .map([.clear(at: at)])
                    case .set: result.properties[column.name] = .set([])
                    }
                }
            }
            return result
        }
    }
}

extension CapturedCollectionChange {
    /// The collection's edits in the change format, stamped `at`. A created object's collection starts with a
    /// clear, so that what a previous life of the object left on the server goes.
    func update(at: HybridTimestamp, isCreated: Bool, type: String, property: String) throws(SyncError)
        -> PropertyUpdate
    {
        func timestamp(_ text: String) throws(SyncError) -> HybridTimestamp {
            guard let time = HybridTimestamp(text) else {
                throw .invalidChange(type: type, property: property, reason: "\"\(text)\" is not an element id")
            }
            return time
        }
        switch self {
        case .map(let set, let removed):
            var operations: [MapOperation] = isCreated ? [.clear(at: at)] : []
            for key in set.keys.sorted() { operations.append(.set(key: key, value: SyncValue(set[key]!), at: at)) }
            for key in removed { operations.append(.set(key: key, value: nil, at: at)) }
            return .map(operations)
        case .set(let added, let removed):
            var operations: [SetOperation] = []
            for element in removed {
                var tags: [HybridTimestamp] = []
                for tag in element.tags { tags.append(try timestamp(tag)) }
                operations.append(.remove(value: SyncValue(element.value), observedTags: tags))
            }
            for element in added {
                for tag in element.tags {
                    operations.append(.add(value: SyncValue(element.value), tag: try timestamp(tag)))
                }
            }
            return .set(operations)
        case .list(let captured):
            var operations: [ListOperation] = []
            for operation in captured {
                switch operation {
                case .insert(let id, let after, let value):
                    operations.append(
                        .insert(
                            id: try timestamp(id), after: try after.map { (id) throws(SyncError) in try timestamp(id) },
                            value: SyncValue(value)))
                case .remove(let id): operations.append(.remove(id: try timestamp(id)))
                case .clear(let at): operations.append(.clear(at: try timestamp(at)))
                }
            }
            return .list(operations)
        }
    }
}

extension SyncValue {
    /// A captured value in the change format.
    init(_ captured: CapturedValue) {
        switch captured {
        case .null: self = .null
        case .bool(let value): self = .bool(value)
        case .int(let value): self = .int(value)
        case .float(let value): self = .float(value)
        case .double(let value): self = .double(value)
        case .string(let value): self = .string(value)
        case .data(let value): self = .data(value)
        case .date(let value): self = .date(value)
        case .decimal128(let value): self = .decimal128(value)
        case .objectId(let value): self = .objectId(value)
        case .uuid(let value): self = .uuid(value)
        case .link(let key): self = .link(SyncValue(key))
        case .typedLink(let className, let key): self = .typedLink(type: className, key: SyncValue(key))
        case .list(let elements): self = .list(elements.map(SyncValue.init))
        case .dictionary(let entries): self = .dictionary(entries.mapValues(SyncValue.init))
        case .embedded(let properties): self = .embedded(properties.mapValues(SyncValue.init))
        }
    }
}

extension CapturedValue {
    /// A change-format value in captured form (every value has one; optional for the callers that stored it so).
    init?(_ value: SyncValue) {
        switch value {
        case .null: self = .null
        case .bool(let value): self = .bool(value)
        case .int(let value): self = .int(value)
        case .float(let value): self = .float(value)
        case .double(let value): self = .double(value)
        case .string(let value): self = .string(value)
        case .data(let value): self = .data(value)
        case .date(let value): self = .date(value)
        case .decimal128(let value): self = .decimal128(value)
        case .objectId(let value): self = .objectId(value)
        case .uuid(let value): self = .uuid(value)
        case .link(let key):
            guard let key = CapturedValue(key) else { return nil }
            self = .link(key)
        case .typedLink(let type, let key):
            guard let key = CapturedValue(key) else { return nil }
            self = .typedLink(className: type, key: key)
        case .list(let elements):
            var captured: [CapturedValue] = []
            for element in elements {
                guard let element = CapturedValue(element) else { return nil }
                captured.append(element)
            }
            self = .list(captured)
        case .dictionary(let entries), .embedded(let entries):
            var captured: [String: CapturedValue] = [:]
            for (key, element) in entries {
                guard let element = CapturedValue(element) else { return nil }
                captured[key] = element
            }
            if case .embedded = value { self = .embedded(captured) } else { self = .dictionary(captured) }
        }
    }
}

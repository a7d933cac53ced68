import Foundation
import StrataStorage

// Evaluation's reads: the values a bound path produces for one object (through links, collections, maps,
// backlinks and mixed values).

extension Realm {
    /// The values `path` produces for object `key` (links as their keys).
    func queryValues(_ path: BoundPath, key: Int64, row: RowView?) throws(Realm.Error) -> [_StoredValue] {
        if let direct = path.directColumn, let row {
            return [RowCodec.get(row, column: direct.column, info: direct.info)]
        }
        var objects: [Int64] = [key]
        var values: [_StoredValue] = []
        var firstRow = row
        var index = 0
        while index < path.steps.count {
            let step = path.steps[index]
            let next = index + 1 < path.steps.count ? path.steps[index + 1] : nil
            switch step {
            case .property(let binding, let property):
                let info = binding.table.infos[property]
                var nextObjects: [Int64] = []
                values = []
                for object in objects {
                    if let kind = info.collection {
                        if case .count? = next {
                            values.append(
                                .int(Int64(try queryCollectionCount(binding, property: property, key: object))))
                            continue
                        }
                        if kind == .map, case .keys? = next {
                            values += try queryMapKeys(binding, property: property, key: object).map { .string($0) }
                            continue
                        }
                        if kind == .map, case .mapValue(let mapKey)? = next {
                            let value =
                                try queryMapEntries(binding, property: property, key: object)
                                .first { $0.key == mapKey }?.value ?? .null
                            let after = index + 2 < path.steps.count ? path.steps[index + 2] : nil
                            if info.type == .object, after?.followsObjects == true {
                                if case .int(let target) = value {
                                    nextObjects.append(target)
                                } else if !path.isMultiple {
                                    return [.null]
                                }
                            } else {
                                values.append(value)
                            }
                            continue
                        }
                        let elements = try queryCollectionValues(binding, property: property, key: object)
                        if case .mixedElement(let element)? = next {
                            values += element.values(ofListElements: elements)
                        } else if case .subqueryCount(let predicate)? = next {
                            values.append(
                                .int(
                                    info.type == .object
                                        ? try queryCount(predicate, in: elements)
                                        : try queryCount(predicate, inValues: elements)))
                        } else if info.type == .object, let next, next.followsObjects {
                            for case .int(let target) in elements { nextObjects.append(target) }
                        } else {
                            values += elements
                        }
                        continue
                    }
                    let value: _StoredValue
                    if let row = firstRow {
                        value = RowCodec.get(row, column: binding.columns[property], info: info)
                    } else {
                        value =
                            try withRow(binding, key: object) {
                                RowCodec.get($0, column: binding.columns[property], info: info)
                            } ?? .null
                    }
                    if info.type == .object, let next, next.followsObjects {
                        if case .int(let target) = value {
                            nextObjects.append(target)
                        } else if !path.isMultiple {
                            // A nil to-one link makes the rest of a single-valued path null (`address.city ==
                            // nil` holds for a person without an address), as in Realm's engine and in Swift's
                            // optional chaining.
                            return [.null]
                        }
                    } else if info.type == .any, case .type? = next {
                        values.append(.string(QueryValues.typeName(value)))
                    } else if info.type == .any, case .mixed(let bytes) = value {
                        values.append(try queryMixedValue(bytes, binding: binding, property: property, key: object))
                    } else {
                        values.append(value)
                    }
                }
                firstRow = nil
                objects = nextObjects
                if case .count? = next, info.collection != nil { index += 1 }
                if case .keys? = next, info.collection == .map { index += 1 }
                if case .mapValue? = next, info.collection == .map { index += 1 }
                if case .subqueryCount? = next { index += 1 }
                if case .type? = next, info.type == .any, info.collection == nil { index += 1 }
                if case .mixedElement? = next, info.collection != nil { index += 1 }
            case .backlinks(let origins):
                var nextObjects: [Int64] = []
                values = []
                for object in objects {
                    var origin: [Int64] = []
                    for (binding, property) in origins {
                        for entry in try backlinks(
                            originClass: binding.className,
                            originProperty: binding.table.schema.properties[property].columnName, target: object)
                        {
                            origin += repeatElement(entry.origin, count: entry.count)
                        }
                    }
                    switch next {
                    case .count?: values.append(.int(Int64(origin.count)))
                    case .subqueryCount(let predicate)?:
                        values.append(.int(try queryCount(predicate, in: origin.map { .int($0) })))
                    case let step? where step.followsObjects: nextObjects += origin
                    default: values += origin.map { .int($0) }
                    }
                }
                firstRow = nil
                objects = nextObjects
                switch next {
                case .count?, .subqueryCount?: index += 1
                default: break
                }
            case .subqueryCount:
                break
            case .element(let value):
                values = [value]
            case .type:
                values = values.map { .string(QueryValues.typeName($0)) }
            case .count:
                // @size of strings and data (collections were counted with their property).
                values = values.map { value in
                    switch value {
                    case .string(let string): .int(Int64(string.utf8.count))
                    case .data(let data): .int(Int64(data.count))
                    default: .null
                    }
                }
            case .aggregate(let name):
                values = [QueryValues.aggregate(name, values)]
            case .mixedElement(let element):
                values = values.flatMap { element.values(of: $0) }
            case .arithmetic(let expression):
                values = try arithmeticValue(expression, key: key, row: row).map { [$0] } ?? []
            case .keys, .mapValue:
                break
            }
            index += 1
        }
        return values
    }

    /// A stored mixed value of property `property` of object `key` as queries compare it: a nested list or
    /// dictionary as that collection of the object (not nil: `extra == nil` does not hold for it, and
    /// `extra[0]` reads it), a link as the object.
    private func queryMixedValue(_ bytes: [UInt8], binding: TableBinding, property: Int, key: Int64)
        throws(Realm.Error) -> _StoredValue
    {
        switch MixedCodec.decode(bytes) {
        case .list?, .dictionary?:
            return try decodeMixed(bytes, owner: object(binding, key: key).managed, property: property, level: 0)
        default:
            return try decodeMixed(bytes, owner: nil, property: property, level: 0)
        }
    }

    /// How many of the objects `elements` (links as keys) satisfy `predicate`.
    func queryCount(_ predicate: BoundPredicate, in elements: [_StoredValue]) throws(Realm.Error) -> Int64 {
        var count: Int64 = 0
        for case .int(let key) in elements where try queryMatches(predicate, key: key, row: nil) { count += 1 }
        return count
    }

    private func queryCollectionCount(_ binding: TableBinding, property: Int, key: Int64) throws(Realm.Error) -> Int {
        if let transaction = writeTransactionIfAny {
            guard let tree = try tables.collectionHandle(binding, property: property, key: key, create: false) else {
                return 0
            }
            return try storage { try transaction.count(in: tree) }
        }
        return try tables.collectionView(binding, property: property, key: key)?.count ?? 0
    }

    /// The element values of a list or set, or the values of a map (links as keys). A mixed element holding a
    /// list or dictionary is that nested collection (of the owning object, found once it is needed), so that it
    /// is not nil and can be subscripted.
    func queryCollectionValues(_ binding: TableBinding, property: Int, key: Int64) throws(Realm.Error)
        -> [_StoredValue]
    {
        var element = binding.table.infos[property]
        element.collection = nil
        var values: [_StoredValue] = []
        var owner: ManagedObject?
        try forEachQueryElement(binding, property: property, key: key, keys: false) { _, bytes throws(Realm.Error) in
            var value = try storage { RowCodec.get(try RowView(bytes), column: 0, info: element) }
            if case .mixed(let mixed) = value {
                switch MixedCodec.decode(mixed) {
                case .list?, .dictionary?:
                    if owner == nil { owner = object(binding, key: key).managed }
                    value = try decodeMixed(mixed, owner: owner, property: property, level: 0)
                default:
                    value = try decodeMixed(mixed, owner: nil, property: property, level: 0)
                }
            }
            values.append(value)
        }
        return values
    }

    /// The entries of map property `property` of object `key`, in key order: keys and values as queries see
    /// them (links as object keys).
    func queryMapEntries(_ binding: TableBinding, property: Int, key: Int64) throws(Realm.Error)
        -> [(key: String, value: _StoredValue)]
    {
        Array(
            zip(
                try queryMapKeys(binding, property: property, key: key),
                try queryCollectionValues(binding, property: property, key: key))
        )
        .map { (key: $0.0, value: $0.1) }
    }

    private func queryMapKeys(_ binding: TableBinding, property: Int, key: Int64) throws(Realm.Error) -> [String] {
        var keys: [String] = []
        try forEachQueryElement(binding, property: property, key: key, keys: true) { key, _ in
            keys.append(String(decoding: key, as: UTF8.self))
        }
        return keys
    }

    private func forEachQueryElement(
        _ binding: TableBinding, property: Int, key: Int64, keys: Bool,
        _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws(Realm.Error) -> Void
    ) throws(Realm.Error) {
        try tables.forEachCollectionEntry(
            keys: keys,
            handle: { () throws(Realm.Error) in
                try tables.collectionHandle(binding, property: property, key: key, create: false)
            },
            view: { () throws(Realm.Error) in try tables.collectionView(binding, property: property, key: key) }, body)
    }
}

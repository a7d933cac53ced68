import Foundation
import StrataStorage

/// Writes to classes known only from the file, through ``DynamicObject``: what tools without the app's model
/// classes (the `strata load` command, importers) need, as the Realm SDK's `dynamicCreate` offers it. The new
/// row's values are the table layer's (`Tables/DynamicRows.swift`); this half makes the accessors and sets what
/// goes through them (links, embedded objects, collections, mixed values).
extension Realm {
    /// Creates an object of the stored class `typeName` from `value`, a `[String: Any]` keyed by persisted property
    /// name, and returns it. Use ``create(_:value:update:)`` when the app has the model class; this is for tools that
    /// only know the classes stored in the file.
    ///
    /// Values are what a ``DynamicObject``'s subscript takes: plain values, a managed ``DynamicObject`` (or `nil`) for
    /// a link, a `[String: Any]` for an embedded object, arrays for lists and sets (of values, of managed objects, of
    /// dictionaries for embedded objects), `[String: Any]` for maps, and ``AnyRealmValue`` for mixed properties.
    /// Properties left out keep their defaults (zero, empty, nil). A class with a primary key needs its value unless
    /// the key is optional (nil then).
    ///
    /// ```swift
    /// try realm.write {
    ///     let owner = realm.dynamicCreate("Person", value: ["id": 1, "name": "Ann"])
    ///     realm.dynamicCreate("Dog", value: ["name": "Rex", "owner": owner, "tags": ["good"]])
    /// }
    /// ```
    ///
    /// Like ``create(_:value:update:)``, a problem — an unknown class or property, an embedded or asymmetric class,
    /// a value of the wrong type, an existing primary key with `update: .error` — fails the write transaction, which
    /// then rolls back whole and throws from ``write(_:)`` or ``commitWrite()``.
    @discardableResult
    public func dynamicCreate(_ typeName: String, value: Any = [String: Any](), update: UpdatePolicy = .error)
        -> DynamicObject
    {
        guard transactionForMutation("dynamicCreate(\"\(typeName)\")") != nil else { return DynamicObject() }
        do {
            return try createDynamic(typeName, value: value, update: update)
        } catch {
            fail(error)
            return DynamicObject()
        }
    }

    private func createDynamic(_ name: String, value: Any, update: UpdatePolicy) throws(Realm.Error) -> DynamicObject {
        guard let stored = schemaClasses()[name] else {
            throw .invalidValue(type: name, property: "", reason: "the file has no class of this name")
        }
        let binding = try dynamicBinding(name)
        guard binding.table.kind == .object else {
            throw .invalidValue(
                type: name, property: "",
                reason: binding.table.kind == .embedded
                    ? "embedded objects are created by setting them on their parent"
                    : "asymmetric objects are created with create(_:value:) and the model class")
        }
        guard let dictionary = value as? [String: Any] else {
            throw .invalidValue(
                type: name, property: "", reason: "dynamicCreate takes a [String: Any], not \(type(of: value))")
        }
        var primaryKey: (value: _StoredValue, encoded: [UInt8])?
        if let index = binding.table.primaryKeyIndex {
            let info = binding.table.infos[index]
            let property = binding.table.schema.properties[index].columnName
            let given = ObjectValues.value(for: index, in: value, table: binding.table)
            guard given != nil || info.isOptional else {
                throw .invalidValue(type: name, property: property, reason: "the primary key needs a value")
            }
            guard let key = StoredValueConversion.stored(from: given, as: info) else {
                throw .invalidValue(
                    type: name, property: property,
                    reason: "\(given.map { "\(type(of: $0))" } ?? "nil") is not a valid primary key")
            }
            let encoded = try encodedPrimaryKey(key, binding: binding, property: index)
            if let existing = try lookupPrimaryKey(binding, encoded) {
                guard update != .error else {
                    throw .primaryKeyExists(type: name, value: KeyEncoding.describe(key))
                }
                let object = self.object(binding, key: existing)
                try ObjectValues.apply(value, to: object, schema: binding.table)
                return try dynamic(object)
            }
            primaryKey = (key, encoded)
        }
        // Plain values go into the new row at once; links, embedded objects, collections and mixed values (which
        // may hold links) are set one by one below, as on any managed object.
        let row = try tables.newRowValues(of: binding, stored: stored, from: dictionary)
        var values = row.values
        if let index = binding.table.primaryKeyIndex, let primaryKey { values[index] = primaryKey.value }
        let key = try tables.insertRow(binding: binding, values: values)
        if let primaryKey { try tables.claimPrimaryKey(primaryKey.encoded, for: key, binding: binding) }
        let object = try dynamic(self.object(binding, key: key))
        try ObjectValues.apply(row.rest, to: object, schema: binding.table)
        if let failure = failureOfWrite { throw failure }
        return object
    }

    private func dynamic(_ object: ObjectBase) throws(Realm.Error) -> DynamicObject {
        guard let dynamic = object as? DynamicObject else {
            throw .invalidValue(
                type: "\(type(of: object))", property: "", reason: "not a class known only from the file")
        }
        return dynamic
    }

    // MARK: Embedded objects of classes known only from the file

    /// Sets property `property` of `owner` when it holds embedded objects of a class known only from the file and
    /// `value` describes them as dictionaries (one, or an array or dictionary of them for a list or map): each
    /// becomes a new embedded object. Returns false, doing nothing, for any other property or value.
    func setDynamicEmbedded(_ value: Any?, property: Int, of owner: ManagedObject) throws(Realm.Error) -> Bool {
        let binding = owner.binding
        let info = binding.table.infos[property]
        guard info.type == .object, info.objectType == nil,
            let embedded = try tables.embeddedBinding(binding, property: property)
        else { return false }
        let name = binding.table.schema.properties[property].columnName
        func failure(_ reason: String) -> Realm.Error {
            .invalidValue(type: binding.className, property: name, reason: reason)
        }
        switch info.collection {
        case nil:
            guard let dictionary = value as? [String: Any] else { return false }
            let key = try createEmbedded(embedded, from: dictionary)
            try setProperty(.int(key), property: property, binding: binding, key: owner.key)
        case .list:
            guard let array = value as? [Any] else { return false }
            var keys: [_StoredValue] = []
            for element in array {
                guard let dictionary = element as? [String: Any] else {
                    throw failure(
                        "a list of embedded \(embedded.className) takes dictionaries, not \(type(of: element))")
                }
                keys.append(.int(try createEmbedded(embedded, from: dictionary)))
            }
            try replaceList(
                binding: binding, property: property, key: owner.key, with: .collection(StoredElements(keys)))
        case .map:
            guard let dictionary = value as? [String: Any] else { return false }
            var entries: [(key: String, value: _StoredValue)] = []
            for (key, element) in dictionary.sorted(by: { $0.key < $1.key }) {
                if StoredValueConversion.isNil(element) {
                    entries.append((key, .null))
                    continue
                }
                guard let object = element as? [String: Any] else {
                    throw failure(
                        "a map of embedded \(embedded.className) takes dictionaries, not \(type(of: element))")
                }
                entries.append((key, .int(try createEmbedded(embedded, from: object))))
            }
            try replaceMap(binding: binding, property: property, key: owner.key, with: .collection(EntryList(entries)))
        case .set:
            throw failure("sets cannot hold embedded objects")
        }
        return true
    }

    /// A new embedded object of `binding`'s class, its values from `dictionary` (nested embedded objects included).
    /// Its parent links it right after.
    private func createEmbedded(_ binding: TableBinding, from dictionary: [String: Any]) throws(Realm.Error) -> Int64 {
        guard let stored = schemaClasses()[binding.className] else {
            throw .invalidValue(type: binding.className, property: "", reason: "the file has no class of this name")
        }
        let key = try tables.insertRow(binding: binding, values: stored.properties.map(TableStore.zeroValue))
        try ObjectValues.apply(dictionary, to: try dynamic(object(binding, key: key)), schema: binding.table)
        return key
    }
}

/// Elements already in their stored form (embedded objects as the keys of their new rows), as a list source.
final class StoredElements: AnyRealmList {
    let storedElements: [_StoredValue]

    init(_ elements: [_StoredValue]) { storedElements = elements }

    var anyElements: [Any] { storedElements.map { StoredValueConversion.any(from: $0) as Any } }

    func replaceAll(with elements: [Any], type: String, property: String) throws(Realm.Error) {
        throw .invalidValue(type: type, property: property, reason: "a temporary list cannot be changed")
    }
}

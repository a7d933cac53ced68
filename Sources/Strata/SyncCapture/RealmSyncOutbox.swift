import Foundation
import StrataStorage

/// One object of an asymmetric type's outbox as Strata Sync uploads it: its place in the outbox and its values.
@_spi(StrataSync) public struct SyncOutboxObject: Sendable, Hashable {
    /// The object's key in the outbox: increasing in commit order and never reused within the file (the rows
    /// tree's sequence, which compaction keeps), so `(client id, class, sequence)` names the object for good.
    public var sequence: Int64
    /// The values of the persisted properties, by persisted name.
    public var values: [String: SyncOutboxValue]

    /// An object at `sequence` holding `values`.
    public init(sequence: Int64, values: [String: SyncOutboxValue]) {
        self.sequence = sequence
        self.values = values
    }
}

/// A property value of an outbox object, in portable form.
@_spi(StrataSync) public indirect enum SyncOutboxValue: Sendable, Hashable {
    /// One value: a plain value, an optional (`.null` when nil) or a mixed value's primitive.
    case value(CapturedValue)
    /// An embedded object's values by persisted name.
    case embedded([String: SyncOutboxValue])
    /// A list's or a set's elements, or a mixed value's nested list.
    case list([SyncOutboxValue])
    /// A map's entries, or a mixed value's nested dictionary.
    case map([String: SyncOutboxValue])
}

@_spi(StrataSync) extension Realm {
    /// The oldest objects of the asymmetric class `className`'s outbox, at most `limit`, in the version this Realm
    /// reads (``refresh()`` first for the newest); none when the file has no such class.
    ///
    /// The objects stay in the file until ``removeSyncOutbox(className:sequences:)`` removes them: Strata Sync
    /// reads, uploads, and removes only what the server has committed.
    ///
    /// - Throws: `Realm.Error.invalidValue` for a class that is not asymmetric or a value with no portable form (a
    ///   mixed value linking to an object, which asymmetric objects cannot hold).
    public func syncOutbox(className: String, limit: Int) throws(Realm.Error) -> [SyncOutboxObject] {
        try checkThreadThrowing()
        guard isStored(className) else { return [] }
        let binding = try dynamicBinding(className)
        guard binding.table.kind == .asymmetric else {
            throw .invalidValue(type: className, property: "", reason: "not an asymmetric class: it has no outbox")
        }
        guard limit > 0, var cursor = rowCursor(binding) else { return [] }
        var keys: [Int64] = []
        var more = try storage { try cursor.first() }
        while more && keys.count < limit {
            keys.append(try storage { try cursor.withKey { KeyEncoding.decodeObjectKey($0) } })
            more = try storage { try cursor.next() }
        }
        return try keys.map { (key) throws(Realm.Error) in
            guard let managed = object(binding, key: key).managed else {
                throw .invalidValue(type: className, property: "", reason: "outbox object \(key) is not stored")
            }
            return SyncOutboxObject(sequence: key, values: try SyncOutboxReader.values(of: managed))
        }
    }

    /// Removes the objects `sequences` of `className`'s outbox (those the server committed) and returns how many
    /// were there. Call it in a write transaction; objects already gone are skipped, so removing twice does nothing
    /// more.
    @discardableResult
    public func removeSyncOutbox(className: String, sequences: [Int64]) throws(Realm.Error) -> Int {
        guard isInWriteTransaction else { throw .notInWriteTransaction }
        guard isStored(className) else { return 0 }
        let binding = try dynamicBinding(className)
        guard binding.table.kind == .asymmetric else {
            throw .invalidValue(type: className, property: "", reason: "not an asymmetric class: it has no outbox")
        }
        var removed = 0
        for key in sequences {
            if try tables.remove(binding: binding, key: key) { removed += 1 }
        }
        return removed
    }
}

/// Reads a stored object's values into ``SyncOutboxValue``s.
enum SyncOutboxReader {
    /// The persisted properties of `managed` (computed ones left out) by persisted name.
    static func values(of managed: ManagedObject) throws(Realm.Error) -> [String: SyncOutboxValue] {
        let table = managed.table
        var values: [String: SyncOutboxValue] = [:]
        for index in table.infos.indices where table.infos[index].type != .linkingObjects {
            let name = table.schema.properties[index].columnName
            values[name] = try value(managed.readAny(property: index), className: table.className, property: name)
        }
        return values
    }

    private static func value(_ any: Any?, className: String, property: String) throws(Realm.Error)
        -> SyncOutboxValue
    {
        func failure(_ reason: String) -> Realm.Error {
            .invalidValue(type: className, property: property, reason: reason)
        }
        guard let any else { return .value(.null) }
        switch any {
        case let value as Bool: return .value(.bool(value))
        case let value as Int: return .value(.int(Int64(value)))
        case let value as Int64: return .value(.int(value))
        case let value as Int32: return .value(.int(Int64(value)))
        case let value as Int16: return .value(.int(Int64(value)))
        case let value as Int8: return .value(.int(Int64(value)))
        case let value as Float: return .value(.float(value))
        case let value as Double: return .value(.double(value))
        case let value as String: return .value(.string(value))
        case let value as Data: return .value(.data(value))
        case let value as Date: return .value(.date(value.timeIntervalSince1970))
        case let value as ObjectId: return .value(.objectId(value.stringValue))
        case let value as UUID: return .value(.uuid(value))
        case let value as Decimal128: return .value(.decimal128(value.stringValue))
        case let value as AnyRealmValue: return try mixed(value, className: className, property: property)
        case let list as List<AnyRealmValue>: return try mixed(.list(list), className: className, property: property)
        case let map as Map<String, AnyRealmValue>:
            return try mixed(.dictionary(map), className: className, property: property)
        case let object as ObjectBase:
            guard let managed = object.managed else { throw failure("an embedded object that is not stored") }
            return .embedded(try values(of: managed))
        case let elements as [Any]:
            var result: [SyncOutboxValue] = []
            for element in elements { result.append(try value(element, className: className, property: property)) }
            return .list(result)
        case let entries as [String: Any]:
            var result: [String: SyncOutboxValue] = [:]
            for (key, element) in entries { result[key] = try value(element, className: className, property: property) }
            return .map(result)
        default:
            throw failure("\(type(of: any)) has no portable form for Strata Sync")
        }
    }

    private static func mixed(_ value: AnyRealmValue, className: String, property: String) throws(Realm.Error)
        -> SyncOutboxValue
    {
        switch value {
        case .none: return .value(.null)
        case .int(let value): return .value(.int(Int64(value)))
        case .bool(let value): return .value(.bool(value))
        case .float(let value): return .value(.float(value))
        case .double(let value): return .value(.double(value))
        case .string(let value): return .value(.string(value))
        case .data(let value): return .value(.data(value))
        case .date(let value): return .value(.date(value.timeIntervalSince1970))
        case .objectId(let value): return .value(.objectId(value.stringValue))
        case .decimal128(let value): return .value(.decimal128(value.stringValue))
        case .uuid(let value): return .value(.uuid(value))
        case .object:
            throw .invalidValue(
                type: className, property: property, reason: "an asymmetric object's mixed values cannot link")
        case .list(let list):
            var result: [SyncOutboxValue] = []
            for element in list { result.append(try mixed(element, className: className, property: property)) }
            return .list(result)
        case .dictionary(let map):
            var result: [String: SyncOutboxValue] = [:]
            for (key, element) in map { result[key] = try mixed(element, className: className, property: property) }
            return .map(result)
        }
    }
}

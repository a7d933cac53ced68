import Foundation
import StrataStorage

/// How the object layer lays out the file (layer 4, "tables"), on StrataStorage named trees:
/// - `$schema`: `version` → the schema version (u64 little-endian); `class:<name>` → the stored class (JSON).
/// - `o:<class>`: object key (8 bytes, big-endian) → the object's row (see `RowFormat`), in key order.
/// - `p:<class>`: encoded primary key → object key (8 bytes), for types with a primary key.
/// - `l:<class>.<property>`: object key → a nested list tree of the property's elements (each encoded as a
///   one-column row; links as object keys), for `List` properties.
/// - `s:<class>.<property>`: object key → a nested keyed tree of the property's elements (key: the element's
///   order-preserving encoding, value: the element as a one-column row), for `MutableSet` properties.
/// - `m:<class>.<property>`: object key → a nested keyed tree from the UTF-8 map key to the value as a one-column
///   row, for `Map` properties.
/// - `i:<class>.<property>`: encoded value (at most 256 bytes: longer strings and data are cut, so lookups
///   recheck the row) followed by the object key → empty, for indexed properties; for full-text indexes, each
///   distinct word of the string (folded, see `FullText`), a 0 byte and the object key → empty.
/// - `b:<class>.<property>`: for link properties, target key + origin key → the number of links (see
///   `RealmBacklinks.swift`).
/// - `x:<class>.<property>`: for mixed properties, collection id → the nested list or dictionary tree of a mixed
///   value (see `MixedCodec`).
enum TableNames {
    static let schema = "$schema"
    static let schemaVersionKey = Array("version".utf8)
    /// `$schema` key present once the file's backlink trees are complete (files from before backlinks get them
    /// rebuilt when first opened writable).
    static let backlinksKey = Array("backlinks".utf8)
    static func backlinks(_ originClass: String, _ property: String) -> String { "b:\(originClass).\(property)" }
    static func mixed(_ className: String, _ property: String) -> String { "x:\(className).\(property)" }
    static func classKey(_ name: String) -> [UInt8] { Array("class:\(name)".utf8) }
    static func rows(_ className: String) -> String { "o:" + className }
    static func primaryKeys(_ className: String) -> String { "p:" + className }
    static func index(_ className: String, _ property: String) -> String { "i:\(className).\(property)" }
    static func list(_ className: String, _ property: String) -> String { "l:\(className).\(property)" }
    static func set(_ className: String, _ property: String) -> String { "s:\(className).\(property)" }
    static func map(_ className: String, _ property: String) -> String { "m:\(className).\(property)" }
    /// The tree holding the elements of collection property `property`.
    static func collection(_ kind: _CollectionKind, _ className: String, _ property: String) -> String {
        switch kind {
        case .list: list(className, property)
        case .set: set(className, property)
        case .map: map(className, property)
        }
    }
}

/// A class definition as stored in the file.
struct StoredClass: Codable, Equatable {
    struct StoredProperty: Codable, Equatable {
        var name: String
        var type: PropertyType
        var optional: Bool
        var indexed: Bool
        var primary: Bool
        var objectClassName: String?
        /// True for a `List` property (absent in files written before lists existed).
        var list: Bool?
        /// True for a `MutableSet` property.
        var set: Bool?
        /// True for a `Map` property.
        var map: Bool?
        /// True when the index (`indexed`) is a full-text index of the property's words.
        var fullText: Bool?

        var isList: Bool { list ?? false }
        var isSet: Bool { self.set ?? false }
        var isMap: Bool { self.map ?? false }
        var isFullText: Bool { fullText ?? false }
        var collection: _CollectionKind? { isList ? .list : isSet ? .set : isMap ? .map : nil }
    }
    var name: String
    var embedded: Bool
    var asymmetric: Bool
    var properties: [StoredProperty]

    init(_ schema: ObjectSchema) {
        name = schema.className
        embedded = schema.isEmbedded
        asymmetric = schema.isAsymmetric
        // Linking objects are computed from the origin's links: nothing of them is stored in rows.
        properties = schema.properties.filter { $0.type != .linkingObjects }.map {
            StoredProperty(
                name: $0.columnName, type: $0.type, optional: $0.isOptional, indexed: $0.isIndexed,
                primary: $0.isPrimary,
                objectClassName: $0.objectClassName, list: $0.isArray ? true : nil, set: $0.isSet ? true : nil,
                map: $0.isMap ? true : nil, fullText: $0.isFullTextIndexed ? true : nil)
        }
    }

    func encoded() -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return Array((try? encoder.encode(self)) ?? Data())
    }

    static func decode(_ bytes: [UInt8], path: String) throws(Realm.Error) -> StoredClass {
        if let known = decoded.withLock({ $0[bytes] }) { return known }
        let stored: StoredClass
        do {
            stored = try JSONDecoder().decode(StoredClass.self, from: Data(bytes))
        } catch {
            throw .incompatibleFile(path: path, reason: "unreadable schema record: \(error)")
        }
        decoded.withLock { cache in
            if cache.count >= decodedLimit { cache.removeAll(keepingCapacity: true) }
            cache[bytes] = stored
        }
        return stored
    }

    /// Records already decoded, by their bytes. A write transaction reads the class definitions again whenever
    /// another writer committed since its Realm's version (every write of a busy file), and they almost never
    /// change: decoding their JSON each time was a fifth of the CPU time of small concurrent commits. Keyed by
    /// the exact bytes, so a changed definition is decoded afresh.
    private static let decoded = Locked<[[UInt8]: StoredClass]>([:])
    /// Definitions kept at most (all are dropped when it is reached: a file rarely has this many classes).
    private static let decodedLimit = 512

    /// One line per difference between this stored class and `schema`.
    func differences(from schema: ObjectSchema) -> [String] {
        var lines: [String] = []
        let current = StoredClass(schema)
        if embedded != current.embedded {
            lines.append(
                "\(name): stored as \(embedded ? "embedded" : "top-level"), declared \(current.embedded ? "embedded" : "top-level")"
            )
        }
        for property in properties {
            guard let now = current.properties.first(where: { $0.name == property.name }) else {
                lines.append("\(name).\(property.name): property removed")
                continue
            }
            if now.type != property.type || now.objectClassName != property.objectClassName {
                lines.append(
                    "\(name).\(property.name): type changed from \(property.type)\(property.objectClassName.map { "<\($0)>" } ?? "") to \(now.type)\(now.objectClassName.map { "<\($0)>" } ?? "")"
                )
            }
            if now.collection != property.collection {
                lines.append(
                    "\(name).\(property.name): collection changed from \(property.collection?.rawValue ?? "none") to \(now.collection?.rawValue ?? "none")"
                )
            }
            if now.optional != property.optional {
                lines.append("\(name).\(property.name): \(now.optional ? "made optional" : "made required")")
            }
            if now.primary != property.primary {
                lines.append("\(name).\(property.name): primary key \(now.primary ? "added" : "removed")")
            } else if now.indexed != property.indexed {
                lines.append("\(name).\(property.name): index \(now.indexed ? "added" : "removed")")
            } else if now.isFullText != property.isFullText {
                lines.append(
                    "\(name).\(property.name): index changed to \(now.isFullText ? "full-text" : "a value index")")
            }
        }
        for property in current.properties where !properties.contains(where: { $0.name == property.name }) {
            lines.append("\(name).\(property.name): property added")
        }
        return lines
    }
}

/// A model type as laid out in one file: which stored column holds each property.
@usableFromInline
final class TableBinding {
    let table: TableSchema
    /// Stored column of each property (property order).
    @usableFromInline let columns: [Int]
    /// Columns a row of this file stores.
    let columnCount: Int
    let rowsTree: String
    let primaryKeyTree: String
    /// The index tree of each property (property order; named for every property, used for indexed ones).
    let indexTrees: [String]
    /// The tree of each collection property's collections (property order; named for every property, used for
    /// collections): built once, since every collection access names it.
    let collectionTrees: [String]
    /// The properties with an index other than the primary key's, in property order.
    let secondaryIndexes: [Int]
    /// The to-one link and embedded-object properties (not collections), in property order: the ones a row write
    /// keeps backlink counts for. Most classes have none, and a row write then walks no property for them.
    let toOneLinks: [Int]
    /// For each property, whether setting it rewrites its own column alone (see `TableStore.rewriteColumn`): a
    /// stored plain value that no index, backlink count, primary key or mixed-value tree depends on.
    let rewritableAlone: [Bool]
    /// Whether every property is a stored plain value or the primary key: no link, embedded object, collection,
    /// mixed value, computed property or secondary index. Inserting such a row keeps nothing else in step, so
    /// `Realm.insert` encodes it straight from the object's boxes (see `Realm.insertPlain`).
    let plainRows: Bool
    /// The owning Realm's cached rows tree (see `Realm.stableRow`).
    @exclusivity(unchecked) var view: TreeView?
    @exclusivity(unchecked) var viewEpoch = UInt64.max
    @exclusivity(unchecked) var handle: TreeHandle?
    @exclusivity(unchecked) var handleEpoch = UInt64.max
    /// The owning Realm's primary-key tree in its write transaction (see `Realm.writablePrimaryKeys`).
    @exclusivity(unchecked) var primaryKeysHandle: TreeHandle?
    @exclusivity(unchecked) var primaryKeysEpoch = UInt64.max
    /// The write transaction (by its epoch) in which the class was known to be stored in the file.
    @exclusivity(unchecked) var storedEpoch = UInt64.max
    /// A row builder kept between row writes of this table (see ``RowBuilder/reset()``): taken while a row is
    /// built, so that a row written meanwhile (a linked object of the same class) gets a builder of its own.
    @exclusivity(unchecked) var spareRowBuilder: RowBuilder?
    /// The converted values of the last upsert of a plain dictionary (see `Realm.upsertPlainDictionary`), emptied,
    /// kept for the next one: allocating and freeing the list cost ~400 instructions an upsert.
    @exclusivity(unchecked) var spareGivenValues: [(property: Int, value: _StoredValue)] = []

    init(table: TableSchema, stored: StoredClass?) {
        self.table = table
        // A class not yet in the file will be stored as its schema says.
        let stored = stored ?? StoredClass(table.schema)
        columns = table.schema.properties.map { property in
            stored.properties.firstIndex { $0.name == property.columnName } ?? -1
        }
        columnCount = stored.properties.count
        rowsTree = TableNames.rows(table.className)
        primaryKeyTree = TableNames.primaryKeys(table.className)
        indexTrees = table.schema.properties.map { TableNames.index(table.className, $0.columnName) }
        collectionTrees = table.schema.properties.indices.map {
            TableNames.collection(
                table.infos[$0].collection ?? .list, table.className, table.schema.properties[$0].columnName)
        }
        secondaryIndexes = table.schema.properties.indices.filter {
            table.schema.properties[$0].isIndexed && !table.schema.properties[$0].isPrimary
        }
        toOneLinks = table.infos.indices.filter { table.infos[$0].type == .object && !table.infos[$0].isCollection }
        rewritableAlone = table.schema.properties.indices.map { [columns, secondaryIndexes] index in
            let info = table.infos[index]
            return columns[index] >= 0 && !info.isCollection && !secondaryIndexes.contains(index)
                && !table.schema.properties[index].isPrimary && info.type != .object
                && info.type != .linkingObjects && info.type != .any
        }
        plainRows = table.schema.properties.indices.allSatisfy { [rewritableAlone, columns] index in
            rewritableAlone[index] || (table.schema.properties[index].isPrimary && columns[index] >= 0)
        }
    }

    var className: String { table.className }
}

/// Object keys and primary keys as tree keys.
enum KeyEncoding {
    static func objectKey(_ key: Int64) -> [UInt8] {
        bigEndian(UInt64(bitPattern: key), after: nil)
    }

    /// Calls `body` with the 8 bytes of object key `key` as `objectKey(_:)` encodes them, on the stack: a key
    /// written once (a row's key, a primary key's value) need not allocate an array.
    @inline(__always)
    static func withObjectKey<R>(_ key: Int64, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try withUnsafeBytes(of: UInt64(bitPattern: key).bigEndian, body)
    }

    /// The 8 big-endian bytes of `value`, after a `tag` byte if there is one, in one allocation.
    ///
    /// Array literals, not `init(unsafeUninitializedCapacity:)`: on Linux the latter looks the array storage's
    /// generic metadata up at run time on every call (~330 instructions, more than the rest of the encoding), while
    /// a literal's storage type is resolved once. Keys are encoded once per inserted object and per lookup.
    @inline(__always)
    private static func bigEndian(_ value: UInt64, after tag: UInt8?) -> [UInt8] {
        let b = value.bigEndian
        func byte(_ shift: UInt64) -> UInt8 { UInt8(truncatingIfNeeded: b &>> shift) }
        guard let tag else { return [byte(0), byte(8), byte(16), byte(24), byte(32), byte(40), byte(48), byte(56)] }
        return [tag, byte(0), byte(8), byte(16), byte(24), byte(32), byte(40), byte(48), byte(56)]
    }

    static func decodeObjectKey(_ bytes: UnsafeRawBufferPointer) -> Int64 {
        guard bytes.count == 8 else { return -1 }
        return Int64(bitPattern: UInt64(bigEndian: bytes.loadUnaligned(as: UInt64.self)))
    }

    static func decodeObjectKey(_ bytes: [UInt8]) -> Int64 {
        bytes.withUnsafeBytes { decodeObjectKey($0) }
    }

    /// `primaryKey(.int(value))`'s 9 bytes, held on the stack: an upsert looks an integer key up per object, and
    /// the array `primaryKey(_:)` returns was an allocation and a free each time.
    struct IntPrimaryKey: StorageBytes {
        private let bytes: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8)

        init(_ value: Int64) {
            let b = (UInt64(bitPattern: value) ^ (1 << 63)).bigEndian
            func byte(_ shift: UInt64) -> UInt8 { UInt8(truncatingIfNeeded: b &>> shift) }
            bytes = (1, byte(0), byte(8), byte(16), byte(24), byte(32), byte(40), byte(48), byte(56))
        }

        func withStorageBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
            // `withUnsafeBytes(of:)` rethrows untyped: carry the typed error out in a `Result`.
            let result = withUnsafeBytes(of: bytes) { raw in Result { () throws(E) -> R in try body(raw) } }
            return try result.get()
        }
    }

    /// An order-preserving encoding of a primary key value.
    static func primaryKey(_ value: _StoredValue) -> [UInt8]? {
        switch value {
        case .null: return [0]
        case .int(let int):
            return bigEndian(UInt64(bitPattern: int) ^ (1 << 63), after: 1)
        case .string(let string): return [2] + Array(string.utf8)
        case .uuid(let uuid): return [3] + withUnsafeBytes(of: uuid.uuid) { Array($0) }
        case .objectId(let id): return [4] + id.bytes
        default: return nil
        }
    }

    /// The bytes of an index entry: the value's order-preserving encoding (cut to 256 bytes) and the object key.
    static func indexEntry(_ value: _StoredValue, key: Int64) -> [UInt8]? {
        var encoded: [UInt8]
        switch value {
        case .bool(let bool): encoded = [5, bool ? 1 : 0]
        case .date(let date):
            let bits = date.timeIntervalSinceReferenceDate.bitPattern
            let ordered = bits & (1 << 63) != 0 ? ~bits : bits | (1 << 63)
            encoded = [6] + withUnsafeBytes(of: ordered.bigEndian) { Array($0) }
        default:
            guard let key = primaryKey(value) else { return nil }
            encoded = key
        }
        if encoded.count > 256 { encoded.removeLast(encoded.count - 256) }
        return encoded + objectKey(key)
    }

    /// A primary key as it appears in messages.
    static func describe(_ value: _StoredValue) -> String {
        switch value {
        case .null: "nil"
        case .int(let int): "\(int)"
        case .string(let string): string
        case .uuid(let uuid): uuid.uuidString
        case .objectId(let id): id.stringValue
        default: "\(value)"
        }
    }
}

/// Largest String or Data value.
let maximumValueSize = 16 << 20

/// Encodes and decodes property values in rows.
enum RowCodec {
    /// Stores `value` for a property of type `info` in `column`. Links and embedded objects must already be
    /// resolved to object keys (`.int`). The names are for the error only: evaluated when one is thrown, so that
    /// encoding a row retains and releases no name per column.
    static func set(
        _ value: _StoredValue, column: Int, in row: inout RowBuilder, type className: @autoclosure () -> String,
        property: @autoclosure () -> String
    ) throws(Realm.Error) {
        switch value {
        case .null: row.setNull(column)
        case .int(let int): row.setInt(column, int)
        case .bool(let bool): row.setBool(column, bool)
        case .float(let float): row.setFloat(column, float)
        case .double(let double): row.setDouble(column, double)
        case .string(let string):
            guard string.utf8.count <= maximumValueSize else {
                throw .valueTooLarge(type: className(), property: property(), size: string.utf8.count)
            }
            row.setString(column, string)
        case .data(let data):
            guard data.count <= maximumValueSize else {
                throw .valueTooLarge(type: className(), property: property(), size: data.count)
            }
            row.setBytes(column, data)
        case .date(let date): row.setDouble(column, date.timeIntervalSinceReferenceDate)
        case .uuid(let uuid): row.setBytes(column, withUnsafeBytes(of: uuid.uuid) { Array($0) })
        case .objectId(let id): row.setBytes(column, id.bytes)
        case .decimal128(let decimal):
            let (high, low) = decimal.bid
            row.setBytes(
                column,
                withUnsafeBytes(of: low.littleEndian) { Array($0) }
                    + withUnsafeBytes(of: high.littleEndian) { Array($0) })
        case .object:
            preconditionFailure("links are resolved to object keys before encoding")
        case .collection:
            row.setNull(column)
        case .mixed(let bytes):
            row.setBytes(column, bytes)
        }
    }

    /// The value of `column` for a property of type `info`; links and embedded objects come back as `.int` keys.
    static func get(_ row: RowView, column: Int, info: _PropertyInfo) -> _StoredValue {
        guard column >= 0, !info.isCollection, !row.isNull(column) else { return .null }
        switch info.type {
        case .bool: return .bool(row.bool(column))
        case .int, .object: return .int(row.int(column))
        case .float: return .float(row.float(column))
        case .double: return .double(row.double(column))
        case .string: return .string(row.string(column))
        case .data: return .data(row.withBytes(column) { Data($0) })
        case .date: return .date(Date(timeIntervalSinceReferenceDate: row.double(column)))
        case .uuid:
            return row.withBytes(column) { bytes in
                guard bytes.count == 16 else { return .null }
                var uuid = UUID().uuid
                withUnsafeMutableBytes(of: &uuid) { $0.copyMemory(from: bytes) }
                return .uuid(UUID(uuid: uuid))
            }
        case .objectId:
            return row.withBytes(column) { bytes in
                guard let id = ObjectId(bytes: Array(bytes)) else { return .null }
                return .objectId(id)
            }
        case .decimal128:
            return row.withBytes(column) { bytes in
                guard bytes.count == 16 else { return .null }
                let low = bytes.loadUnaligned(fromByteOffset: 0, as: UInt64.self).littleEndian
                let high = bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self).littleEndian
                return .decimal128(Decimal128(bid: high, low: low))
            }
        case .any:
            return .mixed(row.withBytes(column) { Array($0) })
        case .linkingObjects:
            return .null
        }
    }
}

extension RowFormat {
    /// The one-column row of a fixed-size value (integers, booleans, floating point, dates), built directly: the
    /// same bytes as `RowBuilder` produces, without its buffers. nil for other values.
    static func singleFixedColumn(_ value: _StoredValue) -> [UInt8]? {
        let slot: UInt64
        switch value {
        case .int(let int): slot = UInt64(bitPattern: int)
        case .bool(let bool): slot = bool ? 1 : 0
        case .double(let double): slot = double.bitPattern
        case .float(let float): slot = UInt64(float.bitPattern)
        case .date(let date): slot = date.timeIntervalSinceReferenceDate.bitPattern
        default: return nil
        }
        // Format, 1 column, not null, not variable-size, then the slot little-endian: one literal, one allocation
        // (a shorter literal grown to 13 bytes allocated twice, per element of every collection write).
        return [
            version, 1, 0, 0, 0,
            UInt8(truncatingIfNeeded: slot), UInt8(truncatingIfNeeded: slot >> 8),
            UInt8(truncatingIfNeeded: slot >> 16), UInt8(truncatingIfNeeded: slot >> 24),
            UInt8(truncatingIfNeeded: slot >> 32), UInt8(truncatingIfNeeded: slot >> 40),
            UInt8(truncatingIfNeeded: slot >> 48), UInt8(truncatingIfNeeded: slot >> 56),
        ]
    }
}

extension RowFormat {
    /// The slot `RowBuilder` stores for `value` as a property of type `type` whose values are fixed-size (integers,
    /// booleans, floating point, dates): `.some(nil)` for nil, nil when the type is not fixed-size or `value` is
    /// not of that type (left to the encoder, which reports it).
    static func fixedSlot(_ value: _StoredValue, type: PropertyType) -> UInt64?? {
        switch (value, type) {
        case (.null, .int), (.null, .bool), (.null, .float), (.null, .double), (.null, .date): return .some(nil)
        case (.int(let int), .int): return UInt64(bitPattern: int)
        case (.bool(let bool), .bool): return bool ? 1 : 0
        case (.float(let float), .float): return UInt64(float.bitPattern)
        case (.double(let double), .double): return double.bitPattern
        case (.date(let date), .date): return date.timeIntervalSinceReferenceDate.bitPattern
        default: return nil
        }
    }
}

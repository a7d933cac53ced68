import Foundation

/// The bytes of an upload-queue entry: a compact binary form written at every captured commit (JSON cost more
/// than the rest of a small commit). All integers little-endian; strings and data as a length (varint) and bytes.
///
/// `2` (format) · sequence (8) · timestamp (string) · change count (varint) · per change: class (string), flags
/// (1 byte: 1 created, 2 deleted), primary key (value), value count (varint), per value: name (string), value;
/// collection count (varint), per collection: name (string), kind (1 byte), its payload — kind 1 (map): set
/// count (varint), per key: key (string), value; removed count (varint), per key: key (string); kind 2 (set):
/// added count (varint), per element: value, tag count (varint), tags (strings); the removed elements alike;
/// kind 3 (list): operation count (varint), per operation: 0 insert (id, 0/1 and the id it follows, value), 1 remove
/// (id), 2 clear (time).
/// Format 1 (before collections were captured) is format 2 without the collection part; format 2 is format 3
/// without the value tags 12–15 (mixed values and embedded objects); both are still read.
/// A value is a tag byte and its payload: 0 null; 1 bool (1); 2 int (8); 3 float (4, bits); 4 double (8, bits);
/// 5 string; 6 data; 7 date (8, seconds since 1970 as double bits); 8 decimal128 (string); 9 objectId (string);
/// 10 uuid (16); 11 link (the target's primary key, a value); 12 typed link (class, then the key, a value);
/// 13 list (count, values); 14 dictionary (count, per entry: key, value); 15 embedded object (count, per
/// property: name, value).
enum CapturedTransactionCodec {
    static let format: UInt8 = 3

    static func encode(_ entry: CapturedTransaction) -> [UInt8] {
        var writer = Writer()
        writer.bytes.append(format)
        writer.fixed(UInt64(bitPattern: entry.sequence))
        writer.string(entry.timestamp)
        writer.varint(entry.changes.count)
        for change in entry.changes {
            writer.string(change.className)
            writer.bytes.append((change.isCreated ? 1 : 0) | (change.isDeleted ? 2 : 0))
            writer.value(change.primaryKey)
            writer.varint(change.values.count)
            for (name, value) in change.values {
                writer.string(name)
                writer.value(value)
            }
            writer.varint(change.collections.count)
            for (name, collection) in change.collections {
                writer.string(name)
                writer.collection(collection)
            }
        }
        return writer.bytes
    }

    /// Decodes an entry; nil when `bytes` is not one (the caller reports the damage).
    static func decode(_ bytes: [UInt8]) -> CapturedTransaction? {
        var reader = Reader(bytes: bytes)
        guard let version = reader.byte(), (1...format).contains(version), let sequence = reader.fixed(8),
            let timestamp = reader.string(),
            let count = reader.varint()
        else { return nil }
        var changes: [CapturedObjectChange] = []
        for _ in 0..<count {
            guard let className = reader.string(), let flags = reader.byte(), let primaryKey = reader.value(),
                let valueCount = reader.varint()
            else { return nil }
            var values: [String: CapturedValue] = [:]
            for _ in 0..<valueCount {
                guard let name = reader.string(), let value = reader.value() else { return nil }
                values[name] = value
            }
            var collections: [String: CapturedCollectionChange] = [:]
            if version >= 2 {
                guard let collectionCount = reader.varint() else { return nil }
                for _ in 0..<collectionCount {
                    guard let name = reader.string(), let collection = reader.collection() else { return nil }
                    collections[name] = collection
                }
            }
            changes.append(
                CapturedObjectChange(
                    className: className, primaryKey: primaryKey, isCreated: flags & 1 != 0, isDeleted: flags & 2 != 0,
                    values: values, collections: collections))
        }
        guard reader.isAtEnd else { return nil }
        return CapturedTransaction(sequence: Int64(bitPattern: sequence), timestamp: timestamp, changes: changes)
    }

    private struct Writer {
        var bytes: [UInt8] = []

        init() { bytes.reserveCapacity(128) }

        mutating func fixed(_ value: UInt64, count: Int = 8) {
            for shift in 0..<count { bytes.append(UInt8(truncatingIfNeeded: value >> (8 * UInt64(shift)))) }
        }

        mutating func varint(_ value: Int) {
            var rest = UInt64(value)
            while rest >= 0x80 {
                bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
                rest >>= 7
            }
            bytes.append(UInt8(rest))
        }

        mutating func string(_ text: String) { data(text.utf8) }

        mutating func data<Bytes: Collection>(_ payload: Bytes) where Bytes.Element == UInt8 {
            varint(payload.count)
            bytes.append(contentsOf: payload)
        }

        mutating func value(_ value: CapturedValue) {
            switch value {
            case .null: bytes.append(0)
            case .bool(let flag): bytes += [1, flag ? 1 : 0]
            case .int(let number):
                bytes.append(2)
                fixed(UInt64(bitPattern: number))
            case .float(let number):
                bytes.append(3)
                fixed(UInt64(number.bitPattern), count: 4)
            case .double(let number):
                bytes.append(4)
                fixed(number.bitPattern)
            case .string(let text):
                bytes.append(5)
                string(text)
            case .data(let payload):
                bytes.append(6)
                data(payload)
            case .date(let seconds):
                bytes.append(7)
                fixed(seconds.bitPattern)
            case .decimal128(let text):
                bytes.append(8)
                string(text)
            case .objectId(let hex):
                bytes.append(9)
                string(hex)
            case .uuid(let id):
                bytes.append(10)
                withUnsafeBytes(of: id.uuid) { bytes.append(contentsOf: $0) }
            case .link(let key):
                bytes.append(11)
                self.value(key)
            case .typedLink(let className, let key):
                bytes.append(12)
                string(className)
                self.value(key)
            case .list(let elements):
                bytes.append(13)
                varint(elements.count)
                for element in elements { self.value(element) }
            case .dictionary(let values):
                bytes.append(14)
                entries(values)
            case .embedded(let properties):
                bytes.append(15)
                entries(properties)
            }
        }

        /// Entries sorted by key, so that equal values encode to equal bytes.
        mutating func entries(_ entries: [String: CapturedValue]) {
            varint(entries.count)
            for key in entries.keys.sorted() {
                string(key)
                value(entries[key]!)
            }
        }

        mutating func collection(_ change: CapturedCollectionChange) {
            switch change {
            case .map(let set, let removed):
                bytes.append(1)
                varint(set.count)
                for (key, value) in set {
                    string(key)
                    self.value(value)
                }
                varint(removed.count)
                for key in removed { string(key) }
            case .set(let added, let removed):
                bytes.append(2)
                for elements in [added, removed] {
                    varint(elements.count)
                    for element in elements {
                        value(element.value)
                        varint(element.tags.count)
                        for tag in element.tags { string(tag) }
                    }
                }
            case .list(let operations):
                bytes.append(3)
                varint(operations.count)
                for operation in operations {
                    switch operation {
                    case .insert(let id, let after, let value):
                        bytes.append(0)
                        string(id)
                        if let after {
                            bytes.append(1)
                            string(after)
                        } else {
                            bytes.append(0)
                        }
                        self.value(value)
                    case .remove(let id):
                        bytes.append(1)
                        string(id)
                    case .clear(let at):
                        bytes.append(2)
                        string(at)
                    }
                }
            }
        }
    }

    /// Reads with bounds checks: every accessor returns nil past the end.
    private struct Reader {
        let bytes: [UInt8]
        var offset = 0

        var isAtEnd: Bool { offset == bytes.count }

        mutating func byte() -> UInt8? {
            guard offset < bytes.count else { return nil }
            offset += 1
            return bytes[offset - 1]
        }

        mutating func fixed(_ count: Int) -> UInt64? {
            guard bytes.count - offset >= count else { return nil }
            var value: UInt64 = 0
            for index in 0..<count { value |= UInt64(bytes[offset + index]) << (8 * UInt64(index)) }
            offset += count
            return value
        }

        mutating func varint() -> Int? {
            var value: UInt64 = 0
            var shift: UInt64 = 0
            while let next = byte() {
                value |= UInt64(next & 0x7f) << shift
                if next & 0x80 == 0 { return value <= UInt64(Int.max) ? Int(value) : nil }
                shift += 7
                if shift > 63 { return nil }
            }
            return nil
        }

        mutating func data() -> [UInt8]? {
            guard let count = varint(), bytes.count - offset >= count else { return nil }
            offset += count
            return Array(bytes[offset - count..<offset])
        }

        mutating func string() -> String? { data().map { String(decoding: $0, as: UTF8.self) } }

        /// A value; nested at most 64 deep (links, mixed collections, embedded objects), so damaged bytes cannot
        /// recurse without end.
        mutating func value(depth: Int = 0) -> CapturedValue? {
            guard depth < 64, let tag = byte() else { return nil }
            switch tag {
            case 0: return .null
            case 1: return byte().map { .bool($0 != 0) }
            case 2: return fixed(8).map { .int(Int64(bitPattern: $0)) }
            case 3: return fixed(4).map { .float(Float(bitPattern: UInt32(truncatingIfNeeded: $0))) }
            case 4: return fixed(8).map { .double(Double(bitPattern: $0)) }
            case 5: return string().map { .string($0) }
            case 6: return data().map { .data(Data($0)) }
            case 7: return fixed(8).map { .date(Double(bitPattern: $0)) }
            case 8: return string().map { .decimal128($0) }
            case 9: return string().map { .objectId($0) }
            case 10:
                guard bytes.count - offset >= 16 else { return nil }
                var id = UUID().uuid
                withUnsafeMutableBytes(of: &id) { $0.copyBytes(from: bytes[offset..<offset + 16]) }
                offset += 16
                return .uuid(UUID(uuid: id))
            case 11: return value(depth: depth + 1).map { .link($0) }
            case 12:
                guard let className = string(), let key = value(depth: depth + 1) else { return nil }
                return .typedLink(className: className, key: key)
            case 13:
                guard let count = varint(), count <= bytes.count - offset else { return nil }
                var elements: [CapturedValue] = []
                for _ in 0..<count {
                    guard let element = value(depth: depth + 1) else { return nil }
                    elements.append(element)
                }
                return .list(elements)
            case 14: return entries(depth: depth).map { .dictionary($0) }
            case 15: return entries(depth: depth).map { .embedded($0) }
            default: return nil
            }
        }

        /// Keyed values (a dictionary's entries, an embedded object's properties) at `depth`.
        mutating func entries(depth: Int) -> [String: CapturedValue]? {
            guard let count = varint(), count <= bytes.count - offset else { return nil }
            var entries: [String: CapturedValue] = [:]
            for _ in 0..<count {
                guard let key = string(), let value = value(depth: depth + 1) else { return nil }
                entries[key] = value
            }
            return entries
        }

        mutating func collection() -> CapturedCollectionChange? {
            switch byte() {
            case 1:
                guard let setCount = varint() else { return nil }
                var set: [String: CapturedValue] = [:]
                for _ in 0..<setCount {
                    guard let key = string(), let value = value() else { return nil }
                    set[key] = value
                }
                guard let removedCount = varint() else { return nil }
                var removed: [String] = []
                for _ in 0..<removedCount {
                    guard let key = string() else { return nil }
                    removed.append(key)
                }
                return .map(set: set, removed: removed)
            case 2:
                guard let added = setElements(), let removed = setElements() else { return nil }
                return .set(added: added, removed: removed)
            case 3:
                guard let count = varint() else { return nil }
                var operations: [CapturedListOperation] = []
                for _ in 0..<count {
                    switch byte() {
                    case 0:
                        guard let id = string(), let hasAfter = byte() else { return nil }
                        var after: String?
                        if hasAfter == 1 {
                            guard let id = string() else { return nil }
                            after = id
                        }
                        guard let value = value() else { return nil }
                        operations.append(.insert(id: id, after: after, value: value))
                    case 1:
                        guard let id = string() else { return nil }
                        operations.append(.remove(id: id))
                    case 2:
                        guard let at = string() else { return nil }
                        operations.append(.clear(at: at))
                    default: return nil
                    }
                }
                return .list(operations)
            default: return nil
            }
        }

        mutating func setElements() -> [CapturedSetElement]? {
            guard let count = varint() else { return nil }
            var elements: [CapturedSetElement] = []
            for _ in 0..<count {
                guard let value = value(), let tagCount = varint() else { return nil }
                var tags: [String] = []
                for _ in 0..<tagCount {
                    guard let tag = string() else { return nil }
                    tags.append(tag)
                }
                elements.append(CapturedSetElement(value: value, tags: tags))
            }
            return elements
        }
    }
}

import Foundation
import StrataStorage

/// Mixed values (`AnyRealmValue`).
///
/// A mixed value is stored as bytes — in its row column, or as the one column of a collection element row — made
/// of a tag and a payload (`MixedCodec`). A link names its target's class and key. A nested list or dictionary
/// is stored as its own tree in `x:<class>.<property>` (a keyed tree from a collection id, drawn from that tree's
/// sequence, to a nested list or keyed tree), and the value holds the id: any depth is one lookup away, and
/// replacing or deleting the value drops the nested trees it owns, recursively.
///
/// Links held anywhere in a mixed property are counted in the property's backlink tree under the key
/// `<target class> 0x00 <target key> <origin key>`, so deleting an object finds the mixed values that point at it
/// (they become `.none`, in collections too).
///
/// This type is the byte encoding of a mixed value (null is not encoded: the column or element is null).
enum MixedCodec {
    enum Tag: UInt8 {
        case int = 1
        case bool, float, double, string, data, date, objectId, decimal128, uuid, link, list, dictionary
    }

    /// A decoded mixed value before links and collections are materialised.
    enum Decoded {
        case value(_StoredValue)
        case link(className: String, key: Int64)
        case list(UInt64)
        case dictionary(UInt64)
    }

    private static func bytes<T>(of value: T) -> [UInt8] { withUnsafeBytes(of: value) { Array($0) } }

    /// The encoding of a primitive value; nil for links, collections and null.
    static func primitive(_ value: _StoredValue) -> [UInt8]? {
        switch value {
        case .int(let int): [Tag.int.rawValue] + bytes(of: int.littleEndian)
        case .bool(let bool): [Tag.bool.rawValue, bool ? 1 : 0]
        case .float(let float): [Tag.float.rawValue] + bytes(of: float.bitPattern.littleEndian)
        case .double(let double): [Tag.double.rawValue] + bytes(of: double.bitPattern.littleEndian)
        case .string(let string): [Tag.string.rawValue] + Array(string.utf8)
        case .data(let data): [Tag.data.rawValue] + Array(data)
        case .date(let date):
            [Tag.date.rawValue] + bytes(of: date.timeIntervalSinceReferenceDate.bitPattern.littleEndian)
        case .objectId(let id): [Tag.objectId.rawValue] + id.bytes
        case .decimal128(let decimal):
            [Tag.decimal128.rawValue] + bytes(of: decimal.bid.low.littleEndian)
                + bytes(of: decimal.bid.high.littleEndian)
        case .uuid(let uuid): [Tag.uuid.rawValue] + bytes(of: uuid.uuid)
        case .null, .object, .collection, .mixed: nil
        }
    }

    static func link(className: String, key: Int64) -> [UInt8] {
        [Tag.link.rawValue] + bytes(of: key.littleEndian) + Array(className.utf8)
    }

    static func collection(_ tag: Tag, id: UInt64) -> [UInt8] { [tag.rawValue] + bytes(of: id.littleEndian) }

    /// Decodes `raw`; nil when the bytes are not a mixed value (damage).
    static func decode(_ raw: UnsafeRawBufferPointer) -> Decoded? {
        guard let first = raw.first, let tag = Tag(rawValue: first) else { return nil }
        let payload = UnsafeRawBufferPointer(rebasing: raw[1...])
        func u64() -> UInt64? { payload.count >= 8 ? payload.loadUnaligned(as: UInt64.self).littleEndian : nil }
        switch tag {
        case .int: return u64().map { .value(.int(Int64(bitPattern: $0))) }
        case .bool: return payload.count == 1 ? .value(.bool(payload[0] != 0)) : nil
        case .float:
            guard payload.count == 4 else { return nil }
            return .value(.float(Float(bitPattern: payload.loadUnaligned(as: UInt32.self).littleEndian)))
        case .double: return u64().map { .value(.double(Double(bitPattern: $0))) }
        case .string: return .value(.string(String(decoding: payload, as: UTF8.self)))
        case .data: return .value(.data(Data(payload)))
        case .date: return u64().map { .value(.date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: $0)))) }
        case .objectId: return ObjectId(bytes: Array(payload)).map { .value(.objectId($0)) }
        case .decimal128:
            guard payload.count == 16 else { return nil }
            let low = payload.loadUnaligned(fromByteOffset: 0, as: UInt64.self).littleEndian
            let high = payload.loadUnaligned(fromByteOffset: 8, as: UInt64.self).littleEndian
            return .value(.decimal128(Decimal128(bid: high, low: low)))
        case .uuid:
            guard payload.count == 16 else { return nil }
            var uuid = UUID().uuid
            withUnsafeMutableBytes(of: &uuid) { $0.copyMemory(from: payload) }
            return .value(.uuid(UUID(uuid: uuid)))
        case .link:
            guard let key = u64() else { return nil }
            let name = String(decoding: UnsafeRawBufferPointer(rebasing: payload[8...]), as: UTF8.self)
            return .link(className: name, key: Int64(bitPattern: key))
        case .list: return u64().map { .list($0) }
        case .dictionary: return u64().map { .dictionary($0) }
        }
    }

    static func decode(_ bytes: [UInt8]) -> Decoded? { bytes.withUnsafeBytes { decode($0) } }

    /// The bytes of a one-column element row holding `bytes` (a null element for nil, whatever the element type).
    static func elementRow(_ bytes: [UInt8]?) -> [UInt8] {
        var row = RowBuilder(columns: 1)
        if let bytes { row.setBytes(0, bytes) } else { row.setNull(0) }
        return row.finish()
    }

    /// The mixed bytes an element row holds (nil for null or damage).
    static func bytes(inElementRow row: [UInt8]) -> [UInt8]? {
        row.withUnsafeBytes { raw in
            guard let view = try? RowView(raw), !view.isNull(0) else { return nil }
            return view.withBytes(0) { Array($0) }
        }
    }

    /// The deepest nesting allowed: a mixed value may hold collections 100 levels deep.
    static let maximumDepth = 100
}

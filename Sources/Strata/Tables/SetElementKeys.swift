import Foundation

/// The keys of set elements in the trees `s:<class>.<property>`: a type tag and an order-preserving encoding, so
/// that membership is one lookup and duplicates cannot exist.
extension TableStore {
    /// The key of a set element: a type tag and an order-preserving encoding (links: the target's object key);
    /// nil for values that are not stored elements (an object not yet resolved to its key).
    static func setElementKey(_ resolved: _StoredValue) -> [UInt8]? {
        switch resolved {
        case .null: [0]
        case .int(let int): [1] + withUnsafeBytes(of: (UInt64(bitPattern: int) ^ (1 << 63)).bigEndian) { Array($0) }
        case .string(let string): [2] + Array(string.utf8)
        case .uuid(let uuid): [3] + withUnsafeBytes(of: uuid.uuid) { Array($0) }
        case .objectId(let id): [4] + id.bytes
        case .bool(let bool): [5, bool ? 1 : 0]
        case .date(let date): [6] + orderedBits(date.timeIntervalSinceReferenceDate)
        case .double(let double): [7] + orderedBits(double)
        case .float(let float): [8] + orderedBits(Double(float))
        case .data(let data): [9] + Array(data)
        case .decimal128(let decimal):
            [10] + withUnsafeBytes(of: decimal.bid.high.bigEndian) { Array($0) }
                + withUnsafeBytes(of: decimal.bid.low.bigEndian) { Array($0) }
        case .mixed(let bytes): [11] + bytes
        case .object, .collection: nil
        }
    }

    /// Big-endian bits of `value` that sort like the numbers (zero's sign dropped).
    private static func orderedBits(_ value: Double) -> [UInt8] {
        let bits = (value == 0 ? 0.0 : value).bitPattern
        let ordered = bits & (1 << 63) != 0 ? ~bits : bits | (1 << 63)
        return withUnsafeBytes(of: ordered.bigEndian) { Array($0) }
    }
}

import Strata

extension SyncValue {
    /// Whether this value may be stored in an element (or the value) of `column`.
    func fits(_ column: ServerColumn) -> Bool {
        let property = column.property
        if case .null = self {
            return property.isOptional || property.type == .any || (property.type == .object && column.shape == .value)
        }
        switch (property.type, self) {
        case (.bool, .bool), (.int, .int), (.float, .float), (.double, .double), (.data, .data), (.date, .date),
            (.decimal128, .decimal128), (.uuid, .uuid):
            return true
        case (.string, .string(let text)):
            return !text.utf8.contains(0)
        case (.objectId, .objectId(let hex)):
            return SyncValue.isObjectIdHex(hex)
        case (.object, .link(let key)):
            guard case .object(_, let primaryKey) = column.link else { return false }
            return key.isPrimaryKey(of: primaryKey)
        case (.object, .embedded):
            if case .embedded = column.link { return true }
            return false
        case (.any, .link), (.any, .embedded):
            return false
        case (.any, .string(let text)):
            return !text.utf8.contains(0)
        case (.any, _):
            return true
        default:
            return false
        }
    }

    /// Whether this value can be a primary key of type `type`.
    func isPrimaryKey(of type: PropertyType) -> Bool {
        switch (type, self) {
        case (.int, .int), (.uuid, .uuid): true
        case (.string, .string(let text)): !text.utf8.contains(0)
        case (.objectId, .objectId(let hex)): SyncValue.isObjectIdHex(hex)
        default: false
        }
    }

    /// Whether `hex` is 24 lowercase or uppercase hexadecimal digits.
    static func isObjectIdHex(_ hex: String) -> Bool {
        hex.utf8.count == 24
            && hex.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 | 0x20 >= 0x61 && $0 | 0x20 <= 0x66) }
    }
}

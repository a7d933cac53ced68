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
        case (.any, _):
            return fitsMixed
        default:
            return false
        }
    }

    /// Whether this value may be a mixed value: any plain value, a typed link with a primary key value, or a
    /// list or dictionary of such values (nested to any depth); never an embedded object or a bare link.
    var fitsMixed: Bool {
        switch self {
        case .link, .embedded: return false
        case .string(let text): return !text.utf8.contains(0)
        case .typedLink(let type, let key):
            return !type.isEmpty && [.int, .string, .objectId, .uuid].contains { key.isPrimaryKey(of: $0) }
        case .list(let elements): return elements.allSatisfy(\.fitsMixed)
        case .dictionary(let entries): return entries.values.allSatisfy(\.fitsMixed)
        default: return true
        }
    }

    /// Whether every typed link in this value (a mixed value, or its nested collections) names a synced type of
    /// `schema` by a key of that type's primary key kind.
    func typedLinksResolve(in schema: ServerSchema) -> Bool {
        switch self {
        case .typedLink(let type, let key):
            guard let target = schema.types[type] else { return false }
            return key.isPrimaryKey(of: target.primaryKey.property.type)
        case .list(let elements): return elements.allSatisfy { $0.typedLinksResolve(in: schema) }
        case .dictionary(let entries), .embedded(let entries):
            return entries.values.allSatisfy { $0.typedLinksResolve(in: schema) }
        default: return true
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

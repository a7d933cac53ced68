import Foundation

extension SyncValue {
    /// This value as the text of a parameter for `column` (nil for SQL NULL), which
    /// ``ServerColumn/parameterExpression(_:)`` casts to the column's type.
    func sqlText(for column: ServerColumn) throws -> String? {
        if column.property.type == .any { return try SyncJSON.text(self) }  // mixed: tagged, to keep the kind
        switch self {
        case .null: return nil
        case .bool(let value): return value ? "true" : "false"
        case .int(let value): return String(value)
        case .float(let value): return SyncValue.sqlText(Double(value), isFinite: value.isFinite)
        case .double(let value): return SyncValue.sqlText(value, isFinite: value.isFinite)
        case .string(let value), .decimal128(let value), .objectId(let value): return value
        case .data(let value): return "\\x" + value.map { String($0, radix: 16).leftPadded(to: 2) }.joined()
        case .date(let seconds): return SyncValue.sqlText(seconds, isFinite: seconds.isFinite)
        case .uuid(let value): return value.uuidString
        case .link(let key): return try key.primaryKeySQLText()
        case .embedded, .list, .dictionary, .typedLink: return try SyncJSON.text(PlainJSON.value(self))
        }
    }

    /// A primary key value as parameter text.
    func primaryKeySQLText() throws -> String {
        switch self {
        case .int(let value): return String(value)
        case .string(let value), .objectId(let value): return value
        case .uuid(let value): return value.uuidString
        default: throw SyncError.invalidChange(type: "", property: nil, reason: "\(kind) cannot be a primary key")
        }
    }

    private static func sqlText(_ value: Double, isFinite: Bool) -> String {
        if isFinite { return "\(value)" }
        return value.isNaN ? "NaN" : value > 0 ? "Infinity" : "-Infinity"
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}

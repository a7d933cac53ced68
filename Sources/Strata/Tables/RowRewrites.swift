import StrataStorage

/// Rewriting the rows of a class in place, for schema changes and link nullification.
extension TableStore {
    /// Replaces each row of `rows` for which `transform` returns new bytes (nil keeps the row): the rows are
    /// read in one pass, then written.
    func rewriteRows(in rows: TreeHandle, _ transform: (_ key: [UInt8], _ row: RowView) throws -> [UInt8]?)
        throws(Realm.Error)
    {
        let transaction = try transactionForWrite()
        try mutate {
            var changed: [([UInt8], [UInt8])] = []
            var cursor = try transaction.makeCursor(for: rows)
            var more = try cursor.first()
            while more {
                let key = try cursor.key()
                if let rewritten = try cursor.value().withUnsafeBytes({ try transform(key, try RowView($0)) }) {
                    changed.append((key, rewritten))
                }
                more = try cursor.next()
            }
            for (key, bytes) in changed { try transaction.put(key, bytes, in: rows) }
        }
    }
}

/// Rewrites rows generically, from the stored class definition alone.
enum RowRewriter {
    /// `row` with `column` set to `value`.
    static func replacing(
        column: Int, with value: _StoredValue, in row: RowView, properties: [StoredClass.StoredProperty]
    ) throws -> [UInt8] {
        var builder = RowBuilder(columns: max(row.columnCount, properties.count))
        for index in 0..<builder.columnCount where index < properties.count {
            let info = _PropertyInfo(type: properties[index].type, isOptional: properties[index].optional)
            let current = index == column ? value : RowCodec.get(row, column: index, info: info)
            try RowCodec.set(current, column: index, in: &builder, type: "", property: properties[index].name)
        }
        return builder.finish()
    }

    static func nullify(_ row: RowView, columns: [Int], properties: [StoredClass.StoredProperty]) -> [UInt8] {
        var builder = RowBuilder(columns: row.columnCount)
        for column in 0..<row.columnCount {
            guard !columns.contains(column), column < properties.count else { continue }
            let info = _PropertyInfo(type: properties[column].type, isOptional: properties[column].optional)
            let value = RowCodec.get(row, column: column, info: info)
            try? RowCodec.set(value, column: column, in: &builder, type: "", property: "")
        }
        return builder.finish()
    }
}

import Strata

/// One object type as Strata Sync stores it in PostgreSQL: a table named after the persisted class name, a
/// primary key column, one column per persisted property, and Strata Sync's own columns (see
/// ``ServerSchema``).
public struct SyncedType: Sendable, Hashable {
    /// The persisted class name, which is also the table's name.
    public let className: String
    /// The primary key column.
    public let primaryKey: ServerColumn
    /// The other persisted properties' columns, in declaration order.
    public let columns: [ServerColumn]

    /// The column of the persisted property `name`.
    public func column(named name: String) -> ServerColumn? {
        columns.first { $0.name == name }
    }

    init(schema: ObjectSchema, all: [ObjectSchema]) throws(SyncError) {
        guard let key = schema.primaryKeyProperty else { throw .missingPrimaryKey(type: schema.className) }
        try SQLName.check(identifier: schema.className)
        className = schema.className
        _ = try ServerColumn.primaryKeySQLType(key.type, property: key)
        primaryKey = try ServerColumn(property: key, link: nil)
        columns = try Self.columns(of: schema, all: all)
    }

    /// The columns of `schema`'s persisted properties other than the primary key, in declaration order; `all`
    /// holds the schemas that links and embedded objects name. `enclosing` names the embedded types being read
    /// (an embedded type that holds itself gets no embedded columns, rather than endless ones).
    static func columns(of schema: ObjectSchema, all: [ObjectSchema], enclosing: Set<String> = []) throws(SyncError)
        -> [ServerColumn]
    {
        var columns: [ServerColumn] = []
        for property in schema.properties where !property.isPrimary && property.type != .linkingObjects {
            try SQLName.check(identifier: property.columnName)
            if property.columnName.hasPrefix(SQLName.reservedPrefix) {
                throw .invalidName(property.columnName, reason: "names starting with _strata_ are Strata Sync's own")
            }
            var link: ServerColumn.LinkTarget?
            var embeddedColumns: [ServerColumn] = []
            if property.type == .object, let target = property.objectClassName {
                guard let targetSchema = all.first(where: { $0.className == target }) else {
                    throw .unknownType(target)
                }
                if targetSchema.isEmbedded {
                    link = .embedded(className: target)
                    // Only the capture trigger reads them: a field it cannot type (a link to an object without a
                    // primary key) leaves plain-SQL writes of the column uncaptured, as before.
                    if !enclosing.contains(target) {
                        embeddedColumns =
                            (try? Self.columns(
                                of: targetSchema, all: all, enclosing: enclosing.union([schema.className, target])))
                            ?? []
                    }
                } else {
                    guard let targetKey = targetSchema.primaryKeyProperty else {
                        throw .missingPrimaryKey(type: target)
                    }
                    link = .object(className: target, primaryKey: targetKey.type)
                }
            }
            columns.append(try ServerColumn(property: property, link: link, embeddedColumns: embeddedColumns))
        }
        return columns
    }
}

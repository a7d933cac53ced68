import Strata

/// The PostgreSQL column of one synced property: its SQL type, and whether it holds one value or the
/// materialised contents of a collection.
///
/// Column types follow the property type: `bool` → `boolean`, `int` → `bigint`, `float` → `real`, `double` →
/// `double precision`, `string` → `text`, `data` → `bytea`, `date` → `timestamp with time zone` (microseconds),
/// `decimal128` → `numeric`, `objectId` → `text` (24 hex digits), `uuid` → `uuid`, a link → the type of the
/// target's primary key, an embedded object and a mixed value → `jsonb`, and every list, set or map → `jsonb`
/// (an array, or an object for maps). Columns are nullable: the server stores what clients send and cannot
/// invent a value for a row it has only seen deletes or updates of.
public struct ServerColumn: Sendable, Hashable {
    /// How a property's values are arranged.
    public enum Shape: Sendable, Hashable {
        /// One value.
        case value
        /// A `List`: a jsonb array.
        case list
        /// A `MutableSet`: a jsonb array.
        case set
        /// A `Map`: a jsonb object.
        case map
    }

    /// The Strata property.
    public let property: Property
    /// The column's name: the persisted property name.
    public var name: String { property.columnName }
    /// One value or a collection.
    public let shape: Shape
    /// The SQL type of the column, as `format_type` prints it.
    public let sqlType: String
    /// The SQL type of one element (for a value column, ``sqlType``).
    let elementSQLType: String
    /// For links: the primary key column type of the target; for embedded objects: the embedded schema.
    let link: LinkTarget?
    /// For embedded objects: the columns the embedded type's properties would have (the fields of the jsonb
    /// object), which the capture trigger reads plain-SQL writes by; empty for an embedded type that holds itself.
    let embeddedColumns: [ServerColumn]

    /// Where a link or an embedded object points.
    enum LinkTarget: Sendable, Hashable {
        case object(className: String, primaryKey: PropertyType)
        case embedded(className: String)
    }

    init(property: Property, link: LinkTarget?, embeddedColumns: [ServerColumn] = []) throws(SyncError) {
        self.property = property
        self.link = link
        self.embeddedColumns = embeddedColumns
        shape = property.isArray ? .list : property.isSet ? .set : property.isMap ? .map : .value
        switch property.type {
        case .bool: elementSQLType = "boolean"
        case .int: elementSQLType = "bigint"
        case .float: elementSQLType = "real"
        case .double: elementSQLType = "double precision"
        case .string, .objectId: elementSQLType = "text"
        case .data: elementSQLType = "bytea"
        case .date: elementSQLType = "timestamp with time zone"
        case .decimal128: elementSQLType = "numeric"
        case .uuid: elementSQLType = "uuid"
        case .any: elementSQLType = "jsonb"
        case .object:
            switch link {
            case .object(_, let primaryKey):
                elementSQLType = try ServerColumn.primaryKeySQLType(primaryKey, property: property)
            case .embedded, nil: elementSQLType = "jsonb"
            }
        case .linkingObjects:
            throw .invalidChange(
                type: "", property: property.columnName, reason: "linking objects are computed, not synced")
        }
        sqlType = shape == .value ? elementSQLType : "jsonb"
    }

    /// The column type of a primary key of type `type`.
    static func primaryKeySQLType(_ type: PropertyType, property: Property) throws(SyncError) -> String {
        switch type {
        case .int: "bigint"
        case .string, .objectId: "text"
        case .uuid: "uuid"
        default:
            throw .invalidChange(
                type: property.objectClassName ?? "", property: property.columnName,
                reason: "a primary key of type \(type) cannot be synced")
        }
    }

    /// The SQL expression that turns text parameter `$index` into a value of this column.
    func parameterExpression(_ index: Int) -> String {
        textExpression("$\(index)")
    }

    /// The SQL expression that turns `text`, an SQL expression of type text, into a value of this column.
    func textExpression(_ text: String) -> String {
        shape == .value && property.type == .date
            ? "to_timestamp(\(text)::double precision)" : "\(text)::\(sqlType)"
    }
}

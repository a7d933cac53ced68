import Strata

/// An asymmetric object type (`AsymmetricObject`) as Strata Sync stores it in PostgreSQL: upload-only, one row
/// per object in a table named after the persisted class name, inserted once and never merged or sent down.
///
/// The table has `_strata_scope text`, `_strata_client_id text` and `_strata_client_seq bigint` (the uploading
/// client and the object's key in that client's outbox, never reused within the file: together its primary key,
/// so a retried upload inserts nothing twice), `_strata_received_at timestamptz` (the insert's time), and one
/// typed column per persisted property, typed as an object type's columns are (``ServerColumn``). Embedded
/// objects are `jsonb` objects and collections `jsonb` arrays or objects, in their plain JSON form.
public struct AsymmetricType: Sendable, Hashable {
    /// The persisted class name, which is also the table's name.
    public let className: String
    /// The persisted properties' columns, in declaration order.
    public let columns: [ServerColumn]

    /// The column of the persisted property `name`.
    public func column(named name: String) -> ServerColumn? {
        columns.first { $0.name == name }
    }

    init(schema: ObjectSchema, all: [ObjectSchema]) throws(SyncError) {
        try SQLName.check(identifier: schema.className)
        className = schema.className
        columns = try SyncedType.columns(of: schema, all: all)
    }
}

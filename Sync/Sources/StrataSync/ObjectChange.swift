/// What one replica did to one object: created it, updated some of its properties, deleted it — each part
/// stamped with the ``HybridTimestamp`` of when it happened.
///
/// The server merges a change into the object's row by the conflict rules of Documentation/Sync.md: each
/// property takes the value with the greatest timestamp (last writer wins); the object is live when its latest
/// create is later than its latest delete, so a delete wins over concurrent updates (an update never brings an
/// object back) and a create after the delete does.
public struct ObjectChange: Sendable, Hashable, Codable {
    /// The persisted class name of the object's type.
    public var objectType: String
    /// The object's primary key.
    public var primaryKey: SyncValue
    /// When the object was created (or re-created), if this change creates it. A create gives every persisted
    /// property of the type in ``properties`` (as a new object has them all).
    public var created: HybridTimestamp?
    /// When the object was deleted, if this change deletes it (the delete marker).
    public var deleted: HybridTimestamp?
    /// Property updates by persisted property name.
    public var properties: [String: PropertyUpdate]

    /// A change of the object of type `objectType` with primary key `primaryKey`.
    public init(
        objectType: String, primaryKey: SyncValue, created: HybridTimestamp? = nil, deleted: HybridTimestamp? = nil,
        properties: [String: PropertyUpdate] = [:]
    ) {
        self.objectType = objectType
        self.primaryKey = primaryKey
        self.created = created
        self.deleted = deleted
        self.properties = properties
    }

    /// Whether the change does nothing (after the server dropped the parts that lost their conflicts).
    public var isEmpty: Bool { created == nil && deleted == nil && properties.isEmpty }
}

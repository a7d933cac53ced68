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
    /// Whether the change carries the object's whole merged state: its create and delete times, every property
    /// with its value and clock, every collection whole (elements with their ids, tags and clocks, removals and
    /// clears). The server logs one when a merge makes an object live again that already had a state (a create
    /// later than its latest delete), so that every replica — one that deleted the object, one that never had
    /// it, the creator — ends with the server's row, property writes made while it was deleted included; a
    /// snapshot change is one too. A replica applies it by the usual rules, and applies its own uploads' log
    /// entries that hold one (see ``SyncClient``).
    public var isWholeState: Bool {
        get { wholeState ?? false }
        set { wholeState = newValue ? true : nil }
    }
    /// Absent in the JSON unless true (entries written before it existed read as false).
    private var wholeState: Bool?

    /// A change of the object of type `objectType` with primary key `primaryKey` (`isWholeState`: see
    /// ``isWholeState``).
    public init(
        objectType: String, primaryKey: SyncValue, created: HybridTimestamp? = nil, deleted: HybridTimestamp? = nil,
        properties: [String: PropertyUpdate] = [:], isWholeState: Bool = false
    ) {
        self.objectType = objectType
        self.primaryKey = primaryKey
        self.created = created
        self.deleted = deleted
        self.properties = properties
        wholeState = isWholeState ? true : nil
    }

    /// Whether the change does nothing (after the server dropped the parts that lost their conflicts).
    public var isEmpty: Bool { created == nil && deleted == nil && properties.isEmpty }
}

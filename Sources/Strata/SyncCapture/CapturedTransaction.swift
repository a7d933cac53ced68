public import Foundation

/// What one captured write transaction changed in objects of synced classes, as the upload queue stores it (see
/// `Documentation/Sync.md`, "Change capture"): one entry per committed write transaction, in commit order,
/// stamped with one timestamp the ``SyncCaptureRecorder`` gave at the commit.
///
/// Values are read at the commit from the write transaction, so a later write never changes what an earlier
/// entry says. For Strata Sync (`StrataSync`), not for applications.
@_spi(StrataSync) public struct CapturedTransaction: Sendable, Hashable {
    /// The entry's place in the queue: 1, 2, 3, … per file, never reused.
    public var sequence: Int64
    /// The recorder's timestamp for the whole transaction (its ``SyncCaptureRecorder/stamp()``).
    public var timestamp: String
    /// The changed objects, in the order the transaction first wrote them.
    public var changes: [CapturedObjectChange]

    /// An entry.
    public init(sequence: Int64, timestamp: String, changes: [CapturedObjectChange]) {
        self.sequence = sequence
        self.timestamp = timestamp
        self.changes = changes
    }
}

/// One object's change in a ``CapturedTransaction``.
@_spi(StrataSync) public struct CapturedObjectChange: Sendable, Hashable {
    /// The persisted class name.
    public var className: String
    /// The object's primary key.
    public var primaryKey: CapturedValue
    /// Whether the transaction created the object (``values`` then holds every persisted property it captures).
    public var isCreated: Bool
    /// Whether the transaction deleted the object (``values`` is then empty).
    public var isDeleted: Bool
    /// The new values of the properties the transaction changed, by persisted name.
    public var values: [String: CapturedValue]
    /// What the transaction did to the object's synced collection properties, by persisted name (only those it
    /// changed; for a created object, every non-empty one).
    public var collections: [String: CapturedCollectionChange]

    /// A change of the object `primaryKey` of `className`.
    public init(
        className: String, primaryKey: CapturedValue, isCreated: Bool, isDeleted: Bool, values: [String: CapturedValue],
        collections: [String: CapturedCollectionChange] = [:]
    ) {
        self.className = className
        self.primaryKey = primaryKey
        self.isCreated = isCreated
        self.isDeleted = isDeleted
        self.values = values
        self.collections = collections
    }
}

/// One captured property value, in portable form: no object keys (a link is its target's primary key).
@_spi(StrataSync) public enum CapturedValue: Sendable, Hashable {
    /// No value (a nil optional or link).
    case null
    /// A `Bool`.
    case bool(Bool)
    /// An integer of any width.
    case int(Int64)
    /// A `Float`.
    case float(Float)
    /// A `Double`.
    case double(Double)
    /// A `String`.
    case string(String)
    /// A `Data`.
    case data(Data)
    /// A `Date`, in seconds since 1970.
    case date(Double)
    /// A `Decimal128`, as its text.
    case decimal128(String)
    /// An `ObjectId`, as 24 hexadecimal digits.
    case objectId(String)
    /// A `UUID`.
    case uuid(UUID)
    /// A link: the target object's primary key.
    indirect case link(CapturedValue)
    /// A mixed value's link: the target's persisted class name and primary key (a mixed property may link to any
    /// class, so the class travels with the key).
    indirect case typedLink(className: String, key: CapturedValue)
    /// A mixed value holding a list, or an embedded object's list or set property: the elements in order.
    indirect case list([CapturedValue])
    /// A mixed value holding a dictionary, or an embedded object's map property: the entries by key.
    indirect case dictionary([String: CapturedValue])
    /// An embedded object: its persisted properties by persisted name (nested embedded objects as values).
    indirect case embedded([String: CapturedValue])
}

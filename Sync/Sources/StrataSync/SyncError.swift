/// Why Strata Sync refused an input or could not do its work. A refused upload changes nothing in PostgreSQL:
/// the whole batch is one transaction.
public enum SyncError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A received timestamp is further ahead of this replica's wall clock than the clock allows.
    case clockDrift(HybridTimestamp, wallMilliseconds: Int64)
    /// An object type that is not synced (not in the ``ServerSchema``), or that is embedded (embedded objects
    /// travel inside their parent).
    case unknownType(String)
    /// A property that the synced type does not have (or a computed one).
    case unknownProperty(type: String, property: String)
    /// A synced type without a primary key: sync identifies objects by primary key.
    case missingPrimaryKey(type: String)
    /// A value whose kind does not fit the property (for example a string for an `int` property).
    case valueTypeMismatch(type: String, property: String, expected: String, found: String)
    /// A change that does not fit the property's shape (a list operation on a map property, a whole value on a
    /// list property, …) or is malformed (a create that does not give every property).
    case invalidChange(type: String, property: String?, reason: String)
    /// A name that cannot be a PostgreSQL identifier or a scope (empty, too long, reserved, or with characters
    /// outside the allowed set).
    case invalidName(String, reason: String)
    /// The tables in PostgreSQL disagree with the Strata schema in a way an additive migration cannot fix (a
    /// column of another type): such a change needs a new scope or a manual migration.
    case incompatibleSchema(type: String, column: String, reason: String)
    /// The change format version of a batch that this library does not read.
    case unsupportedFormatVersion(Int)
    /// Data read back from PostgreSQL that this library did not write in that form.
    case corruptServerState(String)
    /// A pull after sequence `after` of `scope`, whose log was trimmed through `trimmedThrough` (later than
    /// `after`): the entries in between are gone, so the replica must bootstrap from a snapshot
    /// (``SyncClient/bootstrap()``, which ``SyncClient/syncOnce()`` runs by itself).
    case historyTrimmed(scope: String, after: Int64, trimmedThrough: Int64)
    /// The HTTP gateway (``GatewaySyncServer``) refused a request or failed, with HTTP status `status` and its
    /// error body's `code` and `message`: 401 `unauthorized` (no or an unknown bearer token), 403 `forbidden`
    /// (the token may not read or write the scope, or upload as the client id), 400 (a malformed request, or
    /// the code of the ``SyncError`` the server raised for the input, such as `unknownType`), 409
    /// `incompatibleSchema`, 413 `payloadTooLarge`, 503 `serverUnavailable` (PostgreSQL unreachable), 500
    /// `internalError`; or an answer the client could not read (`code` `badResponse`). A trimmed history comes
    /// back as ``historyTrimmed(scope:after:trimmedThrough:)`` instead, as it does without the gateway.
    case gatewayError(status: Int, code: String, message: String)
    /// The case's name (`historyTrimmed`, `unknownType`, …): the code of the gateway's error bodies.
    public var code: String {
        switch self {
        case .clockDrift: "clockDrift"
        case .unknownType: "unknownType"
        case .unknownProperty: "unknownProperty"
        case .missingPrimaryKey: "missingPrimaryKey"
        case .valueTypeMismatch: "valueTypeMismatch"
        case .invalidChange: "invalidChange"
        case .invalidName: "invalidName"
        case .incompatibleSchema: "incompatibleSchema"
        case .unsupportedFormatVersion: "unsupportedFormatVersion"
        case .corruptServerState: "corruptServerState"
        case .historyTrimmed: "historyTrimmed"
        case .gatewayError(_, let code, _): code
        }
    }
    /// A sentence naming the cause.
    public var description: String {
        switch self {
        case .clockDrift(let timestamp, let wall):
            return "timestamp \(timestamp) is too far ahead of this replica's wall clock (\(wall) ms)"
        case .unknownType(let name): return "\"\(name)\" is not a synced object type"
        case .unknownProperty(let type, let property): return "\(type) has no synced property \"\(property)\""
        case .missingPrimaryKey(let type): return "\(type) has no primary key: synced types need one"
        case .valueTypeMismatch(let type, let property, let expected, let found):
            return "\(type).\(property) takes \(expected) values, not \(found)"
        case .invalidChange(let type, let property, let reason):
            return "invalid change of \(type)\(property.map { ".\($0)" } ?? ""): \(reason)"
        case .invalidName(let name, let reason): return "\"\(name)\" cannot be used: \(reason)"
        case .incompatibleSchema(let type, let column, let reason):
            return "the PostgreSQL table of \(type) does not fit column \(column): \(reason)"
        case .unsupportedFormatVersion(let version): return "change format version \(version) is not supported"
        case .corruptServerState(let reason): return "unexpected data in PostgreSQL: \(reason)"
        case .historyTrimmed(let scope, let after, let trimmed):
            return "the log of \(scope) is trimmed through \(trimmed), past \(after): bootstrap from a snapshot"
        case .gatewayError(let status, let code, let message):
            return "the sync gateway answered \(status) \(code): \(message)"
        }
    }
}

/// One upload from a client: the changes of one local write transaction (or several, in order), numbered by the
/// client so that a retried upload is applied once.
///
/// `(clientID, clientSequence)` is the idempotency key: the server records it in the same PostgreSQL
/// transaction as the merge, and an upload whose key it has already recorded changes nothing and gets the first
/// result back.
public struct UploadBatch: Sendable, Hashable, Codable {
    /// The change format version this library writes and reads.
    public static let currentFormatVersion = 1

    /// The change format version of this batch (``currentFormatVersion``).
    public var formatVersion: Int
    /// The scope (the shared dataset) the changes belong to.
    public var scope: String
    /// The uploading client's stable id (a replica id; its ``HybridLogicalClock/replica``).
    public var clientID: String
    /// The client's number for this upload: 1, 2, 3, … per client, never reused.
    public var clientSequence: Int64
    /// The object changes, applied in order.
    public var changes: [ObjectChange]

    /// A batch in the current format.
    public init(scope: String, clientID: String, clientSequence: Int64, changes: [ObjectChange]) {
        self.formatVersion = Self.currentFormatVersion
        self.scope = scope
        self.clientID = clientID
        self.clientSequence = clientSequence
        self.changes = changes
    }
}

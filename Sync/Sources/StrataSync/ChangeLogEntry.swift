/// One committed merge in a scope's change log: what it accepted, numbered by the scope's gap-free,
/// commit-ordered sequence.
public struct ChangeLogEntry: Sendable, Hashable, Codable {
    /// The scope.
    public var scope: String
    /// The entry's number in the scope: 1, 2, 3, … in commit order, without gaps.
    public var sequence: Int64
    /// The client whose upload this is (nil for writes captured from plain SQL).
    public var clientID: String?
    /// The client's number for the upload (nil for writes captured from plain SQL).
    public var clientSequence: Int64?
    /// The accepted changes: the parts of the upload that won their conflicts, in upload order. Replicas apply
    /// them with the same rules, in sequence order, as one write transaction per entry.
    public var changes: [ObjectChange]

    /// An entry of `scope`'s log.
    public init(scope: String, sequence: Int64, clientID: String?, clientSequence: Int64?, changes: [ObjectChange]) {
        self.scope = scope
        self.sequence = sequence
        self.clientID = clientID
        self.clientSequence = clientSequence
        self.changes = changes
    }
}

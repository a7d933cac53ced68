/// What a bearer token lets its holder do: the scopes it may read (pull, snapshot, wait for changes) and write
/// (upload, insert asymmetric objects), and the client ids it may upload as.
///
/// Binding a device's token to its client id keeps one device from sending uploads numbered as another's (the
/// server applies each `(clientID, clientSequence)` once, so a forged one would make the real upload a no-op).
public struct GatewayGrant: Sendable, Hashable, Codable {
    /// The scopes the token may read.
    public var read: Set<String>
    /// The scopes the token may write.
    public var write: Set<String>
    /// The client ids the token may upload as; nil for any (a trusted service's token).
    public var clientIDs: Set<String>?

    /// A grant to read `read`, write `write`, as the clients `clientIDs` (nil: any).
    public init(read: Set<String>, write: Set<String>, clientIDs: Set<String>? = nil) {
        self.read = read
        self.write = write
        self.clientIDs = clientIDs
    }

    /// Whether the token may upload as `clientID`.
    public func allows(clientID: String) -> Bool {
        clientIDs?.contains(clientID) ?? true
    }
}

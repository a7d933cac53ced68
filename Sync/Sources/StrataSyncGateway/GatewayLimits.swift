/// The bounds a gateway puts on one request, so that one client cannot hold its memory or its connections.
public struct GatewayLimits: Sendable, Hashable {
    /// The largest request body accepted (uploads, asymmetric inserts), in bytes; larger ones get 413.
    public var maximumBodyBytes = 8 << 20
    /// The longest a pull waits for a commit (`wait=`), in seconds; longer waits are cut to it.
    public var maximumWaitSeconds = 30
    /// The most log entries one pull returns (`limit=`); larger limits are cut to it.
    public var maximumPullLimit = 1000
    /// The most objects of one snapshot page (`pageSize=`); larger pages are cut to it.
    public var maximumSnapshotPageSize = 5000

    /// The default bounds: 8 MiB bodies, 30 s waits, 1,000 entries per pull, 5,000 objects per snapshot page.
    public init() {}
}

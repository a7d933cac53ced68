import Hummingbird
import Logging
import NIOCore
import PostgresNIO
import ServiceLifecycle
import StrataSync

/// A thin HTTP gateway to Strata Sync for clients that must not hold PostgreSQL's credentials (devices): the
/// change format as JSON over HTTP, each request authorized by a bearer token mapped to the scopes it may read
/// and write (``GatewayGrant``). The gateway holds the only database credentials; clients use
/// `SyncClient(configuration:schema:gateway:token:scope:clientID:…)`.
///
/// Routes (under `v1/scopes/<scope>/`; JSON bodies; errors as `{"code": …, "message": …}`):
/// - `POST uploads`: `[UploadBatch]` → `[UploadResult]` (write grant; every batch of the URL's scope and of a
///   client id the grant allows);
/// - `GET changes?after=<seq>&limit=<n>&wait=<seconds>`: `{"entries": [ChangeLogEntry], "lastSequence": n}` (read
///   grant); with nothing after `after` it waits up to `wait` seconds for a commit (a long poll); `limit=0` only
///   waits and reports the last sequence;
/// - `GET snapshot?pageSize=<n>`: newline-delimited JSON, `{"page": [ObjectChange]}` lines then
///   `{"sequence": n}` (read grant), one consistent snapshot (see `ServerMerge.snapshot`);
/// - `POST asymmetric`: an `AsymmetricUpload` → `{"inserted": n}` (write grant).
///
/// Statuses: 401 no or an unknown token, 403 a scope or client id not granted, 400 a malformed request or an
/// input the merge refuses, 410 a trimmed history, 413 a body over ``GatewayLimits/maximumBodyBytes``, 409
/// tables that do not fit, 503 PostgreSQL unreachable, 500 anything else.
///
/// ```swift
/// let gateway = SyncGateway(schema: schema, client: postgres, tokens: ["device-token": grant])
/// try await gateway.application(host: "0.0.0.0", port: 8080).runService()
/// ```
public struct SyncGateway: Sendable {
    /// Looks a bearer token up: its grant, or nil for an unknown token.
    public typealias TokenLookup = @Sendable (String) async throws -> GatewayGrant?

    /// The merge the gateway applies uploads with and reads the log through.
    public let merge: ServerMerge
    /// The bounds on one request.
    public let limits: GatewayLimits
    let client: PostgresClient
    let grant: TokenLookup
    let logger: Logger
    let wakeUps: GatewayWakeUps

    /// A gateway to the tables of `schema` (migrated with ``StrataSync/ServerSchema/migrate(_:logger:)``) through
    /// `client` (which the caller runs), authorizing requests with `tokens`.
    public init(
        schema: ServerSchema, client: PostgresClient, tokens: @escaping TokenLookup, limits: GatewayLimits = .init(),
        logger: Logger = Logger(label: "strata-sync-gateway")
    ) {
        merge = ServerMerge(schema: schema, client: client, logger: logger)
        self.client = client
        self.grant = tokens
        self.limits = limits
        self.logger = logger
        wakeUps = GatewayWakeUps(client: client, logger: logger)
    }

    /// A gateway whose tokens are the keys of `tokens`, each granted its value.
    public init(
        schema: ServerSchema, client: PostgresClient, tokens: [String: GatewayGrant], limits: GatewayLimits = .init(),
        logger: Logger = Logger(label: "strata-sync-gateway")
    ) {
        self.init(schema: schema, client: client, tokens: { tokens[$0] }, limits: limits, logger: logger)
    }

    /// The service that holds the gateway's `LISTEN`s for long polls: run it beside a server of ``router()``
    /// (``application(host:port:onServerRunning:)`` does); without it, long polls wait their whole time.
    public var listener: some Service { wakeUps }

    /// A Hummingbird application serving ``router()`` on `host`:`port` (port 0 picks a free one, which
    /// `onServerRunning` can read from the channel's local address) with ``listener`` as a service. It does not
    /// run the PostgreSQL client: run that beside it (or add it to the application's services).
    public func application(
        host: String, port: Int, onServerRunning: @escaping @Sendable (any Channel) async -> Void = { _ in }
    ) -> some ApplicationProtocol {
        Application(
            router: router(), configuration: .init(address: .hostname(host, port: port), serverName: nil),
            services: [wakeUps], onServerRunning: onServerRunning, logger: logger)
    }
}

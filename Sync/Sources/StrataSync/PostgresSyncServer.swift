import Logging
import PostgresNIO

/// A ``SyncServer`` that is PostgreSQL itself: uploads merged by ``ServerMerge``, pulls and snapshots read from
/// the tables, wake-ups by `LISTEN strata_<scope>`. For services that may hold the database's credentials;
/// devices go through the gateway instead (``GatewaySyncServer``).
public struct PostgresSyncServer: SyncServer {
    /// The merge into the tables of the schema.
    public let merge: ServerMerge
    private let client: PostgresClient
    private let logger: Logger

    /// A server on the tables of `schema` (migrated with ``ServerSchema/migrate(_:logger:)``) through `client`,
    /// which the caller runs.
    public init(schema: ServerSchema, client: PostgresClient, logger: Logger) {
        merge = ServerMerge(schema: schema, client: client, logger: logger)
        self.client = client
        self.logger = logger
    }

    /// Merges `batches` with ``merge``.
    public func apply(_ batches: [UploadBatch]) async throws -> [UploadResult] {
        try await merge.apply(batches)
    }

    /// Reads the log (``ServerMerge/pull(scope:after:limit:)``).
    public func pull(scope: String, after: Int64, limit: Int) async throws -> [ChangeLogEntry] {
        try await merge.pull(scope: scope, after: after, limit: limit)
    }

    /// Reads a snapshot (``ServerMerge/snapshot(scope:pageSize:_:)``).
    public func snapshot(scope: String, pageSize: Int, _ body: ([ObjectChange]) async throws -> Void) async throws
        -> Int64
    {
        try await merge.snapshot(scope: scope, pageSize: pageSize, body)
    }

    /// Inserts asymmetric objects (``ServerMerge/insert(_:)``).
    public func insert(_ upload: AsymmetricUpload) async throws -> Int {
        try await merge.insert(upload)
    }

    /// `LISTEN strata_<scope>` on a connection of the client's pool, held while the stream is in use; a failed
    /// connection is logged and listened on again a second later.
    public func wakeUps(scope: String) -> AsyncStream<Void> {
        let client = client
        let logger = logger
        let channel = "strata_" + scope
        return AsyncStream(bufferingPolicy: .bufferingNewest(1)) { wake in
            let listener = Task {
                while !Task.isCancelled {
                    do {
                        try await client.withConnection { connection in
                            try await connection.listen(on: channel) { notifications in
                                wake.yield()  // listening: catch up on what came before
                                for try await _ in notifications { wake.yield() }
                            }
                        }
                    } catch {
                        if Task.isCancelled { break }
                        logger.warning("LISTEN failed; retrying", metadata: ["error": "\(error)"])
                        try? await Task.sleep(for: .seconds(1))
                    }
                }
                wake.finish()
            }
            wake.onTermination = { _ in listener.cancel() }
        }
    }
}

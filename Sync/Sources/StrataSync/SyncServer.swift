/// Where a ``SyncClient`` sends its uploads and reads the change log: the transport seam between the client and
/// the server side.
///
/// Two conformances ship with Strata Sync: ``PostgresSyncServer``, which merges into PostgreSQL directly (a
/// service holding database credentials), and ``GatewaySyncServer``, which speaks JSON over HTTP to a Strata
/// Sync gateway (`StrataSyncGateway`; a device holding only a bearer token). Both carry the same change format
/// and give the same answers and errors, so the client behaves the same over either.
public protocol SyncServer: Sendable {
    /// Applies `batches` (one client's, of one scope, in the client's order), each once; returns a result per
    /// batch, in order. See ``ServerMerge`` for what a merge does.
    ///
    /// - Throws: ``SyncError`` for batches the server refuses (nothing of the refused transaction is applied),
    ///   or the transport's error.
    func apply(_ batches: [UploadBatch]) async throws -> [UploadResult]

    /// The entries of `scope`'s change log after sequence `after`, at most `limit`, in sequence order.
    ///
    /// - Throws: ``SyncError/historyTrimmed(scope:after:trimmedThrough:)`` when entries after `after` were
    ///   trimmed away (the client then bootstraps), other ``SyncError``s, or the transport's error.
    func pull(scope: String, after: Int64, limit: Int) async throws -> [ChangeLogEntry]

    /// Hands every row of `scope` to `body`, in pages of at most `pageSize` objects, as one consistent snapshot;
    /// returns the scope's sequence that the snapshot shows (see ``ServerMerge/snapshot(scope:pageSize:_:)``).
    func snapshot(scope: String, pageSize: Int, _ body: ([ObjectChange]) async throws -> Void) async throws
        -> Int64

    /// Inserts the asymmetric objects of `upload`, each once; returns how many rows were new.
    func insert(_ upload: AsymmetricUpload) async throws -> Int

    /// Wake-ups for `scope`: one element when the stream starts (to catch up on what came before) and one after
    /// each commit that reaches the scope's log, until the stream is dropped or its task cancelled. A wake-up
    /// only: the client pulls by sequence afterwards, so a lost or merged wake-up delays, never loses, a change.
    /// The stream retries a lost connection by itself.
    func wakeUps(scope: String) -> AsyncStream<Void>
}

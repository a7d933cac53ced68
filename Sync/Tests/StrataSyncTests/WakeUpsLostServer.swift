import StrataSync

/// A ``SyncServer`` whose wake-ups are all lost: uploads, pulls, snapshots and inserts go to `base`, but the
/// wake-up stream never yields (not even the first element) and ends only when its task is cancelled. A running
/// client of it downloads only in `run()`'s first and fallback rounds.
struct WakeUpsLostServer: SyncServer {
    let base: any SyncServer

    func apply(_ batches: [UploadBatch]) async throws -> [UploadResult] { try await base.apply(batches) }

    func pull(scope: String, after: Int64, limit: Int) async throws -> [ChangeLogEntry] {
        try await base.pull(scope: scope, after: after, limit: limit)
    }

    func snapshot(scope: String, pageSize: Int, _ body: ([ObjectChange]) async throws -> Void) async throws -> Int64 {
        try await base.snapshot(scope: scope, pageSize: pageSize, body)
    }

    func insert(_ upload: AsymmetricUpload) async throws -> Int { try await base.insert(upload) }

    func wakeUps(scope: String) -> AsyncStream<Void> { AsyncStream { _ in } }
}

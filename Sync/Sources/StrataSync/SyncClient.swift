import Foundation
import Logging
import PostgresNIO
@_spi(StrataSync) import Strata
import Synchronization

/// Keeps one Strata file in sync with a scope in PostgreSQL: uploads the file's upload queue, and downloads and
/// applies the scope's change log — through PostgreSQL directly (``init(configuration:schema:client:scope:clientID:clock:batchSize:uploadInterval:maximumChangesPerApply:logger:)``),
/// through the HTTP gateway with a bearer token (``init(configuration:schema:gateway:token:scope:clientID:clock:batchSize:uploadInterval:maximumChangesPerApply:logger:)``),
/// or through any other ``SyncServer``.
///
/// Creating a client turns change capture on for the file (in this process): from then on every write
/// transaction that creates, changes or deletes objects of the synced types appends one entry to the upload
/// queue inside the file, in the same commit. The client then
/// - uploads the entries in order, each as one ``UploadBatch`` numbered `(clientID, entry sequence)`, up to
///   ``batchSize`` of them merged in one PostgreSQL transaction (each still its own log entry), and removes
///   them once the server has acknowledged them: a retry after a crash or a lost answer is applied once by the
///   server;
/// - pulls the log entries after the scope's checkpoint and applies them, several whole entries (at most
///   ``maximumChangesPerApply`` object changes) per Strata write transaction, which also stores the new
///   checkpoint and is not captured; observers therefore see whole server transactions, never part of one.
///
/// ```swift
/// let sync = try SyncClient(
///     configuration: configuration, schema: schema, client: postgres, scope: "main", clientID: "service-a")
/// await sync.run()              // until the task is cancelled; or syncOnce() when the caller decides
/// ```
///
/// The client id must be unique per file and stable across restarts (the queue's sequence numbers are the
/// file's); a new file needs a new id.
public actor SyncClient {
    /// The uploading replica's id (``UploadBatch/clientID``, the clock's replica).
    public let clientID: String
    /// The scope this file syncs with.
    public let scope: String
    /// The replica's hybrid logical clock, which stamps captured writes.
    public let clock: HybridLogicalClock
    /// How many queue entries an upload round reads, and log entries a download round pulls, at a time.
    public let batchSize: Int
    /// How often ``run()`` looks for local writes to upload (downloads wait for the server's wake-ups).
    public let uploadInterval: Duration
    /// How many object changes one local write transaction applies at most when it applies several downloaded
    /// log entries together (always whole entries: one larger than this is applied alone).
    public let maximumChangesPerApply: Int
    let configuration: Realm.Configuration
    let schema: ServerSchema
    /// Where uploads go and the log comes from.
    let server: any SyncServer
    let logger: Logger
    /// Where tests stop the client (``SyncClientHooks``); none by default.
    var hooks = SyncClientHooks()

    /// A client for the file of `configuration` and the types of `schema` (migrated with
    /// ``ServerSchema/migrate(_:logger:)``), through PostgreSQL's `client` (which the caller runs): a
    /// ``PostgresSyncServer``. Turns capture on.
    /// `batchSize`, `uploadInterval` and `maximumChangesPerApply` set ``batchSize``, ``uploadInterval`` and
    /// ``maximumChangesPerApply``.
    ///
    /// - Throws: ``SyncError/invalidName(_:reason:)`` for a scope that is not 1–48 letters, digits and
    ///   underscores.
    public init(
        configuration: Realm.Configuration, schema: ServerSchema, client: PostgresClient, scope: String,
        clientID: String, clock: HybridLogicalClock? = nil, batchSize: Int = 500,
        uploadInterval: Duration = .milliseconds(20), maximumChangesPerApply: Int = 10_000,
        logger: Logger = Logger(label: "strata-sync")
    ) throws {
        try self.init(
            configuration: configuration, schema: schema,
            server: PostgresSyncServer(schema: schema, client: client, logger: logger), scope: scope,
            clientID: clientID, clock: clock, batchSize: batchSize, uploadInterval: uploadInterval,
            maximumChangesPerApply: maximumChangesPerApply, logger: logger)
    }

    /// A client for the file of `configuration` and the types of `schema` through the Strata Sync gateway at
    /// `gateway` (a ``GatewaySyncServer``), authenticated by bearer token `token`: no PostgreSQL credentials on
    /// this machine. `schema` needs no migration here (the gateway's side has migrated it); its namespace is not
    /// used. Turns capture on. The other parameters are those of
    /// ``init(configuration:schema:client:scope:clientID:clock:batchSize:uploadInterval:maximumChangesPerApply:logger:)``.
    ///
    /// - Throws: ``SyncError/invalidName(_:reason:)`` for a scope that is not 1–48 letters, digits and
    ///   underscores.
    public init(
        configuration: Realm.Configuration, schema: ServerSchema, gateway: URL, token: String, scope: String,
        clientID: String, clock: HybridLogicalClock? = nil, batchSize: Int = 500,
        uploadInterval: Duration = .milliseconds(20), maximumChangesPerApply: Int = 10_000,
        logger: Logger = Logger(label: "strata-sync")
    ) throws {
        try self.init(
            configuration: configuration, schema: schema,
            server: GatewaySyncServer(url: gateway, token: token, logger: logger), scope: scope, clientID: clientID,
            clock: clock, batchSize: batchSize, uploadInterval: uploadInterval,
            maximumChangesPerApply: maximumChangesPerApply, logger: logger)
    }

    /// A client for the file of `configuration` and the types of `schema` through `server`. Turns capture on.
    /// The other parameters are those of
    /// ``init(configuration:schema:client:scope:clientID:clock:batchSize:uploadInterval:maximumChangesPerApply:logger:)``.
    ///
    /// - Throws: ``SyncError/invalidName(_:reason:)`` for a scope that is not 1–48 letters, digits and
    ///   underscores.
    public init(
        configuration: Realm.Configuration, schema: ServerSchema, server: any SyncServer, scope: String,
        clientID: String, clock: HybridLogicalClock? = nil, batchSize: Int = 500,
        uploadInterval: Duration = .milliseconds(20), maximumChangesPerApply: Int = 10_000,
        logger: Logger = Logger(label: "strata-sync")
    ) throws {
        self.batchSize = max(1, batchSize)
        self.uploadInterval = uploadInterval
        self.maximumChangesPerApply = max(1, maximumChangesPerApply)
        try SQLName.check(scope: scope)
        self.configuration = configuration
        self.schema = schema
        self.server = server
        self.scope = scope
        self.clientID = clientID
        self.clock = clock ?? HybridLogicalClock(replica: clientID)
        self.logger = logger
        let synced = Set(schema.types.keys)
        configuration.startSyncCapture(classes: synced, recorder: ClockRecorder(clock: self.clock))
    }

    /// Sets the points where a test stops the client (see ``SyncClientHooks``).
    @_spi(StrataSyncTesting) public func setHooks(_ hooks: SyncClientHooks) {
        self.hooks = hooks
    }

    /// Turns capture off: later writes are not queued (``run()`` should be stopped first).
    public func stop() {
        configuration.stopSyncCapture()
    }

    /// Uploads every queued entry, applies every log entry after the checkpoint, then uploads the asymmetric
    /// types' outboxes: last, so that an outbox the server refuses (a table that does not fit) holds up neither
    /// direction of the objects' sync.
    public func syncOnce() async throws {
        try await uploadQueue()
        try await downloadOrBootstrap()
        try await uploadAsymmetricPending()
    }

    /// Uploads the queued entries in order, ``batchSize`` at a time merged together (see
    /// `ServerMerge.apply(_: [UploadBatch])`), then the outboxes of the asymmetric types
    /// (``uploadAsymmetricPending()``); returns how many entries and objects. Entries leave the queue once the
    /// server has applied them; those that fail stay, and are sent again (with the same numbers) next time.
    @discardableResult
    public func uploadPending() async throws -> Int {
        let entries = try await uploadQueue()
        return entries + (try await uploadAsymmetricPending())
    }

    /// Uploads the queued entries (see ``uploadPending()``); returns how many.
    @discardableResult
    private func uploadQueue() async throws -> Int {
        let configuration = configuration
        var uploaded = 0
        while true {
            let limit = batchSize
            let entries = try await RealmThread.run {
                let realm = try Realm(configuration: configuration)
                realm.refresh()
                return try realm.syncQueue(limit: limit)
            }
            guard let last = entries.last else { break }
            let batches = try entries.map { entry in
                UploadBatch(
                    scope: scope, clientID: clientID, clientSequence: entry.sequence,
                    changes: try entry.objectChanges(schema: schema))
            }
            let results = try await server.apply(batches)
            logger.debug(
                "uploaded",
                metadata: [
                    "through": "\(last.sequence)", "retries": "\(results.filter(\.wasAlreadyApplied).count)",
                ])
            hooks.uploadCommitted?(last.sequence)
            try await RealmThread.run {
                let realm = try Realm(configuration: configuration)
                try realm.write { try realm.removeSyncQueue(through: last.sequence) }
            }
            uploaded += entries.count
        }
        return uploaded
    }

    /// Pulls the log entries after the scope's checkpoint and applies them, whole entries together in write
    /// transactions of at most ``maximumChangesPerApply`` object changes (each with the new checkpoint, not
    /// captured); returns how many entries.
    @discardableResult
    public func downloadPending() async throws -> Int {
        let configuration = configuration
        let scope = scope
        var applied = 0
        // Whether this download applied an entry of another replica: this replica's own entries after it are
        // then applied again (see ``entriesToApply(_:clientID:replayingOwn:)``).
        var replayingOwn = false
        while true {
            let checkpoint = try await RealmThread.run {
                try Realm(configuration: configuration).syncCheckpoint(scope: scope)
            }
            let entries = try await server.pull(scope: scope, after: checkpoint, limit: batchSize)
            if entries.isEmpty { return applied }
            for entry in entries where entry.clientID != clientID {
                for change in entry.changes { receive(change) }
            }
            let schema = schema
            let clientID = clientID
            let writes = Self.applyGroups(entries, maximumChanges: maximumChangesPerApply)
            let applying = hooks.applying
            let replayingBefore = replayingOwn
            replayingOwn = try await RealmThread.run {
                var replaying = replayingBefore
                let realm = try Realm(configuration: configuration)
                for group in writes {
                    try realm.write {
                        try realm.markApplyingSyncChanges()
                        // A concurrent client of the same file may have applied some of them meanwhile.
                        let checkpoint = try realm.syncCheckpoint(scope: scope)
                        let missing = group.filter { $0.sequence > checkpoint }
                        guard let last = missing.last else { return }
                        let toApply = Self.entriesToApply(missing, clientID: clientID, replayingOwn: &replaying)
                        if !toApply.isEmpty {
                            let apply = try LocalApply(realm: realm, schema: schema)
                            for entry in toApply {
                                for change in entry.changes { try apply.apply(change) }
                            }
                        }
                        applying?(missing.map(\.sequence))
                        try realm.setSyncCheckpoint(last.sequence, scope: scope)
                    }
                }
                return replaying
            }
            applied += entries.count
        }
    }

    /// Which of `entries` (in log order) a download applies. Entries of other replicas, always. This replica's
    /// own entries are in its file already, so they only move the checkpoint — until the download has applied
    /// an entry of another replica: the server merged that one before the own entries after it, so applying it
    /// may have overwritten what they wrote (an earlier write of another replica uploaded before this replica's
    /// later one). From then on the own entries are applied again, as the server merged them, so the file ends
    /// as the log says. An own entry that carries an object's whole state (``ObjectChange/isWholeState``: the
    /// upload revived an object whose row held writes this replica may not have) is applied too, and so are the
    /// own entries after it. (Own writes still queued keep their values through the local merge, ``LocalApply``.)
    static func entriesToApply(_ entries: [ChangeLogEntry], clientID: String, replayingOwn: inout Bool)
        -> [ChangeLogEntry]
    {
        entries.filter { entry in
            if entry.clientID != clientID || entry.changes.contains(where: \.isWholeState) {
                replayingOwn = true
                return true
            }
            return replayingOwn
        }
    }

    /// `entries` cut into runs of whole entries, each of at most `maximumChanges` object changes (an entry with more
    /// makes a run of its own): each run is applied as one local write transaction.
    static func applyGroups(_ entries: [ChangeLogEntry], maximumChanges: Int) -> [[ChangeLogEntry]] {
        var groups: [[ChangeLogEntry]] = []
        var group: [ChangeLogEntry] = []
        var changes = 0
        for entry in entries {
            if !group.isEmpty, changes + entry.changes.count > maximumChanges {
                groups.append(group)
                group = []
                changes = 0
            }
            group.append(entry)
            changes += entry.changes.count
        }
        if !group.isEmpty { groups.append(group) }
        return groups
    }

    /// The default of ``fallbackDownloadInterval``: 10 seconds.
    public static let defaultFallbackDownloadInterval: Duration = .seconds(10)

    /// How long ``run()`` goes at most without a whole round (a download) when no wake-up comes: the longest a
    /// lost wake-up delays a change. ``defaultFallbackDownloadInterval`` unless
    /// ``setFallbackDownloadInterval(_:)`` changed it; ``run()`` reads it when it starts, and checks it at each
    /// upload tick (every ``uploadInterval``), so a shorter interval than that acts as ``uploadInterval``.
    public private(set) var fallbackDownloadInterval: Duration = SyncClient.defaultFallbackDownloadInterval

    /// Sets ``fallbackDownloadInterval``, for the next ``run()``. A shorter interval bounds the delay of a lost
    /// wake-up more tightly, at the cost of a pull every interval on an idle client.
    public func setFallbackDownloadInterval(_ interval: Duration) {
        fallbackDownloadInterval = interval
    }

    /// Syncs until the task is cancelled: a whole round (``syncOnce()``) at start and whenever the server wakes the
    /// client (``SyncServer/wakeUps(scope:)``: PostgreSQL's NOTIFY of the scope's channel, or the gateway's long
    /// poll, after a commit), and an upload of local writes every ``uploadInterval`` (so an idle client sends
    /// the server nothing but its wake-up wait), and a whole round at least every ``fallbackDownloadInterval`` (10
    /// seconds by default) in case a wake-up was lost. Errors of a round (the server unreachable, say) are logged and the round runs again at the next
    /// tick; nothing is lost meanwhile.
    public func run() async {
        let (ticks, tick) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        // Set by a wake-up, kept until a whole round succeeds: a tick never drops a pending download.
        let downloadDue = SharedFlag(true)
        let server = server
        let scope = scope
        let interval = uploadInterval
        let fallbackInterval = fallbackDownloadInterval
        let logger = logger
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await _ in server.wakeUps(scope: scope) {
                    downloadDue.set(true)
                    tick.yield()
                }
            }
            group.addTask {
                // A wake-up can be lost (a NOTIFY sent while the listening connection was being replaced, a long
                // poll's answer lost with its connection); the log is read by sequence, so a round every
                // `fallbackDownloadInterval` bounds the delay that costs without pulling from the server each tick.
                let clock = ContinuousClock()
                var lastRound = clock.now
                while !Task.isCancelled {
                    try? await Task.sleep(for: interval)
                    if clock.now - lastRound >= fallbackInterval {
                        lastRound = clock.now
                        downloadDue.set(true)
                    }
                    tick.yield()
                }
            }
            for await _ in ticks {
                if Task.isCancelled { break }
                let download = downloadDue.take()
                do {
                    if download {
                        try await syncOnce()
                    } else {
                        try await uploadPending()
                    }
                } catch {
                    if download { downloadDue.set(true) }
                    logger.warning("sync round failed; retrying", metadata: ["error": "\(error)"])
                }
            }
            group.cancelAll()
        }
    }

    /// Moves the clock past the timestamps of a downloaded change, so later local writes come after it. A
    /// timestamp too far ahead of the wall clock is not taken in (the clock refuses it) but still applied.
    nonisolated func receive(_ change: ObjectChange) {
        var times = [change.created, change.deleted].compactMap { $0 }
        for update in change.properties.values {
            switch update {
            case .value(_, let at): times.append(at)
            case .map(let operations):
                for operation in operations {
                    switch operation {
                    case .set(_, _, let at), .clear(let at): times.append(at)
                    }
                }
            case .set(let operations):
                for case .add(_, let tag) in operations { times.append(tag) }
            case .list(let operations):
                for operation in operations {
                    switch operation {
                    case .insert(let id, _, _), .clear(let id): times.append(id)
                    case .remove: break
                    }
                }
            }
        }
        for time in times {
            do {
                try clock.receive(time)
            } catch {
                logger.warning("clock drift", metadata: ["error": "\(error)"])
            }
        }
    }
}

/// A flag shared between tasks: set by one, taken (read and cleared) by another.
private final class SharedFlag: Sendable {
    private let value: Mutex<Bool>

    init(_ value: Bool) { self.value = Mutex(value) }

    func set(_ newValue: Bool) { value.withLock { $0 = newValue } }

    /// The flag's value, leaving it cleared.
    func take() -> Bool {
        value.withLock { flag in
            defer { flag = false }
            return flag
        }
    }
}

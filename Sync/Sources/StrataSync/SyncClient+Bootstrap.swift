@_spi(StrataSync) import Strata

extension SyncClient {
    /// Applies the log after the checkpoint (``downloadPending()``); when the log was trimmed past the
    /// checkpoint (a new replica of a trimmed scope, or one offline for longer than the log is kept), bootstraps
    /// from a snapshot first (``bootstrap()``) and then applies the log after it.
    @discardableResult
    func downloadOrBootstrap() async throws -> Int {
        do {
            return try await downloadPending()
        } catch SyncError.historyTrimmed(_, let after, let horizon) {
            logger.info(
                "log trimmed past the checkpoint; bootstrapping",
                metadata: ["checkpoint": "\(after)", "trimmed": "\(horizon)"])
            try await bootstrap()
            return try await downloadPending()
        }
    }

    /// Replaces the replica's view of the scope by a snapshot of the server's tables
    /// (``SyncServer/snapshot(scope:pageSize:_:)``) and sets the checkpoint to the snapshot's sequence; returns
    /// how many objects (rows) the snapshot held.
    ///
    /// Each object's whole merge state is applied by the rules of downloads, so the replica's queued writes that
    /// are later keep their values, a queued create later than a delete keeps its object, and the queue is then
    /// uploaded as usual (nothing written locally is lost unless a rule discards it on the server too). Local
    /// objects of the synced types that are not live in the snapshot are deleted, unless the queue holds a
    /// change of them.
    ///
    /// Writes: up to ``maximumChangesPerApply`` objects in one local write transaction, which also deletes and
    /// sets the checkpoint, so observers see the final state at once. A larger snapshot applies in several
    /// writes of ``maximumChangesPerApply`` objects, and observers may see the scope part-way (objects of the
    /// snapshot already applied, objects it lacks not yet deleted) until the last write, which deletes and sets
    /// the checkpoint. Killed part-way, the checkpoint is unchanged, so the next round bootstraps again from the
    /// start (applying a state twice changes nothing).
    @discardableResult
    public nonisolated func bootstrap() async throws -> Int {
        let configuration = configuration
        let scope = scope
        let schema = schema
        let limit = maximumChangesPerApply
        let written = await hooks.bootstrapWritten
        var live: [String: Set<SyncValue>] = [:]
        var buffer: [ObjectChange] = []
        var objects = 0
        var applied = 0
        let sequence = try await server.snapshot(scope: scope, pageSize: min(limit, 5000)) { page in
            for change in page {
                receive(change)
                if change.isLiveAlone { live[change.objectType, default: []].insert(change.primaryKey) }
            }
            objects += page.count
            buffer += page
            while buffer.count >= limit {
                let write = Array(buffer.prefix(limit))
                buffer.removeFirst(write.count)
                try await RealmThread.run {
                    let realm = try Realm(configuration: configuration)
                    try realm.write {
                        try realm.markApplyingSyncChanges()
                        try Self.apply(write, realm: realm, schema: schema)
                    }
                }
                applied += write.count
                written?(applied)
            }
        }
        let last = buffer
        let keep = live
        try await RealmThread.run {
            let realm = try Realm(configuration: configuration)
            try realm.write {
                try realm.markApplyingSyncChanges()
                try Self.apply(last, realm: realm, schema: schema)
                try Self.deleteObjects(notIn: keep, schema: schema, realm: realm)
                try realm.setSyncCheckpoint(sequence, scope: scope)
            }
        }
        logger.info("bootstrapped", metadata: ["objects": "\(objects)", "sequence": "\(sequence)"])
        return objects
    }

    /// Applies snapshot changes in `realm`'s write transaction: first creates the live objects that are missing,
    /// so that links between the objects of one write find their targets whatever the order.
    private static func apply(_ changes: [ObjectChange], realm: Realm, schema: ServerSchema) throws {
        let apply = try LocalApply(realm: realm, schema: schema)
        for change in changes where change.isLiveAlone {
            try apply.apply(
                ObjectChange(
                    objectType: change.objectType, primaryKey: change.primaryKey, created: change.created,
                    deleted: change.deleted))
        }
        for change in changes { try apply.apply(change) }
    }

    /// Deletes the objects of the synced types whose primary key is not in `live` (by persisted class name) and
    /// that the upload queue does not name (in the write transaction of `realm`).
    private static func deleteObjects(notIn live: [String: Set<SyncValue>], schema: ServerSchema, realm: Realm) throws {
        var queued: [String: Set<AnyHashable>] = [:]
        for entry in try realm.syncQueue() {
            for change in entry.changes {
                if let key = try localKey(SyncValue(change.primaryKey)) {
                    queued[change.className, default: []].insert(key)
                }
            }
        }
        for type in schema.types.values {
            var keep = queued[type.className] ?? []
            for key in live[type.className] ?? [] {
                if let local = try localKey(key) { keep.insert(local) }
            }
            var doomed: [DynamicObject] = []
            for object in realm.dynamicObjects(type.className) {
                guard let key = object[type.primaryKey.name] as? AnyHashable, !keep.contains(key) else { continue }
                doomed.append(object)
            }
            for object in doomed { realm.delete(object) }
        }
    }

    /// A primary key as the local file holds it, comparable with the keys read from local objects.
    private static func localKey(_ value: SyncValue) throws -> AnyHashable? {
        try LocalApply.primaryKey(value) as? AnyHashable
    }
}

import Foundation
import StrataStorage

/// Strata Sync's access to the upload queue and the checkpoints kept in the file (see `SyncTreeNames`).
@_spi(StrataSync) extension Realm {
    /// The upload queue's entries, oldest first, at most `limit` of them: in a write transaction as the
    /// transaction sees them, else in the version this Realm reads (``refresh()`` first for the newest).
    public func syncQueue(limit: Int = .max) throws(Realm.Error) -> [CapturedTransaction] {
        try checkThreadThrowing()
        var raw: [[UInt8]] = []
        if isInWriteTransaction {
            let transaction = try activeTransaction()
            guard let queue = try handle(SyncTreeNames.queue, create: false) else { return [] }
            let count = try storage { try transaction.count(in: queue) }
            for index in 0..<min(count, limit) {
                raw.append(try storage { try transaction.element(at: index, in: queue).value })
            }
        } else {
            guard let queue = tables.view(SyncTreeNames.queue) else { return [] }
            try storage {
                try queue.forEachEntry { _, value in
                    raw.append(Array(value))
                    return raw.count < limit
                }
            }
        }
        return try raw.map { bytes throws(Realm.Error) in
            guard let entry = CapturedTransactionCodec.decode(bytes) else {
                throw tables.corruptData("an entry of the sync upload queue cannot be read")
            }
            return entry
        }
    }

    /// Removes the queue's entries up to and including `sequence` (uploaded ones). Call it in a write transaction.
    public func removeSyncQueue(through sequence: Int64) throws(Realm.Error) {
        let transaction = try activeTransaction()
        guard let queue = try handle(SyncTreeNames.queue, create: false) else { return }
        while try storage({ try transaction.count(in: queue) }) > 0 {
            let key = try storage { try transaction.element(at: 0, in: queue).key }
            guard KeyEncoding.decodeObjectKey(key) <= sequence else { break }
            _ = try mutate { try transaction.delete(key, in: queue) }
        }
    }

    /// The checkpoint of `scope`: the last server log sequence applied to this file (0 before the first).
    public func syncCheckpoint(scope: String) throws(Realm.Error) -> Int64 {
        try checkThreadThrowing()
        let key = Array(scope.utf8)
        let bytes: [UInt8]?
        if isInWriteTransaction {
            let transaction = try activeTransaction()
            guard let tree = try handle(SyncTreeNames.checkpoints, create: false) else { return 0 }
            bytes = try storage { try transaction.get(key, in: tree) }
        } else {
            bytes = try storage { try tables.view(SyncTreeNames.checkpoints)?.get(key) }
        }
        guard let bytes else { return 0 }
        guard bytes.count == 8 else { throw tables.corruptData("the sync checkpoint of \(scope) is not 8 bytes") }
        return KeyEncoding.decodeObjectKey(bytes)
    }

    /// Stores `sequence` as the checkpoint of `scope`, in the write transaction (the one that applies the entry
    /// `sequence`, so the two are committed together).
    public func setSyncCheckpoint(_ sequence: Int64, scope: String) throws(Realm.Error) {
        let transaction = try activeTransaction()
        let tree = try handle(SyncTreeNames.checkpoints, create: true)!
        try mutate { try transaction.put(Array(scope.utf8), KeyEncoding.objectKey(sequence), in: tree) }
    }

    /// Marks the write transaction in progress as one that applies downloaded changes: it is not captured, so
    /// changes that came from the server are not queued to go back to it.
    public func markApplyingSyncChanges() throws(Realm.Error) {
        guard isInWriteTransaction else { throw .notInWriteTransaction }
        syncCapture?.isApplyingSync = true
    }
}

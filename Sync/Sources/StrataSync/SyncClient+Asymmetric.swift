@_spi(StrataSync) import Strata

extension SyncClient {
    /// Uploads the outbox of every asymmetric type of the schema, oldest first, ``batchSize`` objects per
    /// PostgreSQL transaction (``SyncServer/insert(_:)``); returns how many objects it removed from the outbox.
    ///
    /// Objects leave the file's outbox (in a Strata write of their own) only after PostgreSQL committed them. A
    /// client stopped between the two sends them again, with the same `(clientID, outbox sequence)`, and the server
    /// inserts none of them twice. A failed upload (the server down, a table that does not fit) throws and keeps
    /// the outbox whole.
    @discardableResult
    public func uploadAsymmetricPending() async throws -> Int {
        let configuration = configuration
        var uploaded = 0
        for className in schema.asymmetricTypes.keys.sorted() {
            while true {
                let limit = batchSize
                let objects = try await RealmThread.run {
                    let realm = try Realm(configuration: configuration)
                    realm.refresh()
                    return try realm.syncOutbox(className: className, limit: limit)
                }
                if objects.isEmpty { break }
                let upload = AsymmetricUpload(
                    scope: scope, clientID: clientID, objectType: className,
                    objects: objects.map {
                        AsymmetricUpload.Object(
                            clientSequence: $0.sequence, values: $0.values.mapValues(AsymmetricValue.init))
                    })
                let inserted = try await server.insert(upload)
                logger.debug(
                    "uploaded asymmetric objects",
                    metadata: [
                        "type": "\(className)", "through": "\(objects.last?.sequence ?? 0)",
                        "retries": "\(objects.count - inserted)",
                    ])
                let sequences = objects.map(\.sequence)
                // Another upload of this file may have removed some meanwhile: count only what this one removed.
                uploaded += try await RealmThread.run {
                    let realm = try Realm(configuration: configuration)
                    return try realm.write { try realm.removeSyncOutbox(className: className, sequences: sequences) }
                }
            }
        }
        return uploaded
    }
}

extension AsymmetricValue {
    /// An outbox value in the upload's form.
    init(_ value: SyncOutboxValue) {
        switch value {
        case .value(let captured): self = .value(SyncValue(captured))
        case .embedded(let values): self = .embedded(values.mapValues(AsymmetricValue.init))
        case .list(let elements): self = .list(elements.map(AsymmetricValue.init))
        case .map(let entries): self = .map(entries.mapValues(AsymmetricValue.init))
        }
    }
}

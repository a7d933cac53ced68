/// Objects of one asymmetric type uploaded by one client (see ``ServerMerge/insert(_:)``): each becomes one row
/// of the type's table, once, whatever the number of retries.
public struct AsymmetricUpload: Sendable, Hashable, Codable {
    /// One uploaded object.
    public struct Object: Sendable, Hashable, Codable {
        /// The object's key in the client's outbox of its type, never reused within the client's file: with the
        /// client id, the row's primary key.
        public var clientSequence: Int64
        /// Every persisted property's value, by persisted name.
        public var values: [String: AsymmetricValue]

        /// An object at `clientSequence` of the client's outbox holding `values`.
        public init(clientSequence: Int64, values: [String: AsymmetricValue]) {
            self.clientSequence = clientSequence
            self.values = values
        }
    }

    /// The scope the client syncs (stored in `_strata_scope`).
    public var scope: String
    /// The uploading client (its file's id, as in ``UploadBatch/clientID``).
    public var clientID: String
    /// The persisted class name of the asymmetric type.
    public var objectType: String
    /// The objects, in outbox order.
    public var objects: [Object]

    /// Objects `objects` of `objectType` from client `clientID` syncing `scope`.
    public init(scope: String, clientID: String, objectType: String, objects: [Object]) {
        self.scope = scope
        self.clientID = clientID
        self.objectType = objectType
        self.objects = objects
    }
}

/// A property value of an asymmetric object: one value, an embedded object, or a collection's contents. Stored in
/// the property's column: one value typed as an object type's column, everything else as plain JSON (`jsonb`).
public indirect enum AsymmetricValue: Sendable, Hashable {
    /// One value (a nil optional is ``SyncValue/null``; a mixed value its primitive).
    case value(SyncValue)
    /// An embedded object's values by persisted name.
    case embedded([String: AsymmetricValue])
    /// A list's or a set's elements.
    case list([AsymmetricValue])
    /// A map's entries.
    case map([String: AsymmetricValue])
}

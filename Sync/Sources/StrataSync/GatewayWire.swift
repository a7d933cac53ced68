import Foundation

/// The gateway's HTTP protocol, shared by the gateway (`StrataSyncGateway`) and its client
/// (``GatewaySyncServer``): the routes' paths, the JSON bodies that are not change-format types themselves, and
/// the JSON coders (the change format's: sorted keys, non-finite numbers as `"NaN"`, `"Infinity"`,
/// `"-Infinity"`). Documentation/Sync.md, "The HTTP gateway", describes the routes.
public enum GatewayWire {
    /// The path of scope `scope`'s routes under the gateway's base URL: `v1/scopes/<scope>`.
    public static func scopePath(_ scope: String) -> String { "v1/scopes/\(scope)" }

    /// The answer to a pull (`GET …/changes`): the entries, and the scope's last sequence when the gateway read
    /// it (at least the last entry's), which a client waiting for wake-ups compares with what it knew.
    public struct PullResponse: Sendable, Hashable, Codable {
        /// The entries after the asked sequence, in order.
        public var entries: [ChangeLogEntry]
        /// The scope's last sequence (0 for a scope nobody wrote yet).
        public var lastSequence: Int64

        /// An answer with `entries` and `lastSequence`.
        public init(entries: [ChangeLogEntry], lastSequence: Int64) {
            self.entries = entries
            self.lastSequence = lastSequence
        }
    }

    /// The answer to an asymmetric upload (`POST …/asymmetric`).
    public struct InsertResponse: Sendable, Hashable, Codable {
        /// How many rows were new (the others were in PostgreSQL already: a retry).
        public var inserted: Int

        /// An answer counting `inserted` new rows.
        public init(inserted: Int) { self.inserted = inserted }
    }

    /// One line of a snapshot (`GET …/snapshot`, newline-delimited JSON): a page of objects, the final line with
    /// the snapshot's sequence, or an error that ended the snapshot after its first line was sent. A snapshot
    /// without its final line is incomplete and must not be applied as a whole.
    public struct SnapshotLine: Sendable, Hashable, Codable {
        /// A page of objects, each with its whole merge state.
        public var page: [ObjectChange]?
        /// The scope's sequence the snapshot shows: the last line.
        public var sequence: Int64?
        /// Why the snapshot stopped early.
        public var error: ErrorBody?

        /// A line holding one of `page`, `sequence` or `error`.
        public init(page: [ObjectChange]? = nil, sequence: Int64? = nil, error: ErrorBody? = nil) {
            self.page = page
            self.sequence = sequence
            self.error = error
        }
    }

    /// The body of every answer that is not a success: a machine-readable code (the ``SyncError`` case's name,
    /// or one of the gateway's own: `unauthorized`, `forbidden`, `badRequest`, `payloadTooLarge`,
    /// `serverUnavailable`, `internalError`), a sentence, and for `historyTrimmed` the fields a client needs to
    /// raise ``SyncError/historyTrimmed(scope:after:trimmedThrough:)``.
    public struct ErrorBody: Sendable, Hashable, Codable {
        /// What went wrong, for programs.
        public var code: String
        /// What went wrong, for people.
        public var message: String
        /// The scope of a trimmed pull.
        public var scope: String?
        /// The sequence a trimmed pull asked after.
        public var after: Int64?
        /// The trim horizon of a trimmed pull.
        public var trimmedThrough: Int64?

        /// An error body with `code` and `message` (and a trimmed pull's fields).
        public init(
            code: String, message: String, scope: String? = nil, after: Int64? = nil, trimmedThrough: Int64? = nil
        ) {
            self.code = code
            self.message = message
            self.scope = scope
            self.after = after
            self.trimmedThrough = trimmedThrough
        }

        /// The body that reports `error`, with the HTTP status the gateway answers it with: 410 for a trimmed
        /// history, 409 for tables that do not fit the schema, 500 for unreadable server data, 400 for every
        /// refused input.
        public init(_ error: SyncError) {
            self.init(code: error.code, message: error.description)
            if case .historyTrimmed(let scope, let after, let trimmedThrough) = error {
                self.scope = scope
                self.after = after
                self.trimmedThrough = trimmedThrough
            }
        }

        /// The ``SyncError`` a client raises for this body, answered with HTTP status `status`:
        /// ``SyncError/historyTrimmed(scope:after:trimmedThrough:)`` for a trimmed pull,
        /// ``SyncError/gatewayError(status:code:message:)`` for everything else.
        public func syncError(status: Int) -> SyncError {
            if code == "historyTrimmed", let scope, let after, let trimmedThrough {
                return .historyTrimmed(scope: scope, after: after, trimmedThrough: trimmedThrough)
            }
            return .gatewayError(status: status, code: code, message: message)
        }
    }

    /// The HTTP status the gateway answers `error` with (see ``ErrorBody/init(_:)``).
    public static func status(of error: SyncError) -> Int {
        switch error {
        case .historyTrimmed: 410
        case .incompatibleSchema: 409
        case .corruptServerState: 500
        case .gatewayError(let status, _, _): status
        default: 400
        }
    }

    /// `value` as JSON in the change format's form.
    public static func encode<Value: Encodable>(_ value: Value) throws -> Data {
        try SyncJSON.encoder().encode(value)
    }

    /// The value of type `Value` in JSON `data`.
    public static func decode<Value: Decodable>(_ type: Value.Type, from data: Data) throws -> Value {
        try SyncJSON.decoder().decode(type, from: data)
    }
}

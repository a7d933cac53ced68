/// What the server did with an upload.
public struct UploadResult: Sendable, Hashable, Codable {
    /// The change-log entry the upload became (the first time it was applied).
    public var entry: ChangeLogEntry
    /// Whether the upload had been applied before (a retry): nothing changed this time.
    public var wasAlreadyApplied: Bool

    /// A result for `entry`.
    public init(entry: ChangeLogEntry, wasAlreadyApplied: Bool) {
        self.entry = entry
        self.wasAlreadyApplied = wasAlreadyApplied
    }
}

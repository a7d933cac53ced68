/// Points on a ``SyncClient``'s path where a test can stop it, to kill the process exactly there (the convergence
/// suite's child replica, `strata-sync-replica`). Nil hooks, the default, cost one check each.
@_spi(StrataSyncTesting) public struct SyncClientHooks: Sendable {
    /// Called after PostgreSQL committed an upload round, before its entries leave the local queue, with the
    /// last uploaded entry's sequence: a process killed here sends those entries again at its next start.
    public var uploadCommitted: (@Sendable (Int64) -> Void)?
    /// Called inside the local write transaction that applies downloaded entries, after the changes and
    /// before the commit, with the entries' sequences: a process killed here commits neither the changes nor the
    /// checkpoint.
    public var applying: (@Sendable ([Int64]) -> Void)?
    /// Called after a bootstrap committed one of its local writes before the last, with how many snapshot objects
    /// are applied so far: a process killed here holds part of the snapshot and its old checkpoint, so its next
    /// round bootstraps again from the start.
    public var bootstrapWritten: (@Sendable (Int) -> Void)?

    /// Hooks that do nothing until set.
    public init() {}
}

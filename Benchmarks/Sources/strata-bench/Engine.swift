/// One database under test. An instance owns one freshly created database in `directory`.
/// Opening and closing are never timed; each method below is one timed workload.
protocol Engine: AnyObject {
    /// Column title.
    static var name: String { get }
    /// `--only` identifier.
    static var slug: String { get }
    /// Settings that matter for the comparison, printed with the results.
    static var settings: String { get }

    /// Creates an empty database in `directory` (which exists and is empty).
    init(directory: String) throws

    /// Puts every key of `keys` (value of key i: `ValueBuffer.value(for: i)`) in ONE write transaction and
    /// commits it durably.
    func insertAll(_ keys: KeyTable) throws

    /// Gets `keys[i]` for each i of `order`, in that order, in one read transaction, reading each value in
    /// place. Returns how many were found with the right value.
    func getAll(_ keys: KeyTable, order: [Int]) throws -> Int

    /// Reads every entry in key order in one read transaction.
    func scanAll() throws -> ScanSummary

    /// Puts each key of `keys` (value index `firstIndex + i`) in a write transaction of its own, each commit
    /// synced to disk before the next begins.
    func commitEach(_ keys: KeyTable, firstIndex: Int) throws

    /// Opens the database an instance created in `directory` (closed since), gets `keys[index]` (value index
    /// `index`) in one read transaction, and closes it again: one cold open. Returns whether the value was found
    /// and right.
    static func openAndGet(directory: String, keys: KeyTable, index: Int) throws -> Bool

    /// Number of entries (not timed; for verification).
    func entryCount() throws -> Int
}

/// A point in the hybrid logical time of Strata Sync: wall-clock milliseconds, a counter that orders events
/// within the same millisecond (or while a replica's clock lags behind one it heard from), and the replica that
/// made the event.
///
/// Timestamps are totally ordered: by ``wallMilliseconds``, then ``counter``, then ``replica`` (plain UTF-8
/// order), so two replicas never produce equal timestamps and every replica picks the same winner of a conflict
/// whatever the order in which it sees the writes. ``HybridLogicalClock`` makes them.
///
/// A timestamp encodes (``Codable``, and in PostgreSQL) as one string whose byte order is the timestamp order,
/// for example `"001764221345123.0000000002.replica-a"`: 15 digits of milliseconds, 10 digits of counter, the
/// replica id.
public struct HybridTimestamp: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    /// Milliseconds since 1970 of the wall clock that made the timestamp, or of a later timestamp heard from
    /// another replica (never decreasing on one replica).
    public var wallMilliseconds: Int64
    /// Orders the events of one replica that share ``wallMilliseconds``.
    public var counter: UInt32
    /// The replica that made the event (the client id, or `server` for writes captured from plain SQL).
    public var replica: String

    /// The timestamp `wallMilliseconds`.`counter` of `replica`.
    public init(wallMilliseconds: Int64, counter: UInt32, replica: String) {
        self.wallMilliseconds = wallMilliseconds
        self.counter = counter
        self.replica = replica
    }

    /// Whether `lhs` happened before `rhs` in the total order (milliseconds, counter, replica).
    public static func < (lhs: HybridTimestamp, rhs: HybridTimestamp) -> Bool {
        if lhs.wallMilliseconds != rhs.wallMilliseconds { return lhs.wallMilliseconds < rhs.wallMilliseconds }
        if lhs.counter != rhs.counter { return lhs.counter < rhs.counter }
        return Array(lhs.replica.utf8).lexicographicallyPrecedes(Array(rhs.replica.utf8))
    }

    /// The encoded form: `MMMMMMMMMMMMMMM.CCCCCCCCCC.replica`, ordered as the timestamps are.
    public var description: String {
        let milliseconds = String(wallMilliseconds)
        let count = String(counter)
        return String(repeating: "0", count: max(0, 15 - milliseconds.count)) + milliseconds + "."
            + String(repeating: "0", count: max(0, 10 - count.count)) + count + "." + replica
    }

    /// Parses the encoded form (``description``); nil if `text` is not one.
    public init?(_ text: String) {
        let parts = text.split(separator: ".", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 15, parts[1].count == 10, !parts[2].isEmpty,
            let milliseconds = Int64(parts[0]), milliseconds >= 0, let counter = UInt32(parts[1])
        else { return nil }
        self.init(wallMilliseconds: milliseconds, counter: counter, replica: String(parts[2]))
    }

    /// Decodes the encoded string form; a malformed string is a `DecodingError.dataCorrupted`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let timestamp = HybridTimestamp(text) else {
            throw DecodingError.dataCorruptedError(
                in: container,
                debugDescription: "\"\(text)\" is not a hybrid timestamp (MMMMMMMMMMMMMMM.CCCCCCCCCC.replica)")
        }
        self = timestamp
    }

    /// Encodes the string form (``description``).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}

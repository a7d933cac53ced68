/// The merge state of one synced object, kept in its row's `_strata_state` jsonb column: the latest create and
/// delete, the clock of each property that holds one value (its value is in the typed column), and the merge
/// state of each collection property.
///
/// Every part is a last-writer-wins register or a commutative set of operations, so merging the same changes
/// in any order, any number of times, gives the same state.
struct RowState: Sendable, Hashable, Codable {
    var created: HybridTimestamp?
    var deleted: HybridTimestamp?
    var clocks: [String: HybridTimestamp] = [:]
    var lists: [String: ListState] = [:]
    var maps: [String: MapState] = [:]
    var sets: [String: SetState] = [:]

    /// Whether the object exists: created, and created again after its latest delete if it was deleted. An
    /// update alone never makes an object live, which is how a delete wins over concurrent updates.
    var isLive: Bool {
        guard let created else { return false }
        return deleted.map { created > $0 } ?? true
    }
}

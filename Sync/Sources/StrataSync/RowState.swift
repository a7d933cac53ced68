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

    init() {}

    /// Decodes a state, taking absent parts as empty: a row created through plain SQL (the capture trigger)
    /// has only the parts it needed.
    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        created = try container.decodeIfPresent(HybridTimestamp.self, forKey: .created)
        deleted = try container.decodeIfPresent(HybridTimestamp.self, forKey: .deleted)
        clocks = try container.decodeIfPresent([String: HybridTimestamp].self, forKey: .clocks) ?? [:]
        lists = try container.decodeIfPresent([String: ListState].self, forKey: .lists) ?? [:]
        maps = try container.decodeIfPresent([String: MapState].self, forKey: .maps) ?? [:]
        sets = try container.decodeIfPresent([String: SetState].self, forKey: .sets) ?? [:]
    }

    /// Whether the object exists: created, and created again after its latest delete if it was deleted. An
    /// update alone never makes an object live, which is how a delete wins over concurrent updates.
    var isLive: Bool {
        guard let created else { return false }
        return deleted.map { created > $0 } ?? true
    }
}

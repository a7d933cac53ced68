/// The merge state of one synced map: a last-writer-wins register per key (a removed key keeps its time as a
/// nil value), plus the time of the latest clear.
struct MapState: Sendable, Hashable, Codable {
    struct Entry: Sendable, Hashable, Codable {
        var value: SyncValue?
        var at: HybridTimestamp
    }

    var entries: [String: Entry] = [:]
    var clearedAt: HybridTimestamp?

    /// Applies `operation`; returns whether it won (changed anything).
    mutating func apply(_ operation: MapOperation) -> Bool {
        switch operation {
        case .set(let key, let value, let at):
            if let entry = entries[key], entry.at >= at { return false }
            entries[key] = Entry(value: value, at: at)
            return true
        case .clear(let at):
            if let clearedAt, clearedAt >= at { return false }
            clearedAt = at
            return true
        }
    }

    /// The present keys and their values.
    var values: [String: SyncValue] {
        var result: [String: SyncValue] = [:]
        for (key, entry) in entries {
            guard let value = entry.value, clearedAt.map({ entry.at >= $0 }) ?? true else { continue }
            result[key] = value
        }
        return result
    }
}

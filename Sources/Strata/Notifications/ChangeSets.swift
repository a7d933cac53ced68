/// A change to an observed collection.
///
/// Index sets follow the Realm Swift SDK's semantics: `deletions` are positions in the previous state,
/// `insertions` and `modifications` positions in the new one. Removing the deleted positions from the previous
/// state and then inserting the new elements at the inserted positions gives the new state; an element that moved
/// is reported as deleted from its old position and inserted at its new one.
public enum RealmCollectionChange<CollectionType> {
    /// The collection as it was when observation started.
    case initial(CollectionType)
    /// The collection changed: the collection itself (as of the new version) and what changed.
    case update(CollectionType, deletions: [Int], insertions: [Int], modifications: [Int])
    /// Observation failed; nothing more will be delivered.
    case error(any Error)
}

/// A change to an observed object.
public enum ObjectChange<T> {
    /// Observation failed; nothing more will be delivered.
    case error(any Error)
    /// Properties of the object changed (in the order of the object's schema).
    case change(T, [PropertyChange])
    /// The object was deleted; nothing more will be delivered.
    case deleted
}

/// One changed property of an observed object.
public struct PropertyChange {
    /// The Swift name of the property, as the Realm SDK gives it (for a class that maps names with
    /// `propertiesMapping()`, not the persisted name; for a class known only from the file, the persisted name).
    public let name: String
    /// The value before the change (nil for collections, links and values not kept).
    public let oldValue: Any?
    /// The value after the change.
    public let newValue: Any?
}

extension Realm {
    /// What a Realm observer is told (see ``Realm/observe(_:)``).
    public enum Notification: String, Sendable {
        /// The Realm advanced to a newer version (another writer's commit, or its own).
        case didChange
        /// Kept for the Realm Swift SDK's API: Strata refreshes automatically, so it is never sent.
        case refreshRequired
    }
}

/// Computes the index sets between two states of a collection, given each element's identity.
enum CollectionDiff {
    struct Result {
        var deletions: [Int] = []
        var insertions: [Int] = []
        /// (old position, new position) of the elements that stayed in place relative to each other.
        var kept: [(old: Int, new: Int)] = []

        var isEmpty: Bool { deletions.isEmpty && insertions.isEmpty }
    }

    /// The smallest set of deletions and insertions that turns `old` into `new`, treating equal identities as
    /// the same element (the n-th occurrence in `old` pairs with the n-th in `new`). Elements present in both are
    /// kept when they form the longest run in the same relative order; the others are moves.
    static func between<Identity: Hashable>(_ old: [Identity], _ new: [Identity]) -> Result {
        var result = Result()
        if old == new {
            result.kept = old.indices.map { ($0, $0) }
            return result
        }
        var positions: [Identity: [Int]] = [:]
        positions.reserveCapacity(new.count)
        for (index, identity) in new.enumerated() { positions[identity, default: []].append(index) }
        var used: [Identity: Int] = [:]
        // For each old position, its partner in `new` (or -1 when it was deleted).
        var partner = [Int](repeating: -1, count: old.count)
        for (index, identity) in old.enumerated() {
            guard let candidates = positions[identity] else { continue }
            let next = used[identity, default: 0]
            if next < candidates.count {
                partner[index] = candidates[next]
                used[identity] = next + 1
            }
        }
        // Longest increasing run of partners (patience sorting), in old order.
        var tails: [Int] = []  // old positions ending the best run of each length
        var previous = [Int](repeating: -1, count: old.count)
        for index in old.indices where partner[index] >= 0 {
            var low = 0
            var high = tails.count
            while low < high {
                let middle = (low + high) / 2
                if partner[tails[middle]] < partner[index] { low = middle + 1 } else { high = middle }
            }
            if low > 0 { previous[index] = tails[low - 1] }
            if low == tails.count { tails.append(index) } else { tails[low] = index }
        }
        var inRun = [Bool](repeating: false, count: old.count)
        var cursor = tails.last ?? -1
        while cursor >= 0 {
            inRun[cursor] = true
            cursor = previous[cursor]
        }
        var keptNew = [Bool](repeating: false, count: new.count)
        for index in old.indices {
            if inRun[index] {
                result.kept.append((index, partner[index]))
                keptNew[partner[index]] = true
            } else {
                result.deletions.append(index)
            }
        }
        for index in new.indices where !keptNew[index] { result.insertions.append(index) }
        return result
    }
}

/// The merge state of one synced set (observed-remove, add wins): the live tags of each value and every tag
/// removed so far, so that an add arriving after the remove of its tag stays removed.
struct SetState: Sendable, Hashable, Codable {
    struct Element: Sendable, Hashable, Codable {
        var value: SyncValue
        var tags: [HybridTimestamp]
    }

    var elements: [Element] = []
    var removedTags: [HybridTimestamp] = []
    /// The latest create of the object (a re-create starts an empty set): adds tagged before it are gone.
    var clearedAt: HybridTimestamp?

    /// Starts the set again at `at` (the object's accepted create): the tags of earlier adds are dropped, and an
    /// earlier add arriving later does not show. Returns whether the values changed.
    mutating func clear(before at: HybridTimestamp) -> Bool {
        if let clearedAt, clearedAt >= at { return false }
        clearedAt = at
        let before = values
        for index in elements.indices { elements[index].tags.removeAll { $0 < at } }
        elements.removeAll { $0.tags.isEmpty }
        return values != before
    }

    /// Applies `operation`; returns the operation's effect (nil if none): for a remove, only the tags it removed.
    mutating func apply(_ operation: SetOperation) -> SetOperation? {
        switch operation {
        case .add(let value, let tag):
            if removedTags.contains(tag) { return nil }
            if let clearedAt, tag < clearedAt { return nil }
            if let index = elements.firstIndex(where: { $0.value == value }) {
                if elements[index].tags.contains(tag) { return nil }
                elements[index].tags.append(tag)
            } else {
                elements.append(Element(value: value, tags: [tag]))
            }
            return operation
        case .remove(let value, let observedTags):
            let newlyRemoved = observedTags.filter { !removedTags.contains($0) }
            if newlyRemoved.isEmpty { return nil }
            removedTags.append(contentsOf: newlyRemoved)
            if let index = elements.firstIndex(where: { $0.value == value }) {
                elements[index].tags.removeAll { newlyRemoved.contains($0) }
            }
            return .remove(value: value, observedTags: newlyRemoved)
        }
    }

    /// The values with at least one live tag, in the order of their first add's tag.
    var values: [SyncValue] {
        elements.filter { !$0.tags.isEmpty }.sorted { $0.tags.min()! < $1.tags.min()! }.map(\.value)
    }
}

/// The merge state of one synced set (observed-remove, add wins): the live tags of each value and every tag
/// removed so far, so that an add arriving after the remove of its tag stays removed.
struct SetState: Sendable, Hashable, Codable {
    struct Element: Sendable, Hashable, Codable {
        var value: SyncValue
        var tags: [HybridTimestamp]
    }

    var elements: [Element] = []
    var removedTags: [HybridTimestamp] = []

    /// Applies `operation`; returns the operation's effect (nil if none): for a remove, only the tags it removed.
    mutating func apply(_ operation: SetOperation) -> SetOperation? {
        switch operation {
        case .add(let value, let tag):
            if removedTags.contains(tag) { return nil }
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

/// The merge state of one synced list (a replicated growable array): every element ever inserted, with its
/// id, the element it follows and whether it was removed, plus the time of the latest clear.
struct ListState: Sendable, Hashable, Codable {
    struct Element: Sendable, Hashable, Codable {
        var id: HybridTimestamp
        var after: HybridTimestamp?
        var value: SyncValue
        var removed: Bool
    }

    var elements: [Element] = []
    var clearedAt: HybridTimestamp?

    /// Applies `operation`; returns whether it changed anything (an operation seen before changes nothing).
    mutating func apply(_ operation: ListOperation) -> Bool {
        switch operation {
        case .insert(let id, let after, let value):
            if elements.contains(where: { $0.id == id }) { return false }
            elements.append(Element(id: id, after: after, value: value, removed: false))
            return true
        case .remove(let id):
            guard let index = elements.firstIndex(where: { $0.id == id }), !elements[index].removed else {
                return false
            }
            elements[index].removed = true
            return true
        case .clear(let at):
            if let clearedAt, clearedAt >= at { return false }
            clearedAt = at
            return true
        }
    }

    /// The visible values in list order (see ``walk``).
    var values: [SyncValue] { walk.filter(isVisible).map(\.value) }

    /// Whether `element` is shown: not removed, and not inserted before the latest clear.
    func isVisible(_ element: Element) -> Bool {
        !element.removed && (clearedAt.map { element.id >= $0 } ?? true)
    }

    /// Every element in list order, removed ones too: a depth-first walk of the "inserted after" tree from the
    /// start, the later of two siblings first (so an insert at a place comes before what was inserted there
    /// earlier, and concurrent inserts at one place keep one order everywhere). An element that follows an id
    /// this list does not know follows the start.
    var walk: [Element] {
        let known = Set(elements.map(\.id))
        var children: [HybridTimestamp?: [Int]] = [:]
        for (index, element) in elements.enumerated() {
            let parent = element.after.flatMap { known.contains($0) ? $0 : nil }
            children[parent, default: []].append(index)
        }
        var result: [Element] = []
        // Iterative: a list typed one element after the other is a chain as deep as the list is long.
        var stack: [Int] = (children[nil] ?? []).sorted { elements[$0].id < elements[$1].id }
        while let index = stack.popLast() {
            let element = elements[index]
            result.append(element)
            stack.append(contentsOf: (children[element.id] ?? []).sorted { elements[$0].id < elements[$1].id })
        }
        return result
    }
}

/// A value for some of an object's properties, by property index. The indices are small and dense, so an array
/// does it: a dictionary's hashing and probing cost more than the rest of handing out a collection accessor, which
/// `list.append` in a loop does on every call (see `ManagedObject.CollectionState`).
struct PropertySlots<Value> {
    private var slots: [Value?] = []

    /// The value of property `index`, or nil.
    subscript(index: Int) -> Value? {
        get { index < slots.count ? slots[index] : nil }
        set {
            if index >= slots.count {
                guard newValue != nil else { return }
                slots.append(contentsOf: repeatElement(nil, count: index + 1 - slots.count))
            }
            slots[index] = newValue
        }
    }
}

/// `sorted(by:)` with a key path to a property of a custom-persisted type (``CustomPersistable`` or
/// ``FailableCustomPersistable``) whose persisted type has an order, as the SDK allows: the objects are ordered by the
/// stored (persisted) value, as the engine stores the property.
///
/// ```swift
/// struct Rank: CustomPersistable { … var persistableValue: Int }
/// let ranked = realm.objects(Player.self).sorted(by: \.rank, ascending: false)
/// ```
extension RealmCollection where Element: ObjectBase {
    /// The objects ordered by the persisted value of the custom-persisted property at `keyPath`.
    public func sorted<V: CustomPersistable>(by keyPath: KeyPath<Element, V>, ascending: Bool = true)
        -> Results<Element> where V.PersistedType: SortableType
    {
        sortedByPersistedValue(keyPath, ascending: ascending)
    }

    /// The objects ordered by the persisted value of the optional custom-persisted property at `keyPath` (nil
    /// first when ascending).
    public func sorted<V: CustomPersistable>(by keyPath: KeyPath<Element, V?>, ascending: Bool = true)
        -> Results<Element> where V.PersistedType: SortableType
    {
        sortedByPersistedValue(keyPath, ascending: ascending)
    }

    /// The objects ordered by the persisted value of the failable custom-persisted property at `keyPath`.
    public func sorted<V: FailableCustomPersistable>(by keyPath: KeyPath<Element, V>, ascending: Bool = true)
        -> Results<Element> where V.PersistedType: SortableType
    {
        sortedByPersistedValue(keyPath, ascending: ascending)
    }

    /// The objects ordered by the persisted value of the optional failable custom-persisted property at `keyPath`.
    public func sorted<V: FailableCustomPersistable>(by keyPath: KeyPath<Element, V?>, ascending: Bool = true)
        -> Results<Element> where V.PersistedType: SortableType
    {
        sortedByPersistedValue(keyPath, ascending: ascending)
    }

    /// Sorted by the property `keyPath` reads; traps naming the key path when it is not a persisted property.
    private func sortedByPersistedValue(_ keyPath: AnyKeyPath, ascending: Bool) -> Results<Element> {
        let results = _queryResults()
        do {
            let name = try results.owner.propertyName(of: keyPath, query: "sorted(by: \(keyPath))")
            return results.sorted(byKeyPath: name, ascending: ascending)
        } catch {
            fatalError("\(error)")
        }
    }
}

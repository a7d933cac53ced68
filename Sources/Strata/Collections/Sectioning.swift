import Foundation

// The `sectioned(by:…)` forms of the Realm Swift SDK, on every collection: by a key path (sorted by the property
// it names), by a key path or a closure after sort descriptors (objects and projections), and by a closure over
// the values themselves (collections of plain values, sorted by value).

extension Results {
    /// The objects (or projections) sorted by the property at `keyPath` and grouped into one section per value.
    ///
    /// ```swift
    /// let byAge = realm.objects(Dog.self).sectioned(by: \.age)
    /// ```
    ///
    /// `keyPath` may be a computed property that reads one persisted property (`var initial: String? {
    /// name.first.map(String.init) }`): the objects are sorted by that property and sectioned by the computed
    /// value. Traps when `keyPath` reads no persisted property (use
    /// ``sectioned(by:sortDescriptors:)-((Element)->Key,_)``).
    public func sectioned<Key: Hashable>(by keyPath: KeyPath<Element, Key>, ascending: Bool = true)
        -> SectionedResults<Key, Element>
    {
        owner.checkThread()
        let name: String
        do {
            name = try owner.propertyName(of: keyPath, query: "sectioned(by: \(keyPath)) on \(binding.className)")
        } catch {
            fatalError("\(error)")
        }
        let sorted = sorted(byKeyPath: name, ascending: ascending)
        return SectionedResults(source: .results(sorted)) { $0[keyPath: keyPath] }
    }

    /// The objects (or projections) sorted by `sortDescriptors` and grouped by the value at `keyPath`.
    public func sectioned<Key: Hashable>(by keyPath: KeyPath<Element, Key>, sortDescriptors: [SortDescriptor])
        -> SectionedResults<Key, Element>
    {
        sectioned(by: { $0[keyPath: keyPath] }, sortDescriptors: sortDescriptors)
    }

    /// The objects (or projections) sorted by `sortDescriptors` and grouped by the key `block` gives each.
    ///
    /// ```swift
    /// let byInitial = realm.objects(Contact.self).sectioned(by: { String($0.name.first!) },
    ///                                                       sortDescriptors: [SortDescriptor(keyPath: "name")])
    /// ```
    public func sectioned<Key: Hashable>(
        by block: @escaping (Element) -> Key, sortDescriptors: [SortDescriptor]
    ) -> SectionedResults<Key, Element> {
        SectionedResults(source: .results(sortDescriptors.isEmpty ? self : sorted(by: sortDescriptors)), key: block)
    }

    /// ``sectioned(by:sortDescriptors:)-((Element)->Key,_)`` with the closure last.
    public func sectioned<Key: Hashable>(
        sortDescriptors: [SortDescriptor], _ keyBlock: @escaping (Element) -> Key
    ) -> SectionedResults<Key, Element> {
        sectioned(by: keyBlock, sortDescriptors: sortDescriptors)
    }
}

extension _ObjectCollectionQueries {
    /// The objects sorted by the property at `keyPath` and grouped into one section per value.
    public func sectioned<Key: Hashable>(by keyPath: KeyPath<Element, Key>, ascending: Bool = true)
        -> SectionedResults<Key, Element>
    {
        _queryResults().sectioned(by: keyPath, ascending: ascending)
    }

    /// The objects sorted by `sortDescriptors` and grouped by the value at `keyPath`.
    public func sectioned<Key: Hashable>(by keyPath: KeyPath<Element, Key>, sortDescriptors: [SortDescriptor])
        -> SectionedResults<Key, Element>
    {
        _queryResults().sectioned(by: keyPath, sortDescriptors: sortDescriptors)
    }

    /// The objects sorted by `sortDescriptors` and grouped by the key `block` gives each of them.
    public func sectioned<Key: Hashable>(
        by block: @escaping (Element) -> Key, sortDescriptors: [SortDescriptor]
    ) -> SectionedResults<Key, Element> {
        _queryResults().sectioned(by: block, sortDescriptors: sortDescriptors)
    }

    /// ``sectioned(by:sortDescriptors:)-((Self.Element)->Key,_)`` with the closure last.
    public func sectioned<Key: Hashable>(
        sortDescriptors: [SortDescriptor], _ keyBlock: @escaping (Element) -> Key
    ) -> SectionedResults<Key, Element> {
        _queryResults().sectioned(by: keyBlock, sortDescriptors: sortDescriptors)
    }
}

extension RealmCollection {
    /// The values sorted by value and grouped by the key `block` gives each (collections of plain values:
    /// `List<String>`, `MutableSet<Int>`, …).
    ///
    /// ```swift
    /// let byInitial = person.nicknames.sectioned(by: { String($0.first!) })   // "a": ["abe", "al"], "b": …
    /// ```
    ///
    /// Equal values keep the collection's order; nil sorts first ascending; strings compare by Unicode scalars.
    public func sectioned<Key: Hashable>(by block: @escaping (Element) -> Key, ascending: Bool = true)
        -> SectionedResults<Key, Element>
    {
        SectionedResults(source: .values(AnyRealmCollection(self), ascending: ascending), key: block)
    }
}

import Foundation

/// Objects grouped into sections by a key, live: a table view's data source in one value.
///
/// ```swift
/// let byInitial = realm.objects(Contact.self).sectioned(sortDescriptors: [SortDescriptor(keyPath: "name")]) {
///     String($0.name.prefix(1))
/// }
/// for section in byInitial {
///     print(section.key, section.map(\.name))   // "L" ["Larry", "Liam", "Lisa"] …
/// }
/// ```
///
/// The objects are sorted first; each goes to the section of its key; sections are ordered by where their first
/// object stands, and each section keeps the sorted order. Reading after a change (a write, a refresh) regroups
/// the current objects: sections appear and disappear with them.
public struct SectionedResults<Key: Hashable, Element: ObjectBase>: RandomAccessCollection {
    let results: Results<Element>
    let cache: SectionCache<Key, Element>

    init(results: Results<Element>, key: @escaping (Element) -> Key) {
        self.results = results
        cache = SectionCache(key: key)
    }

    /// The sections' keys, in order.
    public var allKeys: [Key] { cache.sections(of: results).map(\.key) }

    /// 0.
    public var startIndex: Int { 0 }
    /// The number of sections.
    public var endIndex: Int { count }
    /// The number of sections.
    public var count: Int { cache.sections(of: results).count }

    /// The section at `position`.
    public subscript(position: Int) -> ResultsSection<Key, Element> {
        let sections = cache.sections(of: results)
        CollectionIndex.check(position, count: sections.count, in: "SectionedResults<\(Key.self), \(Element.self)>")
        return ResultsSection(key: sections[position].key, parent: self)
    }

    /// The section whose key is `key`, nil when no object has it.
    public subscript(key: Key) -> ResultsSection<Key, Element>? {
        cache.sections(of: results).contains { $0.key == key } ? ResultsSection(key: key, parent: self) : nil
    }

    /// The Realm of the objects.
    public var realm: Realm? { results.realm }

    /// The keys of the section whose key is `key` (empty when it has gone).
    func keys(ofSection key: Key) -> [Int64] {
        cache.sections(of: results).first { $0.key == key }?.keys ?? []
    }
}

/// One section of ``SectionedResults``: its key and its objects, live (empty once no object has the key).
public struct ResultsSection<Key: Hashable, Element: ObjectBase>: RealmCollection {
    /// The key every object of the section has.
    public let key: Key
    let objects: Results<Element>

    init(key: Key, parent: SectionedResults<Key, Element>) {
        self.key = key
        let realm = parent.results.owner
        objects = realm.results(of: Element.self) { () throws(Realm.Error) in parent.keys(ofSection: key) }
    }

    /// 0.
    public var startIndex: Int { 0 }
    /// The number of objects.
    public var endIndex: Int { objects.count }
    /// The number of objects.
    public var count: Int { objects.count }
    /// The object at `position`.
    public subscript(position: Int) -> Element { objects[position] }
    /// The Realm of the objects.
    public var realm: Realm? { objects.realm }
    /// Always false.
    public var isInvalidated: Bool { false }
}

extension ResultsSection: _ObjectCollectionQueries {
    /// See ``_ObjectCollectionQueries``.
    public func _queryResults() -> Results<Element> { objects }
}

/// The sections of one ``SectionedResults``, computed once per Realm generation.
final class SectionCache<Key: Hashable, Element: ObjectBase> {
    let key: (Element) -> Key
    private var generation = UInt64.max
    private var sections: [(key: Key, keys: [Int64])] = []

    init(key: @escaping (Element) -> Key) { self.key = key }

    func sections(of results: Results<Element>) -> [(key: Key, keys: [Int64])] {
        let realm = results.owner
        realm.checkThread()
        if generation == realm.generation { return sections }
        let keys = results.queryKeys() ?? []
        var grouped: [(key: Key, keys: [Int64])] = []
        var positions: [Key: Int] = [:]
        for (offset, object) in results.enumerated() {
            let sectionKey = key(object)
            if let position = positions[sectionKey] {
                grouped[position].keys.append(keys[offset])
            } else {
                positions[sectionKey] = grouped.count
                grouped.append((sectionKey, [keys[offset]]))
            }
        }
        sections = grouped
        generation = realm.generation
        return grouped
    }
}

extension Results where Element: ObjectBase {
    /// The objects sorted by the property at `keyPath` and grouped into one section per value.
    ///
    /// ```swift
    /// let byAge = realm.objects(Dog.self).sectioned(by: \.age)
    /// ```
    public func sectioned<Key: Hashable>(by keyPath: KeyPath<Element, Key>, ascending: Bool = true)
        -> SectionedResults<Key, Element>
    {
        SectionedResults(results: sorted(byKeyPath: name(of: keyPath, "sectioned(by:)"), ascending: ascending)) {
            $0[keyPath: keyPath]
        }
    }

    /// The objects sorted by `sortDescriptors` and grouped by the key `keyBlock` gives each of them.
    public func sectioned<Key: Hashable>(
        sortDescriptors: [SortDescriptor], _ keyBlock: @escaping (Element) -> Key
    ) -> SectionedResults<Key, Element> {
        SectionedResults(results: sortDescriptors.isEmpty ? with([]) : sorted(by: sortDescriptors), key: keyBlock)
    }
}

extension _ObjectCollectionQueries {
    /// The objects sorted by the property at `keyPath` and grouped into one section per value.
    public func sectioned<Key: Hashable>(by keyPath: KeyPath<Element, Key>, ascending: Bool = true)
        -> SectionedResults<Key, Element>
    {
        _queryResults().sectioned(by: keyPath, ascending: ascending)
    }

    /// The objects sorted by `sortDescriptors` and grouped by the key `keyBlock` gives each of them.
    public func sectioned<Key: Hashable>(
        sortDescriptors: [SortDescriptor], _ keyBlock: @escaping (Element) -> Key
    ) -> SectionedResults<Key, Element> {
        _queryResults().sectioned(sortDescriptors: sortDescriptors, keyBlock)
    }
}

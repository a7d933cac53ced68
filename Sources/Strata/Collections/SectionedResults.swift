public import Foundation

/// Elements grouped into sections by a key, live: a table view's data source in one value.
///
/// ```swift
/// let byInitial = realm.objects(Contact.self).sectioned(by: { String($0.name.prefix(1)) },
///                                                       sortDescriptors: [SortDescriptor(keyPath: "name")])
/// for section in byInitial {
///     print(section.key, section.map(\.name))   // "L" ["Larry", "Liam", "Lisa"] …
/// }
/// let first = byInitial[IndexPath(item: 0, section: 0)]
/// ```
///
/// The elements are sorted first; each goes to the section of its key; sections are ordered by where their first
/// element stands, and each section keeps the sorted order. Reading after a change (a write, a refresh) regroups
/// the current elements: sections appear and disappear with them. Made from `Results`, `List`, `MutableSet`,
/// `LinkingObjects`, `AnyRealmCollection` (of objects, projections or plain values) with `sectioned(by:…)`.
///
/// Two sectioned results are equal when they are the same value (copies of one `sectioned(by:)` call), as in the
/// Realm Swift SDK: sectioning the same collection twice gives two different sectioned results.
public struct SectionedResults<Key: Hashable, SectionElement: RealmCollectionValue>: RandomAccessCollection,
    Equatable, ThreadConfined
{
    /// The type of a section.
    public typealias Element = ResultsSection<Key, SectionElement>

    let source: SectionSource<SectionElement>
    let cache: SectionCache<Key, SectionElement>

    init(source: SectionSource<SectionElement>, key: @escaping (SectionElement) -> Key) {
        self.source = source
        cache = SectionCache(key: key)
    }

    /// The sections as they are now.
    func snapshot() -> SectionSnapshot<Key, SectionElement> { cache.snapshot(of: source) }

    /// The sections' keys, in order.
    public var allKeys: [Key] { snapshot().sections.map(\.key) }

    /// 0.
    public var startIndex: Int { 0 }
    /// The number of sections.
    public var endIndex: Int { count }
    /// The number of sections.
    public var count: Int { snapshot().sections.count }

    /// The section at `position`.
    public subscript(position: Int) -> ResultsSection<Key, SectionElement> {
        let sections = snapshot().sections
        CollectionIndex.check(
            position, count: sections.count, in: "SectionedResults<\(Key.self), \(SectionElement.self)>")
        return ResultsSection(key: sections[position].key, parent: self)
    }

    /// The element at row `indexPath.item` of section `indexPath.section`.
    public subscript(indexPath: IndexPath) -> SectionElement { self[indexPath.section][indexPath.item] }

    /// The section whose key is `key`, nil when no element has it.
    public subscript(key: Key) -> ResultsSection<Key, SectionElement>? {
        snapshot().position(of: key) == nil ? nil : ResultsSection(key: key, parent: self)
    }

    /// The Realm of the elements.
    public var realm: Realm? { source.realm }

    /// Whether the sectioned collection can no longer be read (the object owning it was deleted).
    public var isInvalidated: Bool { source.isInvalidated }

    /// Whether the sections are a frozen snapshot.
    public var isFrozen: Bool { source.isFrozen }

    /// The sections as their Realm reads them now, frozen: readable from any thread, never changing. Traps for
    /// sectioned results of an unmanaged collection.
    public func freeze() -> SectionedResults {
        if isFrozen { return self }
        return SectionedResults(source: source.frozen(), key: cache.key)
    }

    /// The same sections, live in a Realm of the calling isolation; nil when the collection is gone (its owner
    /// was deleted). Live sectioned results are returned as they are.
    public func thaw(_isolation: isolated (any Actor)? = #isolation) -> SectionedResults? {
        if !isFrozen { return self }
        guard let live = source.thawed(isolation: _isolation) else { return nil }
        return SectionedResults(source: live, key: cache.key)
    }

    /// Whether `lhs` and `rhs` are the same sectioned results (copies of one value).
    public static func == (lhs: SectionedResults, rhs: SectionedResults) -> Bool { lhs.cache === rhs.cache }
}

/// One section of ``SectionedResults``: its key and its elements, live (empty once no element has the key).
public struct ResultsSection<Key: Hashable, Element: RealmCollectionValue>: RealmCollection, Equatable,
    Identifiable, ThreadConfined
{
    /// The key every element of the section has.
    public let key: Key
    let parent: SectionedResults<Key, Element>

    init(key: Key, parent: SectionedResults<Key, Element>) {
        self.key = key
        self.parent = parent
    }

    /// The section's key: sections are identified by their key.
    public var id: Key { key }

    /// The rows of the section as it is now.
    private func rows() -> (elements: [Element], rows: [Int]) {
        let snapshot = parent.snapshot()
        return (snapshot.elements, snapshot.position(of: key).map { snapshot.sections[$0].rows } ?? [])
    }

    /// 0.
    public var startIndex: Int { 0 }
    /// The number of elements.
    public var endIndex: Int { count }
    /// The number of elements.
    public var count: Int { rows().rows.count }
    /// The element at `position`.
    public subscript(position: Int) -> Element {
        let (elements, rows) = rows()
        CollectionIndex.check(position, count: rows.count, in: "ResultsSection<\(Key.self), \(Element.self)>")
        return elements[rows[position]]
    }
    /// The Realm of the elements.
    public var realm: Realm? { parent.realm }
    /// Whether the section can no longer be read (the collection it was made from is gone).
    public var isInvalidated: Bool { parent.isInvalidated }
    /// Whether the section is a frozen snapshot.
    public var isFrozen: Bool { parent.isFrozen }

    /// The section as its Realm reads it now, frozen (the same key, in frozen sectioned results).
    public func freeze() -> ResultsSection {
        isFrozen ? self : ResultsSection(key: key, parent: parent.freeze())
    }

    /// The section with the same key, live in a Realm of the calling isolation; nil when the collection is gone.
    public func thaw(_isolation: isolated (any Actor)? = #isolation) -> ResultsSection? {
        if !isFrozen { return self }
        return parent.thaw(_isolation: _isolation).map { ResultsSection(key: key, parent: $0) }
    }

    /// Whether both are the section of the same key of the same sectioned results.
    public static func == (lhs: ResultsSection, rhs: ResultsSection) -> Bool {
        lhs.key == rhs.key && lhs.parent == rhs.parent
    }
}

extension ResultsSection: _ObjectCollectionQueries where Element: ObjectBase {
    /// See ``_ObjectCollectionQueries``.
    public func _queryResults() -> Results<Element> {
        guard let realm = parent.realm else { fatalError("ResultsSection: the sectioned collection is unmanaged") }
        let parent = parent
        let key = key
        return realm.results(of: Element.self) { () throws(Realm.Error) in
            let snapshot = parent.snapshot()
            guard let position = snapshot.position(of: key) else { return [] }
            return snapshot.sections[position].rows.map { snapshot.objectKeys?[$0] ?? -1 }
        }
    }
}

/// Where sectioned results read their elements, in order: results of objects or projections (already sorted
/// by the query), or a collection of plain values sorted here by value.
enum SectionSource<Element: RealmCollectionValue> {
    case results(Results<Element>)
    case values(AnyRealmCollection<Element>, ascending: Bool)

    var realm: Realm? {
        switch self {
        case .results(let results): results.owner
        case .values(let values, _): values.realm
        }
    }

    var isInvalidated: Bool {
        switch self {
        case .results: false
        case .values(let values, _): values.isInvalidated
        }
    }

    var isFrozen: Bool { realm?.frozen ?? false }

    func frozen() -> SectionSource {
        switch self {
        case .results(let results): .results(results.freeze())
        case .values(let values, let ascending): .values(values.freeze(), ascending: ascending)
        }
    }

    func thawed(isolation: isolated (any Actor)?) -> SectionSource? {
        switch self {
        case .results(let results): results.thaw(_isolation: isolation).map { .results($0) }
        case .values(let values, let ascending):
            values.thaw(_isolation: isolation).map { .values($0, ascending: ascending) }
        }
    }

    /// The elements in order, each with what identifies it between versions (an object's key; a plain value
    /// itself), and the object keys for objects and projections.
    func read() -> (elements: [Element], identities: [QueryHashKey], objectKeys: [Int64]?) {
        switch self {
        case .results(let results):
            let keys = results.observedKeys()
            let elements = Array(results)
            guard elements.count == keys.count else {
                // Only a damaged file reads differently twice in one version: show nothing rather than mismatch.
                return ([], [], [])
            }
            return (elements, keys.map { QueryHashKey(.int($0)) }, keys)
        case .values(let values, let ascending):
            // Stable: equal values keep the collection's order, as `sorted(byKeyPath:)` keeps equal objects'.
            let sorted = Array(values).enumerated().sorted { lhs, rhs in
                let order = ResultsQuery.order(lhs.element._stored, rhs.element._stored)
                if order == 0 { return lhs.offset < rhs.offset }
                return ascending ? order < 0 : order > 0
            }.map(\.element)
            return (sorted, sorted.map { QueryHashKey($0._stored) }, nil)
        }
    }
}

/// One section of a snapshot: its key and the positions of its elements in the snapshot's elements.
struct SectionRows<Key: Hashable> {
    let key: Key
    var rows: [Int]
}

/// The sections of a sectioned collection at one version.
struct SectionSnapshot<Key: Hashable, Element> {
    var sections: [SectionRows<Key>] = []
    var elements: [Element] = []
    var identities: [QueryHashKey] = []
    /// For objects and projections: each element's object key.
    var objectKeys: [Int64]?
    private var positions: [Key: Int] = [:]

    init() {}

    init(elements: [Element], identities: [QueryHashKey], objectKeys: [Int64]?, key: (Element) -> Key) {
        self.elements = elements
        self.identities = identities
        self.objectKeys = objectKeys
        for (row, element) in elements.enumerated() {
            let sectionKey = key(element)
            if let position = positions[sectionKey] {
                sections[position].rows.append(row)
            } else {
                positions[sectionKey] = sections.count
                sections.append(SectionRows(key: sectionKey, rows: [row]))
            }
        }
    }

    /// Where the section of `key` stands; nil when no element has the key.
    func position(of key: Key) -> Int? { positions[key] }
}

/// The sections of one ``SectionedResults``, computed once per Realm generation.
final class SectionCache<Key: Hashable, Element: RealmCollectionValue> {
    let key: (Element) -> Key
    private var generation = UInt64.max
    private var cached = SectionSnapshot<Key, Element>()

    init(key: @escaping (Element) -> Key) { self.key = key }

    func snapshot(of source: SectionSource<Element>) -> SectionSnapshot<Key, Element> {
        guard let realm = source.realm else {
            return Self.compute(source, key: key)
        }
        realm.checkThread()
        if generation == realm.generation { return cached }
        cached = Self.compute(source, key: key)
        generation = realm.generation
        return cached
    }

    private static func compute(_ source: SectionSource<Element>, key: (Element) -> Key) -> SectionSnapshot<
        Key, Element
    > {
        let (elements, identities, objectKeys) = source.read()
        return SectionSnapshot(elements: elements, identities: identities, objectKeys: objectKeys, key: key)
    }
}

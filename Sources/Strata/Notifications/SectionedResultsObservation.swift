public import Foundation

/// A change to observed ``SectionedResults`` or to one ``ResultsSection``.
///
/// Row positions are `IndexPath`s (`item` the row, `section` the section): `deletions` are positions in the
/// previous state, `insertions` and `modifications` positions in the new one, each sorted. `sectionsToDelete` are
/// the positions of sections that are gone (previous state; their rows are not listed in `deletions`),
/// `sectionsToInsert` those of new sections (new state; their rows are listed in `insertions`), as the Realm
/// Swift SDK reports them. An element that moved (within a section, or to another section because its key
/// changed) is deleted from its old position and inserted at its new one; so is a modified object whose index
/// path changed (a modification is reported only for an object that stays at its index path).
///
/// Observing one section reports only that section's rows and, when it vanishes or reappears, its own position
/// in `sectionsToDelete`/`sectionsToInsert`; a change that touches only other sections is not delivered.
public enum RealmSectionedResultsChange<Collection> {
    /// The sections as they were when observation started.
    case initial(Collection)
    /// The sections changed: the collection itself (as of the new version) and what changed.
    case update(
        Collection, deletions: [IndexPath], insertions: [IndexPath], modifications: [IndexPath],
        sectionsToInsert: IndexSet, sectionsToDelete: IndexSet)
    /// Observation failed; nothing more will be delivered.
    case error(any Error)
}

/// The Realm Swift SDK's shorter name for ``RealmSectionedResultsChange``.
public typealias SectionedResultsChange<Collection> = RealmSectionedResultsChange<Collection>

extension SectionedResults {
    /// Calls `block` with the sections' initial state, then after each change to them: rows inserted, deleted,
    /// moved or modified and sections inserted or deleted (with `keyPaths`, only changes to those properties
    /// count as modifications).
    ///
    /// ```swift
    /// let token = contacts.sectioned(by: \.initial).observe { change in
    ///     if case .update(_, let deletions, let insertions, let modifications, let newSections, let goneSections)
    ///         = change { tableView.apply(…) }
    /// }
    /// ```
    ///
    /// The initial call happens before `observe` returns; later calls where the Realm lives, as for
    /// ``RealmCollection/observe(keyPaths:_:)-([String]?,_)``. Keep the token: observation ends when it is invalidated
    /// or released. Traps for frozen or unmanaged sectioned results.
    public func observe(
        keyPaths: [String]? = nil, _ block: @escaping (RealmSectionedResultsChange<SectionedResults>) -> Void
    ) -> NotificationToken {
        let observer = SectionedObserver(results: self, collection: self, section: nil, paths: keyPaths)
        observer.handler = block
        block(.initial(self))
        return observer.token()
    }

    /// ``observe(keyPaths:_:)-(_,_)`` with the properties named by key paths of the objects' class
    /// (`[\Contact.name]`).
    public func observe<T: ObjectBase>(
        keyPaths: [PartialKeyPath<T>], _ block: @escaping (RealmSectionedResultsChange<SectionedResults>) -> Void
    ) -> NotificationToken {
        observe(keyPaths: observedNames(keyPaths, realm: realm), block)
    }
}

extension ResultsSection {
    /// Calls `block` with the section's initial state, then after each change to its rows, or when it vanishes
    /// (its position in `sectionsToDelete`) or reappears (in `sectionsToInsert`). Changes to other sections only
    /// are not delivered. See ``RealmSectionedResultsChange``.
    ///
    /// ```swift
    /// let token = sections[0].observe(keyPaths: ["name"]) { change in … }
    /// ```
    public func observe(
        keyPaths: [String]? = nil, _ block: @escaping (RealmSectionedResultsChange<ResultsSection>) -> Void
    ) -> NotificationToken {
        let observer = SectionedObserver(results: parent, collection: self, section: key, paths: keyPaths)
        observer.handler = block
        block(.initial(self))
        return observer.token()
    }

    /// ``observe(keyPaths:_:)-(_,_)`` with the properties named by key paths of the objects' class.
    public func observe<T: ObjectBase>(
        keyPaths: [PartialKeyPath<T>], _ block: @escaping (RealmSectionedResultsChange<ResultsSection>) -> Void
    ) -> NotificationToken {
        observe(keyPaths: observedNames(keyPaths, realm: realm), block)
    }
}

/// The persisted names of `keyPaths`; traps for an unmanaged collection.
private func observedNames<T: ObjectBase>(_ keyPaths: [PartialKeyPath<T>], realm: Realm?) -> [String] {
    guard let realm else { fatalError("observe: unmanaged sectioned results cannot be observed") }
    return realm.propertyNames(keyPaths, in: "observe")
}

/// Follows sectioned results (or one of their sections: `section`): the sections as last delivered, and which
/// objects changed since.
final class SectionedObserver<Key: Hashable, Element: RealmCollectionValue, C>:
    ChangeObserver<RealmSectionedResultsChange<C>>
{
    private let results: SectionedResults<Key, Element>
    private let collection: C
    private let section: Key?
    private let realm: Realm
    /// The elements' class, for objects and projections (whose modifications count); nil for plain values.
    private let binding: TableBinding?
    private let paths: [[String]]?
    private var last: [SectionState<Key>]
    private var pending = VersionChanges()
    private var dirty = false

    init(results: SectionedResults<Key, Element>, collection: C, section: Key?, paths: [String]?) {
        guard let realm = results.realm else { fatalError("observe: unmanaged sectioned results cannot be observed") }
        self.results = results
        self.collection = collection
        self.section = section
        self.realm = realm
        var split = paths.map(splitKeyPaths)
        if case .results(let source) = results.source {
            binding = source.binding
            if let projection = Element.self as? any ProjectionObservable.Type {
                // Only projected properties count as modifications, by projected or root names.
                split = realm.projectionPaths(projection, split)
            }
        } else {
            binding = nil
        }
        self.paths = split
        last = SectionState.all(results.snapshot())
        super.init()
        if let split, let binding { ModificationChecker.validate(split, from: binding, realm: realm) }
        realm.addObserver(self)
    }

    override func advanced(_ step: VersionStep) {
        if binding != nil { pending.merge(step.changes) }
        dirty = true
    }

    override func nextChange() -> RealmSectionedResultsChange<C>? {
        guard dirty else { return nil }
        dirty = false
        let now = SectionState.all(results.snapshot())
        var isModified: (Int64) -> Bool = { _ in false }
        if let binding, !pending.isEmpty {
            let checker = ModificationChecker(realm: realm, changes: pending, paths: paths, root: binding.className)
            isModified = { checker.isModified(binding, $0) }
        }
        let diff = SectionedDiff.between(last, now, only: section, isModified: isModified)
        pending = VersionChanges()
        last = now
        guard !diff.isEmpty else { return nil }
        return .update(
            collection, deletions: diff.deletions, insertions: diff.insertions, modifications: diff.modifications,
            sectionsToInsert: diff.sectionsToInsert, sectionsToDelete: diff.sectionsToDelete)
    }
}

/// One section as an observer compares it: its key, its elements' identities and (objects) their keys.
struct SectionState<Key: Hashable> {
    let key: Key
    let identities: [QueryHashKey]
    let objectKeys: [Int64]?

    static func all<Element>(_ snapshot: SectionSnapshot<Key, Element>) -> [SectionState] {
        snapshot.sections.map { section in
            SectionState(
                key: section.key, identities: section.rows.map { snapshot.identities[$0] },
                objectKeys: snapshot.objectKeys.map { keys in section.rows.map { keys[$0] } })
        }
    }
}

/// The index paths and section sets between two states of sectioned results.
struct SectionedDiff {
    var deletions: [IndexPath] = []
    var insertions: [IndexPath] = []
    var modifications: [IndexPath] = []
    var sectionsToInsert = IndexSet()
    var sectionsToDelete = IndexSet()

    var isEmpty: Bool {
        deletions.isEmpty && insertions.isEmpty && modifications.isEmpty && sectionsToInsert.isEmpty
            && sectionsToDelete.isEmpty
    }

    /// What turns `old` into `new`; with `only`, just the section of that key. Sections are matched by key: one
    /// that is gone, or that changed places relative to the others, is deleted (and inserted where it stands now).
    /// Rows of a section kept in place are diffed by identity (``CollectionDiff``); a kept object whose key
    /// `isModified` says changed is a modification when its index path is the same, a deletion and an insertion
    /// when it is not.
    static func between<Key: Hashable>(
        _ old: [SectionState<Key>], _ new: [SectionState<Key>], only: Key?, isModified: (Int64) -> Bool
    ) -> SectionedDiff {
        var diff = SectionedDiff()
        let sections = CollectionDiff.between(old.map(\.key), new.map(\.key))
        for oldSection in sections.deletions where only == nil || old[oldSection].key == only {
            diff.sectionsToDelete.insert(oldSection)
        }
        for newSection in sections.insertions where only == nil || new[newSection].key == only {
            diff.sectionsToInsert.insert(newSection)
            diff.insertions += new[newSection].identities.indices.map { IndexPath(item: $0, section: newSection) }
        }
        for (oldSection, newSection) in sections.kept where only == nil || new[newSection].key == only {
            let section = new[newSection]
            let rows = CollectionDiff.between(old[oldSection].identities, section.identities)
            diff.deletions += rows.deletions.map { IndexPath(item: $0, section: oldSection) }
            diff.insertions += rows.insertions.map { IndexPath(item: $0, section: newSection) }
            guard let keys = section.objectKeys else { continue }
            for (oldRow, row) in rows.kept where isModified(keys[row]) {
                // As the SDK reports it: a modified object that now stands elsewhere moved (deleted and inserted).
                if oldRow == row && oldSection == newSection {
                    diff.modifications.append(IndexPath(item: row, section: newSection))
                } else {
                    diff.deletions.append(IndexPath(item: oldRow, section: oldSection))
                    diff.insertions.append(IndexPath(item: row, section: newSection))
                }
            }
        }
        diff.deletions.sort()
        diff.insertions.sort()
        diff.modifications.sort()
        return diff
    }
}

/// A section observed as a plain collection (through `AnyRealmCollection` or generic `RealmCollection` code):
/// row positions of the section, as for any collection.
extension ResultsSection: ObservableRealmCollection {
    func makeObserver<C>(as collection: C, paths: [[String]]?) -> CollectionObserver<C> {
        guard let realm = parent.realm else { fatalError("observe: unmanaged sectioned results cannot be observed") }
        var binding: TableBinding?
        var paths = paths
        if case .results(let source) = parent.source {
            binding = source.binding
            if let projection = Element.self as? any ProjectionObservable.Type {
                paths = realm.projectionPaths(projection, paths)
            }
        }
        let parent = parent
        let key = key
        return IdentityObserver(
            realm: realm, collection: collection, elementBinding: binding, paths: paths,
            identities: { () -> [QueryHashKey] in
                let snapshot = parent.snapshot()
                guard let position = snapshot.position(of: key) else { return [] }
                return snapshot.sections[position].rows.map { snapshot.identities[$0] }
            },
            objectKey: binding == nil ? nil : { (identity: QueryHashKey) in identity.value.base as? Int64 })
    }
}

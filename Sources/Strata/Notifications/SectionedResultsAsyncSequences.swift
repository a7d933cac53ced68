// The `changes` and `snapshots` sequences of sectioned results and their sections, as the other collections have
// them (``RealmCollectionChanges``, ``RealmCollectionSnapshots``), with the sectioned change (index paths and
// sections) of ``RealmSectionedResultsChange``.

/// The changes of ``SectionedResults`` or of one ``ResultsSection`` as an `AsyncSequence`: `.initial` first, then
/// one `.update` per change, coalesced when the consumer is slower than the writers (see ``SectionedResults``'
/// `changes`).
public struct SectionedResultsChanges<Collection>: AsyncSequence {
    /// A change.
    public typealias Element = RealmSectionedResultsChange<Collection>
    /// Never fails: errors arrive as `.error`, which ends the sequence.
    public typealias Failure = Never

    let collection: Collection
    let makeObserver: () -> ChangeObserver<RealmSectionedResultsChange<Collection>>

    /// Starts observing.
    public func makeAsyncIterator() -> Iterator { Iterator(observer: makeObserver(), collection: collection) }

    /// Hands out changes.
    public struct Iterator: AsyncIteratorProtocol {
        let observer: ChangeObserver<RealmSectionedResultsChange<Collection>>
        let collection: Collection
        var started = false

        /// The next change, waiting for one; nil once the sequence ended (task cancelled, Realm invalidated).
        public mutating func next(isolation actor: isolated (any Actor)?) async -> RealmSectionedResultsChange<
            Collection
        >? {
            if !started {
                started = true
                return .initial(collection)
            }
            while !observer.waiter.isEnded && !Task.isCancelled {
                if let change = observer.nextChange() { return change }
                await observer.waitForChange()
            }
            return nil
        }

        /// The next change (from the Realm's isolation).
        public mutating func next() async -> RealmSectionedResultsChange<Collection>? { await next(isolation: nil) }
    }
}

/// Frozen states of ``SectionedResults`` or of one ``ResultsSection`` as an `AsyncSequence`: the current state
/// first, then one per change.
public struct SectionedResultsSnapshots<Collection: ThreadConfined>: AsyncSequence {
    /// A frozen state.
    public typealias Element = Frozen<Collection>
    /// Never fails.
    public typealias Failure = Never

    let changes: SectionedResultsChanges<Collection>

    /// Starts observing.
    public func makeAsyncIterator() -> Iterator { Iterator(changes: changes.makeAsyncIterator()) }

    /// Hands out one frozen state per change.
    public struct Iterator: AsyncIteratorProtocol {
        var changes: SectionedResultsChanges<Collection>.Iterator

        /// The state after the next change (the current state first); nil once the sequence ended.
        public mutating func next(isolation actor: isolated (any Actor)?) async -> Frozen<Collection>? {
            switch await changes.next(isolation: actor) {
            case .initial(let collection)?, .update(let collection, _, _, _, _, _)?: Frozen(collection)
            case .error?, nil: nil
            }
        }

        /// The next state (from the Realm's isolation).
        public mutating func next() async -> Frozen<Collection>? { await next(isolation: nil) }
    }
}

extension SectionedResults {
    /// The sections' changes as an `AsyncSequence`: `.initial` first, then an `.update` after each change (see
    /// `observe(keyPaths:_:)` for what counts). Iterate it where the Realm lives, as a collection's
    /// ``RealmCollection/changes``; changes that arrive while the loop body runs are merged into one update.
    ///
    /// ```swift
    /// for await change in contacts.sectioned(by: \.initial).changes {
    ///     if case .update(_, let deletions, let insertions, _, let newSections, _) = change { … }
    /// }
    /// ```
    public var changes: SectionedResultsChanges<SectionedResults> { sectionedChanges(paths: nil) }

    /// ``changes`` counting only changes to the properties at `keyPaths` (`"name"`, `"owner.name"`) as
    /// modifications.
    public func changes(keyPaths: [String]) -> SectionedResultsChanges<SectionedResults> {
        sectionedChanges(paths: keyPaths)
    }

    /// ``changes(keyPaths:)-([String])`` with key paths of the objects' class (`[\Contact.name]`).
    public func changes<T: ObjectBase>(keyPaths: [PartialKeyPath<T>]) -> SectionedResultsChanges<SectionedResults> {
        sectionedChanges(paths: sectionedPropertyNames(keyPaths, realm: realm, in: "changes"))
    }

    /// Frozen states of the sections: the current one first, then one after each change (coalesced like
    /// ``changes``). Each is `Sendable`: hand it to any task.
    public var snapshots: SectionedResultsSnapshots<SectionedResults> { SectionedResultsSnapshots(changes: changes) }

    private func sectionedChanges(paths: [String]?) -> SectionedResultsChanges<SectionedResults> {
        SectionedResultsChanges(collection: self) {
            SectionedObserver(results: self, collection: self, section: nil, paths: paths)
        }
    }
}

extension ResultsSection {
    /// The section's changes as an `AsyncSequence` of ``RealmSectionedResultsChange`` (see
    /// `observe(keyPaths:_:)`): `.initial` first, then an `.update` after each change to its rows, or
    /// when it vanishes or reappears. Generic code over `RealmCollection` gets the plain collection changes.
    public var changes: SectionedResultsChanges<ResultsSection> { sectionedChanges(paths: nil) }

    /// ``changes`` counting only changes to the properties at `keyPaths` as modifications.
    public func changes(keyPaths: [String]) -> SectionedResultsChanges<ResultsSection> {
        sectionedChanges(paths: keyPaths)
    }

    /// Frozen states of the section: the current one first, then one after each change.
    public var snapshots: SectionedResultsSnapshots<ResultsSection> { SectionedResultsSnapshots(changes: changes) }

    func sectionedChanges(paths: [String]?) -> SectionedResultsChanges<ResultsSection> {
        SectionedResultsChanges(collection: self) {
            SectionedObserver(results: parent, collection: self, section: key, paths: paths)
        }
    }
}

extension ResultsSection where Element: ObjectBase {
    /// ``changes(keyPaths:)-([String])`` with key paths of the objects' class (`[\Contact.name]`). Declared
    /// here, on sections of objects, so that it is chosen over the plain collection form.
    public func changes(keyPaths: [PartialKeyPath<Element>]) -> SectionedResultsChanges<ResultsSection> {
        sectionedChanges(paths: sectionedPropertyNames(keyPaths, realm: realm, in: "changes"))
    }
}
